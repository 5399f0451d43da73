//! The bundled presets: one session file per pitfall of the lecture's §8 and per classic
//! failure (`assets/presets/*.json`, embedded at build time), each a scene, its parameters, the
//! input that shows the failure and one sentence ([`crate::session::Session::note`]) of what
//! it shows. The window lists a scene's presets under it; `--preset assets/presets/NAME.json`
//! opens one from the command line.

use crate::Error;
use crate::session::Session;

/// `(file stem, file text)` of every bundled preset, sorted by name.
static FILES: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/presets.rs"));

/// A bundled preset.
#[derive(Debug, Clone)]
pub struct Preset {
    /// The file's stem, e.g. `layernorm-one-pass-large-mean`.
    pub name: &'static str,
    /// The session it holds.
    pub session: Session,
}

/// Every bundled preset, parsed; a preset that does not parse is an error naming it (a test
/// reads them all, so a broken file never ships).
///
/// # Errors
/// The first preset whose file is not a valid session.
pub fn all() -> Result<Vec<Preset>, Error> {
    FILES
        .iter()
        .map(|(name, text)| {
            Session::from_bytes(text.as_bytes())
                .map(|session| Preset { name, session })
                .map_err(|e| Error::BadInput(format!("bundled preset `{name}`: {e}")))
        })
        .collect()
}

/// The bundled presets of scene `id`, by name; presets that do not parse are left out.
pub fn for_scene(id: &str) -> Vec<Preset> {
    FILES
        .iter()
        .filter_map(|(name, text)| {
            let session = Session::from_bytes(text.as_bytes()).ok()?;
            (session.scene == id).then_some(Preset { name, session })
        })
        .collect()
}

/// The bundled preset named `name`.
///
/// # Errors
/// [`Error::BadInput`] naming the known presets.
pub fn find(name: &str) -> Result<Preset, Error> {
    all()?.into_iter().find(|p| p.name == name).ok_or_else(|| {
        let names: Vec<&str> = FILES.iter().map(|(n, _)| *n).collect();
        Error::BadInput(format!(
            "no bundled preset `{name}`; the presets: {}",
            names.join(", ")
        ))
    })
}

/// Reads a `--preset` (or a session the window opens): a session file, or the name of a bundled
/// preset ([`find`]) when no file has that name.
///
/// # Errors
/// The session file's errors ([`Session::read`]); for a name that is neither a file nor a
/// bundled preset, the file's error (naming the path).
pub fn read(path: &std::path::Path) -> Result<Session, Error> {
    match Session::read(path) {
        Err(e) if !path.exists() => find(&path.to_string_lossy())
            .map(|p| p.session)
            .map_err(|_| e),
        r => r,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bundled_preset_reads_names_its_scene_says_what_it_shows_and_computes() {
        for p in all().unwrap() {
            let s = crate::scene::find(&p.session.scene).unwrap();
            for (what, text) in [("note", &p.session.note), ("title", &p.session.title)] {
                assert!(
                    text.as_ref()
                        .is_some_and(|n| !n.en.is_empty() && !n.zh.is_empty()),
                    "preset {} has a {what} in both languages",
                    p.name
                );
            }
            let r = s.report_with(p.session.params.clone(), p.session.input.as_ref());
            assert!(r.is_ok(), "preset {}: {:?}", p.name, r.err());
            assert_eq!(
                for_scene(s.id).iter().filter(|q| q.name == p.name).count(),
                1
            );
        }
        assert!(find("no-such-preset").is_err());
    }
}
