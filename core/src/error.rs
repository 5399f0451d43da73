//! The error type every `core` computation returns, and [`Expected`]: what a refused parameter
//! would have needed, as data (the GUI words it in Chinese from the fields).

use std::fmt;

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
    #[error("{}", input_message(key, problem))]
    InvalidInput {
        /// The key as the JSON spells it, with a position where it helps (`x[2]`, `trace[5]`).
        key: String,
        /// What is wrong and what would be valid.
        problem: String,
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
    /// Shorthand for [`Error::InvalidInput`].
    pub fn input(key: impl Into<String>, problem: impl Into<String>) -> Self {
        Error::InvalidInput {
            key: shorten(&key.into()),
            problem: problem.into(),
        }
    }

    /// Shorthand for [`Error::InvalidParam`]; `value` is shown as given, [`shorten`]ed past 40
    /// characters. `expected` is an [`Expected`] or, for a scene's own rule, English text
    /// (`"expected …"`, which becomes [`Expected::Custom`]).
    pub fn invalid(
        name: impl Into<String>,
        value: impl fmt::Display,
        expected: impl Into<Expected>,
    ) -> Self {
        Error::InvalidParam {
            name: shorten(&name.into()),
            value: shorten(&value.to_string()),
            expected: expected.into(),
        }
    }
}

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
/// messages (`expected an integer in 32..=1024`); the GUI builds its Chinese one from the fields.
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
    /// One of these names.
    OneOf(Vec<String>),
    /// A multiple of `step` in `min..=max`.
    MultipleOf {
        /// The divisor.
        step: i64,
        /// Smallest valid value.
        min: i64,
        /// Largest valid value.
        max: i64,
    },
    /// A power of two in `min..=max`.
    PowerOfTwo {
        /// Smallest valid value.
        min: i64,
        /// Largest valid value.
        max: i64,
    },
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
    /// A scene's own rule, in English (starting with `expected` where it names what is valid).
    Custom(String),
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
}

impl From<&str> for Expected {
    fn from(s: &str) -> Self {
        Expected::Custom(s.to_owned())
    }
}

impl From<String> for Expected {
    fn from(s: String) -> Self {
        Expected::Custom(s)
    }
}

impl From<&String> for Expected {
    fn from(s: &String) -> Self {
        Expected::Custom(s.clone())
    }
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expected::IntRange { min, max } => write!(f, "expected an integer in {min}..={max}"),
            Expected::RealRange {
                min,
                max,
                min_open,
                max_open,
            } => {
                let (lo, hi) = (fmt_real(*min), fmt_real(*max));
                if !min_open && !max_open {
                    write!(f, "expected a number in {lo}..={hi}")
                } else {
                    let open = if *min_open { '(' } else { '[' };
                    let close = if *max_open { ')' } else { ']' };
                    write!(f, "expected a number in {open}{lo}, {hi}{close}")
                }
            }
            Expected::OneOf(options) => write!(f, "expected one of {}", options.join(", ")),
            Expected::MultipleOf { step, min, max } => {
                write!(f, "expected a multiple of {step} in {min}..={max}")
            }
            Expected::PowerOfTwo { min, max } => {
                write!(f, "expected a power of two in {min}..={max}")
            }
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
            Expected::Custom(s) => f.write_str(s),
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
            Expected::from("expected l1 or l2"),
            Expected::Custom("expected l1 or l2".into())
        );
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
