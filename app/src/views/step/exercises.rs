//! `exercises`: the twelve §9 exercises computed by the labs, beside the lecture's answers.

use crate::i18n::tr;
use crate::trf;
use crate::views::{Out, View, ViewContext};
use crate::widgets;
use warpscope_core::step::exercises::ExercisesOutput;

/// The `exercises` view.
#[derive(Debug, Clone, Default)]
pub struct ExercisesView;

impl View for ExercisesView {
    type Scene = warpscope_core::step::exercises::ExercisesScene;

    fn ui(&mut self, ui: &mut egui::Ui, out: &Out<Self>, _cx: &mut ViewContext<'_>) {
        draw(ui, out);
    }
}

/// `exercises`: each exercise's question, the lecture's answer, whether the computation agrees,
/// and the computed answer.
fn draw(ui: &mut egui::Ui, out: &ExercisesOutput) {
    for e in out.items() {
        let k = e.key;
        egui::Frame::group(ui.style()).show(ui, |ui| {
            ui.set_width(ui.available_width());
            ui.horizontal_wrapped(|ui| {
                ui.strong(trf!(ui, "Exercise {}", "练习 {}", e.number));
                match e.agrees {
                    Some(true) => ui.colored_label(
                        widgets::GREEN,
                        tr(
                            ui,
                            "computed answer agrees with the lecture",
                            "计算结果与讲义的答案一致",
                        ),
                    ),
                    Some(false) => ui.colored_label(
                        widgets::VERMILLION,
                        tr(
                            ui,
                            "computed answer differs from the lecture",
                            "计算结果与讲义的答案不同",
                        ),
                    ),
                    None => ui.label(tr(
                        ui,
                        "open question: computed, no single answer in the lecture",
                        "开放问题：已计算，讲义里没有唯一答案",
                    )),
                };
            });
            let zh = crate::i18n::zh(ui);
            crate::widgets::marks::label(ui, e.question.get(zh));
            if let Some(a) = e.lecture_answer.as_ref().map(|a| a.get(zh)) {
                crate::widgets::marks::label(
                    ui,
                    egui::RichText::new(trf!(ui, "Lecture: {a}", "讲义：{a}")).italics(),
                );
            }
            let computed = e.computed.get(zh);
            if crate::widgets::stepper::figure_mode(ui.ctx()) {
                // A figure has no expanders: the computed answer in full, without its JSON.
                crate::widgets::marks::label(
                    ui,
                    egui::RichText::new(trf!(ui, "Computed: {computed}", "计算结果：{computed}")),
                );
            } else {
                ui.collapsing(
                    trf!(ui, "computed answer ({k})", "计算结果（{k}）"),
                    |ui| {
                        crate::widgets::marks::label(ui, egui::RichText::new(computed).small());
                        crate::widgets::marks::label(
                            ui,
                            egui::RichText::new(e.answer_json.as_str()).monospace(),
                        );
                    },
                );
            }
        });
    }
}
