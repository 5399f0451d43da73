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
//! starts mid-run cannot, and the result says so instead of claiming a match.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;

use serde::Serialize;
use serde_pickle::{HashableValue, Value};

use super::allocator::{CachingAllocator, Pool, Served};
use super::{mib, pickle};
use crate::Error;
use crate::params::{ParamSpec, ParamValues};
use crate::scene::{Scene, to_json};

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
    include_bytes!("../../tests/data/snapshots/torch2.11-mini-fixture.pickle");

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
    title: "Real PyTorch memory snapshots",
    title_zh: "真实的 PyTorch 显存快照",
    summary: "Reads torch.cuda.memory._snapshot() pickles (executing nothing from them) and replays their trace through the allocator simulator.",
    summary_zh: "读取 torch.cuda.memory._snapshot() 的 pickle（不执行其中任何东西），并用分配器模拟器重放它的轨迹。",
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

fn key(k: &str) -> HashableValue {
    HashableValue::String(k.to_owned())
}

fn field<'a>(d: &'a BTreeMap<HashableValue, Value>, k: &str) -> Option<&'a Value> {
    d.get(&key(k)).filter(|v| !matches!(v, Value::None))
}

fn as_u64(v: &Value) -> Option<u64> {
    match v {
        Value::I64(i) => u64::try_from(*i).ok(),
        Value::Bool(b) => Some(u64::from(*b)),
        _ => None,
    }
}

fn as_i64(v: &Value) -> Option<i64> {
    match v {
        Value::I64(i) => Some(*i),
        _ => None,
    }
}

fn as_str(v: &Value) -> Option<&str> {
    match v {
        Value::String(s) => Some(s),
        _ => None,
    }
}

fn as_list(v: &Value) -> Option<&[Value]> {
    match v {
        Value::List(l) | Value::Tuple(l) => Some(l),
        _ => None,
    }
}

fn as_dict(v: &Value) -> Option<&BTreeMap<HashableValue, Value>> {
    match v {
        Value::Dict(d) => Some(d),
        _ => None,
    }
}

fn need_u64(d: &BTreeMap<HashableValue, Value>, k: &str, at: &str) -> Result<u64, Error> {
    match field(d, k) {
        Some(v) => as_u64(v)
            .ok_or_else(|| Error::BadInput(format!("{at}: `{k}` is not a non-negative integer"))),
        None => Err(Error::BadInput(format!("{at}: field `{k}` is missing"))),
    }
}

/// Σ of byte counts read from a file, saturating at 2⁶⁴ − 1 instead of overflowing.
fn sat_sum(it: impl Iterator<Item = u64>) -> u64 {
    it.fold(0, u64::saturating_add)
}

fn opt_u64(d: &BTreeMap<HashableValue, Value>, k: &str) -> u64 {
    field(d, k).and_then(as_u64).unwrap_or(0)
}

/// Reads a snapshot file (at most [`MAX_FILE_BYTES`]).
///
/// # Errors
/// [`Error::BadInput`] for an unreadable, oversized, malformed or unsafe file.
pub fn read_file(path: &str) -> Result<Snapshot, Error> {
    let f = std::fs::File::open(path)
        .map_err(|e| Error::BadInput(format!("cannot open snapshot `{path}`: {e}")))?;
    if let Ok(m) = f.metadata() {
        if m.len() > MAX_FILE_BYTES {
            return Err(Error::BadInput(format!(
                "snapshot `{path}` is {} bytes; warpscope reads files up to {MAX_FILE_BYTES} bytes (1 GiB)",
                m.len()
            )));
        }
        if m.is_dir() {
            return Err(Error::BadInput(format!(
                "`{path}` is a directory, not a snapshot file"
            )));
        }
    }
    let mut bytes = Vec::new();
    f.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::BadInput(format!("cannot read snapshot `{path}`: {e}")))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(Error::BadInput(format!(
            "snapshot `{path}` is over {MAX_FILE_BYTES} bytes (1 GiB), the most warpscope reads"
        )));
    }
    parse(&bytes).map_err(|e| match e {
        Error::BadInput(m) => Error::BadInput(format!("snapshot `{path}`: {m}")),
        other => other,
    })
}

/// Decodes snapshot bytes. Reports progress ([`crate::progress`]): after the opcode guard (5 %),
/// after `serde-pickle`'s decoding (70 %; one step that cannot stop midway — about 3 s for a
/// 224 MB file), then every 4,096 trace events up to 80 % (the replay does the rest).
///
/// # Errors
/// [`Error::BadInput`] for a malformed or unsafe pickle or a value that is not a snapshot;
/// [`Error::Cancelled`] when the current progress scope is cancelled.
pub fn parse(bytes: &[u8]) -> Result<Snapshot, Error> {
    crate::progress::report(0, PROGRESS_TOTAL)?;
    let summary = pickle::check(bytes)?;
    crate::progress::report(PROGRESS_CHECKED, PROGRESS_TOTAL)?;
    // serde-pickle 1.2 counts memo references per occurrence in the stream, but expands a shared
    // container once per reference; a reference nested inside a shared container (PyTorch shares
    // stack-frame dicts and their strings between blocks and trace events) then runs out and is
    // reported as "recursive". `replace_recursive_structures` turns those into `None`; the
    // fields this reader uses (segments, blocks, trace events: unshared dicts) are unaffected, and
    // one that did come back `None` would be reported as missing, never read as a number.
    // The fast path skips the `frames` of every block and event (most of a large file); it
    // declines anything it does not handle exactly, and serde-pickle decodes that instead.
    let mut cancelled = false;
    let fast = super::unpickle::decode_without_frames(bytes, &mut |at| {
        let done = PROGRESS_CHECKED
            + (PROGRESS_DECODED - PROGRESS_CHECKED) * at as u64 / bytes.len().max(1) as u64;
        cancelled = crate::progress::report(done, PROGRESS_TOTAL).is_err();
        !cancelled
    });
    if cancelled {
        return Err(Error::Cancelled);
    }
    let value = match fast {
        Some(v) => v,
        None => {
            let options = serde_pickle::DeOptions::new().replace_recursive_structures();
            serde_pickle::value_from_slice(bytes, options)
                .map_err(|e| Error::BadInput(format!("not a readable pickle: {e}")))?
        }
    };
    let out = extract(&value, summary.protocol);
    if out == Err(Error::Cancelled) && bytes.len() >= BACKGROUND_DROP_BYTES {
        drop_in_background(value);
    }
    out
}

/// Files at least this large have their decoded value freed on another thread when cancelled.
const BACKGROUND_DROP_BYTES: usize = 16 << 20;

/// Frees a decoded pickle on a short-lived thread of its own: the 250,000-event synthetic file
/// decodes into millions of small allocations whose freeing takes about a second, which a
/// cancel need not wait for. (Not done for a successful read: on two shared cores the freeing
/// thread then competes with whatever runs next — back-to-back reads got slower.) Inline if no
/// thread can be started.
fn drop_in_background(v: Value) {
    // On failure `spawn` drops the closure, and `v` with it, right here.
    let _ = std::thread::Builder::new()
        .name("snapshot-free".into())
        .spawn(move || drop(v));
}

/// The snapshot's fields from the decoded pickle.
fn extract(value: &Value, protocol: u8) -> Result<Snapshot, Error> {
    crate::progress::report(PROGRESS_DECODED, PROGRESS_TOTAL)?;
    let (layout, segs_v, traces_v, settings_v) = match value {
        Value::Dict(d) => (
            "dict",
            field(d, "segments").ok_or_else(|| {
                Error::BadInput("not a memory snapshot: the dict has no `segments`".into())
            })?,
            field(d, "device_traces"),
            field(d, "allocator_settings"),
        ),
        Value::List(_) => ("list", value, None, None),
        _ => {
            return Err(Error::BadInput(
                "not a memory snapshot: expected a dict with `segments` or a list of segments"
                    .into(),
            ));
        }
    };
    let segs_l = as_list(segs_v)
        .ok_or_else(|| Error::BadInput("not a memory snapshot: `segments` is not a list".into()))?;
    if segs_l.len() > MAX_SEGMENTS {
        return Err(Error::BadInput(format!(
            "{} segments; warpscope reads at most {MAX_SEGMENTS}",
            segs_l.len()
        )));
    }
    let mut segments = Vec::with_capacity(segs_l.len());
    let mut all_have_addresses = true;
    let mut block_count = 0usize;
    for (i, sv) in segs_l.iter().enumerate() {
        let at = format!("segment {i}");
        let d = as_dict(sv).ok_or_else(|| Error::BadInput(format!("{at} is not a dict")))?;
        let address = need_u64(d, "address", &at)?;
        let total_size = need_u64(d, "total_size", &at)?;
        let blocks_l = match field(d, "blocks") {
            Some(b) => as_list(b)
                .ok_or_else(|| Error::BadInput(format!("{at}: `blocks` is not a list")))?,
            None => &[],
        };
        block_count += blocks_l.len();
        if block_count > MAX_BLOCKS {
            return Err(Error::BadInput(format!(
                "more than {MAX_BLOCKS} blocks; warpscope reads at most that many"
            )));
        }
        let mut blocks = Vec::with_capacity(blocks_l.len());
        let mut offset = 0u64;
        for (j, bv) in blocks_l.iter().enumerate() {
            let at = format!("segment {i} block {j}");
            let b = as_dict(bv).ok_or_else(|| Error::BadInput(format!("{at} is not a dict")))?;
            let size = need_u64(b, "size", &at)?;
            let baddr = match field(b, "address") {
                Some(v) => {
                    as_u64(v).ok_or_else(|| Error::BadInput(format!("{at}: bad `address`")))?
                }
                None => {
                    all_have_addresses = false;
                    address.saturating_add(offset)
                }
            };
            offset = offset.saturating_add(size);
            let state = match field(b, "state").and_then(as_str) {
                Some("active_allocated") => BlockState::ActiveAllocated,
                Some("active_pending_free" | "active_awaiting_free") => {
                    BlockState::ActivePendingFree
                }
                Some("inactive") => BlockState::Inactive,
                Some(other) => BlockState::Other(other.chars().take(40).collect()),
                None => return Err(Error::BadInput(format!("{at}: field `state` is missing"))),
            };
            blocks.push(SnapBlock {
                address: baddr,
                size,
                requested_size: opt_u64(b, "requested_size"),
                state,
            });
        }
        let allocated_size = match field(d, "allocated_size") {
            Some(v) => {
                as_u64(v).ok_or_else(|| Error::BadInput(format!("{at}: bad `allocated_size`")))?
            }
            None => blocks
                .iter()
                .filter(|b| b.state == BlockState::ActiveAllocated)
                .fold(0u64, |a, b| a.saturating_add(b.size)),
        };
        let private_pool = match field(d, "segment_pool_id").and_then(as_list) {
            Some(ids) => ids.iter().any(|x| as_i64(x).is_some_and(|v| v != 0)),
            None => false,
        };
        segments.push(SnapSegment {
            device: field(d, "device").and_then(as_i64).unwrap_or(0),
            address,
            total_size,
            allocated_size,
            active_size: opt_u64(d, "active_size"),
            requested_size: opt_u64(d, "requested_size"),
            stream: opt_u64(d, "stream"),
            segment_type: field(d, "segment_type")
                .and_then(as_str)
                .unwrap_or("")
                .chars()
                .take(16)
                .collect(),
            is_expandable: field(d, "is_expandable")
                .is_some_and(|v| matches!(v, Value::Bool(true))),
            private_pool,
            blocks,
        });
    }
    let mut device_traces = Vec::new();
    if let Some(tv) = traces_v {
        let tl =
            as_list(tv).ok_or_else(|| Error::BadInput("`device_traces` is not a list".into()))?;
        let mut count = 0usize;
        let total_events = tl
            .iter()
            .filter_map(as_list)
            .map(<[Value]>::len)
            .sum::<usize>();
        for (dev, t) in tl.iter().enumerate() {
            let evs = as_list(t)
                .ok_or_else(|| Error::BadInput(format!("`device_traces[{dev}]` is not a list")))?;
            count += evs.len();
            if count > MAX_TRACE_EVENTS {
                return Err(Error::BadInput(format!(
                    "more than {MAX_TRACE_EVENTS} trace events; warpscope reads at most that many"
                )));
            }
            let mut out = Vec::with_capacity(evs.len());
            let before = count - evs.len();
            for (k, ev) in evs.iter().enumerate() {
                if k % PROGRESS_EVERY == 0 {
                    report_events(
                        PROGRESS_DECODED,
                        PROGRESS_EXTRACTED,
                        before + k,
                        total_events,
                    )?;
                }
                let at = format!("device {dev} trace event {k}");
                let e =
                    as_dict(ev).ok_or_else(|| Error::BadInput(format!("{at} is not a dict")))?;
                let action = field(e, "action")
                    .and_then(as_str)
                    .ok_or_else(|| Error::BadInput(format!("{at}: field `action` is missing")))?;
                out.push(TraceEvent {
                    action: action.chars().take(32).collect(),
                    addr: field(e, "addr").and_then(as_u64),
                    size: opt_u64(e, "size"),
                    stream: opt_u64(e, "stream"),
                    device_free: field(e, "device_free").and_then(as_u64),
                });
            }
            device_traces.push(out);
        }
    }
    let mut allocator_settings = BTreeMap::new();
    if let Some(Value::Dict(d)) = settings_v {
        for (k, v) in d.iter().take(64) {
            if let HashableValue::String(k) = k {
                let text = match v {
                    Value::I64(i) => i.to_string(),
                    Value::F64(f) => f.to_string(),
                    Value::Bool(b) => b.to_string(),
                    Value::String(s) => s.chars().take(200).collect(),
                    Value::None => "None".into(),
                    _ => continue,
                };
                allocator_settings.insert(k.chars().take(64).collect(), text);
            }
        }
    }
    Ok(Snapshot {
        layout,
        protocol,
        blocks_have_addresses: all_have_addresses,
        segments,
        device_traces,
        allocator_settings,
    })
}

/// The replay of one snapshot's trace.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Replay {
    /// Peak reserved during the replay (bytes; summed over devices' peaks).
    pub reserved_peak_bytes: u64,
    /// Reserved at the end (bytes).
    pub reserved_final_bytes: u64,
    /// Peak allocated (rounded blocks; bytes).
    pub allocated_peak_bytes: u64,
    /// Peak of live requested bytes — what a LightSeq2-style up-front allocation of this
    /// trace's memory would need (bytes).
    pub needed_peak_bytes: u64,
    /// Replayed segment sizes in creation order (bytes), per device concatenated.
    pub segments: Vec<u64>,
    /// Whether the trace starts from an empty allocator (every freed address was allocated in
    /// the trace and every alloc lies in a segment the trace created).
    pub starts_empty: bool,
    /// Whether the replay recreates the file's segments one for one, in creation order
    /// (`None` when the trace starts mid-run or is empty: no claim either way).
    pub segments_match: Option<bool>,
    /// Frees of addresses the trace never allocated (the trace began mid-run).
    pub unmatched_frees: usize,
    /// What the replay can and cannot say.
    pub note: String,
    /// [`note`](Self::note) in Chinese, built from the same numbers (for the Chinese UI).
    pub note_zh: String,
}

/// Replays the snapshot's `device_traces` through the simulator (see the module docs).
/// Reports progress ([`crate::progress`]) every 4,096 events, from 80 % to 100 % of a
/// snapshot's reading; when the current progress scope is cancelled it stops there and returns
/// what it has (partial: [`run_path`] then returns [`Error::Cancelled`] instead).
pub fn replay(s: &Snapshot) -> Replay {
    let mut r = Replay {
        reserved_peak_bytes: 0,
        reserved_final_bytes: 0,
        allocated_peak_bytes: 0,
        needed_peak_bytes: 0,
        segments: Vec::new(),
        starts_empty: true,
        segments_match: None,
        unmatched_frees: 0,
        note: String::new(),
        note_zh: String::new(),
    };
    let events: usize = s.device_traces.iter().map(Vec::len).sum();
    if events == 0 {
        r.starts_empty = false;
        r.note = "the trace is empty (history recording was off): nothing to replay".into();
        r.note_zh = "轨迹是空的（录制时没有打开历史记录）：没有可回放的内容".into();
        return r;
    }
    let mut all_match = true;
    let mut reasons: Vec<String> = Vec::new();
    let mut reasons_zh: Vec<String> = Vec::new();
    let mut expandable = false;
    let mut replayed = 0usize;
    'devices: for (dev, trace) in s.device_traces.iter().enumerate() {
        if trace.is_empty() {
            continue;
        }
        let mut a = CachingAllocator::new(u64::MAX);
        let mut live: HashMap<u64, usize> = HashMap::new();
        // Segments the trace created and has not freed: address → (size, creation order).
        let mut trace_segs: BTreeMap<u64, (u64, usize)> = BTreeMap::new();
        let mut created = 0usize;
        let (mut peak, mut apeak, mut npeak) = (0u64, 0u64, 0u64);
        let mut from_empty = true;
        for e in trace {
            if replayed.is_multiple_of(PROGRESS_EVERY)
                && report_events(PROGRESS_EXTRACTED, PROGRESS_TOTAL, replayed, events).is_err()
            {
                // Cancelled: stop here; `run_path` reports the cancellation.
                break 'devices;
            }
            replayed += 1;
            match e.action.as_str() {
                "alloc" => {
                    if let Some(addr) = e.addr {
                        let inside = trace_segs
                            .range(..=addr)
                            .next_back()
                            .is_some_and(|(&sa, &(ss, _))| addr < sa.saturating_add(ss));
                        from_empty &= inside;
                        if let Some(old) = a
                            .malloc(e.size, e.stream)
                            .ok()
                            .and_then(|x| live.insert(addr, x.block))
                        {
                            a.free(old);
                        }
                    }
                }
                "free_completed" => match e.addr.and_then(|addr| live.remove(&addr)) {
                    Some(h) => {
                        a.free(h);
                    }
                    None => {
                        r.unmatched_frees += 1;
                        from_empty = false;
                    }
                },
                "segment_alloc" => {
                    if let Some(addr) = e.addr {
                        trace_segs.insert(addr, (e.size, created));
                        created += 1;
                    }
                }
                "segment_free" => {
                    if let Some(addr) = e.addr {
                        from_empty &= trace_segs.remove(&addr).is_some();
                    }
                    a.release_segment_of_size(e.size, e.stream);
                }
                "segment_map" | "segment_unmap" => expandable = true,
                _ => {}
            }
            peak = peak.max(a.reserved());
            apeak = apeak.max(a.allocated());
            npeak = npeak.max(a.requested());
        }
        r.reserved_peak_bytes = r.reserved_peak_bytes.saturating_add(peak);
        r.reserved_final_bytes = r.reserved_final_bytes.saturating_add(a.reserved());
        r.allocated_peak_bytes = r.allocated_peak_bytes.saturating_add(apeak);
        r.needed_peak_bytes = r.needed_peak_bytes.saturating_add(npeak);
        let replayed: Vec<u64> = a.segments().iter().map(|sv| sv.size).collect();
        r.segments.extend(&replayed);
        r.starts_empty &= from_empty;
        // The file's segments of this device, in the order the trace created them.
        let file_segs: Vec<&SnapSegment> = s
            .segments
            .iter()
            .filter(|sg| usize::try_from(sg.device).ok() == Some(dev))
            .collect();
        let mut ordered: Vec<(usize, u64)> = Vec::new();
        for sg in &file_segs {
            match trace_segs.get(&sg.address) {
                Some(&(_, order)) => ordered.push((order, sg.total_size)),
                None => r.starts_empty = false,
            }
        }
        ordered.sort_unstable();
        let expected: Vec<u64> = ordered.iter().map(|&(_, size)| size).collect();
        if ordered.len() != trace_segs.len() {
            all_match = false;
            let missing = trace_segs.len() - ordered.len().min(trace_segs.len());
            reasons.push(format!(
                "device {dev}: {missing} segments the trace created are not in the file"
            ));
            reasons_zh.push(format!(
                "设备 {dev}：轨迹创建的段中有 {missing} 个不在文件里"
            ));
        }
        if expected != replayed {
            all_match = false;
            let (n_replayed, replayed_bytes) = (replayed.len(), sat_sum(replayed.iter().copied()));
            let (n_file, file_bytes) = (
                file_segs.len(),
                sat_sum(file_segs.iter().map(|s| s.total_size)),
            );
            reasons.push(format!(
                "device {dev}: replayed {n_replayed} segments ({replayed_bytes} bytes), the file has {n_file} ({file_bytes} bytes)"
            ));
            reasons_zh.push(format!(
                "设备 {dev}：回放得到 {n_replayed} 个段（{replayed_bytes} 字节），文件里有 {n_file} 个（{file_bytes} 字节）"
            ));
        }
    }
    if expandable || s.segments.iter().any(|sg| sg.is_expandable) {
        r.starts_empty = false;
        r.note =
            "expandable segments (segment_map/segment_unmap): the simulator follows the default \
                  non-expandable rules, so its segments cannot match the file's"
                .into();
        r.note_zh = "可扩展段（segment_map/segment_unmap）：模拟器按默认的不可扩展规则分配，\
                     所以它的段不可能与文件里的一致"
            .into();
    } else if !r.starts_empty {
        r.note = format!(
            "the trace starts mid-run ({} frees of blocks allocated before it; segments created before \
             it): a replay from an empty allocator cannot recreate the file's segments, so no match is \
             claimed — the replay figures cover only the recorded window",
            r.unmatched_frees
        );
        r.note_zh = format!(
            "轨迹从运行中途开始（{} 次释放的块在轨迹开始前就已分配；有的段在它之前就已创建）：\
             从空的分配器开始回放无法重建文件里的段，所以不判断是否一致——回放的数字只覆盖录下的这一段",
            r.unmatched_frees
        );
    } else {
        r.segments_match = Some(all_match);
        r.note = if all_match {
            "the trace starts from an empty allocator and the replay recreates the file's segments one \
             for one, in creation order"
                .into()
        } else {
            format!(
                "the trace starts from an empty allocator but the replay differs: {}",
                reasons.join("; ")
            )
        };
        r.note_zh = if all_match {
            "轨迹从空的分配器开始，回放按创建顺序逐一重建了文件里的段".into()
        } else {
            format!(
                "轨迹从空的分配器开始，但回放结果不同：{}",
                reasons_zh.join("；")
            )
        };
    }
    r
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
    /// The file read (or `(built-in mini fixture)`).
    pub path: String,
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
    /// Whether the replay recreates the file's segments one for one (null: no claim).
    pub segments_match: Option<bool>,
    /// Frees of blocks allocated before the trace began.
    pub replay_unmatched_frees: usize,
    /// What the replay can and cannot say.
    pub replay_note: String,
    /// [`replay_note`](Self::replay_note) in Chinese, built from the same numbers.
    pub replay_note_zh: String,
    /// The segment map (segments in file order, blocks in address order).
    pub segment_map: Vec<MapSegment>,
}

/// Summarises and replays a decoded snapshot.
pub fn summarise(path: &str, s: &Snapshot) -> SnapshotOutput {
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
    let mut actions: BTreeMap<String, usize> = BTreeMap::new();
    for e in s.device_traces.iter().flatten() {
        *actions.entry(e.action.clone()).or_default() += 1;
    }
    // Sums saturate: a file may hold any integers, and 2⁶⁴ − 1 bytes already says "absurd".
    let reserved = sat_sum(s.segments.iter().map(|sg| sg.total_size));
    let allocated = sat_sum(s.segments.iter().map(|sg| sg.allocated_size));
    let r = replay(s);
    SnapshotOutput {
        path: path.to_owned(),
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
        replay_note: r.note,
        replay_note_zh: r.note_zh,
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
    }
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

/// A synthetic snapshot pickle for benchmarks and tests: `events` trace events in the
/// PyTorch 2.11 dict layout (the fields of `torch2.11-cs336-a2.pickle`: `action`, `addr`,
/// `size`, `stream`, `time_us`, `compile_context`, `user_metadata`, and `frames` — `frames`
/// stack frames per event, each its own dict, as `{name, filename, line}`), written with
/// `serde-pickle`'s serializer (protocol 3, no memo sharing: every frame is written out).
///
/// The trace is the simulator's own run of a seeded random workload (sizes from 512 B to
/// 96 MiB, up to 64 live blocks): each `alloc` follows the `segment_alloc` it caused, each free
/// is `free_requested` then `free_completed`, and the file's `segments` are the simulator's at
/// the end — so the trace starts from an empty allocator and replaying it recreates the
/// segments (what `replay` checks). No file of this size is committed to the repository.
///
/// # Errors
/// [`Error::BadInput`] if the pickle cannot be written.
pub fn synthetic(events: usize, frames: usize, seed: u64) -> Result<Vec<u8>, Error> {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn dict(pairs: Vec<(&str, Value)>) -> Value {
        Value::Dict(
            pairs
                .into_iter()
                .map(|(k, v)| (key(k), v))
                .collect::<BTreeMap<_, _>>(),
        )
    }
    fn int(x: u64) -> Value {
        Value::I64(i64::try_from(x).unwrap_or(i64::MAX))
    }
    fn text(s: &str) -> Value {
        Value::String(s.to_owned())
    }
    const FILES: [&str; 4] = [
        "/home/user/project/model.py",
        "/usr/lib/python3.12/site-packages/torch/nn/modules/module.py",
        "/usr/lib/python3.12/site-packages/torch/nn/functional.py",
        "/home/user/project/train.py",
    ];
    const NAMES: [&str; 4] = ["forward", "_call_impl", "_wrapped_call_impl", "<module>"];
    let stack = |rng: &mut ChaCha8Rng| -> Value {
        Value::List(
            (0..frames)
                .map(|i| {
                    dict(vec![
                        ("name", text(NAMES[i % NAMES.len()])),
                        ("filename", text(FILES[i % FILES.len()])),
                        ("line", int(rng.random_range(1..2000))),
                    ])
                })
                .collect(),
        )
    };
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut a = CachingAllocator::new(u64::MAX >> 1);
    let mut live: Vec<(usize, u64, u64)> = Vec::new(); // (handle, address, requested)
    let mut trace: Vec<Value> = Vec::with_capacity(events);
    let mut time_us: u64 = 1_700_000_000_000_000;
    let mut event = |trace: &mut Vec<Value>, rng: &mut ChaCha8Rng, action: &str, addr, size| {
        time_us += rng.random_range(1..200);
        trace.push(dict(vec![
            ("action", text(action)),
            ("addr", int(addr)),
            ("size", int(size)),
            ("stream", int(0)),
            ("time_us", int(time_us)),
            ("compile_context", text("N/A")),
            ("user_metadata", text("")),
            ("frames", stack(rng)),
        ]));
    };
    while trace.len() < events {
        // Every step writes two events (a new segment and its first block, or a free requested
        // and completed); with room for one, the last event is a free requested, not completed.
        if events - trace.len() == 1
            && let Some(&(_, addr, size)) = live.first()
        {
            event(&mut trace, &mut rng, "free_requested", addr, size);
            break;
        }
        let grow = live.is_empty() || (live.len() < 64 && rng.random_bool(0.5));
        if grow {
            let size = if rng.random_bool(0.7) {
                rng.random_range(512..1 << 20)
            } else {
                rng.random_range(2 << 20..96 << 20)
            };
            let x = a
                .malloc(size, 0)
                .map_err(|e| Error::BadInput(format!("synthetic trace: {e}")))?;
            if matches!(
                x.served,
                Served::NewSegment | Served::NewSegmentAfterRelease
            ) {
                if let Some(seg) = a.segments().iter().find(|s| {
                    s.address <= x.address && x.address < s.address.saturating_add(s.size)
                }) {
                    event(&mut trace, &mut rng, "segment_alloc", seg.address, seg.size);
                }
            }
            event(&mut trace, &mut rng, "alloc", x.address, size);
            live.push((x.block, x.address, size));
        } else {
            let (h, addr, size) = live.swap_remove(rng.random_range(0..live.len()));
            event(&mut trace, &mut rng, "free_requested", addr, size);
            event(&mut trace, &mut rng, "free_completed", addr, size);
            a.free(h);
        }
    }
    trace.truncate(events); // only for `events` = 1
    let segments: Vec<Value> = a
        .segments()
        .iter()
        .map(|s| {
            let allocated: u64 = s
                .blocks
                .iter()
                .filter(|b| b.allocated)
                .map(|b| b.size)
                .sum();
            let requested: u64 = s.blocks.iter().map(|b| b.requested).sum();
            dict(vec![
                ("device", int(0)),
                ("address", int(s.address)),
                ("total_size", int(s.size)),
                ("allocated_size", int(allocated)),
                ("active_size", int(allocated)),
                ("requested_size", int(requested)),
                ("stream", int(s.stream)),
                (
                    "segment_type",
                    text(match s.pool {
                        Pool::Small => "small",
                        Pool::Large => "large",
                    }),
                ),
                ("segment_pool_id", Value::Tuple(vec![int(0), int(0)])),
                ("is_expandable", Value::Bool(false)),
                ("frames", Value::List(Vec::new())),
                (
                    "blocks",
                    Value::List(
                        s.blocks
                            .iter()
                            .map(|b| {
                                dict(vec![
                                    ("address", int(s.address + b.offset)),
                                    ("size", int(b.size)),
                                    ("requested_size", int(b.requested)),
                                    (
                                        "state",
                                        text(if b.allocated {
                                            "active_allocated"
                                        } else {
                                            "inactive"
                                        }),
                                    ),
                                    ("frames", Value::List(Vec::new())),
                                ])
                            })
                            .collect(),
                    ),
                ),
            ])
        })
        .collect();
    let top = dict(vec![
        ("segments", Value::List(segments)),
        ("device_traces", Value::List(vec![Value::List(trace)])),
        (
            "allocator_settings",
            dict(vec![("PYTORCH_CUDA_ALLOC_CONF", text(""))]),
        ),
        ("external_annotations", Value::List(Vec::new())),
    ]);
    serde_pickle::value_to_vec(&top, serde_pickle::SerOptions::new())
        .map_err(|e| Error::BadInput(format!("synthetic snapshot: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(name: &str) -> String {
        format!("{}/tests/data/snapshots/{name}", env!("CARGO_MANIFEST_DIR"))
    }

    /// (file, segments, reserved bytes, allocated bytes, trace events) — the README's table.
    const TABLE: &[(&str, usize, u64, u64, usize)] = &[
        (
            "torch2.0-flexgen-opt1.3b.pickle",
            266,
            6_658_457_600,
            3_872_498_688,
            1,
        ),
        (
            "torch2.6-verl.pickle",
            127,
            26_189_234_176,
            24_916_034_560,
            0,
        ),
        (
            "torch2.11-cs336-a2.pickle",
            216,
            14_180_941_824,
            1_377_753_600,
            5_163,
        ),
        ("torch2.11-mini-fixture.pickle", 14, 421_527_552, 0, 50),
    ];

    #[test]
    fn four_real_snapshots_match_the_readme_table() {
        for &(file, segs, reserved, allocated, events) in TABLE {
            let o = run_path(&data(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
            assert_eq!(o.segments, segs, "{file}");
            assert_eq!(o.reserved_bytes, reserved, "{file}");
            assert_eq!(o.allocated_bytes, allocated, "{file}");
            assert_eq!(o.trace_events, events, "{file}");
            // Reserved = allocated + the rest, blocks tile their segments.
            for sg in &o.segment_map {
                assert_eq!(
                    sg.blocks.iter().map(|b| b.size).sum::<u64>(),
                    sg.size,
                    "{file}"
                );
            }
        }
    }

    #[test]
    fn mini_fixture_replay_recreates_its_segments_in_order() {
        const MIB: u64 = 1 << 20;
        let o = run_path(&data("torch2.11-mini-fixture.pickle")).unwrap();
        // The README's list: 24, 20, 24, 24, 20, 24, 24, 20, 24, 24, 20, 24, 128, 2 MiB.
        let expected: Vec<u64> = [24, 20, 24, 24, 20, 24, 24, 20, 24, 24, 20, 24, 128, 2]
            .iter()
            .map(|m| m * MIB)
            .collect();
        assert_eq!(expected.iter().sum::<u64>(), 421_527_552);
        assert_eq!(o.replay_segments, expected);
        assert!(o.trace_starts_empty);
        assert_eq!(o.segments_match, Some(true), "{}", o.replay_note);
        assert_eq!(o.replay_reserved_final_bytes, 421_527_552);
        assert_eq!(o.replay_reserved_peak_bytes, 421_527_552);
        // The built-in default is the same file.
        let d = run_path("").unwrap();
        assert_eq!(d.replay_segments, expected);
    }

    #[test]
    fn mid_run_traces_claim_no_match() {
        for file in [
            "torch2.0-flexgen-opt1.3b.pickle",
            "torch2.11-cs336-a2.pickle",
            "torch2.6-verl.pickle",
        ] {
            let o = run_path(&data(file)).unwrap();
            assert!(!o.trace_starts_empty, "{file}");
            assert_eq!(o.segments_match, None, "{file}");
            assert!(!o.replay_note.is_empty());
        }
        let o = run_path(&data("torch2.0-flexgen-opt1.3b.pickle")).unwrap();
        assert!(!o.blocks_have_addresses);
        assert_eq!(o.replay_unmatched_frees, 1);
        let o = run_path(&data("torch2.6-verl.pickle")).unwrap();
        assert!(o.blocks_by_state.contains_key("active_pending_free"));
        assert!(o.private_pool_segments > 0);
    }

    #[test]
    fn old_layout_addresses_are_derived_from_the_segment() {
        let s = read_file(&data("torch2.0-flexgen-opt1.3b.pickle")).unwrap();
        for sg in &s.segments {
            let mut at = sg.address;
            for b in &sg.blocks {
                assert_eq!(b.address, at);
                at += b.size;
            }
        }
    }

    #[test]
    fn truncated_and_garbage_files_are_bad_input() {
        let bytes = std::fs::read(data("torch2.11-mini-fixture.pickle")).unwrap();
        for cut in [0, 1, 2, 100, bytes.len() / 2, bytes.len() - 1] {
            let e = parse(&bytes[..cut]).unwrap_err();
            assert!(matches!(e, Error::BadInput(_)), "cut {cut}: {e:?}");
        }
        let e = parse(b"this is not a pickle at all").unwrap_err();
        assert!(matches!(e, Error::BadInput(_)));
        let dir = std::env::temp_dir().join(format!("warpscope-lab-d-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("garbage.pickle");
        std::fs::write(&p, [0xffu8; 4096]).unwrap();
        let e = read_file(p.to_str().unwrap()).unwrap_err();
        assert!(e.to_string().contains("garbage.pickle"), "{e}");
        let e = read_file(dir.join("missing.pickle").to_str().unwrap()).unwrap_err();
        assert!(matches!(e, Error::BadInput(_)));
        let _ = std::fs::remove_dir_all(&dir);
        // A pickle of plain data that is not a snapshot.
        let e = parse(b"\x80\x04K\x05.").unwrap_err();
        assert!(e.to_string().contains("not a memory snapshot"), "{e}");
    }

    #[test]
    fn hostile_pickles_are_refused() {
        // GLOBAL os.system + REDUCE, as pickle.dumps writes a __reduce__ exploit (protocol 0).
        let e = parse(b"cos\nsystem\n(S'touch /tmp/pwned'\ntR.").unwrap_err();
        assert!(e.to_string().contains("os.system"), "{e}");
        // A 2 GB length prefix (BINBYTES8) with nothing behind it.
        let mut p = b"\x80\x05\x8e".to_vec();
        p.extend_from_slice(&2_000_000_000u64.to_le_bytes());
        p.push(b'.');
        let e = parse(&p).unwrap_err();
        assert!(e.to_string().contains("2000000000"), "{e}");
    }

    #[test]
    fn bare_list_and_protocol_5_and_hand_made_trace() {
        // [{'address': 4096, 'total_size': 2097152, 'blocks': [{'size': 2097152, 'state': 'inactive'}]}]
        // as pickle protocol 5 (hand-assembled: EMPTY_LIST, MARK, EMPTY_DICT, … , APPENDS).
        let mut p = b"\x80\x05](}".to_vec();
        let s = |p: &mut Vec<u8>, t: &str| {
            p.push(0x8c);
            p.push(t.len() as u8);
            p.extend_from_slice(t.as_bytes());
        };
        p.push(b'(');
        s(&mut p, "address");
        p.extend_from_slice(b"M\x00\x10");
        s(&mut p, "total_size");
        p.extend_from_slice(b"J\x00\x00\x20\x00");
        s(&mut p, "blocks");
        p.extend_from_slice(b"](}(");
        s(&mut p, "size");
        p.extend_from_slice(b"J\x00\x00\x20\x00");
        s(&mut p, "state");
        s(&mut p, "active_awaiting_free");
        p.extend_from_slice(b"ueue.");
        let snap = parse(&p).unwrap();
        assert_eq!(snap.layout, "list");
        assert_eq!(snap.protocol, 5);
        assert_eq!(snap.segments[0].address, 4096);
        assert_eq!(
            snap.segments[0].blocks[0].state,
            BlockState::ActivePendingFree
        );
        assert!(!snap.blocks_have_addresses);
        let o = summarise("x", &snap);
        assert_eq!(o.reserved_bytes, 2 * 1024 * 1024);
        assert_eq!(o.segments_match, None);
        // A hand-made trace from empty: alloc 8 MiB → 20 MiB segment; free; alloc 30 MiB → 30.
        let ev = |action: &str, addr: u64, size: u64| TraceEvent {
            action: action.into(),
            addr: Some(addr),
            size,
            stream: 0,
            device_free: None,
        };
        const M: u64 = 1 << 20;
        let snap = Snapshot {
            layout: "dict",
            protocol: 4,
            blocks_have_addresses: true,
            segments: [(1000 * M, 20 * M), (2000 * M, 30 * M)]
                .iter()
                .map(|&(address, total_size)| SnapSegment {
                    device: 0,
                    address,
                    total_size,
                    allocated_size: 0,
                    active_size: 0,
                    requested_size: 0,
                    stream: 0,
                    segment_type: "large".into(),
                    is_expandable: false,
                    private_pool: false,
                    blocks: vec![SnapBlock {
                        address,
                        size: total_size,
                        requested_size: 0,
                        state: BlockState::Inactive,
                    }],
                })
                .collect(),
            device_traces: vec![vec![
                ev("segment_alloc", 1000 * M, 20 * M),
                ev("alloc", 1000 * M, 8 * M),
                ev("free_requested", 1000 * M, 8 * M),
                ev("free_completed", 1000 * M, 8 * M),
                ev("segment_alloc", 2000 * M, 30 * M),
                ev("alloc", 2000 * M, 30 * M),
                ev("free_completed", 2000 * M, 30 * M),
                TraceEvent {
                    action: "oom".into(),
                    addr: None,
                    size: 0,
                    stream: 0,
                    device_free: Some(5),
                },
            ]],
            allocator_settings: BTreeMap::new(),
        };
        let r = replay(&snap);
        assert_eq!(r.segments, vec![20 * M, 30 * M]);
        assert_eq!(r.reserved_peak_bytes, 50 * M);
        assert_eq!(r.needed_peak_bytes, 30 * M);
        assert_eq!(r.segments_match, Some(true), "{}", r.note);
    }

    #[test]
    fn synthetic_snapshot_reads_back_and_replays_from_empty() {
        let bytes = synthetic(3000, 3, 7).unwrap();
        let s = parse(&bytes).unwrap();
        assert_eq!(s.device_traces[0].len(), 3000);
        assert!(s.blocks_have_addresses);
        let o = summarise("synthetic", &s);
        assert!(o.trace_starts_empty, "{}", o.replay_note);
        assert_eq!(o.segments_match, Some(true), "{}", o.replay_note);
        assert_eq!(o.replay_reserved_final_bytes, o.reserved_bytes);
    }
}
