//! The error type every `core` computation returns, and [`Expected`]: what a refused parameter
//! would have needed, as data worded in both languages (`expected.rs`).

use std::fmt;

use crate::text::Text;

mod expected;

pub use expected::{Expected, ValueKind};

/// Why a computation could not produce a result.
///
/// [`Error::InvalidParam`] is the user's to fix (the CLI exits with status 2 and the GUI shows
/// the message next to the control); the other variants describe bad input files or I/O.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// A parameter is outside its valid range or inconsistent with another parameter.
    #[error("invalid parameter `{name}` = {value}: {expected}")]
    InvalidParam {
        /// The parameter's name as `--set` spells it.
        name: String,
        /// The offending value, as given ([`shorten`]ed past 40 characters).
        value: String,
        /// What would be valid (a range, a list of choices, a divisibility rule).
        expected: Expected,
    },
    /// No scene has this id (see `warpscope list`).
    #[error("unknown scene `{0}`; `warpscope list` prints the scene ids")]
    UnknownScene(String),
    /// An input file could not be read or is not what it claims to be. Shown bounded
    /// ([`bounded`]): a decoder's message that quotes a whole file stays a few lines.
    #[error("{}", bounded(.0))]
    BadInput(String),
    /// A key of a user's input (`--input FILE.json`, the window's Input panel) is missing, of the
    /// wrong shape or out of range. The user's to fix, as [`Error::InvalidParam`] is: the CLI exits
    /// with status 2.
    #[error("{}", input_message(key, &problem.en))]
    InvalidInput {
        /// The key as the JSON spells it, with a position where it helps (`x[2]`, `trace[5]`).
        key: String,
        /// What is wrong and what would be valid, worded in both languages at the call site
        /// (text from the user's file, a key or a decoder's message, kept as given in both).
        problem: Text,
    },
    /// The computation was cancelled through its [`crate::progress::Progress`] handle (the
    /// window cancels a running computation when a newer parameter value arrives).
    #[error("cancelled")]
    Cancelled,
}

/// An [`Error::InvalidInput`] in words: `input `x[1]`: …`, or `input: …` for the whole input.
fn input_message(key: &str, problem: &str) -> String {
    if key.is_empty() {
        format!("input: {problem}")
    } else {
        format!("input `{key}`: {problem}")
    }
}

impl Error {
    /// Shorthand for [`Error::InvalidInput`]. `problem` is a [`Text`] written in both languages
    /// at the call site (there is no conversion from a bare English string here).
    pub fn input(key: impl Into<String>, problem: Text) -> Self {
        Error::InvalidInput {
            key: shorten(&key.into()),
            problem,
        }
    }

    /// Shorthand for [`Error::InvalidInput`] with a problem worded from two fixed texts.
    pub fn input_fixed(key: impl Into<String>, en: &str, zh: &str) -> Self {
        Error::input(key, Text::new(en.to_owned(), zh.to_owned()))
    }

    /// Shorthand for [`Error::InvalidParam`]; `value` is shown as given, [`shorten`]ed past 40
    /// characters. `expected` is a typed rule: a scene's own one is an [`Expected::Custom`] in
    /// both languages, never bare English (there is no conversion from a string).
    pub fn invalid(name: impl Into<String>, value: impl fmt::Display, expected: Expected) -> Self {
        Error::InvalidParam {
            name: shorten(&name.into()),
            value: shorten(&value.to_string()),
            expected,
        }
    }
}

/// Text from the user or a file as a message shows it: as given up to 40 characters; longer, its
/// first 20 characters, `…`, its last 8 and its length (a 1 MB literal stays one short line).
pub fn shorten(text: &str) -> String {
    let n = text.chars().count();
    if n <= 40 {
        return text.to_owned();
    }
    let head: String = text.chars().take(20).collect();
    let tail: String = text.chars().skip(n - 8).collect();
    format!("{head}…{tail} ({n} characters)")
}

/// A decoder's message as a message shows it: whole, except that each quoted part (between
/// backticks or double quotes) — where a decoder echoes text from the file — is [`shorten`]ed.
/// So the facts around it (which field, which line and column) stay whole, while a megabyte
/// the file supplied stays one short line.
pub fn shorten_quoted(message: &str) -> String {
    let mut out = String::with_capacity(message.len().min(1024));
    let mut rest = message;
    while let Some(open) = rest.find(['`', '"']) {
        let (before, from) = rest.split_at(open);
        out.push_str(before);
        let mut chars = from.chars();
        let Some(q) = chars.next() else { break };
        let inner = chars.as_str();
        match inner.find(q) {
            Some(close) => {
                let (quoted, after) = inner.split_at(close);
                out.push(q);
                out.push_str(&shorten(quoted));
                out.push(q);
                rest = after.get(q.len_utf8()..).unwrap_or("");
            }
            None => {
                // An unclosed quote runs to the end: shorten the rest as one quoted part.
                out.push(q);
                out.push_str(&shorten(inner));
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// Longest message shown whole, characters.
const MAX_MESSAGE_CHARS: usize = 800;

/// A whole message as shown: up to 800 characters as it is; longer (a decoder quoting a
/// megabyte of its input), its first 600 and last 100 characters around a note of the length.
pub fn bounded(message: &str) -> std::borrow::Cow<'_, str> {
    let n = message.chars().count();
    if n <= MAX_MESSAGE_CHARS {
        return message.into();
    }
    // Cut between words, not inside one: the head ends and the tail starts at a space when
    // one is near (a word under 40 characters is kept whole).
    let head: String = message.chars().take(600).collect();
    let head = match head.rfind(char::is_whitespace) {
        Some(i) if head.len() - i < 40 => head.get(..i).unwrap_or(&head).to_owned(),
        _ => head,
    };
    let tail: String = message.chars().skip(n - 100).collect();
    let tail = match tail.find(char::is_whitespace) {
        Some(i) if i < 40 => tail.get(i..).unwrap_or(&tail).trim_start().to_owned(),
        _ => tail,
    };
    format!("{head} … ({n} characters in all) … {tail}").into()
}

/// A real number as a message shows it: Rust's shortest round-trip form when that is short
/// (`0.5`, `1000000`), else its exponent form (`1e308`, not 309 digits).
pub fn fmt_real(v: f64) -> String {
    let plain = v.to_string();
    if plain.len() <= 24 {
        plain
    } else {
        format!("{v:e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_values_are_shortened_and_reals_stay_short() {
        let long = "9".repeat(1_000_000);
        let e = Error::invalid("n", &long, Expected::Finite);
        let m = e.to_string();
        assert!(m.len() < 200, "{}", m.len());
        assert!(m.contains("1000000 characters"), "{m}");
        assert_eq!(shorten("1e308"), "1e308");
        let e = Error::BadInput(format!("literal is invalid: {long}"));
        let m = e.to_string();
        assert!(
            m.len() < 1024 && m.contains("characters in all"),
            "{}",
            m.len()
        );
        assert_eq!(fmt_real(1e308), "1e308");
        assert_eq!(fmt_real(1e-300), "1e-300");
        assert_eq!(fmt_real(0.9), "0.9");
        assert_eq!(fmt_real(1e6), "1000000");
    }

    #[test]
    fn a_decoder_message_keeps_its_field_and_position_whole() {
        let m = shorten_quoted("missing field `scene` at line 1 column 13");
        assert_eq!(m, "missing field `scene` at line 1 column 13");
        let long = "x".repeat(1 << 20);
        let m = shorten_quoted(&format!(
            "unknown variant `{long}`, expected `a` at line 3 column 9"
        ));
        assert_eq!(
            m,
            format!(
                "unknown variant `{}…{} (1048576 characters)`, expected `a` at line 3 column 9",
                "x".repeat(20),
                "x".repeat(8)
            )
        );
        let m = shorten_quoted(&format!("invalid type: string \"{long}"));
        assert!(
            m.starts_with("invalid type: string \"xxxx") && m.len() < 80,
            "{m}"
        );
    }

    proptest::proptest! {
        /// A message of any length made of words: bounded to under 1 KB, and every word of what
        /// is shown is a whole word of the message.
        #[test]
        fn bounded_messages_cut_between_words(
            words in proptest::collection::vec("[a-z`0-9]{1,12}", 1..400),
        ) {
            let message = words.join(" ");
            let shown = bounded(&message);
            proptest::prop_assert!(shown.chars().count() < 1024);
            let note = format!("({} characters in all)", message.chars().count());
            let shown = shown.replace(&note, "");
            for w in shown.split_whitespace().filter(|w| *w != "…") {
                proptest::prop_assert!(words.iter().any(|x| x == w), "{} cut from {}", w, message);
            }
        }
    }
}
