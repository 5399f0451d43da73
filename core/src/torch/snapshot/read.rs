//! Reading a snapshot file: the size limit, the opcode guard ([`crate::torch::pickle::check`]),
//! decoding (the fast path of [`crate::torch::unpickle`], else `serde-pickle`), and extracting
//! the segments, blocks, trace events and allocator settings into a [`Snapshot`] — every field
//! checked, every count bounded, nothing indexed that the file could make out of range.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_pickle::{HashableValue, Value};

use super::{
    BlockState, FALLBACK_MEMORY_PER_FILE_BYTE, MAX_BLOCKS, MAX_SEGMENTS, MAX_TRACE_EVENTS,
    MEMORY_PER_FILE_BYTE, PROGRESS_CHECKED, PROGRESS_DECODED, PROGRESS_EVERY, PROGRESS_EXTRACTED,
    PROGRESS_TOTAL, SnapBlock, SnapSegment, Snapshot, TraceEvent, report_events,
};
use crate::Error;
use crate::torch::frames::{FrameTable, NO_FRAMES};
use crate::torch::pickle;

pub(super) fn key(k: &str) -> HashableValue {
    HashableValue::String(k.to_owned())
}

fn field<'a>(d: &'a BTreeMap<HashableValue, Value>, k: &str) -> Option<&'a Value> {
    d.get(&key(k)).filter(|v| !matches!(v, Value::None))
}

fn as_u64(v: &Value) -> Option<u64> {
    match v {
        Value::I64(i) => u64::try_from(*i).ok(),
        // 2⁶³ ..= 2⁶⁴ − 1 (an address in the upper half) is pickled as a long, not an int.
        Value::Int(b) if b.bits() <= 64 => b.to_string().parse().ok(),
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

/// What a value that should be a byte count or address is, for an error message.
fn describe(v: &Value) -> String {
    match v {
        Value::I64(i) => format!("{i} (negative)"),
        Value::Int(_) => "an integer beyond 64 bits".to_owned(),
        Value::F64(f) if f.is_nan() => "NaN".to_owned(),
        Value::F64(f) => format!("the float {f}"),
        Value::String(t) => format!("the string {:?}", t.chars().take(24).collect::<String>()),
        Value::Bool(b) => format!("the boolean {}", if *b { "True" } else { "False" }),
        Value::Bytes(_) => "bytes".to_owned(),
        Value::List(_) | Value::Tuple(_) => "a list".to_owned(),
        Value::Dict(_) => "a dict".to_owned(),
        Value::Set(_) | Value::FrozenSet(_) => "a set".to_owned(),
        Value::None => "None".to_owned(),
    }
}

/// A trace event's byte count or address: absent (or `None`) is `None`; anything but a
/// non-negative integer is refused, naming the event — a string, float, NaN or negative `size`
/// once silently became 0.
fn event_u64(e: &BTreeMap<HashableValue, Value>, k: &str, at: &str) -> Result<Option<u64>, Error> {
    match field(e, k) {
        None => Ok(None),
        Some(Value::I64(i)) if *i >= 0 => Ok(Some(i.unsigned_abs())),
        Some(v @ Value::Int(_)) if as_u64(v).is_some() => Ok(as_u64(v)),
        Some(v) => Err(Error::BadInput(format!(
            "{at} (`{}`): `{k}` is {}, not a non-negative integer",
            field(e, "action").and_then(as_str).unwrap_or("?"),
            describe(v)
        ))),
    }
}

fn opt_u64(d: &BTreeMap<HashableValue, Value>, k: &str) -> u64 {
    field(d, k).and_then(as_u64).unwrap_or(0)
}

/// Reads a snapshot file: memory-mapped ([`crate::input::map_regular`]), refused before decoding
/// when [`MEMORY_PER_FILE_BYTE`] × its size exceeds the memory available.
///
/// # Errors
/// [`Error::BadInput`] for an unreadable, oversized, malformed or unsafe file.
pub fn read_file(path: &str) -> Result<Snapshot, Error> {
    // Type and size are checked before the file is opened: a FIFO or a device never blocks.
    let bytes = crate::input::map_regular(std::path::Path::new(path), "snapshot")?;
    enough_memory(bytes.len(), MEMORY_PER_FILE_BYTE, "")
        .map_err(|m| Error::BadInput(format!("snapshot `{path}`: {m}")))?;
    if bytes.is_empty() {
        return Err(Error::BadInput(format!(
            "snapshot `{path}`: the file is empty (0 bytes); {WRITE_ONE}"
        )));
    }
    parse(&bytes).map_err(|e| match e {
        // A file that does not even start as a binary pickle (protocol 2 or later, what
        // `pickle.dump` writes) is most likely not a snapshot at all: say so first.
        Error::BadInput(m) if bytes.first() != Some(&0x80) => Error::BadInput(format!(
            "snapshot `{path}`: not a memory snapshot: it does not start as a binary pickle \
             (first byte {:#04x}); {WRITE_ONE} ({m})",
            bytes.first().copied().unwrap_or(0)
        )),
        Error::BadInput(m) => Error::BadInput(format!("snapshot `{path}`: {m}")),
        other => other,
    })
}

/// `Err` with the "not enough memory" sentence when `len` bytes of file at `per_byte` bytes of
/// memory each need more than this process may still allocate
/// ([`crate::input::memory::headroom`]: the least of `MemAvailable`, the rlimits and the
/// cgroup's limit, named in the message). `how` says which decoder the estimate is for.
fn enough_memory(len: usize, per_byte: u64, how: &str) -> Result<(), String> {
    let need = (len as u64).saturating_mul(per_byte);
    match crate::input::memory::headroom() {
        Some(h) if need > h.bytes => Err(format!(
            "not enough memory: the file is {len} bytes; reading it{how} needs about {need} bytes ({per_byte} per byte of file), and this process may allocate {} more (bound by {})",
            h.bytes, h.bound
        )),
        _ => Ok(()),
    }
}

/// How to make a file this reader reads, for refusals of files that are none.
const WRITE_ONE: &str = "a snapshot is the pickle `torch.cuda.memory._dump_snapshot(\"FILE.pickle\")` writes after `torch.cuda.memory._record_memory_history()`";

/// Decodes snapshot bytes. Reports progress ([`crate::progress`]): after the opcode guard (5 %),
/// after `serde-pickle`'s decoding (70 %; one step that cannot stop midway — about 3 s for a
/// 224 MB file), then every 4,096 trace events up to 80 % (the replay does the rest).
///
/// # Errors
/// [`Error::BadInput`] for a malformed or unsafe pickle or a value that is not a snapshot;
/// [`Error::Cancelled`] when the current progress scope is cancelled.
pub fn parse(bytes: &[u8]) -> Result<Snapshot, Error> {
    crate::progress::report(0, PROGRESS_TOTAL)?;
    // serde-pickle 1.2 counts memo references per occurrence in the stream, but expands a shared
    // container once per reference; a reference nested inside a shared container (PyTorch shares
    // stack-frame dicts and their strings between blocks and trace events) then runs out and is
    // reported as "recursive". `replace_recursive_structures` turns those into `None`; the
    // fields this reader uses (segments, blocks, trace events: unshared dicts) are unaffected, and
    // one that did come back `None` would be reported as missing, never read as a number.
    // The fast path skips the `frames` of every block and event (most of a large file); it
    // declines anything it does not handle exactly, and serde-pickle decodes that instead.
    //
    // The expansion limit applies to serde-pickle's copies; the fast path bounds its own. On a
    // large file the opcode guard runs on a thread of its own beside the fast decoder (two
    // passes over the mapped file at once); its verdict still comes first — a file it refuses
    // is refused with its message, whatever the decoder made of it — and a refusal stops the
    // decoder at its next progress report (every 4 MiB).
    let refused = AtomicBool::new(false);
    let mut cancelled = false;
    let mut decode = || {
        crate::torch::unpickle::decode_arena(
            bytes,
            &mut |at| {
                let done = PROGRESS_CHECKED
                    + (PROGRESS_DECODED - PROGRESS_CHECKED) * at as u64 / bytes.len().max(1) as u64;
                cancelled = crate::progress::report(done, PROGRESS_TOTAL).is_err();
                !cancelled && !refused.load(Ordering::Relaxed)
            },
            &mut super::read_arena::fold_event,
        )
    };
    let guarded = bytes.len() >= PARALLEL_GUARD_BYTES;
    let (summary, fast) = std::thread::scope(|sc| {
        let guard = guarded
            .then(|| {
                std::thread::Builder::new()
                    .name("snapshot-guard".into())
                    .spawn_scoped(sc, || {
                        let r = pickle::check_opcodes(bytes);
                        if r.is_err() {
                            refused.store(true, Ordering::Relaxed);
                        }
                        r
                    })
                    .ok()
            })
            .flatten();
        match guard {
            Some(h) => {
                let fast = decode();
                match h.join() {
                    Ok(summary) => (summary, fast),
                    Err(p) => std::panic::resume_unwind(p),
                }
            }
            None => match pickle::check_opcodes(bytes) {
                Ok(summary) => match crate::progress::report(PROGRESS_CHECKED, PROGRESS_TOTAL) {
                    Ok(()) => (Ok(summary), decode()),
                    Err(e) => (Err(e), None),
                },
                Err(e) => (Err(e), None),
            },
        }
    });
    let summary = summary?;
    if cancelled {
        return Err(Error::Cancelled);
    }
    // The trace events are read from the decoder's nodes, the rest expanded into values
    // (`read_arena`); where that declines, serde-pickle decodes the file.
    if let Some((arena, mut frames, folded)) = fast {
        let out = super::read_arena::extract_arena(&arena, folded, summary.protocol, &mut frames);
        if out.as_ref().is_some_and(|r| r == &Err(Error::Cancelled))
            && bytes.len() >= BACKGROUND_DROP_BYTES
        {
            drop_in_background(arena);
            return Err(Error::Cancelled);
        }
        if let Some(out) = out {
            return out.map(|mut s| {
                s.frames = frames;
                s
            });
        }
    }
    pickle::refuse_expansion(&summary)?;
    // The fallback costs more per byte than the estimate checked before decoding: checked again
    // with its own, so a file it cannot hold is refused rather than aborting on allocation.
    enough_memory(
        bytes.len(),
        FALLBACK_MEMORY_PER_FILE_BYTE,
        " (the fast decoder declined it; the general decoder)",
    )
    .map_err(Error::BadInput)?;
    let options = serde_pickle::DeOptions::new().replace_recursive_structures();
    let value = serde_pickle::value_from_slice(bytes, options).map_err(|e| {
        Error::BadInput(format!(
            "not a readable pickle: {}",
            crate::error::shorten_quoted(&e.to_string())
        ))
    })?;
    let mut frames = FrameTable::default();
    let out = extract(&value, summary.protocol, &mut frames, FrameIds::Values).map(|mut s| {
        s.frames = frames;
        s
    });
    if out == Err(Error::Cancelled) && bytes.len() >= BACKGROUND_DROP_BYTES {
        drop_in_background(value);
    }
    out
}

/// [`parse`] through `serde-pickle` only (the fallback), for tests comparing both paths.
#[cfg(test)]
pub(super) fn parse_with_serde_pickle(bytes: &[u8]) -> Result<Snapshot, Error> {
    let summary = pickle::check(bytes)?;
    let options = serde_pickle::DeOptions::new().replace_recursive_structures();
    let v = serde_pickle::value_from_slice(bytes, options)
        .map_err(|e| Error::BadInput(e.to_string()))?;
    let mut frames = FrameTable::default();
    let mut s = extract(&v, summary.protocol, &mut frames, FrameIds::Values)?;
    s.frames = frames;
    Ok(s)
}

/// [`parse`] as it was before [`super::read_arena`]: the fast decoder's whole value expanded,
/// then extracted — for tests comparing both.
#[cfg(test)]
pub(super) fn parse_expanded(bytes: &[u8]) -> Option<Result<Snapshot, Error>> {
    let summary = pickle::check_opcodes(bytes).ok()?;
    let d = crate::torch::unpickle::decode(bytes, &mut |_| true)?;
    let mut frames = d.frames;
    Some(
        extract(&d.value, summary.protocol, &mut frames, FrameIds::Fast).map(|mut s| {
            s.frames = frames;
            s
        }),
    )
}

/// Files at least this large are checked by the opcode guard beside the decoder ([`parse`]).
const PARALLEL_GUARD_BYTES: usize = 4 << 20;

/// Files at least this large have their decoded value freed on another thread when cancelled.
const BACKGROUND_DROP_BYTES: usize = 16 << 20;

/// Frees a decoded pickle on a short-lived thread of its own: the 250,000-event synthetic file
/// decodes into millions of small allocations whose freeing takes about a second, which a
/// cancel need not wait for. (Not done for a successful read: on two shared cores the freeing
/// thread then competes with whatever runs next — back-to-back reads got slower.) Inline if no
/// thread can be started.
fn drop_in_background<T: Send + 'static>(v: T) {
    // On failure `spawn` drops the closure, and `v` with it, right here.
    let _ = std::thread::Builder::new()
        .name("snapshot-free".into())
        .spawn(move || drop(v));
}

/// How the decoded value holds `frames`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum FrameIds {
    /// The fast path's: an integer is a list id in the table it filled, a list was not
    /// interned (something other than plain frame dicts).
    Fast,
    /// `serde-pickle`'s: lists, interned here.
    Values,
}

/// The frame-list id of dict `d`'s `frames` (for PyTorch ≤ 2.0 blocks, of the last entry of its
/// `history`); [`NO_FRAMES`] when absent or not frames.
fn frames_of(d: &BTreeMap<HashableValue, Value>, table: &mut FrameTable, ids: FrameIds) -> u32 {
    let v = match field(d, "frames") {
        Some(v) => v,
        None => match field(d, "history")
            .and_then(as_list)
            .and_then(<[Value]>::last)
        {
            Some(Value::Dict(h)) => return frames_of(h, table, ids),
            _ => return NO_FRAMES,
        },
    };
    match (v, ids) {
        (Value::I64(id), FrameIds::Fast) => u32::try_from(*id)
            .ok()
            .filter(|&id| (id as usize) < table.lists())
            .unwrap_or(NO_FRAMES),
        (v, _) => table.intern_value(v),
    }
}

/// Trace event `k` of device `dev` from its decoded dict.
pub(super) fn event_from_value(
    ev: &Value,
    (dev, k): (usize, usize),
    table: &mut FrameTable,
    ids: FrameIds,
) -> Result<TraceEvent, Error> {
    let at = format!("device {dev} trace event {k}");
    let e = as_dict(ev).ok_or_else(|| Error::BadInput(format!("{at} is not a dict")))?;
    let action = field(e, "action")
        .and_then(as_str)
        .ok_or_else(|| Error::BadInput(format!("{at}: field `action` is missing")))?;
    Ok(TraceEvent {
        action: super::Action::from_name(action),
        addr: event_u64(e, "addr", &at)?,
        size: event_u64(e, "size", &at)?.unwrap_or(0),
        stream: opt_u64(e, "stream"),
        device_free: field(e, "device_free").and_then(as_u64),
        frames: frames_of(e, table, ids),
    })
}

/// The trace events of every device, or `None` where the fast reader declines the file.
pub(super) type Traces = Option<Result<Vec<Vec<TraceEvent>>, Error>>;

/// The snapshot's fields from the decoded pickle.
fn extract(
    value: &Value,
    protocol: u8,
    table: &mut FrameTable,
    ids: FrameIds,
) -> Result<Snapshot, Error> {
    extract_with(value, protocol, table, ids, &mut |tv, table| {
        Some(traces_from_value(tv, table, ids))
    })?
    .ok_or_else(|| Error::BadInput("not a readable snapshot".into()))
}

/// [`extract`] with the trace events read by `traces` (given the value of `device_traces`, if
/// any); `Ok(None)` where `traces` declines.
pub(super) fn extract_with(
    value: &Value,
    protocol: u8,
    table: &mut FrameTable,
    ids: FrameIds,
    traces: &mut dyn FnMut(Option<&Value>, &mut FrameTable) -> Traces,
) -> Result<Option<Snapshot>, Error> {
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
                frames: frames_of(b, table, ids),
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
    let Some(device_traces) = traces(traces_v, table) else {
        return Ok(None);
    };
    let device_traces = device_traces?;
    let mut allocator_settings = BTreeMap::new();
    if let Some(Value::Dict(d)) = settings_v {
        for (k, v) in d.iter().take(64) {
            if let HashableValue::String(k) = k {
                // Kept as the file says it (a float stays a float, a big integer its digits):
                // what the replay makes of each is decided, and warned about, in `whatif`.
                let text = match v {
                    Value::I64(i) => i.to_string(),
                    Value::Int(b) => int_text(b, b.bits()),
                    Value::F64(f) => format!("{f:?}"),
                    Value::Bool(b) => b.to_string(),
                    Value::String(s) => s.chars().take(200).collect(),
                    Value::None => "None".into(),
                    // `roundup_power2_divisions`: {interval start in MiB: divisions}.
                    Value::Dict(m) => m
                        .iter()
                        .take(64)
                        .filter_map(|(k, v)| {
                            let k = match k {
                                HashableValue::String(k) => k.chars().take(40).collect(),
                                HashableValue::I64(k) => k.to_string(),
                                HashableValue::Int(k) => int_text(k, k.bits()),
                                _ => return None,
                            };
                            let v = match v {
                                Value::I64(i) => i.to_string(),
                                Value::Int(b) => int_text(b, b.bits()),
                                _ => return None,
                            };
                            Some(format!("{k}:{v}"))
                        })
                        .collect::<Vec<_>>()
                        .join(","),
                    _ => continue,
                };
                allocator_settings.insert(k.chars().take(64).collect(), text);
            }
        }
    }
    Ok(Some(Snapshot {
        layout,
        protocol,
        blocks_have_addresses: all_have_addresses,
        segments,
        device_traces,
        allocator_settings,
        frames: FrameTable::default(),
    }))
}

/// A pickled integer beyond 64 bits as its decimal digits, or its size where the digits would
/// run past a line (600 bits are 181 digits).
/// (`bits` is the integer's width: `BigInt::bits`, named here without the crate.)
fn int_text(b: &impl std::fmt::Display, bits: u64) -> String {
    if bits <= 600 {
        b.to_string()
    } else {
        format!("<an integer of {bits} bits>")
    }
}

/// The trace events of `device_traces` (absent: none).
fn traces_from_value(
    traces_v: Option<&Value>,
    table: &mut FrameTable,
    ids: FrameIds,
) -> Result<Vec<Vec<TraceEvent>>, Error> {
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
                out.push(event_from_value(ev, (dev, k), table, ids)?);
            }
            device_traces.push(out);
        }
    }
    Ok(device_traces)
}

#[cfg(test)]
mod upper_half_addresses {
    use super::*;

    #[test]
    fn an_address_of_2_to_the_63_or_more_is_an_address() {
        // Protocol 2, LONG1 with 9 little-endian bytes: 2⁶³ (a `long`, past i64), then STOP.
        let two_63 = b"\x80\x02\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x80\x00.";
        let v = serde_pickle::value_from_slice(two_63, serde_pickle::DeOptions::new()).unwrap();
        assert_eq!(as_u64(&v), Some(1 << 63));
        // 2⁶⁴ − 1 still fits; 2⁶⁴ and −2⁶³ − 1 do not.
        let max = b"\x80\x02\x8a\x09\xff\xff\xff\xff\xff\xff\xff\xff\x00.";
        let v = serde_pickle::value_from_slice(max, serde_pickle::DeOptions::new()).unwrap();
        assert_eq!(as_u64(&v), Some(u64::MAX));
        let over = b"\x80\x02\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x00\x01.";
        let v = serde_pickle::value_from_slice(over, serde_pickle::DeOptions::new()).unwrap();
        assert_eq!(as_u64(&v), None);
        let negative = b"\x80\x02\x8a\x09\xff\xff\xff\xff\xff\xff\xff\x7f\xff.";
        let v = serde_pickle::value_from_slice(negative, serde_pickle::DeOptions::new()).unwrap();
        assert_eq!(as_u64(&v), None);
    }
}
