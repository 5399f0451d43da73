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
    static LABS: &[&[Scene]] = &[
        FOUNDATION,
        crate::layernorm::SCENES,
        crate::softmax::SCENES,
        crate::trainer::SCENES,
        crate::memory::SCENES,
        crate::step::SCENES,
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
        let params = values.validated(self.params)?;
        let result = (self.run)(&params)?;
        Ok(Report {
            scene: self.id.to_owned(),
            params,
            result,
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
    fn every_scene_runs_at_its_defaults_and_ids_are_unique() {
        let mut ids = std::collections::HashSet::new();
        for s in scenes() {
            assert!(ids.insert(s.id), "duplicate id {}", s.id);
            let r = s.report(s.defaults());
            assert!(r.is_ok(), "{}: {:?}", s.id, r.err());
        }
    }
}
