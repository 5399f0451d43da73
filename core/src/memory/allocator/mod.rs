//! Scene `memory-allocator` (lecture §5.3): the simulator of PyTorch's CUDA caching allocator
//! ([`crate::caching`], whose doc lists the rules and the stats it keeps), fed the allocation
//! sequence of a 6-layer encoder trained on variable-length batches — and LightSeq2's
//! alternative (paper §IV-D): one allocation at the largest shape, made before training.
//!
//! - `workload` — the parameters ([`AllocatorParams`]), the batch lengths and each batch's
//!   allocation sequence ([`batch_ops`]) with what it truly needs ([`needed_bytes`]);
//! - `simulation` — the whole run through the simulator, batch by batch ([`simulate`]);
//! - [`trace`] — the user's own `malloc`/`free` trace (`--input`), replayed op by op;
//! - this module — the scene: [`run`] and [`summarise`] into an [`AllocatorOutput`].
//!
//! The caching allocator's own items ([`CachingAllocator`], [`Pool`], [`Served`], the rules and
//! constants) are re-exported here under their old paths.
//!
//! All sizes here are bytes unless a name ends in `_mib` (MiB = 2²⁰ bytes).

#![deny(clippy::indexing_slicing)]

mod simulation;
#[cfg(test)]
mod tests;
pub mod trace;
mod workload;

use crate::text::Text;
use serde::Serialize;

use super::mib;
use crate::Error;
use crate::params::ParamValues;
use crate::scene::{Chapter, Cost, Featured, InputSpec, Scene, SceneDef, erase};

pub use crate::caching::{
    Allocation, BlockView, CachingAllocator, LARGE_BUFFER, MIN_BLOCK_SIZE, MIN_LARGE_ALLOC,
    OutOfMemory, Pool, ROUND_LARGE, SMALL_BUFFER, SMALL_SIZE, SegmentView, Served, pool_of,
    round_size, segment_size, should_split,
};
pub use simulation::{BatchRecord, Event, Simulation, simulate};
pub use workload::{AllocatorParams, MAX_EVENTS, Op, batch_lengths, batch_ops, needed_bytes};

use workload::PARAMS;

/// `memory-allocator`'s result: the lecture's workload, or the user's trace. Serialises as the
/// variant's summary (the report's `result` has no tag).
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum AllocatorResult {
    /// The variable-length workload at the parameters.
    Workload(Box<AllocatorRun>),
    /// The user's trace (`--input`), op by op.
    Trace(trace::TraceRun),
}

/// The workload's summary and the whole simulated run it summarises (every batch's segment
/// map, for the batch slider); serialises as the summary alone.
#[derive(Debug, Clone)]
pub struct AllocatorRun {
    /// What `warpscope report memory-allocator` prints.
    pub summary: AllocatorOutput,
    /// The simulation it summarises.
    pub sim: Simulation,
}

impl Serialize for AllocatorRun {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.summary.serialize(s)
    }
}

/// The scene's typed definition (`memory-allocator`).
pub struct AllocatorScene;

impl SceneDef for AllocatorScene {
    const ID: &'static str = "memory-allocator";
    type Output = AllocatorResult;

    fn run(v: &ParamValues) -> Result<Self::Output, Error> {
        let sim = simulate(&AllocatorParams::from_values(v)?, false)?;
        Ok(AllocatorResult::Workload(Box::new(AllocatorRun {
            summary: summarise(&sim),
            sim,
        })))
    }

    fn run_input(v: &ParamValues, input: &serde_json::Value) -> Result<Self::Output, Error> {
        Ok(AllocatorResult::Trace(trace::TraceRun::new(
            parse_trace_input(v, input)?,
        )))
    }
}

/// The registry entry.
pub const SCENE: Scene = Scene {
    id: AllocatorScene::ID,
    section: "§5.3",
    title: Text::new(
        "Caching allocator vs one up-front allocation",
        "缓存分配器与一次性预先分配",
    ),
    summary: Text::new(
        "Variable-length batches fragment PyTorch's caching allocator until it reserves far more than any batch needs; LightSeq2 allocates the largest shape once.",
        "长度不同的批次把 PyTorch 的缓存分配器切得零零碎碎，直到它保留的显存远多于任何一批所需；LightSeq2 按最大形状一次性分配。",
    ),
    params: PARAMS,
    run: erase::<AllocatorScene>(),
    input: Some(&INPUT),
    chapter: &Chapter::MEMORY,
    featured: Featured::Nothing,
    cost: Cost::Heavy {
        caps: &[("batches", 20), ("layers", 4)],
    },
};

/// What the scene takes from a file: an allocation trace.
pub const INPUT: InputSpec = InputSpec {
    keys: trace::INPUT_KEYS,
    example_params: &[],
    params: &["capacity_mib"],
    example: r#"{"trace": [["malloc", "a", 6291456], ["malloc", "b", 6291456], ["free", "a"], ["malloc", "c", 8388608]]}"#,
};

/// Reads an input trace; the device defaults to the `capacity_mib` parameter.
///
/// # Errors
/// [`Error::InvalidInput`] from [`trace::parse_trace`]; [`Error::InvalidParam`] for the
/// parameters.
pub fn parse_trace_input(
    v: &crate::params::ParamValues,
    input: &serde_json::Value,
) -> Result<trace::Trace, Error> {
    trace::parse_trace(input, AllocatorParams::from_values(v)?.capacity)
}

/// The scene's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AllocatorOutput {
    /// Peak reserved by the caching allocator over the run, MiB.
    pub reserved_peak_mib: f64,
    /// Reserved at the end of the run, MiB.
    pub reserved_final_mib: f64,
    /// The largest single batch's need (peak live requested bytes), MiB.
    pub needed_peak_mib: f64,
    /// Peak allocated (rounded blocks), MiB.
    pub allocated_peak_mib: f64,
    /// reserved_peak / needed_peak; `None` (JSON `null`) after out-of-memory or when nothing
    /// was needed.
    pub reserved_over_needed: Option<f64>,
    /// LightSeq2: one allocation at the largest batch's need, MiB (flat over the run).
    pub preallocated_mib: f64,
    /// Mean share of the preallocation idle at the batches' peaks.
    pub preallocated_mean_idle_share: f64,
    /// The batch whose need is largest (0-based) and its length.
    pub largest_batch: u64,
    /// Its length L.
    pub largest_batch_len: u64,
    /// Segments `cudaMalloc`ed over the run.
    pub segments_created: u64,
    /// Segments released because the device was full.
    pub segments_released: u64,
    /// Allocator events simulated.
    pub events: usize,
    /// Out-of-memory, if the run hit the capacity. The peaks, the largest batch and the ratio
    /// then cover the batches reached (the failing one included), not the run planned.
    pub oom: Option<String>,
    /// The batch that ran out of memory, as far as it got.
    pub oom_batch: Option<BatchRecord>,
    /// Batches that ran to their end.
    pub batches_completed: u64,
    /// Per batch: shape, need, allocated peak, reserved.
    pub timeline: Vec<BatchRecord>,
    /// Segment map at the allocated peak of each batch that grew the reserved memory (at most
    /// [`MAX_FRAMES`], first ones first) — the moments fragmentation shows; [`simulate`] keeps
    /// every batch's frame for a batch-by-batch animation.
    pub frames: Vec<Frame>,
}

/// Most segment-map frames in the scene's result.
pub const MAX_FRAMES: usize = 48;

/// A segment map at one batch's allocated peak.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Frame {
    /// 0-based batch.
    pub batch: u64,
    /// Reserved at the end of the batch (MiB).
    pub reserved_mib: f64,
    /// Segments in creation order.
    pub segments: Vec<SegmentView>,
}

/// Simulates the run and summarises it (progress as [`simulate`]).
///
/// # Errors
/// [`Error::Cancelled`] when the current progress scope is cancelled; otherwise only a
/// simulator invariant failure (not expected).
pub fn run(p: &AllocatorParams) -> Result<AllocatorOutput, Error> {
    Ok(summarise(&simulate(p, false)?))
}

/// Summarises a simulated run (what [`run`] returns; the GUI keeps the [`Simulation`] too, for
/// its batch-by-batch segment map).
pub fn summarise(sim: &Simulation) -> AllocatorOutput {
    // The batches reached: those completed and the one that ran out of memory.
    let reached = || sim.batches.iter().chain(sim.oom_batch.iter());
    let (largest_batch, largest_batch_len) = reached()
        .max_by(|a, b| {
            a.needed_mib
                .total_cmp(&b.needed_mib)
                .then(b.batch.cmp(&a.batch))
        })
        .map_or((0, 0), |b| (b.batch, b.len));
    let completed = sim.batches.len();
    let mut frames = Vec::new();
    let mut prev_reserved = 0.0;
    for (b, f) in sim.batches.iter().zip(&sim.frames) {
        if b.reserved_mib > prev_reserved && frames.len() < MAX_FRAMES {
            frames.push(Frame {
                batch: b.batch,
                reserved_mib: b.reserved_mib,
                segments: f.clone(),
            });
        }
        prev_reserved = b.reserved_mib;
    }
    AllocatorOutput {
        reserved_peak_mib: mib(sim.reserved_peak),
        // At the end of the run, or where it stopped.
        reserved_final_mib: sim
            .oom_batch
            .as_ref()
            .or(sim.batches.last())
            .map_or(0.0, |b| b.reserved_mib),
        needed_peak_mib: mib(sim.needed_peak),
        allocated_peak_mib: mib(sim.allocated_peak),
        // Only for a run that completed: after out-of-memory the need outgrew the device and
        // the ratio would describe the device, not the allocator.
        reserved_over_needed: (sim.needed_peak > 0 && sim.oom.is_none())
            .then(|| sim.reserved_peak as f64 / sim.needed_peak as f64),
        preallocated_mib: mib(sim.needed_peak),
        // Over the batches that completed (none: nothing idle to report, 0, never −0).
        preallocated_mean_idle_share: if completed == 0 {
            0.0
        } else {
            sim.batches
                .iter()
                .map(|b| b.preallocated_idle_share)
                .sum::<f64>()
                / completed as f64
        },
        largest_batch,
        largest_batch_len,
        segments_created: sim.segments_created,
        segments_released: sim.segments_released,
        events: sim.events.len(),
        oom: sim.oom.as_ref().map(ToString::to_string),
        oom_batch: sim.oom_batch.clone(),
        batches_completed: completed as u64,
        timeline: sim.batches.clone(),
        frames,
    }
}
