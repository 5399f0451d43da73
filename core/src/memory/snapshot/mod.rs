//! Scene `memory-snapshot`: reads a PyTorch CUDA memory snapshot — the pickle that
//! `torch.cuda.memory._snapshot()` / `_dump_snapshot()` writes (`torch/cuda/memory.py`; the
//! structures are `SegmentInfo`, `BlockInfo` and `TraceEntry` of
//! `c10/cuda/CUDACachingAllocator.h`) — and replays its recorded trace through
//! [`super::allocator::CachingAllocator`].
//!
//! Reading executes nothing from the file: [`super::pickle::check`] refuses any opcode that
//! imports or calls and bounds sizes, nesting and counts before the data is decoded — by
//! [`super::unpickle`], which skips every `frames` value (most of a large file), or by
//! `serde-pickle` for anything that fast path declines.
//! Files above [`MAX_FILE_BYTES`] are refused before they are read.
//!
//! Handled layouts: a dict with `segments` (and `device_traces`, `allocator_settings`,
//! `external_annotations`) or a bare list of segments (`torch.cuda.memory_snapshot()`); blocks
//! with `address` or, in PyTorch ≤ 2.0, without (derived: the segment's address plus the sizes of
//! the blocks before it); block states `active_allocated`, `active_pending_free` (spelled
//! `active_awaiting_free` in PyTorch's docs) and `inactive`; trace actions `alloc`,
//! `free_requested`, `free_completed`, `segment_alloc`, `segment_free`, `segment_map`,
//! `segment_unmap`, `snapshot` and `oom` (which carries `device_free` instead of `addr`);
//! pickle protocols 0–5.
//!
//! Figures: *reserved* = Σ segment `total_size`; *allocated* = Σ segment `allocated_size`
//! (bytes). The replay feeds each device's `alloc` events (by `size`) and `free_completed` events
//! (by `addr`, matched to the replayed block of that earlier `alloc`) to a fresh simulator, and
//! releases a whole free segment where the trace recorded `segment_free`. A trace that starts
//! from an empty allocator should then recreate the file's segments one for one; a trace that
//!
//! Layout: `read` decodes a file into a [`Snapshot`] ([`read_file`], [`parse`]); `replay` runs
//! its trace through the simulator ([`replay`]); `output` summarises both into the scene's
//! [`SnapshotOutput`] ([`summarise`]); `synthetic` writes a large seeded snapshot for the
//! benchmarks and tests (not part of the scene).

// Everything here handles what a file holds: no indexing that a file could make panic.
#![deny(clippy::indexing_slicing)]

mod output;
mod read;
mod replay;
mod synthetic;
#[cfg(test)]
mod tests;

use crate::text::Text;
use std::collections::BTreeMap;

use serde::Serialize;

use crate::Error;
use crate::params::{ParamSpec, ParamValues};
use crate::scene::{Scene, to_json};

pub use output::{MapBlock, MapSegment, SnapshotOutput, summarise};
pub use read::{parse, read_file};
pub use replay::{Replay, replay};
#[doc(hidden)]
pub use synthetic::synthetic;

/// Largest snapshot file read (bytes, 1 GiB); larger files are refused before reading.
pub const MAX_FILE_BYTES: u64 = 1 << 30;
/// Most segments accepted.
pub const MAX_SEGMENTS: usize = 1 << 20;
/// Most blocks accepted (all segments together).
pub const MAX_BLOCKS: usize = 16 << 20;
/// Most trace events accepted (all devices together).
pub const MAX_TRACE_EVENTS: usize = 16 << 20;

/// The small fixture built into warpscope (`torch2.11-mini-fixture.pickle`, from
/// drisspg/transformer_nuggets, BSD-3-Clause; see `core/tests/data/snapshots/README.md`), read
/// when `path` is empty.
pub const BUILTIN_FIXTURE: &[u8] =
    include_bytes!("../../../tests/data/snapshots/torch2.11-mini-fixture.pickle");

const PARAMS: &[ParamSpec] = &[ParamSpec::text(
    "path",
    "snapshot pickle (empty: the built-in mini fixture)",
    "快照 pickle 文件（留空：内置小样例）",
    "",
)];

/// The registry entry.
pub const SCENE: Scene = Scene {
    id: "memory-snapshot",
    section: "§5.3",
    title: Text::new("Real PyTorch memory snapshots", "真实的 PyTorch 显存快照"),
    summary: Text::new(
        "Reads torch.cuda.memory._snapshot() pickles (executing nothing from them) and replays their trace through the allocator simulator.",
        "读取 torch.cuda.memory._snapshot() 的 pickle（不执行其中任何东西），并用分配器模拟器重放它的轨迹。",
    ),
    params: PARAMS,
    run: |v| to_json(&run_path(v.text("path")?)?),
};

/// A block's state.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockState {
    /// Allocated to a tensor.
    ActiveAllocated,
    /// Freed by the program, waiting for stream events (`active_pending_free` /
    /// `active_awaiting_free`).
    ActivePendingFree,
    /// Cached free.
    Inactive,
    /// Anything else, as spelled.
    Other(String),
}

/// A block of a snapshot segment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SnapBlock {
    /// Address (derived from the segment when the file has none).
    pub address: u64,
    /// Size (bytes).
    pub size: u64,
    /// Bytes asked for (0 when the file has none or the block is free).
    pub requested_size: u64,
    /// State.
    pub state: BlockState,
}

/// A snapshot segment (one `cudaMalloc`, or an expandable segment).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SnapSegment {
    /// Device index.
    pub device: i64,
    /// Address.
    pub address: u64,
    /// `total_size` (bytes).
    pub total_size: u64,
    /// `allocated_size` (bytes; Σ active_allocated blocks when absent).
    pub allocated_size: u64,
    /// `active_size` (bytes; 0 when absent).
    pub active_size: u64,
    /// `requested_size` (bytes; 0 when absent).
    pub requested_size: u64,
    /// Stream (as an integer).
    pub stream: u64,
    /// `segment_type`: `small` or `large`.
    pub segment_type: String,
    /// `is_expandable` (false when absent).
    pub is_expandable: bool,
    /// Whether `segment_pool_id` names a private (CUDA-graph) pool, i.e. is not (0, 0).
    pub private_pool: bool,
    /// Blocks in address order.
    pub blocks: Vec<SnapBlock>,
}

/// A trace event (fields this reader uses).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TraceEvent {
    /// `action`.
    pub action: String,
    /// `addr` (absent for `oom`).
    pub addr: Option<u64>,
    /// `size` (bytes).
    pub size: u64,
    /// Stream.
    pub stream: u64,
    /// `device_free` (bytes; `oom` events only).
    pub device_free: Option<u64>,
}

/// A decoded snapshot.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Snapshot {
    /// `dict` or `list` (a bare list of segments).
    pub layout: &'static str,
    /// Pickle protocol.
    pub protocol: u8,
    /// Whether blocks carry `address` (false: PyTorch ≤ 2.0 layout, addresses derived).
    pub blocks_have_addresses: bool,
    /// Segments as in the file.
    pub segments: Vec<SnapSegment>,
    /// `device_traces`, one list per device.
    pub device_traces: Vec<Vec<TraceEvent>>,
    /// Scalar entries of `allocator_settings`, rendered as text.
    pub allocator_settings: BTreeMap<String, String>,
}

/// Progress units of reading and replaying one snapshot ([`crate::progress`]): the opcode guard
/// ends at [`PROGRESS_CHECKED`], `serde-pickle`'s decoding (one step: it cannot report or stop
/// midway) at [`PROGRESS_DECODED`], extracting the trace events at [`PROGRESS_EXTRACTED`], the
/// replay at the total.
const PROGRESS_TOTAL: u64 = 1000;
const PROGRESS_CHECKED: u64 = 50;
const PROGRESS_DECODED: u64 = 700;
const PROGRESS_EXTRACTED: u64 = 800;
/// Trace events between two progress reports.
const PROGRESS_EVERY: usize = 4096;

/// Reports `done` of `total` events as the span `from..to` of [`PROGRESS_TOTAL`].
fn report_events(from: u64, to: u64, done: usize, total: usize) -> Result<(), Error> {
    let f = if total == 0 {
        1.0
    } else {
        done as f64 / total as f64
    };
    crate::progress::report(
        from + ((to - from) as f64 * f.min(1.0)) as u64,
        PROGRESS_TOTAL,
    )
}

/// Σ of byte counts read from a file, saturating at 2⁶⁴ − 1 instead of overflowing.
fn sat_sum(it: impl Iterator<Item = u64>) -> u64 {
    it.fold(0, u64::saturating_add)
}

/// Reads, summarises and replays the snapshot at `path` (empty: [`BUILTIN_FIXTURE`]),
/// reporting progress ([`crate::progress`]) as [`parse`] and [`replay`] do.
///
/// # Errors
/// [`Error::BadInput`] for an unreadable, oversized, malformed or unsafe file;
/// [`Error::Cancelled`] when the current progress scope is cancelled.
pub fn run_path(path: &str) -> Result<SnapshotOutput, Error> {
    let path = path.trim();
    let out = if path.is_empty() {
        summarise("(built-in mini fixture)", &parse(BUILTIN_FIXTURE)?)
    } else {
        summarise(path, &read_file(path)?)
    };
    // A replay cut short by a cancel is never returned.
    crate::progress::report(PROGRESS_TOTAL, PROGRESS_TOTAL)?;
    Ok(out)
}

/// The scene's computation on validated values.
///
/// # Errors
/// As [`run_path`].
pub fn run(v: &ParamValues) -> Result<SnapshotOutput, Error> {
    run_path(v.text("path")?)
}
