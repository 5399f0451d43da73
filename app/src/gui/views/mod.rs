//! Scene views. [`compute`] runs a scene into a [`Computed`] — typed for the scenes with a
//! custom view, JSON for the rest (drawn by [`generic`] as a table) — and [`show`] draws it.

pub mod banks;
pub mod generic;
pub mod layernorm;
pub mod memory;
pub mod recorded;
pub mod reduction;
pub mod snapshot_timeline;
pub mod softmax;
pub mod step;
pub mod trace;
pub mod trainer;
pub mod widgets;

use warpscope_core::Error;
use warpscope_core::banks::{BanksOutput, BanksParams};
use warpscope_core::params::ParamValues;
use warpscope_core::reduction::{ReductionOutput, ReductionParams};
use warpscope_core::scene::Scene;

use super::SceneState;

/// A scene's result as its view needs it.
pub enum Computed {
    /// `reduction`.
    Reduction(Box<ReductionOutput>),
    /// `banks`.
    Banks(Box<BanksOutput>),
    /// `softmax-warp`.
    SoftmaxWarp(Box<warpscope_core::softmax::warp::WarpOutput>),
    /// `softmax-fusion`.
    SoftmaxFusion(Box<warpscope_core::softmax::fusion::FusionOutput>),
    /// `layernorm-syncs`.
    LayernormSyncs(Box<warpscope_core::layernorm::syncs::SyncsOutput>),
    /// `layernorm-bytes`.
    LayernormBytes(Box<warpscope_core::layernorm::bytes::BytesOutput>),
    /// `layernorm-error`.
    LayernormError(Box<warpscope_core::layernorm::numerics::ErrorOutput>),
    /// `layernorm-dgamma`.
    LayernormDgamma(Box<warpscope_core::layernorm::dgamma::DgammaOutput>),
    /// `trainer-census`.
    TrainerCensus(Box<warpscope_core::trainer::census::CensusOutput>),
    /// `trainer-workspace`.
    TrainerWorkspace(Box<warpscope_core::trainer::workspace::WorkspaceOutput>),
    /// `trainer-fp16`.
    TrainerFp16(Box<warpscope_core::trainer::fp16::Fp16Output>),
    /// `memory-lifetimes`.
    MemoryLifetimes(Box<warpscope_core::memory::lifetimes::LifetimesOutput>),
    /// `memory-plan`.
    MemoryPlan(Box<warpscope_core::memory::plan::PlanOutput>),
    /// `memory-allocator`: the summary and the simulated run with every batch's segment map.
    MemoryAllocator(Box<memory::AllocatorRun>),
    /// `memory-snapshot`: the summary and each device's trace timeline.
    MemorySnapshot(Box<snapshot_timeline::SnapshotRun>),
    /// `step-ledger`.
    StepLedger(Box<warpscope_core::step::ledger::StepOutput>),
    /// `exercises` (drawn from its JSON: each exercise's answer has its own type).
    Exercises(serde_json::Value),
    /// Any other scene: its JSON result.
    Json(serde_json::Value),
}

/// Per-view choices that are not parameters of the computation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ViewState {
    /// Reductions: show the sequential run instead of the together run; softmax-warp: show the
    /// forward trace.
    pub sequential: bool,
    /// Bank playground: which request is drawn.
    pub request: usize,
    /// Caching allocator: the batch whose segment map is drawn.
    pub batch: usize,
    /// Caching allocator: the batch animation is playing.
    pub playing: bool,
    /// Caching allocator: fraction of a batch accumulated while playing.
    pub carry: f32,
    /// Snapshot timeline: which of the devices with a trace is shown.
    pub device: usize,
    /// Snapshot timeline: the range of events shown (`None`: the whole trace).
    pub zoom: Option<(usize, usize)>,
    /// Snapshot timeline: the columns last drawn.
    pub columns: snapshot_timeline::ColumnCache,
}

impl Computed {
    /// Events in the trace the stepper walks (0 when the view has none).
    pub fn timeline_len(&self, view: &ViewState) -> usize {
        match self {
            Computed::Reduction(r) => reduction::trace_of(r, view).timeline().len(),
            Computed::LayernormSyncs(o) => if view.sequential {
                &o.trace_autograd
            } else {
                &o.trace_fused
            }
            .timeline()
            .len(),
            Computed::LayernormDgamma(o) => if view.sequential {
                &o.trace_atomic
            } else {
                &o.trace_tiled
            }
            .timeline()
            .len(),
            Computed::SoftmaxWarp(o) => if view.sequential {
                &o.forward_trace
            } else {
                &o.trace
            }
            .timeline()
            .len(),
            Computed::MemorySnapshot(r) => {
                snapshot_timeline::shown(r, view.device).map_or(0, |t| t.events.len())
            }
            _ => 0,
        }
    }
}

/// Validates `values` and computes `scene`.
///
/// # Errors
/// The scene's validation or computation error.
pub fn compute(scene: &'static Scene, values: ParamValues) -> Result<Computed, Error> {
    let values = values.validated(scene.params)?;
    use warpscope_core::{layernorm, trainer};
    // The scene's typed parameters and run, boxed into its `Computed` variant.
    macro_rules! typed {
        ($variant:ident, $params:ty, $run:path) => {
            Computed::$variant(Box::new($run(&<$params>::from_values(&values)?)?))
        };
    }
    Ok(match scene.id {
        "reduction" => Computed::Reduction(Box::new(warpscope_core::reduction::run(
            &ReductionParams::from_values(&values)?,
        )?)),
        "banks" => Computed::Banks(Box::new(warpscope_core::banks::run(
            &BanksParams::from_values(&values)?,
        )?)),
        "layernorm-syncs" => typed!(
            LayernormSyncs,
            layernorm::syncs::SyncsParams,
            layernorm::syncs::run
        ),
        "layernorm-bytes" => typed!(
            LayernormBytes,
            layernorm::bytes::BytesParams,
            layernorm::bytes::run
        ),
        "layernorm-error" => typed!(
            LayernormError,
            layernorm::numerics::ErrorParams,
            layernorm::numerics::run
        ),
        "layernorm-dgamma" => typed!(
            LayernormDgamma,
            layernorm::dgamma::DgammaParams,
            layernorm::dgamma::run
        ),
        "trainer-census" => typed!(
            TrainerCensus,
            trainer::census::CensusParams,
            trainer::census::run
        ),
        "trainer-workspace" => typed!(
            TrainerWorkspace,
            trainer::workspace::WorkspaceParams,
            trainer::workspace::run
        ),
        "trainer-fp16" => typed!(TrainerFp16, trainer::fp16::Fp16Params, trainer::fp16::run),
        "softmax-warp" => {
            use warpscope_core::softmax::warp;
            Computed::SoftmaxWarp(Box::new(warp::run(&warp::WarpParams::from_values(
                &values,
            )?)?))
        }
        "softmax-fusion" => {
            use warpscope_core::softmax::fusion;
            Computed::SoftmaxFusion(Box::new(fusion::run(&fusion::FusionParams::from_values(
                &values,
            )?)?))
        }
        "memory-lifetimes" => {
            use warpscope_core::memory::lifetimes;
            Computed::MemoryLifetimes(Box::new(lifetimes::run(
                &lifetimes::AttentionShape::from_values(&values)?,
            )))
        }
        "memory-plan" => {
            use warpscope_core::memory::{lifetimes, plan};
            Computed::MemoryPlan(Box::new(plan::run(
                &lifetimes::AttentionShape::from_values(&values)?,
            )?))
        }
        "memory-allocator" => {
            use warpscope_core::memory::allocator;
            let sim =
                allocator::simulate(&allocator::AllocatorParams::from_values(&values)?, false)?;
            Computed::MemoryAllocator(Box::new(memory::AllocatorRun {
                summary: allocator::summarise(&sim),
                sim,
            }))
        }
        "step-ledger" => {
            use warpscope_core::step::ledger;
            Computed::StepLedger(Box::new(ledger::run(&ledger::StepParams::from_values(
                &values,
            )?)?))
        }
        "exercises" => Computed::Exercises(scene.report(values)?.result),
        "memory-snapshot" => {
            use warpscope_core::memory::{snapshot, timeline};
            let path = values.text("path")?.trim();
            let (label, s) = if path.is_empty() {
                (
                    "(built-in mini fixture)",
                    snapshot::parse(snapshot::BUILTIN_FIXTURE)?,
                )
            } else {
                (path, snapshot::read_file(path)?)
            };
            let timelines = (0..s.device_traces.len())
                .filter(|&d| !s.device_traces[d].is_empty())
                .map(|d| timeline::timeline(&s, d))
                .collect::<Result<Vec<_>, _>>()?;
            Computed::MemorySnapshot(Box::new(snapshot_timeline::SnapshotRun {
                output: snapshot::summarise(label, &s),
                timelines,
            }))
        }
        _ => Computed::Json(scene.report(values)?.result),
    })
}

/// Draws `computed` for `state`'s scene.
pub fn show(ui: &mut egui::Ui, computed: &Computed, state: &mut SceneState) {
    match computed {
        Computed::Reduction(r) => reduction::show(ui, r, state),
        Computed::Banks(b) => banks::show(ui, b, state),
        Computed::LayernormSyncs(o) => layernorm::show_syncs(ui, o, state),
        Computed::LayernormBytes(o) => layernorm::show_bytes(ui, o),
        Computed::LayernormError(o) => layernorm::show_error(ui, o),
        Computed::LayernormDgamma(o) => layernorm::show_dgamma(ui, o, state),
        Computed::TrainerCensus(o) => trainer::show_census(ui, o),
        Computed::TrainerWorkspace(o) => trainer::show_workspace(ui, o),
        Computed::TrainerFp16(o) => trainer::show_fp16(ui, o),
        Computed::SoftmaxWarp(o) => softmax::show_warp(ui, o, state),
        Computed::SoftmaxFusion(o) => softmax::show_fusion(ui, o),
        Computed::MemoryLifetimes(o) => memory::show_lifetimes(ui, o),
        Computed::MemoryPlan(o) => memory::show_plan(ui, o),
        Computed::MemoryAllocator(r) => memory::show_allocator(ui, r, state),
        Computed::MemorySnapshot(r) => {
            snapshot_timeline::show(ui, r, state);
            ui.separator();
            memory::show_snapshot(ui, &r.output);
        }
        Computed::StepLedger(o) => step::show_ledger(ui, o),
        Computed::Exercises(v) => step::show_exercises(ui, v),
        Computed::Json(v) => generic::show(ui, v),
    }
}
