//! Scene views: one file per view, listed once in [`REGISTRY`].
//!
//! A view is a type that implements [`View`]: it names its scene, computes its typed result
//! from the parameter values (off the UI thread in the window), owns its own view state (which
//! run is shown, which request, the zoom …) and draws itself from a narrow [`ViewContext`]
//! (the stepper, the scene's GPU panel, the parameter values) — never the window. The window,
//! the exporter, the GUI tests and the frame bench all go through [`entry`]. A scene without a
//! view of its own is drawn by [`generic`] as a table of its JSON result.
//!
//! Adding a scene with a view: a new file with a `#[derive(Default)] struct` implementing
//! [`View`], and one line in [`REGISTRY`].

pub mod banks;
pub mod generic;
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
use warpscope_core::scene::Scene;

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

/// A scene's view: its typed result, its own state (`Self`) and how it is drawn.
pub trait View: Default + Clone + Send + 'static {
    /// The id of the scene it draws.
    const SCENE: &'static str;
    /// The typed result it draws.
    type Output: Send + Sync + 'static;

    /// Computes the result from validated `values`.
    ///
    /// # Errors
    /// The scene's validation or computation error.
    fn compute(scene: &'static Scene, values: &ParamValues) -> Result<Self::Output, Error>;

    /// Computes the result from validated `values` and the user's `input` (`--input FILE.json`,
    /// the window's Input panel), for a scene with an [`warpscope_core::scene::InputSpec`].
    ///
    /// # Errors
    /// The scene's input errors ([`Error::InvalidInput`], naming the key); by default, that the
    /// scene takes no input.
    fn compute_input(
        scene: &'static Scene,
        values: &ParamValues,
        input: &serde_json::Value,
    ) -> Result<Self::Output, Error> {
        let _ = (values, input);
        scene.input_spec()?;
        Err(Error::input(
            "",
            format!("the view of `{}` cannot draw an input yet", scene.id),
        ))
    }

    /// Events in the trace the stepper walks for `out` in this view's state (0: no stepper).
    fn events(&self, _out: &Self::Output) -> usize {
        0
    }

    /// Draws `out`.
    fn ui(&mut self, ui: &mut egui::Ui, out: &Self::Output, cx: &mut ViewContext<'_>);
}

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
        downcast::<V::Output>(out).map_or(0, |o| View::events(self, o))
    }

    fn ui(&mut self, ui: &mut egui::Ui, out: &Output, cx: &mut ViewContext<'_>) {
        if let Some(o) = downcast::<V::Output>(out) {
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

/// One registry line: a scene id, how to compute its view's result, how to make its state.
pub struct Entry {
    /// The scene id ("" for the generic table, which draws any scene).
    pub scene: &'static str,
    /// Validates nothing: the caller passes validated values.
    compute: fn(&'static Scene, &ParamValues, Option<&serde_json::Value>) -> Result<Output, Error>,
    /// A fresh view state.
    make: fn() -> Box<dyn AnyView>,
}

impl Entry {
    /// Validates `values` against `scene`'s specs and computes the view's result, on the user's
    /// `input` when one is given.
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
        let values = values.validated(scene.params)?;
        (self.compute)(scene, &values, input)
    }

    /// A fresh view state (what the view shows before the user chose anything).
    pub fn make(&self) -> Box<dyn AnyView> {
        (self.make)()
    }
}

fn compute_erased<V: View>(
    scene: &'static Scene,
    values: &ParamValues,
    input: Option<&serde_json::Value>,
) -> Result<Output, Error> {
    Ok(match input {
        None => Arc::new(V::compute(scene, values)?),
        Some(input) => Arc::new(V::compute_input(scene, values, input)?),
    })
}

fn make_erased<V: View>() -> Box<dyn AnyView> {
    Box::new(V::default())
}

/// The registry line of view `V`.
pub const fn line<V: View>() -> Entry {
    Entry {
        scene: V::SCENE,
        compute: compute_erased::<V>,
        make: make_erased::<V>,
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

/// The generic table, for scenes without a view of their own.
static GENERIC: Entry = line::<generic::GenericView>();

/// The registry line that draws scene `id`: its own view, or the generic table.
pub fn entry(id: &str) -> &'static Entry {
    REGISTRY.iter().find(|e| e.scene == id).unwrap_or(&GENERIC)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registry_line_names_a_scene_once_and_steps_only_its_own_result() {
        // The scenes whose views walk a trace with the stepper.
        const STEPPED: &[&str] = &[
            "reduction",
            "layernorm-syncs",
            "layernorm-dgamma",
            "softmax-warp",
            "memory-snapshot",
            "kernel-lab",
        ];
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
                STEPPED.contains(&e.scene),
                "{}",
                e.scene
            );
            assert_eq!(view.events(&other), 0, "{} counted another result", e.scene);
        }
        // A scene without a view of its own falls back to the generic table.
        assert_eq!(entry("no-such-scene").scene, "");
    }
}
