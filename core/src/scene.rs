//! The scene registry: one entry per figure of the lecture that warpscope computes.
//!
//! A scene is `params → result`: typed parameters (declared as [`ParamSpec`]s, so the GUI can
//! build sliders and the CLI can parse `--set`), a pure computation, and a serialisable result.
//! `warpscope report SCENE --json` prints [`Report`]; the GUI draws the same typed result.
//! Adding a lab means adding its entries to [`scenes`] — nothing else in `core` changes.

use serde::Serialize;

use crate::Error;
use crate::params::{ParamSpec, ParamValues};
use crate::text::Text;

/// One scene: its identity, where it sits in the lecture, its parameters and its computation.
#[derive(Clone, Copy)]
pub struct Scene {
    /// The id the CLI uses (`warpscope report ID`), e.g. `reduction`.
    pub id: &'static str,
    /// The lecture section, e.g. `§2.2`.
    pub section: &'static str,
    /// The title, in English and Chinese.
    pub title: Text<&'static str>,
    /// One sentence on what the scene shows, in English and Chinese (the lecture's terms).
    pub summary: Text<&'static str>,
    /// The parameters, with the lecture's values as defaults.
    pub params: &'static [ParamSpec],
    /// The computation: validated values in, the result as a JSON value out.
    pub run: fn(&ParamValues) -> Result<serde_json::Value, Error>,
    /// The user's own data the scene also takes (`--input FILE.json`, the window's Input
    /// panel), if any.
    pub input: Option<&'static InputSpec>,
}

/// A user's own data for a scene, as the file (or the window's editor) holds it: a JSON object
/// that the scene's [`InputSpec`] validates. Shared, so a result, a session and the screen hold
/// one copy.
pub type Input = std::sync::Arc<serde_json::Value>;

/// What a scene does with a user's input: which keys it takes and how it runs on them.
#[derive(Clone, Copy)]
pub struct InputSpec {
    /// The keys, one per line (`x: [[…]] rows × columns, required`), in English and Chinese:
    /// shown by `warpscope report SCENE --help`-style listings and the window's Input panel.
    pub keys: Text<&'static str>,
    /// A small valid input, shown in the window's editor as a starting point.
    pub example: &'static str,
    /// Parameter values the example needs, `(name, value)` (reduction's eight values need
    /// `threads = 8`); the window's *Example* sets them with it.
    pub example_params: &'static [(&'static str, &'static str)],
    /// The parameters that still apply to an input (the others shape the scene's generated
    /// data): a figure of an input names only these in its caption.
    pub params: &'static [&'static str],
    /// Validates `input` (every key named in its errors, [`Error::InvalidInput`]) and runs the
    /// scene on it with the validated parameter values.
    pub run: fn(&ParamValues, &serde_json::Value) -> Result<serde_json::Value, Error>,
}

impl std::fmt::Debug for Scene {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scene").field("id", &self.id).finish()
    }
}

/// What `warpscope report SCENE --json` prints: `{"scene", "params", "result"}`
/// (the CLI contract).
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The scene id.
    pub scene: String,
    /// Every parameter's value, defaults filled in.
    pub params: ParamValues,
    /// The scene's result.
    pub result: serde_json::Value,
}

/// Every scene warpscope computes, lab by lab in lecture order.
pub fn scenes() -> impl Iterator<Item = &'static Scene> {
    static FOUNDATION: &[Scene] = &[crate::reduction::SCENE, crate::banks::SCENE];
    static KERNEL_LAB: &[Scene] = &[crate::lab::scene::SCENE];
    static LABS: &[&[Scene]] = &[
        FOUNDATION,
        crate::layernorm::SCENES,
        crate::softmax::SCENES,
        crate::trainer::SCENES,
        crate::memory::SCENES,
        crate::step::SCENES,
        KERNEL_LAB,
    ];
    LABS.iter().flat_map(|lab| lab.iter())
}

/// The scene with this id.
///
/// # Errors
/// [`Error::UnknownScene`].
pub fn find(id: &str) -> Result<&'static Scene, Error> {
    scenes()
        .find(|s| s.id == id)
        .ok_or_else(|| Error::UnknownScene(id.to_owned()))
}

impl Scene {
    /// The lecture defaults.
    pub fn defaults(&self) -> ParamValues {
        ParamValues::defaults(self.params)
    }

    /// Validates `values` and runs the scene.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for a value out of range or inconsistent; the scene's own errors.
    pub fn report(&self, values: ParamValues) -> Result<Report, Error> {
        self.report_with(values, None)
    }

    /// Validates `values` and runs the scene, on the user's `input` when one is given.
    ///
    /// # Errors
    /// As [`Scene::report`]; [`Error::InvalidInput`] for an input the scene refuses, or for any
    /// input to a scene that takes none (naming the scenes that do).
    pub fn report_with(
        &self,
        values: ParamValues,
        input: Option<&serde_json::Value>,
    ) -> Result<Report, Error> {
        let params = values.validated(self.params)?;
        let result = match input {
            None => (self.run)(&params)?,
            Some(input) => (self.input_spec()?.run)(&params, input)?,
        };
        Ok(Report {
            scene: self.id.to_owned(),
            params,
            result,
        })
    }

    /// The scene's [`InputSpec`].
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a scene that takes no input, naming the scenes that do.
    pub fn input_spec(&self) -> Result<&'static InputSpec, Error> {
        self.input.ok_or_else(|| {
            let takers: Vec<&str> = scenes()
                .filter(|s| s.input.is_some())
                .map(|s| s.id)
                .collect();
            Error::input(
                "",
                format!(
                    "scene `{}` takes no input file; the scenes that do: {}",
                    self.id,
                    if takers.is_empty() {
                        "none yet".to_owned()
                    } else {
                        takers.join(", ")
                    }
                ),
            )
        })
    }
}

/// Serialises a typed result for [`Scene::run`].
///
/// # Errors
/// [`Error::BadInput`] if the value cannot be represented in JSON (a non-string map key).
pub fn to_json<T: Serialize>(value: &T) -> Result<serde_json::Value, Error> {
    serde_json::to_value(value)
        .map_err(|e| Error::BadInput(format!("result not serialisable: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_input_example_computes_with_its_parameters() {
        for s in scenes() {
            let Some(spec) = s.input else { continue };
            let mut v = s.defaults();
            for (name, value) in spec.example_params {
                v.set(s.params, name, value).unwrap();
            }
            for name in spec.params {
                assert!(s.params.iter().any(|p| p.name == *name), "{}: {name}", s.id);
            }
            let input: serde_json::Value = serde_json::from_str(spec.example).unwrap();
            let r = s.report_with(v, Some(&input));
            assert!(r.is_ok(), "{}: {:?}", s.id, r.err());
        }
    }

    #[test]
    fn every_scene_runs_at_its_defaults_and_ids_are_unique() {
        let mut ids = std::collections::HashSet::new();
        for s in scenes() {
            assert!(ids.insert(s.id), "duplicate id {}", s.id);
            let r = s.report(s.defaults());
            assert!(r.is_ok(), "{}: {:?}", s.id, r.err());
        }
    }
}
