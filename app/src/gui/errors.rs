//! Errors as the parameter panel shows them: core's [`Error`] kept in both languages, and its
//! Chinese wording built from the error's fields (a refusal's typed rule,
//! [`warpscope_core::error::Expected`], words itself in Chinese in core: `Expected::zh`).

use warpscope_core::Error;
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

/// [`Error`]'s message in Chinese, built from its fields (core words it in English).
pub fn error_zh(e: &Error) -> String {
    match e {
        Error::InvalidParam {
            name,
            value,
            expected,
        } => format!("参数 `{name}` = {value} 无效：{}", expected.zh()),
        Error::BadInput(_) => format!("输入有误：{e}"),
        Error::InvalidInput { key, problem } if key.is_empty() => {
            format!("输入有误：{}", problem.zh)
        }
        Error::InvalidInput { key, problem } => format!("输入 `{key}` 有误：{}", problem.zh),
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
    use warpscope_core::error::{Expected, ValueKind};
    use warpscope_core::scene;

    #[test]
    fn an_input_error_reads_in_chinese() {
        let v = serde_json::json!({"values": [1, 2, 3]});
        let e = warpscope_core::input::json::number(&v, "values[0]").unwrap_err();
        assert_eq!(error_zh(&e), "输入 `values[0]` 有误：应为数，实为对象");
        let e = warpscope_core::input::json::object(&v, &["x"]).unwrap_err();
        assert_eq!(
            error_zh(&e),
            "输入 `values` 有误：未知的键；此场景的输入接受 x"
        );
    }

    #[test]
    fn a_parameter_error_reads_in_chinese_from_its_fields() {
        let e = Error::invalid(
            "threads",
            48,
            Expected::MultipleOf {
                step: 32,
                min: 32,
                max: 1024,
            },
        );
        assert_eq!(
            error_zh(&e),
            "参数 `threads` = 48 无效：应为 32..=1024 之间 32 的倍数"
        );
        let e = Error::invalid("threads", 0, Expected::IntRange { min: 1, max: 1024 });
        assert_eq!(
            error_zh(&e),
            "参数 `threads` = 0 无效：应为 1..=1024 之间的整数"
        );
        // The shapes the window once translated from core's English, now typed.
        let gpt2 = Expected::one_of(&["gpt2-small", "gpt2-xl"]).noted("GPT-2 family", "GPT-2 系列");
        assert_eq!(
            error_zh(&Error::invalid("model", "bert", gpt2)),
            "参数 `model` = bert 无效：应为以下之一：gpt2-small, gpt2-xl（GPT-2 系列）"
        );
        assert_eq!(
            error_zh(&Error::invalid(
                "loss",
                "l3",
                Expected::either(&["l1", "l2"])
            )),
            "参数 `loss` = l3 无效：应为 l1 或 l2"
        );
        assert_eq!(
            error_zh(&Error::invalid(
                "len",
                9000,
                Expected::Between { min: 2, max: 8192 }
            )),
            "参数 `len` = 9000 无效：应在 2..=8192 之间"
        );
        let heads = Expected::MultipleOfParam {
            param: "heads".into(),
            value: 12,
        };
        assert_eq!(
            error_zh(&Error::invalid("hidden", 100, heads)),
            "参数 `hidden` = 100 无效：应为 heads = 12 的倍数"
        );
        let typed = Expected::Type {
            found: ValueKind::Bool,
            expected: Box::new(Expected::PositiveInteger),
        };
        assert_eq!(
            error_zh(&Error::invalid("tokens", true, typed)),
            "参数 `tokens` = true 无效：类型是布尔值，应为正整数"
        );
        // A scene's own rule carries its Chinese from core.
        let own = Expected::custom("expected at least 1 row", "至少应有 1 行");
        assert_eq!(
            error_zh(&Error::invalid("rows", 0, own)),
            "参数 `rows` = 0 无效：至少应有 1 行"
        );
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
