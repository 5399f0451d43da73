//! [`Expected`]: what a refused parameter would have needed, as data, worded in both languages
//! here — English by [`fmt::Display`], Chinese by [`Expected::zh`] — so each rule has one
//! wording per language in one place and no face of the program parses English.

use std::fmt;

use super::fmt_real;
use crate::text::Text;

/// The kind of a value as a file spelled it (a preset's JSON), for [`Expected::Type`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ValueKind {
    /// A whole number.
    Integer,
    /// A number with a fraction or exponent that is not a whole number (or out of `i64`).
    Float,
    /// Any number (what a real-valued parameter takes).
    Number,
    /// A string.
    String,
    /// `true` or `false`.
    Bool,
    /// `null`.
    Null,
    /// A list.
    List,
    /// An object.
    Object,
}

impl ValueKind {
    /// The kind of a JSON value.
    pub fn of_json(v: &serde_json::Value) -> Self {
        match v {
            serde_json::Value::Null => ValueKind::Null,
            serde_json::Value::Bool(_) => ValueKind::Bool,
            serde_json::Value::Number(n) if n.is_i64() || n.is_u64() => ValueKind::Integer,
            serde_json::Value::Number(_) => ValueKind::Float,
            serde_json::Value::String(_) => ValueKind::String,
            serde_json::Value::Array(_) => ValueKind::List,
            serde_json::Value::Object(_) => ValueKind::Object,
        }
    }

    /// The kind in Chinese (`整数`, `字符串`, …); [`fmt::Display`] is the English.
    pub fn zh(self) -> &'static str {
        match self {
            ValueKind::Integer => "整数",
            ValueKind::Float => "浮点数",
            ValueKind::Number => "数",
            ValueKind::String => "字符串",
            ValueKind::Bool => "布尔值",
            ValueKind::Null => "null",
            ValueKind::List => "列表",
            ValueKind::Object => "对象",
        }
    }
}

impl fmt::Display for ValueKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ValueKind::Integer => "an integer",
            ValueKind::Float => "a float",
            ValueKind::Number => "a number",
            ValueKind::String => "a string",
            ValueKind::Bool => "a boolean",
            ValueKind::Null => "null",
            ValueKind::List => "a list",
            ValueKind::Object => "an object",
        })
    }
}

/// What a refused parameter would have needed. [`fmt::Display`] is the English wording of the
/// messages (`expected an integer in 32..=1024`), [`Expected::zh`] the Chinese one, both from
/// the same fields.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Expected {
    /// An integer in `min..=max`.
    IntRange {
        /// Smallest valid value.
        min: i64,
        /// Largest valid value.
        max: i64,
    },
    /// A finite real number between `min` and `max`, each end included unless it is open.
    RealRange {
        /// Lower end.
        min: f64,
        /// Upper end.
        max: f64,
        /// `min` itself is refused.
        min_open: bool,
        /// `max` itself is refused.
        max_open: bool,
    },
    /// One of these names (`expected one of a, b, c`).
    OneOf(Vec<String>),
    /// One of a few values named in a sentence (`expected l1 or l2`, `expected 4, 8, 16, 32 or
    /// 64`); at least two.
    Either(Vec<String>),
    /// A multiple of `step` in `min..=max`.
    MultipleOf {
        /// The divisor.
        step: i64,
        /// Smallest valid value.
        min: i64,
        /// Largest valid value.
        max: i64,
    },
    /// A multiple of another parameter's value (`expected a multiple of heads = 12`).
    MultipleOfParam {
        /// The other parameter's name.
        param: String,
        /// Its value.
        value: i64,
    },
    /// At most another parameter's value (`expected at most len_max = 64`).
    AtMostParam {
        /// The other parameter's name.
        param: String,
        /// Its value.
        value: i64,
    },
    /// As many values as another list parameter holds (`expected as many values as y (4)`).
    SameLengthAs {
        /// The other parameter's name.
        param: String,
        /// How many values it holds.
        len: usize,
    },
    /// A power of two in `min..=max`.
    PowerOfTwo {
        /// Smallest valid value.
        min: i64,
        /// Largest valid value.
        max: i64,
    },
    /// A value in `min..=max` of a kind the parameter's own type says (`expected 1..=64`).
    Between {
        /// Smallest valid value.
        min: i64,
        /// Largest valid value.
        max: i64,
    },
    /// Any integer.
    Integer,
    /// An integer above 0.
    PositiveInteger,
    /// An integer of 0 or more.
    NonNegativeInteger,
    /// Any number.
    Number,
    /// Any text.
    Text,
    /// A list of at least one value.
    AtLeastOne,
    /// A list whose every value is finite (not NaN or infinite).
    FiniteValues,
    /// `key=value` (a `--set` argument without `=`).
    Assignment,
    /// The value has the wrong type (a preset's `"pad": "3"` or `"pad": 3.5`); `expected` is the
    /// parameter's own rule.
    Type {
        /// What the file holds.
        found: ValueKind,
        /// What the parameter takes.
        expected: Box<Expected>,
    },
    /// A comma-separated list with an empty item (`1,,2`, `1,`); `item` counts from 1.
    NonEmptyItems {
        /// The first empty item.
        item: usize,
        /// The list's own rule.
        expected: Box<Expected>,
    },
    /// A finite number (not NaN or infinite).
    Finite,
    /// Text of at most this many bytes.
    TextUpTo(usize),
    /// Not a parameter of the scene; `known` lists the ones it takes.
    Unknown {
        /// The scene's parameter names.
        known: Vec<String>,
    },
    /// The parameter has no value.
    Missing,
    /// A rule followed by a note in parentheses on why or what it means (`expected one of gpt2,
    /// gpt2-medium (GPT-2 family)`).
    Noted {
        /// The rule.
        rule: Box<Expected>,
        /// The note, in both languages, without the parentheses.
        note: Text,
    },
    /// One scene's own rule in both languages (English starting with `expected` where it names
    /// what is valid): a budget, a limit explained by the lecture's kernel.
    Custom(Text),
}

impl Expected {
    /// [`Expected::RealRange`] with both ends included.
    pub fn real(min: f64, max: f64) -> Self {
        Expected::RealRange {
            min,
            max,
            min_open: false,
            max_open: false,
        }
    }

    /// [`Expected::Custom`] from its English and Chinese wordings.
    pub fn custom(en: impl Into<String>, zh: impl Into<String>) -> Self {
        Expected::Custom(Text::new(en.into(), zh.into()))
    }

    /// `self` with a note in parentheses ([`Expected::Noted`]).
    pub fn noted(self, en: impl Into<String>, zh: impl Into<String>) -> Self {
        Expected::Noted {
            rule: Box::new(self),
            note: Text::new(en.into(), zh.into()),
        }
    }

    /// [`Expected::Either`] from a few values.
    pub fn either<S: AsRef<str>>(options: &[S]) -> Self {
        Expected::Either(options.iter().map(|s| s.as_ref().to_owned()).collect())
    }

    /// [`Expected::OneOf`] from a list of names.
    pub fn one_of<S: AsRef<str>>(options: &[S]) -> Self {
        Expected::OneOf(options.iter().map(|s| s.as_ref().to_owned()).collect())
    }

    /// The rule in Chinese, from the same fields as the English [`fmt::Display`].
    pub fn zh(&self) -> String {
        match self {
            Expected::IntRange { min, max } => format!("应为 {min}..={max} 之间的整数"),
            Expected::RealRange { .. } => format!("应为 {} 之间的数", self.real_bounds()),
            Expected::OneOf(options) => format!("应为以下之一：{}", options.join(", ")),
            Expected::Either(options) => format!("应为 {}", sentence(options, "、", " 或 ")),
            Expected::MultipleOf { step, min, max } => {
                format!("应为 {min}..={max} 之间 {step} 的倍数")
            }
            Expected::MultipleOfParam { param, value } => {
                format!("应为 {param} = {value} 的倍数")
            }
            Expected::AtMostParam { param, value } => format!("应不大于 {param} = {value}"),
            Expected::SameLengthAs { param, len } => {
                format!("值的个数应与 {param} 相同（{len} 个）")
            }
            Expected::PowerOfTwo { min, max } => format!("应为 {min}..={max} 之间的 2 的幂"),
            Expected::Between { min, max } => format!("应在 {min}..={max} 之间"),
            Expected::Integer => "应为整数".to_owned(),
            Expected::PositiveInteger => "应为正整数".to_owned(),
            Expected::NonNegativeInteger => "应为非负整数".to_owned(),
            Expected::Number => "应为数".to_owned(),
            Expected::Text => "应为文本".to_owned(),
            Expected::AtLeastOne => "至少要有一个值".to_owned(),
            Expected::FiniteValues => "应为有限值".to_owned(),
            Expected::Assignment => "应为 key=value 的形式，例如 --set threads=256".to_owned(),
            Expected::Type { found, expected } => {
                format!("类型是{}，{}", found.zh(), expected.zh())
            }
            Expected::NonEmptyItems { item, expected } => format!(
                "列表的第 {item} 项为空（两个逗号相连，或逗号在开头或末尾）；{}",
                expected.zh()
            ),
            Expected::Finite => "应为有限数".to_owned(),
            Expected::TextUpTo(n) => format!("应为至多 {n} 字节的文本"),
            Expected::Unknown { known } if known.is_empty() => "这个场景没有参数".to_owned(),
            Expected::Unknown { known } => {
                format!("没有这个参数；这个场景的参数是 {}", known.join(", "))
            }
            Expected::Missing => "缺少这个参数".to_owned(),
            Expected::Noted { rule, note } => format!("{}（{}）", rule.zh(), note.zh),
            Expected::Custom(text) => text.zh.clone(),
        }
    }

    /// The interval of a [`Expected::RealRange`] as both languages write it: `0..=0.9` when
    /// both ends are included, else `(0, 1]`; "" for any other rule.
    fn real_bounds(&self) -> String {
        let Expected::RealRange {
            min,
            max,
            min_open,
            max_open,
        } = self
        else {
            return String::new();
        };
        let (lo, hi) = (fmt_real(*min), fmt_real(*max));
        if !min_open && !max_open {
            format!("{lo}..={hi}")
        } else {
            let open = if *min_open { '(' } else { '[' };
            let close = if *max_open { ')' } else { ']' };
            format!("{open}{lo}, {hi}{close}")
        }
    }
}

/// `a, b or c`: the items joined by `sep`, the last by `last`.
fn sentence(items: &[String], sep: &str, last: &str) -> String {
    match items.split_last() {
        None => String::new(),
        Some((only, [])) => only.clone(),
        Some((tail, head)) => format!("{}{last}{tail}", head.join(sep)),
    }
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expected::IntRange { min, max } => write!(f, "expected an integer in {min}..={max}"),
            Expected::RealRange { .. } => write!(f, "expected a number in {}", self.real_bounds()),
            Expected::OneOf(options) => write!(f, "expected one of {}", options.join(", ")),
            Expected::Either(options) => {
                write!(f, "expected {}", sentence(options, ", ", " or "))
            }
            Expected::MultipleOf { step, min, max } => {
                write!(f, "expected a multiple of {step} in {min}..={max}")
            }
            Expected::MultipleOfParam { param, value } => {
                write!(f, "expected a multiple of {param} = {value}")
            }
            Expected::AtMostParam { param, value } => {
                write!(f, "expected at most {param} = {value}")
            }
            Expected::SameLengthAs { param, len } => {
                write!(f, "expected as many values as {param} ({len})")
            }
            Expected::PowerOfTwo { min, max } => {
                write!(f, "expected a power of two in {min}..={max}")
            }
            Expected::Between { min, max } => write!(f, "expected {min}..={max}"),
            Expected::Integer => f.write_str("expected an integer"),
            Expected::PositiveInteger => f.write_str("expected a positive integer"),
            Expected::NonNegativeInteger => f.write_str("expected a non-negative integer"),
            Expected::Number => f.write_str("expected a number"),
            Expected::Text => f.write_str("expected text"),
            Expected::AtLeastOne => f.write_str("expected at least one value"),
            Expected::FiniteValues => f.write_str("expected finite values"),
            Expected::Assignment => f.write_str("expected key=value, e.g. --set threads=256"),
            Expected::Type { found, expected } => write!(f, "{found}, {expected}"),
            Expected::NonEmptyItems { item, expected } => write!(
                f,
                "item {item} of the list is empty (two commas in a row, or one at an end); \
                 {expected}"
            ),
            Expected::Finite => f.write_str("expected a finite number"),
            Expected::TextUpTo(n) => write!(f, "expected text of at most {n} bytes"),
            Expected::Unknown { known } if known.is_empty() => {
                f.write_str("this scene takes no parameters")
            }
            Expected::Unknown { known } => write!(
                f,
                "unknown parameter; this scene takes {}",
                known.join(", ")
            ),
            Expected::Missing => f.write_str("missing"),
            Expected::Noted { rule, note } => write!(f, "{rule} ({})", note.en),
            Expected::Custom(text) => f.write_str(&text.en),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expected_words_the_rule() {
        assert_eq!(
            Expected::IntRange { min: 0, max: 8 }.to_string(),
            "expected an integer in 0..=8"
        );
        assert_eq!(
            Expected::real(0.0, 0.9).to_string(),
            "expected a number in 0..=0.9"
        );
        let open = Expected::RealRange {
            min: 0.0,
            max: 1.0,
            min_open: true,
            max_open: false,
        };
        assert_eq!(open.to_string(), "expected a number in (0, 1]");
        let t = Expected::Type {
            found: ValueKind::Float,
            expected: Box::new(Expected::IntRange { min: 0, max: 8 }),
        };
        assert_eq!(t.to_string(), "a float, expected an integer in 0..=8");
        assert_eq!(
            Expected::either(&["l1", "l2"]).to_string(),
            "expected l1 or l2"
        );
        assert_eq!(
            Expected::either(&["4", "8", "16", "32", "64"]).to_string(),
            "expected 4, 8, 16, 32 or 64"
        );
        assert_eq!(
            Expected::MultipleOfParam {
                param: "heads".into(),
                value: 12
            }
            .to_string(),
            "expected a multiple of heads = 12"
        );
        assert_eq!(
            Expected::SameLengthAs {
                param: "y".into(),
                len: 4
            }
            .to_string(),
            "expected as many values as y (4)"
        );
        let gpt2 = Expected::OneOf(vec!["gpt2".into(), "gpt2-xl".into()])
            .noted("GPT-2 family", "GPT-2 系列");
        assert_eq!(
            gpt2.to_string(),
            "expected one of gpt2, gpt2-xl (GPT-2 family)"
        );
        assert_eq!(
            Expected::Between { min: 1, max: 64 }.to_string(),
            "expected 1..=64"
        );
    }

    #[test]
    fn expected_in_chinese_from_the_same_fields() {
        assert_eq!(
            Expected::IntRange { min: 0, max: 8 }.zh(),
            "应为 0..=8 之间的整数"
        );
        let open = Expected::RealRange {
            min: 0.0,
            max: 1.0,
            min_open: true,
            max_open: false,
        };
        assert_eq!(open.zh(), "应为 (0, 1] 之间的数");
        assert_eq!(Expected::real(0.0, 1e308).zh(), "应为 0..=1e308 之间的数");
        assert_eq!(
            Expected::OneOf(vec!["row".into(), "column".into()]).zh(),
            "应为以下之一：row, column"
        );
        assert_eq!(Expected::either(&["l1", "l2"]).zh(), "应为 l1 或 l2");
        assert_eq!(
            Expected::either(&["4", "8", "16", "32", "64"]).zh(),
            "应为 4、8、16、32 或 64"
        );
        assert_eq!(
            Expected::MultipleOf {
                step: 32,
                min: 32,
                max: 1024
            }
            .zh(),
            "应为 32..=1024 之间 32 的倍数"
        );
        assert_eq!(
            Expected::MultipleOfParam {
                param: "heads".into(),
                value: 12
            }
            .zh(),
            "应为 heads = 12 的倍数"
        );
        assert_eq!(
            Expected::AtMostParam {
                param: "len_max".into(),
                value: 64
            }
            .zh(),
            "应不大于 len_max = 64"
        );
        assert_eq!(
            Expected::SameLengthAs {
                param: "y".into(),
                len: 4
            }
            .zh(),
            "值的个数应与 y 相同（4 个）"
        );
        assert_eq!(
            Expected::Between { min: 2, max: 8192 }.zh(),
            "应在 2..=8192 之间"
        );
        assert_eq!(Expected::PositiveInteger.zh(), "应为正整数");
        assert_eq!(Expected::NonNegativeInteger.zh(), "应为非负整数");
        assert_eq!(Expected::AtLeastOne.zh(), "至少要有一个值");
        assert_eq!(Expected::FiniteValues.zh(), "应为有限值");
        assert_eq!(Expected::Text.zh(), "应为文本");
        let t = Expected::Type {
            found: ValueKind::String,
            expected: Box::new(Expected::IntRange { min: 0, max: 8 }),
        };
        assert_eq!(t.zh(), "类型是字符串，应为 0..=8 之间的整数");
        let empty = Expected::NonEmptyItems {
            item: 2,
            expected: Box::new(Expected::Number),
        };
        assert_eq!(
            empty.zh(),
            "列表的第 2 项为空（两个逗号相连，或逗号在开头或末尾）；应为数"
        );
        assert_eq!(
            Expected::Unknown {
                known: vec!["rows".into(), "pad".into()]
            }
            .zh(),
            "没有这个参数；这个场景的参数是 rows, pad"
        );
        assert_eq!(Expected::Missing.zh(), "缺少这个参数");
        let peak =
            Expected::real(0.01, 1.0).noted("fraction of the device's peak", "占设备峰值的比例");
        assert_eq!(
            peak.to_string(),
            "expected a number in 0.01..=1 (fraction of the device's peak)"
        );
        assert_eq!(peak.zh(), "应为 0.01..=1 之间的数（占设备峰值的比例）");
        let own = Expected::custom("expected a mean above 0", "均值应大于 0");
        assert_eq!(own.to_string(), "expected a mean above 0");
        assert_eq!(own.zh(), "均值应大于 0");
    }
}
