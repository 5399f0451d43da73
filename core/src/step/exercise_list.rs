//! The twelve exercises of [`ExercisesOutput`] as one list in order, each with the fields every
//! exercise has (a view lists them without knowing each answer's type).

use serde::Serialize;

use super::exercises::{Exercise, ExercisesOutput};
use crate::text::Text;

/// One exercise as a list shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ExerciseItem<'a> {
    /// Its number, 1 ..= 12.
    pub number: usize,
    /// Its key in the report's `result` (`ex1` … `ex12`).
    pub key: &'static str,
    /// The question, short in English, as the lecture asks it in Chinese.
    pub question: Text<&'static str>,
    /// The lecture's reference answer, quoted (`None` where it gives none).
    pub lecture_answer: Option<Text<&'static str>>,
    /// Whether the computed answer matches the lecture's (`None`: nothing to compare).
    pub agrees: Option<bool>,
    /// What was computed, and by what.
    pub computed: &'a Text<&'static str>,
    /// The computed answer as the report prints it, indented JSON (empty if it cannot be
    /// written, which a finite answer never is).
    pub answer_json: String,
}

fn item<'a, T: Serialize>(
    number: usize,
    key: &'static str,
    e: &'a Exercise<T>,
) -> ExerciseItem<'a> {
    // Through a JSON value, so keys print in the report's order.
    let answer_json = serde_json::to_value(&e.answer)
        .and_then(|v| serde_json::to_string_pretty(&v))
        .unwrap_or_default();
    ExerciseItem {
        number,
        key,
        question: e.question,
        lecture_answer: e.lecture_answer,
        agrees: e.agrees,
        computed: &e.computed,
        answer_json,
    }
}

impl ExercisesOutput {
    /// The twelve exercises in order.
    pub fn items(&self) -> [ExerciseItem<'_>; 12] {
        [
            item(1, "ex1", &self.ex1),
            item(2, "ex2", &self.ex2),
            item(3, "ex3", &self.ex3),
            item(4, "ex4", &self.ex4),
            item(5, "ex5", &self.ex5),
            item(6, "ex6", &self.ex6),
            item(7, "ex7", &self.ex7),
            item(8, "ex8", &self.ex8),
            item(9, "ex9", &self.ex9),
            item(10, "ex10", &self.ex10),
            item(11, "ex11", &self.ex11),
            item(12, "ex12", &self.ex12),
        ]
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn items_follow_the_report_keys_in_order() {
        let out = super::super::exercises::run().unwrap();
        let json = serde_json::to_value(&out).unwrap();
        for (i, it) in out.items().iter().enumerate() {
            assert_eq!(it.number, i + 1);
            assert_eq!(it.key, format!("ex{}", i + 1));
            let e = &json[it.key];
            assert_eq!(e["question"], serde_json::to_value(it.question).unwrap());
            assert_eq!(e["agrees"].as_bool(), it.agrees);
            assert_eq!(
                e["lecture_answer"],
                serde_json::to_value(it.lecture_answer).unwrap()
            );
            let answer: serde_json::Value = serde_json::from_str(&it.answer_json).unwrap();
            assert_eq!(answer, e["answer"]);
        }
    }
}
