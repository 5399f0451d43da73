//! What a kernel-lab run gives: the `result` of `warpscope report kernel-lab --json`, with
//! exactly the names the CLI contract promises (README § kernel lab), and the trace the
//! stepper walks.

use std::collections::BTreeMap;

use serde::Serialize;

use super::dispatch::{Binding, ElementType};
use crate::simt::Trace;
use crate::text::Text;

/// Per-source-line counters (Nsight Compute's *Source* page, per line of the user's WGSL).
/// Each counts warp-level instructions or requests, summed over every warp of every workgroup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Counters {
    /// Warp instructions issued (one per warp per statement or memory request, whatever the
    /// number of active lanes).
    pub warp_instructions: u64,
    /// Workgroup-memory (shared) requests: one per warp load, store or atomic.
    pub shared_requests: u64,
    /// Their wavefronts by the bank rule of [`crate::simt::shared`].
    pub shared_wavefronts: u64,
    /// The wavefronts the same requests would need without bank conflicts.
    pub shared_ideal_wavefronts: u64,
    /// Storage/uniform (global) requests: one per warp load, store or atomic.
    pub global_requests: u64,
    /// 32-byte sectors they touched ([`crate::simt::global`]).
    pub global_sectors: u64,
    /// The sectors a perfectly coalesced request of the same bytes would touch.
    pub global_ideal_sectors: u64,
    /// Times a warp evaluated an `if`/`switch` condition with its active lanes split between
    /// the ways (a warp whose lanes all go one way counts none).
    pub divergent_branches: u64,
    /// Subgroup operations (shuffles, reductions, scans, ballots, broadcasts, elect).
    pub subgroup_ops: u64,
    /// Atomic read-modify-writes (warp-level requests), on either address space.
    pub atomics: u64,
}

/// One source line that executed anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LineCounters {
    /// 1-based line of the source.
    pub line: u32,
    /// Its counters.
    #[serde(flatten)]
    pub counters: Counters,
}

/// The counters over the whole dispatch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Totals {
    /// The per-line counters summed.
    #[serde(flatten)]
    pub counters: Counters,
    /// Barrier completions: per workgroup, each barrier every warp passed once, summed over
    /// workgroups.
    pub barriers: u64,
    /// Lane instructions: per warp instruction, its active lanes.
    pub lane_instructions: u64,
    /// Warps over all workgroups.
    pub warps: u64,
}

/// What a sanitizer found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WarningKind {
    /// Two different warps touched the same workgroup word between two barriers and at least
    /// one wrote; or two invocations wrote the same storage word.
    Race,
    /// An index past an array: WGSL's out-of-bounds rule was applied (loads and stores clamp or
    /// drop as the spec allows) and the access reported.
    OutOfBounds,
    /// Workgroup memory read before any invocation wrote it.
    UninitializedRead,
    /// A barrier reached by only part of a workgroup (WGSL's uniformity rule).
    BarrierDivergence,
}

/// One sanitizer warning, with its source line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Warning {
    /// What kind.
    pub kind: WarningKind,
    /// 1-based source line.
    pub line: u32,
    /// What happened, in both languages.
    pub message: Text,
}

/// One buffer element after the run: its components. Serialised as a number for a scalar and
/// as an array for a vector; a non-finite component as `"inf"`, `"-inf"` or `"nan"`
/// ([`crate::input::json::ser_extended`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Element(pub Vec<f64>);

impl Serialize for Element {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0.as_slice() {
            [one] => crate::input::json::ser_extended(one, s),
            many => crate::input::json::ser_extended_vec(many, s),
        }
    }
}

/// A writable storage buffer after the run: its element type and one [`Element`] per element.
/// Serialised as the list of elements alone (`"0:1": [1.0, 2.0]`), the CLI contract.
#[derive(Debug, Clone, PartialEq)]
pub struct BufferOut {
    /// Its element type (as the input declared it).
    pub ty: ElementType,
    /// The elements in order.
    pub values: Vec<Element>,
}

impl Serialize for BufferOut {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.values.serialize(s)
    }
}

/// The result of `kernel-lab`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LabOutput {
    /// The entry point that ran.
    pub entry: String,
    /// `@workgroup_size` of the entry point.
    pub workgroup_size: [u32; 3],
    /// Lanes per warp (subgroup).
    pub subgroup_size: u32,
    /// Warps one workgroup is split into: its invocations ÷ `subgroup_size`, rounded up (the
    /// last warp partly masked).
    pub warps_per_workgroup: u32,
    /// Every writable storage binding after the run.
    pub buffers: BTreeMap<Binding, BufferOut>,
    /// One entry per source line that executed anything, in line order.
    pub lines: Vec<LineCounters>,
    /// The counters summed.
    pub totals: Totals,
    /// What the sanitizers found, in order of first occurrence.
    pub warnings: Vec<Warning>,
    /// Events in [`LabOutput::trace`]: what the stepper walks.
    pub events: usize,
    /// The stepped workgroup's trace (events carry their source line).
    pub trace: Trace,
}
