//! Sessions (presets): a scene, its parameters and the stepper's position as a small JSON file,
//! so a figure can be reproduced exactly later (`warpscope … --preset FILE`); optionally the
//! window's theme and language, the user's `input`, and a `title` and `note` (the bundled presets'
//! button name and one sentence of what they show).
//!
//! ```json
//! {"scene": "reduction", "params": {"threads": 256, "values": 2}, "step": 12}
//! ```
//!
//! Reading is defensive: the file must be a regular file (a FIFO or a device is refused before it
//! is opened, see [`crate::input`]), is bounded in size, must be UTF-8 JSON of this shape, names a
//! known scene, and every parameter is checked against the scene's specs — its JSON type too
//! (`3.0` is the integer 3, as `--set pad=3.0` is; `"3"` is a string) — and missing ones take the
//! lecture defaults.

use serde::{Deserialize, Serialize};

use crate::Error;
use crate::params::ParamValues;
use crate::scene;
use crate::text::Text;

/// Largest session file read (bytes): a few hundred bytes of scene and parameters, plus the
/// user's input when it has one (at most [`crate::input::json::MAX_INPUT_BYTES`]).
pub const MAX_SESSION_BYTES: usize = crate::input::json::MAX_INPUT_BYTES as usize + 64 * 1024;

/// A session as the file spells it: parameters as raw JSON, read against the scene's specs
/// afterwards (so a refusal can say what type the file holds and show its number exactly).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSession {
    scene: String,
    #[serde(default)]
    params: serde_json::Map<String, serde_json::Value>,
    #[serde(default)]
    step: Option<usize>,
    #[serde(default)]
    theme: Option<String>,
    #[serde(default)]
    lang: Option<String>,
    #[serde(default)]
    input: Option<serde_json::Value>,
    #[serde(default)]
    note: Option<Text>,
    #[serde(default)]
    title: Option<Text>,
}

/// The window themes a session may name.
pub const THEMES: &[&str] = &["dark", "light", "slides"];

/// The languages a session may name.
pub const LANGS: &[&str] = &["en", "zh"];

/// A saved scene state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Session {
    /// The scene id.
    pub scene: String,
    /// Parameter values (validated against the scene when read).
    #[serde(default)]
    pub params: ParamValues,
    /// The stepper's event, for scenes with a trace.
    #[serde(default)]
    pub step: Option<usize>,
    /// The window's theme when it was saved: one of [`THEMES`] (absent in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<String>,
    /// The window's language when it was saved: one of [`LANGS`] (absent in older files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lang: Option<String>,
    /// The user's own data the scene was computed on (`--input`, the window's Input panel),
    /// for scenes that take one; validated by the scene when it is computed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<serde_json::Value>,
    /// One sentence on what the session shows (the bundled pitfall presets carry one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<Text>,
    /// A short name for it (the window's *Examples* buttons).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<Text>,
}

impl Session {
    /// Parses and validates a session from file bytes.
    ///
    /// # Errors
    /// [`Error::BadInput`] for an oversized, non-UTF-8 or malformed file; [`Error::UnknownScene`];
    /// [`Error::InvalidParam`] for a parameter out of range.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        if bytes.len() > MAX_SESSION_BYTES {
            return Err(Error::BadInput(format!(
                "a session file is at most {MAX_SESSION_BYTES} bytes; this one has {}",
                bytes.len()
            )));
        }
        // serde_json would keep the last of two equal keys (in `params`, in `input`): refuse
        // them, naming the key, before the file is read for its shape.
        // (Other faults are worded by the typed read below.)
        match crate::input::strict::parse(bytes) {
            Err(e)
                if e.to_string().starts_with("duplicate key")
                    || bytes.starts_with(b"\xEF\xBB\xBF") =>
            {
                return Err(Error::BadInput(crate::input::json::not_json(bytes, &e)));
            }
            _ => {}
        }
        let raw: RawSession = serde_json::from_slice(bytes).map_err(|e| {
            Error::BadInput(format!(
                "not a warpscope session ({}); expected {{\"scene\": \"…\", \"params\": {{…}}, \"step\": N}}",
                crate::error::shorten_quoted(&e.to_string())
            ))
        })?;
        let sc = scene::find(&raw.scene)
            .map_err(|_| Error::UnknownScene(crate::error::shorten(&raw.scene)))?;
        let one_of = |key: &str, v: Option<String>, allowed: &[&str]| match v {
            Some(x) if !allowed.contains(&x.as_str()) => Err(Error::BadInput(format!(
                "session `{key}` is \"{}\"; expected one of {}",
                crate::error::shorten(&x),
                allowed.join(", ")
            ))),
            v => Ok(v),
        };
        if let Some(input) = &raw.input {
            sc.input_spec()?;
            if !input.is_object() {
                return Err(Error::input(
                    "",
                    Text::new(
                        format!(
                            "a session's `input` is a JSON object of keys, not {}",
                            crate::input::json::kind(input)
                        ),
                        format!(
                            "会话的 `input` 是由键组成的 JSON 对象，不是{}",
                            crate::input::json::kind_zh(input)
                        ),
                    ),
                ));
            }
        }
        Ok(Session {
            scene: raw.scene,
            params: ParamValues::from_json(sc.params, &raw.params)?,
            step: raw.step,
            theme: one_of("theme", raw.theme, THEMES)?,
            lang: one_of("lang", raw.lang, LANGS)?,
            input: raw.input,
            note: raw.note,
            title: raw.title,
        })
    }

    /// Reads and validates a session file (through [`crate::input::read_regular`]: a FIFO, a
    /// device or a directory is refused before it is opened).
    ///
    /// # Errors
    /// [`Error::BadInput`] when the file cannot be read, is not a regular file or is over
    /// [`MAX_SESSION_BYTES`], plus [`Session::from_bytes`]'s errors.
    pub fn read(path: &std::path::Path) -> Result<Self, Error> {
        let bytes = crate::input::read_regular(path, MAX_SESSION_BYTES as u64, "preset")?;
        Self::from_bytes(&bytes).map_err(|e| match e {
            Error::BadInput(m) => Error::BadInput(format!("preset `{}`: {m}", path.display())),
            other => other,
        })
    }

    /// The session as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn theme_and_language_round_trip_and_unknown_ones_are_refused() {
        let s = Session::from_bytes(
            br#"{"scene": "banks", "theme": "slides", "lang": "zh", "step": 0}"#,
        )
        .unwrap();
        assert_eq!(
            (s.theme.as_deref(), s.lang.as_deref()),
            (Some("slides"), Some("zh"))
        );
        assert_eq!(Session::from_bytes(s.to_json().as_bytes()).unwrap(), s);
        // Older files have neither, and keep reading.
        let old = Session::from_bytes(br#"{"scene": "banks"}"#).unwrap();
        assert_eq!((old.theme, old.lang), (None, None));
        let e = Session::from_bytes(br#"{"scene": "banks", "theme": "neon"}"#).unwrap_err();
        assert!(e.to_string().contains("dark, light, slides"), "{e}");
    }

    #[test]
    fn round_trip_and_defaults() {
        let s =
            Session::from_bytes(br#"{"scene": "banks", "params": {"pad": 1}, "step": 3}"#).unwrap();
        assert_eq!(s.params.int("pad").unwrap(), 1);
        assert_eq!(
            s.params.int("rows").unwrap(),
            32,
            "missing parameters take the lecture default"
        );
        assert_eq!(Session::from_bytes(s.to_json().as_bytes()).unwrap(), s);
    }

    #[test]
    fn hostile_or_wrong_files_are_clear_errors() {
        let e = Session::from_bytes(br#"{"scene": "banks", "params": {"pad": 99}}"#).unwrap_err();
        assert!(e.to_string().contains("pad"), "{e}");
        assert!(matches!(
            Session::from_bytes(br#"{"scene": "nope"}"#),
            Err(Error::UnknownScene(_))
        ));
        assert!(matches!(
            Session::from_bytes(b"\xff\xfe random bytes \x00\x01"),
            Err(Error::BadInput(_))
        ));
        assert!(matches!(
            Session::from_bytes(br#"{"scene": "banks", "extra": 1}"#),
            Err(Error::BadInput(_))
        ));
        let big = vec![b' '; MAX_SESSION_BYTES + 1];
        assert!(
            Session::from_bytes(&big)
                .unwrap_err()
                .to_string()
                .contains("at most")
        );
        // A preset's JSON types are checked: 3.0 is the integer 3 (as `--set pad=3.0` is), a
        // string or a fraction is refused saying what the file holds.
        let s = Session::from_bytes(br#"{"scene": "banks", "params": {"pad": 3.0}}"#).unwrap();
        assert_eq!(s.params.0["pad"], crate::params::ParamValue::Int(3));
        for (json, found) in [
            (r#""3""#, "a string"),
            ("3.5", "a float"),
            ("true", "a boolean"),
        ] {
            let text = format!(r#"{{"scene": "banks", "params": {{"pad": {json}}}}}"#);
            let e = Session::from_bytes(text.as_bytes())
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("`pad`") && e.contains(&format!("{found}, expected an integer")),
                "{e}"
            );
        }
        // Numbers are shown as the file spells them: u64::MAX exactly, 1e308 not as 309 digits.
        let e = Session::from_bytes(
            br#"{"scene": "layernorm-error", "params": {"seed": 18446744073709551615}}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("= 18446744073709551615:"), "{e}");
        let e =
            Session::from_bytes(br#"{"scene": "softmax-fusion", "params": {"dropout": 1e308}}"#)
                .unwrap_err()
                .to_string();
        assert!(e.contains("dropout") && e.len() < 200, "{e}");
        let deep = "[".repeat(10_000);
        assert!(matches!(
            Session::from_bytes(deep.as_bytes()),
            Err(Error::BadInput(_))
        ));
    }

    #[cfg(unix)]
    #[test]
    fn devices_and_fifos_are_refused_before_reading() {
        let started = std::time::Instant::now();
        for dev in ["/dev/zero", "/dev/urandom"] {
            let e = Session::read(std::path::Path::new(dev))
                .unwrap_err()
                .to_string();
            assert!(e.contains(dev) && e.contains("device"), "{e}");
        }
        let dir = std::env::temp_dir().join(format!("warpscope-session-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("p.json");
        let _ = std::fs::remove_file(&fifo);
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = Session::read(&fifo).unwrap_err().to_string();
        assert!(e.contains("p.json") && e.contains("FIFO"), "{e}");
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
