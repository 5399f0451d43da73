//! Decks: a lecture as a list of slides, each a scene (or a preset) with its parameters, input,
//! the stepper events to show, and a title and speaker notes in both languages.
//!
//! ```json
//! {"title": {"en": "Lecture 11", "zh": "第 11 讲"},
//!  "slides": [
//!    {"scene": "reduction", "params": {"threads": 64}, "events": [0, 40],
//!     "title": {"en": "A warp's butterfly", "zh": "线程束的蝶形归约"},
//!     "notes": {"en": "…", "zh": "…"}},
//!    {"preset": "reduction-partial-warp-48", "title": {"en": "…", "zh": "…"}}]}
//! ```
//!
//! A slide names a `scene` or a `preset` (a bundled preset's name, or a session file; both may be
//! given when they agree); `params` are set on top of the preset's (or the lecture defaults);
//! `input` is the scene's input as a JSON object, or the path of an input file; `event` shows one
//! stepper event, `events: [from, to]` a range of them (a preset's `step` when neither is
//! given). Relative paths are resolved from the deck file's folder.
//!
//! Reading is as strict as a session's ([`crate::session`]): the file goes through
//! [`crate::input::read_regular`], unknown keys are refused, every parameter is checked against
//! its scene's specs, and every error names the slide (`slides[3]`) and the key.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::Error;
use crate::params::ParamValues;
use crate::scene;
use crate::session::Session;
use crate::text::Text;

/// Largest deck file read (bytes).
pub const MAX_DECK_BYTES: u64 = 1 << 20;

/// Most slides a deck may have.
pub const MAX_SLIDES: usize = 500;

/// The bundled deck: lecture 11 in order, every scene at least once.
pub const LECTURE11: &str = include_str!("../../assets/decks/lecture11.json");

/// A deck: its title and slides.
#[derive(Debug, Clone, PartialEq)]
pub struct Deck {
    /// The deck's title.
    pub title: Text,
    /// The slides, in order.
    pub slides: Vec<Slide>,
}

/// One slide of a [`Deck`].
#[derive(Debug, Clone, PartialEq)]
pub struct Slide {
    /// The scene id.
    pub scene: String,
    /// Its parameter values, validated against the scene's specs.
    pub params: ParamValues,
    /// The scene's input (a JSON object), if it is given one.
    pub input: Option<Value>,
    /// The stepper events shown, `from..=to` (one event: `from == to`); `None`: the scene's
    /// first (or a scene without a stepper).
    pub events: Option<(usize, usize)>,
    /// The slide's title.
    pub title: Text,
    /// What to say on this slide, if anything.
    pub notes: Option<Text>,
}

/// The keys a slide may have.
const SLIDE_KEYS: &[&str] = &[
    "scene", "preset", "params", "input", "event", "events", "title", "notes",
];

impl Deck {
    /// Reads and validates the deck file at `path` (through [`crate::input::read_regular`]);
    /// relative paths in it are resolved from its folder.
    ///
    /// # Errors
    /// [`Error::BadInput`] naming the file, and the slide and key where one is at fault.
    pub fn read(path: &Path) -> Result<Self, Error> {
        let bytes = crate::input::read_regular(path, MAX_DECK_BYTES, "deck")?;
        let dir = path.parent().map(Path::to_owned).unwrap_or_default();
        Self::from_bytes(&bytes, &dir).map_err(|e| {
            Error::BadInput(format!(
                "deck `{}`: {}",
                path.display(),
                e.to_string().trim_start_matches("deck: ")
            ))
        })
    }

    /// The bundled deck ([`LECTURE11`]).
    ///
    /// # Errors
    /// As [`Deck::from_bytes`] (a test reads it, so it never fails in a release).
    pub fn bundled() -> Result<Self, Error> {
        Self::from_bytes(LECTURE11.as_bytes(), Path::new("."))
    }

    /// Parses and validates a deck from file bytes; relative paths are resolved from `dir`.
    ///
    /// # Errors
    /// [`Error::BadInput`]: over [`MAX_DECK_BYTES`], not JSON, not of the deck's shape, or a
    /// slide at fault (named with its key: an unknown scene or preset, a parameter out of range,
    /// an input the scene does not take, …).
    pub fn from_bytes(bytes: &[u8], dir: &Path) -> Result<Self, Error> {
        let bad = |m: String| Error::BadInput(format!("deck: {m}"));
        if bytes.len() as u64 > MAX_DECK_BYTES {
            return Err(bad(format!(
                "a deck file is at most {MAX_DECK_BYTES} bytes; this one has {}",
                bytes.len()
            )));
        }
        let value: Value = serde_json::from_slice(bytes).map_err(|e| {
            bad(format!(
                "not a warpscope deck ({}); expected {{\"title\": {{\"en\", \"zh\"}}, \"slides\": [...]}}",
                crate::error::shorten(&e.to_string())
            ))
        })?;
        let top = object(&value, "", &["title", "slides"]).map_err(bad)?;
        let title = text(top.get("title"), "title")
            .and_then(|t| t.ok_or_else(|| "`title` is missing: give {\"en\": …, \"zh\": …}".into()))
            .map_err(bad)?;
        let slides = match top.get("slides") {
            Some(Value::Array(a)) if !a.is_empty() && a.len() <= MAX_SLIDES => a,
            Some(Value::Array(a)) => {
                return Err(bad(format!(
                    "`slides` has {} slides; expected 1 to {MAX_SLIDES}",
                    a.len()
                )));
            }
            Some(v) => {
                return Err(bad(format!(
                    "`slides` is {}; expected a list of slides",
                    crate::input::json::kind(v)
                )));
            }
            None => return Err(bad("`slides` is missing".into())),
        };
        let slides = slides
            .iter()
            .enumerate()
            .map(|(i, s)| slide(s, dir).map_err(|m| bad(format!("slides[{i}]{m}"))))
            .collect::<Result<_, _>>()?;
        Ok(Deck { title, slides })
    }

    /// How many figures the deck shows: one per slide, and one per key frame of a slide with a
    /// range of events ([`key_frames`], at most `per_range` each).
    pub fn figure_count(&self, per_range: usize) -> usize {
        self.slides
            .iter()
            .map(|s| {
                s.events
                    .map_or(1, |(a, b)| key_frames(a, b, per_range).len())
            })
            .sum()
    }
}

/// The events of `from..=to` a deck shows for a range: at most `count` (at least one), spread
/// evenly, the first and the last always among them.
pub fn key_frames(from: usize, to: usize, count: usize) -> Vec<usize> {
    let (from, to) = (from.min(to), from.max(to));
    let span = to - from;
    let n = count.max(1).min(span + 1);
    if n == 1 {
        return vec![to];
    }
    let mut out: Vec<usize> = (0..n).map(|k| from + k * span / (n - 1)).collect();
    out.dedup();
    out
}

/// `v` as an object with only `allowed` keys; `at` is the key path for messages.
fn object<'a>(v: &'a Value, at: &str, allowed: &[&str]) -> Result<&'a Map<String, Value>, String> {
    let Value::Object(map) = v else {
        return Err(format!(
            "{at} is {}; expected a JSON object",
            crate::input::json::kind(v)
        ));
    };
    if let Some(k) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(format!(
            "{at} `{}`: unknown key; expected one of {}",
            crate::error::shorten(k),
            allowed.join(", ")
        ));
    }
    Ok(map)
}

/// An optional `{"en", "zh"}` text under `key`: both strings, neither empty.
fn text(v: Option<&Value>, key: &str) -> Result<Option<Text>, String> {
    let Some(v) = v else { return Ok(None) };
    let map =
        object(v, &format!("`{key}`"), &["en", "zh"]).map_err(|m| m.replacen("` `", ".", 1))?;
    let lang = |l: &str| match map.get(l) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        Some(Value::String(_)) | None => Err(format!("`{key}.{l}` is missing or empty")),
        Some(v) => Err(format!(
            "`{key}.{l}` is {}; expected a string",
            crate::input::json::kind(v)
        )),
    };
    Ok(Some(Text::new(lang("en")?, lang("zh")?)))
}

/// A whole event number under `key`.
fn event(v: &Value, key: &str) -> Result<usize, String> {
    v.as_u64()
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| {
            format!(
                "`{key}` = {}: expected a whole event number ≥ 0",
                crate::error::shorten(&v.to_string())
            )
        })
}

/// A path in the deck, resolved from its folder.
fn resolve(dir: &Path, text: &str) -> PathBuf {
    let p = crate::torch::snapshot::expand_home(text);
    if p.is_absolute() { p } else { dir.join(p) }
}

/// Slide `i`; an error is the rest of its message after `slides[i]`.
fn slide(v: &Value, dir: &Path) -> Result<Slide, String> {
    let map = object(v, "", SLIDE_KEYS).map_err(|m| m.trim_start().to_owned())?;
    let at = |key: &str, e: Error| format!(" `{key}`: {e}");
    let string = |key: &str| -> Result<Option<&str>, String> {
        match map.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(format!(
                " `{key}` is {}; expected a string",
                crate::input::json::kind(v)
            )),
        }
    };
    // The scene, and the preset's values to start from.
    let preset: Option<Session> = match string("preset")? {
        Some(name) => {
            let file = resolve(dir, name);
            Some(if file.exists() {
                Session::read(&file).map_err(|e| at("preset", e))?
            } else {
                crate::presets::find(name)
                    .map(|p| p.session)
                    .map_err(|e| at("preset", e))?
            })
        }
        None => None,
    };
    let sc = match (string("scene")?, &preset) {
        (Some(id), Some(p)) if id != p.scene => {
            return Err(format!(
                " `scene`: \"{}\" but the preset is for scene `{}`",
                crate::error::shorten(id),
                p.scene
            ));
        }
        (Some(id), _) => scene::find(id).map_err(|e| at("scene", e))?,
        (None, Some(p)) => scene::find(&p.scene).map_err(|e| at("preset", e))?,
        (None, None) => return Err(": give a `scene` (see `warpscope list`) or a `preset`".into()),
    };
    let mut params = preset
        .as_ref()
        .map_or_else(|| ParamValues::defaults(sc.params), |p| p.params.clone());
    if let Some(v) = map.get("params") {
        let given = object(
            v,
            " `params`",
            &sc.params.iter().map(|p| p.name).collect::<Vec<_>>(),
        )?;
        for (k, v) in given {
            let spec = sc
                .params
                .iter()
                .find(|s| s.name == k)
                .ok_or_else(|| format!(" `params.{k}`: unknown"))?;
            let value = spec.from_json(v).map_err(|e| at("params", e))?;
            params.0.insert(k.clone(), value);
        }
    }
    let params = params.validated(sc.params).map_err(|e| at("params", e))?;
    let input = match map.get("input") {
        None => preset.as_ref().and_then(|p| p.input.clone()),
        Some(v) => {
            sc.input_spec().map_err(|e| at("input", e))?;
            Some(match v {
                Value::String(p) => {
                    crate::input::json::read(&resolve(dir, p)).map_err(|e| at("input", e))?
                }
                Value::Object(_) => v.clone(),
                other => {
                    return Err(format!(
                        " `input` is {}; expected a JSON object or the path of an input file",
                        crate::input::json::kind(other)
                    ));
                }
            })
        }
    };
    let events = match (map.get("event"), map.get("events")) {
        (Some(_), Some(_)) => {
            return Err(": give `event` (one) or `events` (a range), not both".into());
        }
        (Some(e), None) => {
            let e = event(e, "event").map_err(|m| format!(" {m}"))?;
            Some((e, e))
        }
        (None, Some(Value::Array(r))) if r.len() == 2 => {
            let from = event(&r[0], "events[0]").map_err(|m| format!(" {m}"))?;
            let to = event(&r[1], "events[1]").map_err(|m| format!(" {m}"))?;
            if from > to {
                return Err(format!(
                    " `events` = [{from}, {to}]: expected [from, to] with from ≤ to"
                ));
            }
            Some((from, to))
        }
        (None, Some(v)) => {
            return Err(format!(
                " `events` = {}: expected [from, to]",
                crate::error::shorten(&v.to_string())
            ));
        }
        (None, None) => preset.as_ref().and_then(|p| p.step).map(|s| (s, s)),
    };
    let title = text(map.get("title"), "title")
        .map_err(|m| format!(" {m}"))?
        .ok_or_else(|| " `title` is missing: give {\"en\": …, \"zh\": …}".to_owned())?;
    let notes = text(map.get("notes"), "notes").map_err(|m| format!(" {m}"))?;
    Ok(Slide {
        scene: sc.id.to_owned(),
        params,
        input,
        events,
        title,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(json: &str) -> String {
        Deck::from_bytes(json.as_bytes(), Path::new("."))
            .unwrap_err()
            .to_string()
    }

    const T: &str = r#""title": {"en": "t", "zh": "题"}"#;

    #[test]
    fn the_bundled_deck_walks_every_scene_in_both_languages() {
        let deck = Deck::bundled().unwrap();
        for s in scene::scenes() {
            assert!(
                deck.slides.iter().any(|d| d.scene == s.id),
                "scene {} has a slide",
                s.id
            );
        }
        for (i, s) in deck.slides.iter().enumerate() {
            assert!(
                s.notes
                    .as_ref()
                    .is_some_and(|n| !n.en.is_empty() && !n.zh.is_empty()),
                "slide {i} has notes in both languages"
            );
        }
    }

    #[test]
    fn a_slide_reads_its_scene_preset_params_and_events() {
        let d = Deck::from_bytes(
            format!(
                r#"{{{T}, "slides": [
                {{"scene": "banks", "params": {{"pad": 1}}, {T}}},
                {{"scene": "reduction", "events": [2, 9], {T}, "notes": {{"en": "n", "zh": "注"}}}},
                {{"preset": "reduction-partial-warp-48", "event": 3, {T}}}]}}"#
            )
            .as_bytes(),
            Path::new("."),
        )
        .unwrap();
        assert_eq!(d.slides.len(), 3);
        assert_eq!(d.slides[0].params.int("pad").unwrap(), 1);
        assert_eq!(
            d.slides[0].params.int("rows").unwrap(),
            32,
            "lecture default"
        );
        assert_eq!(d.slides[1].events, Some((2, 9)));
        assert_eq!(d.slides[2].scene, "reduction");
        assert_eq!(d.slides[2].events, Some((3, 3)));
        assert!(d.slides[2].input.is_some(), "the preset's input");
    }

    #[test]
    fn every_error_names_the_slide_and_the_key() {
        let e = err(&format!(
            r#"{{{T}, "slides": [{{"scene": "banks", {T}}}, {{"scene": "banks", "params": {{"pad": 99}}, {T}}}]}}"#
        ));
        assert!(
            e.contains("slides[1]") && e.contains("`params`") && e.contains("pad"),
            "{e}"
        );
        let e = err(&format!(r#"{{{T}, "slides": [{{"scene": "nope", {T}}}]}}"#));
        assert!(e.contains("slides[0] `scene`") && e.contains("nope"), "{e}");
        let e = err(&format!(
            r#"{{{T}, "slides": [{{"scene": "banks", "colour": 1, {T}}}]}}"#
        ));
        assert!(e.contains("slides[0]") && e.contains("`colour`"), "{e}");
        let e = err(&format!(
            r#"{{{T}, "slides": [{{"scene": "banks", "events": [5, 2], {T}}}]}}"#
        ));
        assert!(e.contains("slides[0] `events`"), "{e}");
        let e = err(&format!(r#"{{{T}, "slides": [{{"scene": "banks"}}]}}"#));
        assert!(e.contains("slides[0] `title`"), "{e}");
        let e = err(&format!(
            r#"{{{T}, "slides": [{{"scene": "banks", "title": {{"en": "x"}}}}]}}"#
        ));
        assert!(e.contains("slides[0] `title.zh`"), "{e}");
        let e = err(&format!(
            r#"{{{T}, "slides": [{{"scene": "layernorm-syncs", "input": {{}}, {T}}}]}}"#
        ));
        assert!(e.contains("slides[0] `input`"), "{e}");
        let e = err(&format!(
            r#"{{{T}, "slides": [{{"preset": "no-such", {T}}}]}}"#
        ));
        assert!(e.contains("slides[0] `preset`"), "{e}");
        let e = err(&format!(r#"{{{T}, "slides": []}}"#));
        assert!(e.contains("`slides`"), "{e}");
        assert!(err("[1, 2]").contains("JSON object"));
        assert!(err("not json").contains("not a warpscope deck"));
    }

    #[test]
    fn relative_files_are_resolved_from_the_decks_folder() {
        let dir = std::env::temp_dir().join(format!("warpscope-deck-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(
            dir.join("sub/p.json"),
            r#"{"scene": "banks", "params": {"pad": 1}}"#,
        )
        .unwrap();
        let deck = dir.join("d.json");
        std::fs::write(
            &deck,
            format!(r#"{{{T}, "slides": [{{"preset": "sub/p.json", {T}}}, {{"preset": "sub/none.json", {T}}}]}}"#),
        )
        .unwrap();
        let e = Deck::read(&deck).unwrap_err().to_string();
        assert!(
            e.contains("d.json") && e.contains("slides[1] `preset`"),
            "{e}"
        );
        std::fs::write(
            &deck,
            format!(r#"{{{T}, "slides": [{{"preset": "sub/p.json", {T}}}]}}"#),
        )
        .unwrap();
        let d = Deck::read(&deck).unwrap();
        assert_eq!(d.slides[0].params.int("pad").unwrap(), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn key_frames_spread_over_the_range_with_both_ends() {
        assert_eq!(key_frames(0, 40, 5), vec![0, 10, 20, 30, 40]);
        assert_eq!(key_frames(3, 3, 5), vec![3]);
        assert_eq!(key_frames(0, 2, 5), vec![0, 1, 2]);
        assert_eq!(key_frames(0, 9, 1), vec![9]);
    }
}
