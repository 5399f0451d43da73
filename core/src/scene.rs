//! The scene registry: one entry per figure of the lecture that warpscope computes.
//!
//! A scene is `params → result`: typed parameters (declared as [`ParamSpec`]s, so the GUI can
//! build sliders and the CLI can parse `--set`), a pure computation, and a serialisable result.
//! `warpscope report SCENE --json` prints [`Report`]; the GUI draws the same typed result.
//! Adding a lab means adding its entries to [`scenes`] — nothing else in `core` changes.
//!
//! A scene is defined once, typed, by a [`SceneDef`] (`ParamValues → Output`); [`Scene`] erases
//! it for the registry. `report` serialises the very [`SceneOutput`] a view draws, so the JSON
//! and the picture cannot disagree.

use std::any::Any;
use std::sync::Arc;

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
    /// The computation, its output type erased: validated values (and the user's input, for a
    /// scene with an [`InputSpec`]) in, the typed result out. Built by [`erase`] from the scene's
    /// [`SceneDef`].
    pub run: ErasedRun,
    /// The user's own data the scene also takes (`--input FILE.json`, the window's Input
    /// panel), if any.
    pub input: Option<&'static InputSpec>,
    /// The lecture chapter the navigator lists it under (scenes of a chapter in registry
    /// order).
    pub chapter: &'static Chapter,
    /// Whether its picture walks a trace with the stepper, and which event it features.
    pub featured: Featured,
    /// How long a run takes at the top of its ranges: tests size their random cases by it.
    pub cost: Cost,
}

/// A chapter of the lecture: the navigator shows one heading per chapter, its scenes below.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chapter {
    /// Its section (`§2`; `Foundations` for the warp-level model every chapter builds on).
    pub section: &'static str,
    /// Its title, in English and Chinese.
    pub title: Text<&'static str>,
}

impl Chapter {
    /// The warp-level model (reductions, shared-memory banks).
    pub const FOUNDATIONS: Chapter = Chapter {
        section: "Foundations",
        title: Text::new("warp-level model", "线程束模型"),
    };
    /// §2, LayerNorm backward (Lab A).
    pub const LAYERNORM: Chapter = Chapter {
        section: "§2",
        title: Text::new("LayerNorm backward", "LayerNorm 反向"),
    };
    /// §3, softmax backward (Lab B).
    pub const SOFTMAX: Chapter = Chapter {
        section: "§3",
        title: Text::new("Softmax backward", "softmax 反向"),
    };
    /// §4, the mixed-precision trainer (Lab C).
    pub const TRAINER: Chapter = Chapter {
        section: "§4",
        title: Text::new("Mixed-precision trainer", "混合精度训练器"),
    };
    /// §5, memory (Lab D).
    pub const MEMORY: Chapter = Chapter {
        section: "§5",
        title: Text::new("Memory", "显存管理"),
    };
    /// §6, the whole training step (Lab E).
    pub const STEP: Chapter = Chapter {
        section: "§6",
        title: Text::new("The whole step", "一整步训练"),
    };
    /// §9, the exercises.
    pub const EXERCISES: Chapter = Chapter {
        section: "§9",
        title: Text::new("Exercises", "练习"),
    };
    /// The kernel lab: the user's own WGSL kernels, after the lecture's chapters.
    pub const KERNEL_LAB: Chapter = Chapter {
        section: "Lab",
        title: Text::new("Kernel lab", "内核实验室"),
    };
}

/// Whether a scene's picture walks a trace with the stepper, and which event it features:
/// the event the window's image snapshots show it at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Featured {
    /// No trace to step through.
    Nothing,
    /// A trace, featured at this event (0-based).
    Event(usize),
    /// A trace whose featured event the named parameter chooses (the view moves the stepper
    /// there itself, as an export without `--step` shows it).
    Param(&'static str),
}

impl Featured {
    /// Whether the picture has a stepper.
    pub fn stepped(self) -> bool {
        self != Featured::Nothing
    }

    /// The event to move the stepper to; 0 where there is none or the view chooses it.
    pub fn event(self) -> usize {
        match self {
            Featured::Event(e) => e,
            Featured::Nothing | Featured::Param(_) => 0,
        }
    }
}

/// How long one run of a scene takes at the top of its parameter ranges (tests size their
/// random cases by it; the figures are for a debug build unless said).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cost {
    /// Milliseconds.
    Light,
    /// Up to a few hundred milliseconds.
    Moderate,
    /// About a second in release: a debug-build test caps the parameters in `caps` (name,
    /// largest value) or skips the computation.
    Heavy {
        /// Parameters whose upper end makes one run take seconds in a debug build, with the
        /// largest value a test should give them.
        caps: &'static [(&'static str, i64)],
    },
    /// Heavy, and its results are times measured on this machine: they differ from run to
    /// run, so a picture of it is compared by layout only.
    Measured,
    /// Reads a file its parameters name: one run per test is enough.
    File,
}

impl Cost {
    /// Whether a run at the top of the ranges takes about a second or more.
    pub fn heavy(self) -> bool {
        matches!(self, Cost::Heavy { .. } | Cost::Measured)
    }

    /// The largest value a debug-build test should give parameter `name` (`None`: its range's).
    pub fn cap(self, name: &str) -> Option<i64> {
        match self {
            Cost::Heavy { caps } => caps.iter().find(|(k, _)| *k == name).map(|c| c.1),
            _ => None,
        }
    }
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
}

/// A scene defined once, typed: its id, its result type and how it computes it. [`Scene`]
/// erases it ([`erase`]); a view names it and receives `&Self::Output`, the very value
/// `warpscope report SCENE --json` serialises.
pub trait SceneDef: 'static {
    /// The id the CLI uses (`warpscope report ID`); the scene's [`Scene::id`].
    const ID: &'static str;
    /// The typed result. Its serialisation is the report's `result`; data a view needs beyond
    /// that (a whole simulation beside its summary) may ride along unserialised, derived from
    /// the same run.
    type Output: Serialize + Send + Sync + 'static;

    /// Runs the scene on validated `values` (the caller validated them against the specs).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for values the specs cannot rule out (cross-parameter rules);
    /// the scene's own errors.
    fn run(values: &ParamValues) -> Result<Self::Output, Error>;

    /// Runs the scene on the user's `input` (`--input FILE.json`, the window's Input panel)
    /// with validated `values`, for a scene with an [`InputSpec`].
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the key the input gets wrong; by default, that the scene
    /// takes no input.
    fn run_input(values: &ParamValues, input: &serde_json::Value) -> Result<Self::Output, Error> {
        let _ = (values, input);
        Err(Error::input(
            "",
            Text::new(
                format!("scene `{}` takes no input file", Self::ID),
                format!("场景 `{}` 不接受输入文件", Self::ID),
            ),
        ))
    }
}

/// A scene's computation with its output type erased (see [`erase`]).
pub type ErasedRun = fn(&ParamValues, Option<&serde_json::Value>) -> Result<SceneOutput, Error>;

/// [`SceneDef`] `S`'s computation, erased for [`Scene::run`]: no input runs [`SceneDef::run`],
/// an input [`SceneDef::run_input`].
pub const fn erase<S: SceneDef>() -> ErasedRun {
    run_erased::<S>
}

fn run_erased<S: SceneDef>(
    values: &ParamValues,
    input: Option<&serde_json::Value>,
) -> Result<SceneOutput, Error> {
    let out = match input {
        None => S::run(values)?,
        Some(input) => S::run_input(values, input)?,
    };
    Ok(SceneOutput {
        value: Arc::new(out),
        json: json_of::<S::Output>,
    })
}

fn json_of<T: Serialize + 'static>(
    value: &(dyn Any + Send + Sync),
) -> Result<serde_json::Value, Error> {
    match value.downcast_ref::<T>() {
        Some(v) => to_json(v),
        None => Err(Error::BadInput("result of another type".to_owned())),
    }
}

/// A scene's typed result with its type erased: shared between the job that made it, the
/// window's recent results, the screen and the report (which serialises it).
#[derive(Clone)]
pub struct SceneOutput {
    value: Arc<dyn Any + Send + Sync>,
    json: fn(&(dyn Any + Send + Sync)) -> Result<serde_json::Value, Error>,
}

impl std::fmt::Debug for SceneOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SceneOutput").finish_non_exhaustive()
    }
}

impl SceneOutput {
    /// The result as its [`SceneDef::Output`] type `T`, if it is one.
    pub fn downcast_ref<T: 'static>(&self) -> Option<&T> {
        self.value.downcast_ref::<T>()
    }

    /// The shared, type-erased result.
    pub fn shared(&self) -> Arc<dyn Any + Send + Sync> {
        Arc::clone(&self.value)
    }

    /// The result's serialisation: the report's `result`.
    ///
    /// # Errors
    /// [`Error::BadInput`] if the value cannot be represented in JSON (a non-string map key).
    pub fn to_json(&self) -> Result<serde_json::Value, Error> {
        (self.json)(&*self.value)
    }
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

/// The chapters of [`scenes`], each once, in the order of their first scene.
pub fn chapters() -> Vec<&'static Chapter> {
    let mut out: Vec<&'static Chapter> = Vec::new();
    for s in scenes() {
        if !out.iter().any(|c| **c == *s.chapter) {
            out.push(s.chapter);
        }
    }
    out
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
        let result = self.run_validated(&params, input)?.to_json()?;
        Ok(Report {
            scene: self.id.to_owned(),
            params,
            result,
        })
    }

    /// Validates `values` and runs the scene, on the user's `input` when one is given: the typed
    /// result a view draws and [`Scene::report_with`] serialises.
    ///
    /// # Errors
    /// As [`Scene::report_with`].
    pub fn compute(
        &self,
        values: ParamValues,
        input: Option<&serde_json::Value>,
    ) -> Result<SceneOutput, Error> {
        self.run_validated(&values.validated(self.params)?, input)
    }

    fn run_validated(
        &self,
        params: &ParamValues,
        input: Option<&serde_json::Value>,
    ) -> Result<SceneOutput, Error> {
        if input.is_some() {
            self.input_spec()?;
        }
        (self.run)(params, input)
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
                Text::new(
                    format!(
                        "scene `{}` takes no input file; the scenes that do: {}",
                        self.id,
                        if takers.is_empty() {
                            "none yet".to_owned()
                        } else {
                            takers.join(", ")
                        }
                    ),
                    format!(
                        "场景 `{}` 不接受输入文件；接受的场景有：{}",
                        self.id,
                        if takers.is_empty() {
                            "暂无".to_owned()
                        } else {
                            takers.join("、")
                        }
                    ),
                ),
            )
        })
    }
}

/// Serialises a typed result (a report's `result`); ±∞ and NaN anywhere in it are written as
/// the strings `"inf"`, `"-inf"`, `"nan"` ([`crate::input::nonfinite`]), never `null`.
///
/// # Errors
/// [`Error::BadInput`] if the value cannot be represented in JSON (a non-string map key).
pub fn to_json<T: Serialize>(value: &T) -> Result<serde_json::Value, Error> {
    crate::input::nonfinite::to_value(value)
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
    fn facts_name_the_scenes_own_parameters_and_chapters_keep_lecture_order() {
        for s in scenes() {
            if let Featured::Param(name) = s.featured {
                assert!(s.params.iter().any(|p| p.name == name), "{}: {name}", s.id);
            }
            if let Cost::Heavy { caps } = s.cost {
                for (name, cap) in caps {
                    let spec = s.params.iter().find(|p| p.name == *name);
                    let range = spec.and_then(|p| p.int_range(&s.defaults()));
                    assert!(
                        range.is_some_and(|(lo, hi)| (lo..=hi).contains(cap)),
                        "{}: cap {name} = {cap}",
                        s.id
                    );
                }
            }
        }
        let sections: Vec<&str> = chapters().iter().map(|c| c.section).collect();
        assert_eq!(
            sections,
            ["Foundations", "§2", "§3", "§4", "§5", "§6", "§9", "Lab"]
        );
        // A chapter's scenes are consecutive in the registry, so grouping keeps their order.
        let order: Vec<&str> = scenes().map(|s| s.chapter.section).collect();
        let mut runs = order.clone();
        runs.dedup();
        assert_eq!(runs, sections);
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
