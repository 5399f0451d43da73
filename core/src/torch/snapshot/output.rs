//! The scene's result: a decoded snapshot summarised (blocks per state, reserved and
//! allocated bytes, fragmentation, trace actions, the segment map, the file's problems) beside its
//! replay and the allocator's state at one trace event.

use crate::text::Text;
use std::collections::BTreeMap;

use serde::Serialize;

use super::check::{Warnings, check};
use super::history::StateAt;
use super::replay::replay;
use super::{BlockState, Snapshot, sat_sum};
use crate::memory::mib;

/// Which snapshot a result is of: a file, named as given, or the built-in fixture. Serialised
/// as the file's name, or `(built-in mini fixture)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A file, as the user named it.
    File(String),
    /// [`super::BUILTIN_FIXTURE`] (an empty path).
    Builtin,
}

/// How [`Source::Builtin`] reads in English (and in the JSON).
const BUILTIN_EN: &str = "(built-in mini fixture)";

impl Source {
    /// What a view shows for it: the file's name in both languages (a name is not translated),
    /// or the fixture's description.
    pub fn text(&self) -> Text {
        match self {
            Source::File(path) => Text::new(path.clone(), path.clone()),
            Source::Builtin => Text::new(BUILTIN_EN.into(), "（内置小样例）".into()),
        }
    }
}

impl From<&str> for Source {
    fn from(path: &str) -> Source {
        Source::File(path.to_owned())
    }
}

impl Serialize for Source {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Source::File(path) => s.serialize_str(path),
            Source::Builtin => s.serialize_str(BUILTIN_EN),
        }
    }
}

/// One block of the segment map, relative to its segment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MapBlock {
    /// Offset from the segment's address (bytes).
    pub offset: u64,
    /// Size (bytes).
    pub size: u64,
    /// Requested bytes (size − requested = rounding loss).
    pub requested: u64,
    /// State.
    pub state: BlockState,
}

/// One segment of the segment map.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MapSegment {
    /// Address.
    pub address: u64,
    /// Size (bytes).
    pub size: u64,
    /// `small` or `large`.
    pub pool: String,
    /// Device.
    pub device: i64,
    /// Blocks.
    pub blocks: Vec<MapBlock>,
}

/// The scene's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SnapshotOutput {
    /// The file read, or the built-in fixture (in the JSON, `(built-in mini fixture)`).
    pub path: Source,
    /// `dict` or `list`.
    pub layout: &'static str,
    /// Pickle protocol.
    pub protocol: u8,
    /// False for the PyTorch ≤ 2.0 layout (block addresses derived).
    pub blocks_have_addresses: bool,
    /// Number of segments.
    pub segments: usize,
    /// Number of blocks.
    pub blocks: usize,
    /// Blocks per state.
    pub blocks_by_state: BTreeMap<String, usize>,
    /// Σ segment `total_size` (bytes).
    pub reserved_bytes: u64,
    /// Σ segment `allocated_size` (bytes).
    pub allocated_bytes: u64,
    /// Reserved, MiB (2²⁰ bytes).
    pub reserved_mib: f64,
    /// Allocated, MiB.
    pub allocated_mib: f64,
    /// Internal fragmentation: Σ (size − requested_size) over active blocks with a known
    /// request (bytes).
    pub internal_fragmentation_bytes: u64,
    /// External fragmentation: Σ inactive (cached free) block sizes (bytes).
    pub external_fragmentation_bytes: u64,
    /// Largest inactive block (bytes): the largest request servable without a new segment.
    pub largest_free_block_bytes: u64,
    /// Segments in private (CUDA-graph) pools.
    pub private_pool_segments: usize,
    /// Trace events, all devices.
    pub trace_events: usize,
    /// Trace events per action.
    pub trace_actions: BTreeMap<String, usize>,
    /// Scalar allocator settings as recorded.
    pub allocator_settings: BTreeMap<String, String>,
    /// Replay: peak reserved (bytes).
    pub replay_reserved_peak_bytes: u64,
    /// Replay: final reserved (bytes).
    pub replay_reserved_final_bytes: u64,
    /// Replay: peak allocated (bytes).
    pub replay_allocated_peak_bytes: u64,
    /// Replay: peak live requested bytes = one LightSeq2-style up-front allocation (bytes).
    pub replay_preallocated_bytes: u64,
    /// Replay: segment sizes in creation order (bytes).
    pub replay_segments: Vec<u64>,
    /// Whether the trace starts from an empty allocator.
    pub trace_starts_empty: bool,
    /// Whether the replay recreates the file's segments on every device (null: an empty trace,
    /// no claim).
    pub segments_match: Option<bool>,
    /// Frees of blocks allocated before the trace began.
    pub replay_unmatched_frees: usize,
    /// The replay per device with a trace: whether it starts empty, the segments of the state
    /// rebuilt at its first event it started from otherwise, whether it recreates the file's
    /// segments, its `oom` events.
    pub replay_devices: Vec<super::DeviceReplay>,
    /// What the replay can and cannot say.
    pub replay_note: Text,
    /// The segment map (segments in file order, blocks in address order).
    pub segment_map: Vec<MapSegment>,
    /// The allocator's state right after the chosen trace event (the `event` parameter; the
    /// last by default) of the device reported (the `device` parameter; the first device with a
    /// trace by default) ([`super::history`]); `null` for a file without trace events.
    pub at_event: Option<StateAt>,
    /// The peak of the device reported and what holds it ([`super::peak`]); `null` only from
    /// [`summarise`].
    pub peak: Option<super::peak::Peak>,
    /// The trace replayed under the scene's allocator settings, each defaulting to the file's
    /// ([`super::whatif`]); `null` only from [`summarise`].
    pub whatif: Option<super::whatif::WhatIf>,
    /// What is wrong with a file that decodes: blocks larger than or outside their segment,
    /// overlapping blocks or segments, sums past 2⁶⁴ − 1 bytes, a trace that disagrees with the
    /// segments ([`super::check`]). Empty for a clean file.
    /// Each is typed and worded in both languages ([`super::warning`]; in the JSON an object
    /// with `kind`, `en`, `zh` and its fields).
    pub warnings: Vec<super::Warning>,
}

/// Summarises and replays a decoded snapshot, and checks it ([`super::check`]); `at_event` is
/// left `None` (see [`super::analyse`]).
pub fn summarise(path: impl Into<Source>, s: &Snapshot) -> SnapshotOutput {
    let mut w = Warnings::default();
    check(s, &mut w);
    summarise_with(&path.into(), s, w)
}

/// [`summarise`] with the warnings already collected.
pub(super) fn summarise_with(path: &Source, s: &Snapshot, w: Warnings) -> SnapshotOutput {
    let warnings = w.finish();
    let mut by_state: BTreeMap<String, usize> = BTreeMap::new();
    let (mut internal, mut external, mut largest_free) = (0u64, 0u64, 0u64);
    for b in s.segments.iter().flat_map(|sg| &sg.blocks) {
        let name = match &b.state {
            BlockState::ActiveAllocated => "active_allocated".to_owned(),
            BlockState::ActivePendingFree => "active_pending_free".to_owned(),
            BlockState::Inactive => "inactive".to_owned(),
            BlockState::Other(o) => o.clone(),
        };
        *by_state.entry(name).or_default() += 1;
        match b.state {
            BlockState::ActiveAllocated | BlockState::ActivePendingFree if b.requested_size > 0 => {
                internal = internal.saturating_add(b.size.saturating_sub(b.requested_size));
            }
            BlockState::Inactive => {
                external = external.saturating_add(b.size);
                largest_free = largest_free.max(b.size);
            }
            _ => {}
        }
    }
    // Counted by action first: one name string per distinct action, not per event.
    let mut by_action: BTreeMap<&super::Action, usize> = BTreeMap::new();
    for e in s.device_traces.iter().flatten() {
        *by_action.entry(&e.action).or_default() += 1;
    }
    let actions: BTreeMap<String, usize> = by_action
        .into_iter()
        .map(|(a, n)| (a.as_str().to_owned(), n))
        .collect();
    // Sums saturate: a file may hold any integers, and 2⁶⁴ − 1 bytes already says "absurd".
    let reserved = sat_sum(s.segments.iter().map(|sg| sg.total_size));
    let allocated = sat_sum(s.segments.iter().map(|sg| sg.allocated_size));
    let r = replay(s);
    SnapshotOutput {
        path: path.clone(),
        layout: s.layout,
        protocol: s.protocol,
        blocks_have_addresses: s.blocks_have_addresses,
        segments: s.segments.len(),
        blocks: s.segments.iter().map(|sg| sg.blocks.len()).sum(),
        blocks_by_state: by_state,
        reserved_bytes: reserved,
        allocated_bytes: allocated,
        reserved_mib: mib(reserved),
        allocated_mib: mib(allocated),
        internal_fragmentation_bytes: internal,
        external_fragmentation_bytes: external,
        largest_free_block_bytes: largest_free,
        private_pool_segments: s.segments.iter().filter(|sg| sg.private_pool).count(),
        trace_events: s.device_traces.iter().map(Vec::len).sum(),
        trace_actions: actions,
        allocator_settings: s.allocator_settings.clone(),
        replay_reserved_peak_bytes: r.reserved_peak_bytes,
        replay_reserved_final_bytes: r.reserved_final_bytes,
        replay_allocated_peak_bytes: r.allocated_peak_bytes,
        replay_preallocated_bytes: r.needed_peak_bytes,
        replay_segments: r.segments,
        trace_starts_empty: r.starts_empty,
        segments_match: r.segments_match,
        replay_unmatched_frees: r.unmatched_frees,
        replay_devices: r.devices,
        replay_note: r.note,
        segment_map: s
            .segments
            .iter()
            .map(|sg| MapSegment {
                address: sg.address,
                size: sg.total_size,
                pool: sg.segment_type.clone(),
                device: sg.device,
                blocks: sg
                    .blocks
                    .iter()
                    .map(|b| MapBlock {
                        offset: b.address.saturating_sub(sg.address),
                        size: b.size,
                        requested: b.requested_size,
                        state: b.state.clone(),
                    })
                    .collect(),
            })
            .collect(),
        at_event: None,
        peak: None,
        whatif: None,
        warnings,
    }
}
