//! Where a command's scene comes from: the scene id, a `--preset` (a session file or a bundled
//! preset's name), an `--input FILE.json`, and `--set` assignments on top — resolved the same
//! way for `report`, `export` and `gui`.

use warpscope_core::Error;
use warpscope_core::error::Expected;
use warpscope_core::params::ParamValues;
use warpscope_core::scene;

/// The scenes that take `--input FILE.json` and their keys, for `--help` (long form).
pub(super) fn input_help() -> String {
    let mut out = String::from(
        "Scenes that take --input FILE.json (a JSON object; bundled examples: --preset NAME, \
         listed by `warpscope list --long`):\n",
    );
    for s in scene::scenes() {
        if let Some(spec) = s.input {
            out.push_str(&format!("\n  {}:\n", s.id));
            for line in spec.keys.en.lines() {
                out.push_str(&format!("    {line}\n"));
            }
        }
    }
    out
}

/// `warpscope gui`'s first scene and session: the preset's, with `--input`'s data replacing its
/// input (checked here, before any window opens).
///
/// # Errors
/// The session's or the input file's errors; `--input` without a scene.
pub(super) fn gui_session(
    scene: Option<&str>,
    preset: Option<&std::path::Path>,
    input: Option<&std::path::Path>,
) -> Result<(Option<String>, Option<warpscope_core::session::Session>), Error> {
    if preset.is_none() && input.is_none() {
        return Ok((scene.map(str::to_owned), None));
    }
    let r = resolve(Source {
        scene,
        preset,
        input,
        set: &[],
    })?;
    let session = warpscope_core::session::Session {
        scene: r.scene.id.to_owned(),
        params: r.values,
        step: r.step,
        theme: None,
        lang: None,
        input: r.input.map(|i| (*i).clone()),
        note: None,
        title: None,
    };
    let session = match preset {
        // The preset's look and note stay.
        Some(p) => {
            let saved = warpscope_core::presets::read(p)?;
            warpscope_core::session::Session {
                theme: saved.theme,
                lang: saved.lang,
                note: saved.note,
                title: saved.title,
                ..session
            }
        }
        None => session,
    };
    Ok((Some(session.scene.clone()), Some(session)))
}

/// Where a command's scene comes from: a scene id and/or a `--preset` session file, an
/// `--input` file, and `--set` assignments on top.
#[derive(Debug, Clone, Copy, Default)]
pub struct Source<'a> {
    /// The scene id given on the command line.
    pub scene: Option<&'a str>,
    /// `--preset FILE`: a session (scene, parameters, step, and maybe an input).
    pub preset: Option<&'a std::path::Path>,
    /// `--input FILE.json`: the user's own data (replaces a preset's input).
    pub input: Option<&'a std::path::Path>,
    /// `--set KEY=VALUE`, in order.
    pub set: &'a [String],
}

/// A [`Source`] resolved: the scene, its parameter values, the stepper's event and the input.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The scene.
    pub scene: &'static scene::Scene,
    /// The parameter values (not yet validated against each other).
    pub values: ParamValues,
    /// The preset's stepper event.
    pub step: Option<usize>,
    /// The user's input: `--input`'s, else the preset's.
    pub input: Option<scene::Input>,
    /// The preset's theme, if it names one (a figure exported from it takes it unless
    /// `--theme` is given).
    pub theme: Option<crate::theme::Theme>,
    /// The preset's language, likewise.
    pub lang: Option<crate::i18n::Lang>,
}

/// Resolves `src`: the scene, its parameter values and stepper event from a scene id and/or a
/// `--preset` session file, the `--set` assignments on top, and the input of `--input` (or of
/// the preset).
///
/// # Errors
/// [`Error::InvalidParam`] (no scene named, a preset for another scene, a bad `--set`),
/// [`Error::UnknownScene`], the session file's errors, and the input file's: unreadable
/// ([`Error::BadInput`]) or given to a scene that takes none ([`Error::InvalidInput`]).
pub fn resolve(src: Source<'_>) -> Result<Resolved, Error> {
    let (scene_id, preset, set) = (src.scene, src.preset, src.set);
    let (mut theme, mut lang) = (None, None);
    let (s, mut values, step, mut input) = match preset {
        Some(path) => {
            let session = warpscope_core::presets::read(path)?;
            if let Some(id) = scene_id
                && id != session.scene
            {
                return Err(Error::invalid(
                    "scene",
                    id,
                    Expected::custom(
                        format!(
                            "the preset {} is for scene `{}`",
                            path.display(),
                            session.scene
                        ),
                        format!("预设 {} 是场景 `{}` 的", path.display(), session.scene),
                    ),
                ));
            }
            // The session file's names were checked against `session::THEMES` and `LANGS`.
            theme = session.theme.as_deref().and_then(crate::theme::from_name);
            lang = session
                .lang
                .as_deref()
                .and_then(crate::i18n::Lang::from_name);
            (
                scene::find(&session.scene)?,
                session.params,
                session.step,
                session.input.map(std::sync::Arc::new),
            )
        }
        None => {
            let id = scene_id.ok_or_else(|| {
                Error::invalid(
                    "scene",
                    "",
                    Expected::custom(
                        "name a scene (see `warpscope list`) or pass --preset FILE",
                        "请指明一个场景（见 `warpscope list`）或给出 --preset FILE",
                    ),
                )
            })?;
            let s = scene::find(id)?;
            (s, ParamValues::defaults(s.params), None, None)
        }
    };
    for a in set {
        values.set_assignment(s.params, a)?;
    }
    if let Some(path) = src.input {
        // Refused before the file is read when the scene takes no input.
        s.input_spec()?;
        input = Some(std::sync::Arc::new(warpscope_core::input::json::read(
            path,
        )?));
    }
    Ok(Resolved {
        scene: s,
        values,
        step,
        input,
        theme,
        lang,
    })
}

/// [`resolve`] then compute.
///
/// # Errors
/// As [`resolve`], and the scene's own errors.
pub fn report_from(src: Source<'_>) -> Result<scene::Report, Error> {
    let r = resolve(src)?;
    r.scene.report_with(r.values, r.input.as_deref())
}

/// Parses `--set` assignments for `scene_id` and computes the scene.
///
/// # Errors
/// [`Error::UnknownScene`] or [`Error::InvalidParam`] (exit status 2), or the scene's own error.
pub fn report(scene_id: &str, set: &[String]) -> Result<scene::Report, Error> {
    let s = scene::find(scene_id)?;
    let mut values = ParamValues::defaults(s.params);
    for a in set {
        values.set_assignment(s.params, a)?;
    }
    s.report(values)
}
