//! Text in both of warpscope's languages. Core words what it computes in English and in
//! Chinese side by side, from the same numbers; a view picks one with [`Text::get`]. In the JSON
//! a text is `{"en": "…", "zh": "…"}`.

use serde::{Deserialize, Serialize};

/// A text in English (`en`) and Chinese (`zh`). `S` is `&'static str` for the fixed texts of
/// const tables and `String` for texts built from computed numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Text<S = String> {
    /// English.
    pub en: S,
    /// Chinese (the lecture's terms where it gives them).
    pub zh: S,
}

impl<S> Text<S> {
    /// A text from its two wordings.
    pub const fn new(en: S, zh: S) -> Self {
        Text { en, zh }
    }
}

impl<S: Copy> Text<S> {
    /// A text worded the same in both languages: a formula or a symbol (`∇y`, `P = g′ ⊙ y`).
    pub const fn same(s: S) -> Self {
        Text { en: s, zh: s }
    }
}

impl Text {
    /// A text built at run time, worded the same in both languages: code, a formula, an
    /// identifier (a trace event's `xor 16`, a WGSL line).
    pub fn same_owned(s: impl Into<String>) -> Self {
        let s = s.into();
        Text {
            en: s.clone(),
            zh: s,
        }
    }
}

/// Code, a formula or an identifier: the same in both languages.
impl From<&str> for Text {
    fn from(s: &str) -> Self {
        Text::same_owned(s)
    }
}

/// Code, a formula or an identifier: the same in both languages.
impl From<&String> for Text {
    fn from(s: &String) -> Self {
        Text::same_owned(s.as_str())
    }
}

impl From<Text<&str>> for Text {
    fn from(t: Text<&str>) -> Self {
        Text::new(t.en.to_owned(), t.zh.to_owned())
    }
}

impl<S: AsRef<str>> Text<S> {
    /// The Chinese wording when `zh`, else the English one.
    pub fn get(&self, zh: bool) -> &str {
        if zh {
            self.zh.as_ref()
        } else {
            self.en.as_ref()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_language_and_serialises_both() {
        let t = Text::new("warp", "线程束");
        assert_eq!(t.get(false), "warp");
        assert_eq!(t.get(true), "线程束");
        let json = serde_json::to_value(t).expect("serialises");
        assert_eq!(json, serde_json::json!({"en": "warp", "zh": "线程束"}));
    }
}
