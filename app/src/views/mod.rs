//! Scene views: one file per view, listed once in [`REGISTRY`].
//!
//! A view is a type that implements [`View`]: it names its scene's typed definition
//! ([`SceneDef`]) and draws `&S::Output` — the very value `warpscope report SCENE --json`
//! serialises, computed by core (off the UI thread in the window); it owns its own view state
//! (which run is shown, which request, the zoom …) and draws itself from a narrow
//! [`ViewContext`] (the stepper, the scene's GPU panel, the parameter values) — never the
//! window. The window, the exporter, the GUI tests and the frame bench all go through [`entry`].
//!
//! Adding a scene with a view: a new file with a `#[derive(Default)] struct` implementing
//! [`View`], and one line in [`REGISTRY`].

pub mod banks;
pub mod lab;
pub mod layernorm;
pub mod memory;
pub mod reduction;
pub mod softmax;
pub mod step;
pub mod trainer;

use std::any::Any;
use std::sync::Arc;

use warpscope_core::Error;
use warpscope_core::params::ParamValues;
use warpscope_core::scene::{Scene, SceneDef};

use crate::widgets::gpu::GpuPanel;
use crate::widgets::stepper::Stepper;

/// What a view is handed to draw with: the scene's stepper, its GPU panel and the current
/// parameter values. The language and the theme live in the egui context.
pub struct ViewContext<'a> {
    /// Where the stepper stands (views with a trace move it; the window shows it).
    pub stepper: &'a mut Stepper,
    /// The scene's real-GPU panel (kernel runs and recorded traces).
    pub gpu: &'a mut GpuPanel,
    /// The parameter values on screen (a recording is made with them).
    pub values: &'a ParamValues,
    /// Parameter values the view asks for (the kernel lab's example picker): the window sets
    /// them and recomputes after the frame; a figure has no window and ignores them.
    pub set_values: Vec<(&'static str, warpscope_core::params::ParamValue)>,
}

/// A scene's view: the scene it draws, its own state (`Self`) and how it is drawn.
pub trait View: Default + Clone + Send + 'static {
    /// The scene it draws: core computes `Self::Scene::Output`, the view only draws it.
    type Scene: SceneDef;

    /// Events in the trace the stepper walks for `out` in this view's state (0: no stepper).
    fn events(&self, _out: &Out<Self>) -> usize {
        0
    }

    /// Draws `out`.
    fn ui(&mut self, ui: &mut egui::Ui, out: &Out<Self>, cx: &mut ViewContext<'_>);
}

/// The typed result view `V` draws: its scene's [`SceneDef::Output`].
pub type Out<V> = <<V as View>::Scene as SceneDef>::Output;

/// A computed result of some view, shared between the job that made it, the window's recent
/// results and the screen.
pub type Output = Arc<dyn Any + Send + Sync>;

/// [`View`] with its result type erased, as the window and the exporter hold it.
pub trait AnyView: Send {
    /// See [`View::events`]; 0 for a result of another view.
    fn events(&self, out: &Output) -> usize;
    /// See [`View::ui`]; draws nothing for a result of another view.
    fn ui(&mut self, ui: &mut egui::Ui, out: &Output, cx: &mut ViewContext<'_>);
    /// A copy of the view and its state (a window export draws what is on screen).
    fn boxed_clone(&self) -> Box<dyn AnyView>;
    /// The view itself (tests and benches reach its state by downcasting).
    fn as_any(&self) -> &dyn Any;
    /// The view itself, mutable.
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

/// `out` as the result type `T`, if it is one.
fn downcast<T: 'static>(out: &Output) -> Option<&T> {
    let any: &(dyn Any + Send + Sync) = &**out;
    any.downcast_ref::<T>()
}

impl<V: View> AnyView for V {
    fn events(&self, out: &Output) -> usize {
        downcast::<Out<V>>(out).map_or(0, |o| View::events(self, o))
    }

    fn ui(&mut self, ui: &mut egui::Ui, out: &Output, cx: &mut ViewContext<'_>) {
        if let Some(o) = downcast::<Out<V>>(out) {
            View::ui(self, ui, o, cx);
        }
    }

    fn boxed_clone(&self) -> Box<dyn AnyView> {
        Box::new(self.clone())
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// One registry line: a scene id and how to make its view's state.
pub struct Entry {
    /// The scene id ("" for the stand-in of a scene without a view).
    pub scene: &'static str,
    /// A fresh view state.
    make: fn() -> Box<dyn AnyView>,
    /// The view's typed result serialised (`None`: not the type the view draws).
    json: fn(&Output) -> Option<Result<serde_json::Value, Error>>,
}

impl Entry {
    /// Validates `values` against `scene`'s specs and computes its result (core's typed
    /// [`SceneDef::Output`], shared), on the user's `input` when one is given.
    ///
    /// # Errors
    /// The scene's validation or computation error; [`Error::InvalidInput`] for an input the
    /// scene refuses or a scene that takes none.
    pub fn compute(
        &self,
        scene: &'static Scene,
        values: ParamValues,
        input: Option<&serde_json::Value>,
    ) -> Result<Output, Error> {
        Ok(scene.compute(values, input)?.shared())
    }

    /// A fresh view state (what the view shows before the user chose anything).
    pub fn make(&self) -> Box<dyn AnyView> {
        (self.make)()
    }

    /// `out` serialised as the type the view draws: `None` when `out` is not of that type (a
    /// result the view would not draw), else what `warpscope report` prints for it.
    pub fn json(&self, out: &Output) -> Option<Result<serde_json::Value, Error>> {
        (self.json)(out)
    }
}

fn make_erased<V: View>() -> Box<dyn AnyView> {
    Box::new(V::default())
}

fn json_erased<V: View>(out: &Output) -> Option<Result<serde_json::Value, Error>> {
    downcast::<Out<V>>(out).map(warpscope_core::scene::to_json)
}

/// The registry line of view `V`.
pub const fn line<V: View>() -> Entry {
    Entry {
        scene: <V::Scene as SceneDef>::ID,
        make: make_erased::<V>,
        json: json_erased::<V>,
    }
}

/// Every view, one line each.
pub static REGISTRY: &[Entry] = &[
    line::<reduction::ReductionView>(),
    line::<banks::BanksView>(),
    line::<layernorm::formulas::FormulasView>(),
    line::<layernorm::syncs::SyncsView>(),
    line::<layernorm::bytes::BytesView>(),
    line::<layernorm::error::ErrorView>(),
    line::<layernorm::dgamma::DgammaView>(),
    line::<softmax::formula::FormulaView>(),
    line::<softmax::warp::WarpView>(),
    line::<softmax::fusion::FusionView>(),
    line::<softmax::saved::SavedView>(),
    line::<trainer::census::CensusView>(),
    line::<trainer::workspace::WorkspaceView>(),
    line::<trainer::fp16::Fp16View>(),
    line::<trainer::adam::AdamView>(),
    line::<trainer::timing::TimingView>(),
    line::<memory::lifetimes::LifetimesView>(),
    line::<memory::plan::PlanView>(),
    line::<memory::allocator::AllocatorView>(),
    line::<memory::snapshot::SnapshotView>(),
    line::<memory::diff::DiffView>(),
    line::<step::ledger::LedgerView>(),
    line::<step::exercises::ExercisesView>(),
    line::<lab::KernelLabView>(),
];

/// What a scene without a view of its own shows: a sentence pointing at its report. Every
/// registered scene has a view (a test in `app/tests/pictures.rs` holds them to it), so only a
/// scene added to core before its view is drawn with it.
#[derive(Clone)]
struct NoView;

impl AnyView for NoView {
    fn events(&self, _out: &Output) -> usize {
        0
    }

    fn ui(&mut self, ui: &mut egui::Ui, _out: &Output, _cx: &mut ViewContext<'_>) {
        ui.label(crate::i18n::tr(
            ui,
            "This scene has no picture yet: `warpscope report SCENE --json` prints its result.",
            "这个场景还没有图：`warpscope report SCENE --json` 会输出它的结果。",
        ));
    }

    fn boxed_clone(&self) -> Box<dyn AnyView> {
        Box::new(self.clone())
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

static NO_VIEW: Entry = Entry {
    scene: "",
    make: || Box::new(NoView),
    json: |_| None,
};

/// The registry line that draws scene `id`: its own view (or, for a scene without one, a
/// sentence pointing at its report).
pub fn entry(id: &str) -> &'static Entry {
    REGISTRY.iter().find(|e| e.scene == id).unwrap_or(&NO_VIEW)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registry_line_names_a_scene_once_and_steps_only_its_own_result() {
        let mut seen = std::collections::BTreeSet::new();
        let other: Output = Arc::new(0_u8);
        for e in REGISTRY {
            assert!(seen.insert(e.scene), "{} listed twice", e.scene);
            let scene = warpscope_core::scene::find(e.scene).expect("a registered scene");
            assert!(std::ptr::eq(entry(e.scene), e));
            let out = e
                .compute(scene, scene.defaults(), None)
                .expect("computes at its defaults");
            let view = e.make();
            assert_eq!(
                view.events(&out) > 0,
                scene.featured.stepped(),
                "{}",
                e.scene
            );
            assert_eq!(view.events(&other), 0, "{} counted another result", e.scene);
            assert!(e.json(&other).is_none(), "{} took another result", e.scene);
        }
        // A scene without a view of its own gets the stand-in.
        assert_eq!(entry("no-such-scene").scene, "");
    }

    /// The report's JSON of `scene` at `values` (and `input`), and the JSON of the typed value
    /// the view is handed for the same run.
    fn both(
        scene: &'static Scene,
        values: ParamValues,
        input: Option<&serde_json::Value>,
    ) -> (serde_json::Value, serde_json::Value) {
        let report = scene
            .report_with(values.clone(), input)
            .expect("reports")
            .result;
        let out = entry(scene.id)
            .compute(scene, values, input)
            .expect("computes");
        let drawn = entry(scene.id)
            .json(&out)
            .expect("the view's own type")
            .expect("serialises");
        (report, drawn)
    }

    #[test]
    fn every_view_draws_exactly_what_the_report_prints() {
        for scene in warpscope_core::scene::scenes() {
            if scene.cost == warpscope_core::scene::Cost::Measured {
                // Times measured on this machine differ between two runs: the same run's
                // value is compared through both paths instead.
                let out = scene.compute(scene.defaults(), None).expect("computes");
                let drawn = entry(scene.id)
                    .json(&out.shared())
                    .expect("the view's own type");
                assert_eq!(
                    drawn.expect("serialises"),
                    out.to_json().expect("serialises"),
                    "{}",
                    scene.id
                );
                continue;
            }
            let (report, drawn) = both(scene, scene.defaults(), None);
            assert_eq!(report, drawn, "{}", scene.id);
            let Some(spec) = scene.input else { continue };
            let mut v = scene.defaults();
            for (name, value) in spec.example_params {
                v.set(scene.params, name, value).expect("an example value");
            }
            let input: serde_json::Value =
                serde_json::from_str(spec.example).expect("the example parses");
            let (report, drawn) = both(scene, v, Some(&input));
            assert_eq!(report, drawn, "{} on its example input", scene.id);
        }
    }
}
