//! Scene `memory-snapshot`: reads a PyTorch CUDA memory snapshot — the pickle that
//! `torch.cuda.memory._snapshot()` / `_dump_snapshot()` writes (`torch/cuda/memory.py`; the
//! structures are `SegmentInfo`, `BlockInfo` and `TraceEntry` of
//! `c10/cuda/CUDACachingAllocator.h`) — and replays its recorded trace through
//! [`crate::caching::CachingAllocator`].
//!
//! Reading executes nothing from the file: [`super::pickle::check`] refuses any opcode that
//! imports or calls and bounds sizes, nesting and counts before the data is decoded — by
//! [`super::unpickle`], which skips every `frames` value (most of a large file), or by
//! `serde-pickle` for anything that fast path declines.
//! Files are memory-mapped, not copied; a file is refused before decoding only when
//! [`MEMORY_PER_FILE_BYTE`] × its size exceeds the memory available, with both numbers.
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
//! (bytes). The replay (`drive`) feeds each device's `alloc` events (by `size`) and
//! `free_completed` events (by `addr`, matched to the replayed block of that earlier `alloc`) to
//! the simulator under the file's own settings — from an empty allocator when the device's trace
//! starts empty, else from the state rebuilt at its first event — honours recorded
//! `segment_free`/`segment_unmap` events as cache releases, and says per device whether it
//! recreates the file's segments. The peak and what holds it: [`peak`].
//!
//! *At an event*: the allocator's segments and blocks right after any trace event, rebuilt
//! backwards from the file's own segments ([`history`], PyTorch's *Allocator State History*); the
//! scene reports it for its `event` parameter (the last event by default), the window for the
//! event under its cursor.
//!
//! Layout: `read` decodes a file into a [`Snapshot`] ([`read_file`], [`parse`]) — refusing trace
//! events whose `size` or `addr` is not a non-negative integer; `check` lists what is wrong with a
//! file that decodes (warnings, never silently drawn); `replay` runs its trace through the
//! simulator ([`replay`]); `history` rebuilds the state at any event ([`History`]); `output`
//! summarises them into the scene's [`SnapshotOutput`] ([`summarise`], [`analyse`]); `synthetic`
//! writes a large seeded snapshot for the benchmarks and tests (not part of the scene).

// Everything here handles what a file holds: no indexing that a file could make panic.
#![deny(clippy::indexing_slicing)]

pub mod action;
mod check;
mod drive;
#[cfg(test)]
mod drive_tests;
pub mod history;
#[cfg(test)]
mod history_tests;
mod output;
pub mod peak;
mod read;
mod read_arena;
mod replay;
mod scene;
mod synthetic;
#[cfg(test)]
mod tests;
pub mod warning;
#[cfg(test)]
mod warning_tests;
pub mod whatif;
#[cfg(test)]
mod whatif_tests;

use crate::text::Text;
use std::collections::BTreeMap;

use serde::Serialize;

use crate::Error;
use crate::params::{ParamSpec, ParamValues};
use crate::scene::{Chapter, Cost, Featured, Scene, SceneDef, erase};

pub use action::Action;
pub use history::{History, StateAt, StateBlock, StateSegment};
pub use output::{MapBlock, MapSegment, SnapshotOutput, Source, summarise};
pub use read::{parse, read_file};
pub use replay::{DeviceReplay, Replay, replay};
pub use scene::{SnapshotRun, SnapshotScene};
#[doc(hidden)]
pub use synthetic::synthetic;
pub use warning::{Kind, Warning};
pub use whatif::{WhatIf, WhatIfParams, WhatIfSettings};

/// Memory a read needs, per byte of file (bytes), at worst: a file the fast decoder declines is
/// decoded by serde-pickle into values (18 × the file's size at its peak on the benchmark's
/// files, `BENCHMARKS.md`, before the fast path read events field by field — it now peaks at
/// about 3 ×), with a little headroom; a file whose estimate exceeds the memory available is
/// refused before decoding.
pub const MEMORY_PER_FILE_BYTE: u64 = 20;
/// Memory the general decoder (`serde-pickle`, for a file the fast decoder declines: protocol
/// 0/1, an integer past 64 bits) needs per byte of file (bytes), checked again before it runs:
/// measured at its peak, 35 on an 11 MB protocol-2 snapshot and 71 on the worst shape found
/// (one-entry dicts: a 720-byte B-tree node each), with headroom (README).
pub const FALLBACK_MEMORY_PER_FILE_BYTE: u64 = 100;
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

const PARAMS: &[ParamSpec] = &[
    ParamSpec::text(
        "path",
        "snapshot pickle (empty: the built-in mini fixture)",
        "快照 pickle 文件（留空：内置小样例）",
        "",
    ),
    ParamSpec::int(
        "event",
        "trace event whose allocator state is reported (-1: the last)",
        "报告哪个轨迹事件之后的分配器状态（-1：最后一个）",
        -1,
        MAX_EVENT_PARAM,
        -1,
    ),
    ParamSpec::choice(
        "expandable_segments",
        "what-if: expandable_segments (file: as the file records)",
        "假设：expandable_segments（file：按文件记录的）",
        whatif::EXPANDABLE_CHOICES,
        "file",
    ),
    ParamSpec::int(
        "max_split_size_mb",
        "what-if: max_split_size_mb (-1: the file's, 0: unlimited; MiB, > 20)",
        "假设：max_split_size_mb（-1：按文件，0：不限；MiB，须 > 20）",
        -1,
        whatif::MAX_MIB,
        -1,
    ),
    ParamSpec::int(
        "roundup_power2_divisions",
        "what-if: roundup_power2_divisions (-1: the file's, 0: off; a power of two)",
        "假设：roundup_power2_divisions（-1：按文件，0：关；2 的幂）",
        -1,
        1024,
        -1,
    ),
    ParamSpec::float(
        "garbage_collection_threshold",
        "what-if: garbage_collection_threshold (-1: the file's, 0: off; needs a memory limit)",
        "假设：garbage_collection_threshold（-1：按文件，0：关；需要显存上限）",
        -1.0,
        1.0,
        -1.0,
    )
    .open_max(),
    ParamSpec::int(
        "device_memory_mib",
        "what-if: device memory limit (MiB; 0: none; -1: the device's size at the trace's oom)",
        "假设：设备显存上限（MiB；0：不限；-1：轨迹里 oom 时设备的大小）",
        -1,
        whatif::MAX_MIB,
        0,
    ),
    ParamSpec::text(
        "alloc_conf",
        "what-if: PYTORCH_CUDA_ALLOC_CONF text (key:value,…; the parameters above override it)",
        "假设：PYTORCH_CUDA_ALLOC_CONF 文本（key:value,…；上面的参数优先）",
        "",
    ),
    ParamSpec::int(
        "device",
        "device whose state, timeline and what-if are reported (-1: the first with a trace)",
        "报告哪个设备的状态、时间线和假设（-1：第一个有轨迹的）",
        -1,
        MAX_DEVICE_PARAM,
        -1,
    ),
];

/// Largest `device` parameter accepted (a device index).
const MAX_DEVICE_PARAM: i64 = u16::MAX as i64;

/// Largest value the `event` parameter's spec accepts (the file's trace length decides what is
/// valid: [`analyse`]).
const MAX_EVENT_PARAM: i64 = MAX_TRACE_EVENTS as i64 - 1;

/// The registry entry.
pub const SCENE: Scene = Scene {
    id: SnapshotScene::ID,
    section: "§5.3",
    title: Text::new("Real PyTorch memory snapshots", "真实的 PyTorch 显存快照"),
    summary: Text::new(
        "Reads torch.cuda.memory._snapshot() pickles (executing nothing from them) and replays their trace through the allocator simulator.",
        "读取 torch.cuda.memory._snapshot() 的 pickle（不执行其中任何东西），并用分配器模拟器重放它的轨迹。",
    ),
    params: PARAMS,
    run: erase::<SnapshotScene>(),
    input: None,
    chapter: &Chapter::MEMORY,
    featured: Featured::Param("event"),
    cost: Cost::File,
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
    /// Its stack frames: a list id in [`Snapshot::frames`] (`frames`, or for PyTorch ≤ 2.0 the
    /// last entry of `history`; [`crate::torch::frames::NO_FRAMES`] when the file has none).
    pub frames: u32,
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
    pub action: Action,
    /// `addr` (absent for `oom`).
    pub addr: Option<u64>,
    /// `size` (bytes).
    pub size: u64,
    /// Stream.
    pub stream: u64,
    /// `device_free` (bytes; `oom` events only).
    pub device_free: Option<u64>,
    /// Its stack frames: a list id in [`Snapshot::frames`].
    pub frames: u32,
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
    /// Every distinct stack frame and frame list of the blocks and events, once.
    #[serde(skip)]
    pub frames: crate::torch::frames::FrameTable,
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

/// `path` with a leading `~` or `~/` replaced by the home directory (`$HOME`, or
/// `%USERPROFILE%` on Windows) — the shell does not expand it after `--set path=`, nor does a
/// text field. Unchanged when there is no home directory or the path names another user (`~bob`).
pub fn expand_home(path: &str) -> std::path::PathBuf {
    let home = || {
        std::env::var_os("HOME")
            .or_else(|| std::env::var_os("USERPROFILE"))
            .filter(|h| !h.is_empty())
            .map(std::path::PathBuf::from)
    };
    if path == "~" {
        if let Some(h) = home() {
            return h;
        }
    } else if let Some(rest) = path.strip_prefix("~/").or_else(|| path.strip_prefix("~\\"))
        && let Some(h) = home()
    {
        return h.join(rest);
    }
    std::path::PathBuf::from(path)
}

/// Reads the snapshot at `path` (trimmed, `~` expanded; empty: [`BUILTIN_FIXTURE`]) and returns
/// which it is with the decoded snapshot.
///
/// # Errors
/// As [`read_file`].
pub fn open(path: &str) -> Result<(Source, Snapshot), Error> {
    let path = path.trim();
    if path.is_empty() {
        return Ok((Source::Builtin, parse(BUILTIN_FIXTURE)?));
    }
    let expanded = expand_home(path);
    let s = read_file(&expanded.to_string_lossy())?;
    Ok((Source::File(path.to_owned()), s))
}

/// Everything the scene computes from one file: the summary the CLI prints, and for every
/// device with a trace its timeline ([`crate::torch::timeline`]) and its allocator-state
/// history ([`History`]) — what the window scrubs. A file without a trace gets one history of
/// its own state (the first segment's device) and no timeline.
#[derive(Debug, Clone)]
pub struct Analysis {
    /// What `warpscope report memory-snapshot` prints.
    pub output: SnapshotOutput,
    /// One per device with a non-empty trace, in device order.
    pub timelines: Vec<crate::torch::timeline::Timeline>,
    /// Beside [`Analysis::timelines`], one each (or one of the file's state when there are none).
    pub histories: Vec<History>,
}

/// Trace events from which [`analyse_with`] summarises on a helper thread.
const PARALLEL_ANALYSIS_EVENTS: usize = 50_000;

/// Summarises `s` ([`summarise`]), builds the timeline and history of every device with a trace,
/// and the state at `event` (`-1`: the last) of the device reported — [`WhatIfParams::device`],
/// by default the first device with a trace — into [`SnapshotOutput::at_event`];
/// trace/file disagreements join the warnings.
///
/// # Errors
/// [`Error::InvalidParam`] naming `event` and the trace's last event when `event` is past it (or
/// is not -1 for a device without trace events), or naming `device` and the devices present
/// when the file holds nothing of it; [`Error::Cancelled`] when the progress scope is
/// cancelled.
pub fn analyse(label: impl Into<Source>, s: &Snapshot, event: i64) -> Result<Analysis, Error> {
    analyse_with(label, s, event, &WhatIfParams::default())
}

/// [`analyse`] with the what-if replay under `whatif` ([`whatif::whatif`]).
///
/// # Errors
/// As [`analyse`].
pub fn analyse_with(
    label: impl Into<Source>,
    s: &Snapshot,
    event: i64,
    whatif: &WhatIfParams,
) -> Result<Analysis, Error> {
    let label = label.into();
    let devices: Vec<usize> = (0..s.device_traces.len())
        .filter(|&d| s.device_traces.get(d).is_some_and(|t| !t.is_empty()))
        .collect();
    // The device reported: the one asked for, else the first with a trace (else the first
    // segment's).
    let device = whatif::choose_device(s, whatif.device)?.unwrap_or_else(|| {
        s.segments
            .first()
            .and_then(|g| u32::try_from(g.device).ok())
            .unwrap_or(0)
    });
    let first_len = s.device_traces.get(device as usize).map_or(0, Vec::len);
    let chosen = match (event, first_len) {
        (-1, 0) => None,
        (-1, n) => Some(n - 1),
        (e, 0) => {
            return Err(Error::invalid(
                "event",
                e,
                crate::error::Expected::custom(
                    "expected -1: the device reported has no trace events",
                    "应为 -1：所报告的设备没有轨迹事件",
                ),
            ));
        }
        (e, n) => match usize::try_from(e) {
            Ok(i) if i < n => Some(i),
            _ => {
                let last = i64::try_from(n - 1).unwrap_or(i64::MAX);
                return Err(Error::invalid(
                    "event",
                    e,
                    crate::error::Expected::IntRange { min: -1, max: last }.noted(
                        format!(
                            "the trace has {n} events; its last is event {last}, and -1 means \
                             the last"
                        ),
                        format!("轨迹有 {n} 个事件；最后一个是事件 {last}，-1 表示最后一个"),
                    ),
                ));
            }
        },
    };
    // The summary (with its replay) and the what-if replay read only `s`: on a large trace they
    // run on a helper thread beside the timelines and histories, each about half the work.
    let summary = || -> Result<(SnapshotOutput, WhatIf), Error> {
        let output = output::summarise_with(&label, s, check::Warnings::default());
        Ok((output, whatif::whatif(s, whatif)?))
    };
    let histories = || -> Result<_, Error> {
        let mut w = check::Warnings::default();
        check::check(s, &mut w);
        let mut timelines = Vec::with_capacity(devices.len());
        let mut histories = Vec::with_capacity(devices.len().max(1));
        for &d in &devices {
            let t = crate::torch::timeline::timeline(s, d)?;
            let h = History::new(s, &t)?;
            trace_warnings(&t, &h, &mut w);
            timelines.push(t);
            histories.push(h);
        }
        Ok((w, timelines, histories))
    };
    let events: usize = s.device_traces.iter().map(Vec::len).sum();
    let (summary, built) = if events >= PARALLEL_ANALYSIS_EVENTS {
        let progress = crate::progress::current();
        std::thread::scope(|sc| {
            let helper = std::thread::Builder::new()
                .name("snapshot-summary".into())
                .spawn_scoped(sc, || crate::progress::helper_scope(progress, summary));
            let built = histories();
            let summary = match helper {
                Ok(h) => h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
                // No thread to be had: the same work, one after the other.
                Err(_) => summary(),
            };
            (summary, built)
        })
    } else {
        (summary(), histories())
    };
    let (w, timelines, mut histories) = built?;
    let (mut output, whatif) = summary?;
    if histories.is_empty() {
        histories.push(History::file_state(s, device));
    }
    let shown = histories.iter().find(|h| h.device == device);
    let at_event = match (chosen, shown) {
        (Some(i), Some(h)) => Some(h.at_with_frames(i, &s.frames)),
        _ => None,
    };
    let timeline = timelines.iter().find(|t| t.device == device);
    output.peak = shown.map(|h| peak::peak(timeline, h, &s.frames));
    output.warnings = w.finish();
    output.at_event = at_event;
    output.whatif = Some(whatif);
    Ok(Analysis {
        output,
        timelines,
        histories,
    })
}

/// The ways a trace can disagree with its file's segments, as warnings.
fn trace_warnings(t: &crate::torch::timeline::Timeline, h: &History, w: &mut check::Warnings) {
    let device = t.device;
    if t.inconsistent > 0 {
        w.push(Warning::ReservedBelowZero {
            device,
            events: t.inconsistent,
        });
    }
    if let Some(last) = t.events.last()
        && last.allocated != t.file_requested
    {
        w.push(Warning::LiveBytesDiffer {
            device,
            trace_live: last.allocated,
            file_requested: t.file_requested,
        });
    }
    if h.inconsistent > 0 {
        w.push(Warning::EventsNotUndone {
            device,
            events: h.inconsistent,
        });
        for example in &h.examples {
            w.push(example.clone());
        }
    }
}

/// Reads, summarises and replays the snapshot at `path` (empty: [`BUILTIN_FIXTURE`]), with the
/// state at the last trace event, reporting progress ([`crate::progress`]) as [`parse`] and
/// [`replay`] do.
///
/// # Errors
/// [`Error::BadInput`] for an unreadable, oversized, malformed or unsafe file;
/// [`Error::Cancelled`] when the current progress scope is cancelled.
pub fn run_path(path: &str) -> Result<SnapshotOutput, Error> {
    run_path_at(path, -1)
}

/// [`run_path`] with the state at trace event `event` (`-1`: the last).
///
/// # Errors
/// As [`run_path`], and as [`analyse`] for an `event` past the trace's end.
pub fn run_path_at(path: &str, event: i64) -> Result<SnapshotOutput, Error> {
    run_path_with(path, event, &WhatIfParams::default())
}

/// [`run_path_at`] with the what-if replay under `whatif`.
///
/// # Errors
/// As [`run_path_at`].
pub fn run_path_with(
    path: &str,
    event: i64,
    whatif: &WhatIfParams,
) -> Result<SnapshotOutput, Error> {
    let (label, s) = open(path)?;
    let out = analyse_with(label, &s, event, whatif)?.output;
    // A replay cut short by a cancel is never returned.
    crate::progress::report(PROGRESS_TOTAL, PROGRESS_TOTAL)?;
    Ok(out)
}

/// The scene's computation on validated values (`path`, `event`).
///
/// # Errors
/// As [`run_path_at`].
pub fn run(v: &ParamValues) -> Result<SnapshotOutput, Error> {
    let whatif = WhatIfParams::from_values(v)?;
    run_path_with(v.text("path")?, v.int("event")?, &whatif)
}
