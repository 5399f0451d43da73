//! Errors as the parameter panel shows them: core's [`Error`] kept in both languages, and its
//! Chinese wording built from the error's fields (a refusal's typed [`Expected`] rule is worded
//! from its numbers and names; a scene's own English rule is translated where it has a common
//! shape).

use warpscope_core::Error;
use warpscope_core::error::{Expected, ValueKind, fmt_real};
use warpscope_core::scene::Scene;

/// An error as the parameter panel shows it, in both languages: the window switches language
/// at runtime, so the message is picked when it is drawn ([`ErrorEntry::message`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorEntry {
    /// The parameter it names, or "" (shown under the controls, not under one of them).
    pub param: String,
    /// The message in English (core's own wording).
    pub en: String,
    /// The message in Chinese.
    pub zh: String,
}

impl ErrorEntry {
    /// An entry that names no parameter.
    pub fn general(en: impl Into<String>, zh: impl Into<String>) -> Self {
        ErrorEntry {
            param: String::new(),
            en: en.into(),
            zh: zh.into(),
        }
    }

    /// The message in Chinese when `zh`, else in English.
    pub fn message(&self, zh: bool) -> &str {
        if zh { &self.zh } else { &self.en }
    }
}

/// `expected` of [`Error::InvalidParam`] in Chinese, from its fields; a scene's own English rule
/// ([`Expected::Custom`]) as [`custom_zh`] words it.
pub fn expected_zh(expected: &Expected) -> String {
    match expected {
        Expected::IntRange { min, max } => format!("应为 {min}..={max} 之间的整数"),
        Expected::RealRange {
            min,
            max,
            min_open,
            max_open,
        } => {
            let (lo, hi) = (fmt_real(*min), fmt_real(*max));
            if !min_open && !max_open {
                format!("应为 {lo}..={hi} 之间的数")
            } else {
                let open = if *min_open { '(' } else { '[' };
                let close = if *max_open { ')' } else { ']' };
                format!("应为 {open}{lo}, {hi}{close} 之间的数")
            }
        }
        Expected::OneOf(options) => format!("应为以下之一：{}", options.join(", ")),
        Expected::MultipleOf { step, min, max } => {
            format!("应为 {min}..={max} 之间 {step} 的倍数")
        }
        Expected::PowerOfTwo { min, max } => format!("应为 {min}..={max} 之间的 2 的幂"),
        Expected::Type { found, expected } => {
            format!("类型是{}，{}", kind_zh(*found), expected_zh(expected))
        }
        Expected::NonEmptyItems { item, expected } => format!(
            "列表的第 {item} 项为空（两个逗号相连，或逗号在开头或末尾）；{}",
            expected_zh(expected)
        ),
        Expected::Finite => "应为有限数".to_owned(),
        Expected::TextUpTo(n) => format!("应为至多 {n} 字节的文本"),
        Expected::Unknown { known } if known.is_empty() => "这个场景没有参数".to_owned(),
        Expected::Unknown { known } => {
            format!("没有这个参数；这个场景的参数是 {}", known.join(", "))
        }
        Expected::Missing => "缺少这个参数".to_owned(),
        Expected::Custom(text) => custom_zh(text),
        // A rule added to core later: its English wording until the app learns it.
        other => other.to_string(),
    }
}

/// A value's type in Chinese.
fn kind_zh(kind: ValueKind) -> &'static str {
    match kind {
        ValueKind::Integer => "整数",
        ValueKind::Float => "浮点数",
        ValueKind::Number => "数",
        ValueKind::String => "字符串",
        ValueKind::Bool => "布尔值",
        ValueKind::Null => "null",
        ValueKind::List => "列表",
        ValueKind::Object => "对象",
        _ => "其他类型",
    }
}

/// A scene's own English rule ([`Expected::Custom`]) in Chinese where it is one of the common
/// shapes (a range, a list of choices, a kind of number); any other wording stays in English.
pub fn custom_zh(expected: &str) -> String {
    let plain = |rest: &str| !rest.is_empty() && !rest.contains(' ');
    let list = |rest: &str| {
        !rest.is_empty()
            && !rest.contains(['(', ':', ';'])
            && rest
                .split(", ")
                .all(|id| !id.is_empty() && !id.contains(' '))
    };
    let fixed = match expected {
        "expected an integer" => Some("应为整数"),
        "expected a positive integer" => Some("应为正整数"),
        "expected a non-negative integer" => Some("应为非负整数"),
        "expected a number" => Some("应为数"),
        "expected finite values" => Some("应为有限值"),
        "expected at least one value" => Some("至少要有一个值"),
        "expected text" => Some("应为文本"),
        "missing" => Some("缺少这个参数"),
        "unknown parameter" => Some("没有这个参数"),
        _ => None,
    };
    if let Some(f) = fixed {
        return f.to_owned();
    }
    if let Some(r) = expected.strip_prefix("expected an integer in ")
        && plain(r)
    {
        return format!("应为 {r} 之间的整数");
    }
    if let Some(r) = expected.strip_prefix("expected a number in ")
        && plain(r)
    {
        return format!("应为 {r} 之间的数");
    }
    if let Some(r) = expected.strip_prefix("expected one of ")
        && list(r)
    {
        return format!("应为以下之一：{r}");
    }
    if let Some(r) = expected.strip_prefix("expected ")
        && plain(r)
        && r.contains("..=")
    {
        return format!("应在 {r} 之间");
    }
    expected.to_owned()
}

/// [`Error`]'s message in Chinese, built from its fields (core words it in English).
pub fn error_zh(e: &Error) -> String {
    match e {
        Error::InvalidParam {
            name,
            value,
            expected,
        } => format!("参数 `{name}` = {value} 无效：{}", expected_zh(expected)),
        Error::BadInput(_) => format!("输入有误：{e}"),
        Error::InvalidInput { key, problem } if key.is_empty() => format!("输入有误：{problem}"),
        Error::InvalidInput { key, problem } => format!("输入 `{key}` 有误：{problem}"),
        Error::UnknownScene(id) => {
            format!("没有 id 为 `{id}` 的场景；`warpscope list` 列出所有场景的 id")
        }
        Error::Cancelled => "已取消".to_owned(),
    }
}

/// An error as the parameter panel shows it. A file that cannot be read ([`Error::BadInput`]) is
/// shown under the scene's text field (its path) when the scene has one.
pub(crate) fn error_entry(scene: &Scene, e: &Error) -> ErrorEntry {
    let param = match e {
        Error::InvalidParam { name, .. } => name.clone(),
        Error::BadInput(_) => scene
            .params
            .iter()
            .find(|p| matches!(p.kind, warpscope_core::params::ParamKind::Text { .. }))
            .map_or(String::new(), |p| p.name.to_owned()),
        _ => String::new(),
    };
    ErrorEntry {
        param,
        en: e.to_string(),
        zh: error_zh(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use warpscope_core::scene;

    #[test]
    fn a_parameter_error_reads_in_chinese_from_its_fields() {
        let e = Error::invalid("threads", 48, "expected a multiple of 32 in 32..=1024");
        // A shape the app does not know keeps core's English `expected`.
        assert_eq!(
            error_zh(&e),
            "参数 `threads` = 48 无效：expected a multiple of 32 in 32..=1024"
        );
        let e = Error::invalid("threads", 0, "expected an integer in 1..=1024");
        assert_eq!(
            error_zh(&e),
            "参数 `threads` = 0 无效：应为 1..=1024 之间的整数"
        );
        assert_eq!(
            custom_zh("expected one of v100, a100, h100"),
            "应为以下之一：v100, a100, h100"
        );
        assert_eq!(
            custom_zh("expected one of gpt2, gpt2-large (GPT-2 family)"),
            "expected one of gpt2, gpt2-large (GPT-2 family)"
        );
        assert_eq!(custom_zh("expected 2..=8192"), "应在 2..=8192 之间");
        // Typed rules are worded from their fields.
        assert_eq!(
            expected_zh(&Expected::IntRange { min: 0, max: 8 }),
            "应为 0..=8 之间的整数"
        );
        assert_eq!(
            expected_zh(&Expected::RealRange {
                min: 0.0,
                max: 1.0,
                min_open: true,
                max_open: false
            }),
            "应为 (0, 1] 之间的数"
        );
        assert_eq!(
            expected_zh(&Expected::real(0.0, 1e308)),
            "应为 0..=1e308 之间的数"
        );
        assert_eq!(
            expected_zh(&Expected::OneOf(vec!["row".into(), "column".into()])),
            "应为以下之一：row, column"
        );
        assert_eq!(
            expected_zh(&Expected::MultipleOf {
                step: 32,
                min: 32,
                max: 1024
            }),
            "应为 32..=1024 之间 32 的倍数"
        );
        assert_eq!(
            expected_zh(&Expected::Type {
                found: ValueKind::String,
                expected: Box::new(Expected::IntRange { min: 0, max: 8 })
            }),
            "类型是字符串，应为 0..=8 之间的整数"
        );
        let empty = Expected::NonEmptyItems {
            item: 2,
            expected: Box::new("expected numbers".into()),
        };
        assert!(expected_zh(&empty).starts_with("列表的第 2 项为空"));
        assert_eq!(
            expected_zh(&Expected::Unknown {
                known: vec!["rows".into(), "pad".into()]
            }),
            "没有这个参数；这个场景的参数是 rows, pad"
        );
        assert_eq!(expected_zh(&Expected::Missing), "缺少这个参数");
        // A preset's refusal, built by core, reads in Chinese from its fields.
        let preset = warpscope_core::session::Session::from_bytes(
            br#"{"scene": "banks", "params": {"pad": "3"}}"#,
        )
        .unwrap_err();
        assert_eq!(
            error_zh(&preset),
            "参数 `pad` = \"3\" 无效：类型是字符串，应为 0..=8 之间的整数"
        );
        // The entry keeps both languages; the panel picks one when it draws.
        let scene = scene::find("banks").expect("registered");
        let entry = error_entry(scene, &e);
        assert_eq!(entry.param, "threads");
        assert_eq!(entry.message(false), e.to_string());
        assert!(entry.message(true).starts_with("参数 `threads`"));
    }
}
