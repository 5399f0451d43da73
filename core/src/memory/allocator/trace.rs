//! `memory-allocator` on the user's own allocation trace (`--input`): `malloc` and `free`
//! requests by name, replayed op by op through the caching-allocator model
//! ([`crate::caching`], PyTorch's `c10/cuda/CUDACachingAllocator.cpp` rules: 512-byte
//! rounding, the 1 MiB small/large pool threshold, 2 MiB small segments, 20 MiB large segments
//! for requests under 10 MiB, larger ones rounded up to 2 MiB, best fit, split and merge within a
//! segment), with the pool, block and new segment of every op and *reserved* / *allocated*
//! after it (allocated = Σ allocated block sizes, PyTorch's `allocated_bytes`).
//!
//! All sizes are bytes.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;
use serde_json::Value;

use crate::Error;
use crate::caching::{
    CachingAllocator, Pool, SegmentView, Served, pool_of, round_size, segment_size,
};
use crate::input::json;
use crate::text::Text;

/// A replayed trace: what the CLI prints and the validated trace itself (a view replays the
/// segment map at any op on demand); serialises as [`TraceRun::output`].
#[derive(Debug, Clone)]
pub struct TraceRun {
    /// A number no other run of this process has: a view keys its caches on it.
    pub id: u64,
    /// What `warpscope report memory-allocator --input` prints.
    pub output: TraceOutput,
    /// The validated trace.
    pub trace: Trace,
}

impl TraceRun {
    /// Replays `trace` ([`run_trace`]).
    pub fn new(trace: Trace) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        TraceRun {
            id: NEXT.fetch_add(1, Ordering::Relaxed),
            output: run_trace(&trace),
            trace,
        }
    }
}

impl Serialize for TraceRun {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.output.serialize(s)
    }
}

/// Most ops one trace may hold.
pub const MAX_TRACE: usize = 100_000;

/// Largest request (bytes): 2⁴⁰, one TiB.
pub const MAX_REQUEST: u64 = 1 << 40;

/// Largest device (bytes): 2⁵⁰.
pub const MAX_DEVICE: u64 = 1 << 50;

/// The keys, one per line (the README's list says the same).
pub const INPUT_KEYS: Text<&'static str> = Text::new(
    "trace: list of at most 100000 ops, required: [\"malloc\", NAME, BYTES] (BYTES 1..=2^40) or [\"free\", NAME]; a name is live from its malloc to its free\n\
     device_memory_bytes: whole number 2^20..=2^50, the device's memory (default: the capacity_mib parameter)",
    "trace：至多 100000 个操作的列表，必填：[\"malloc\", 名字, 字节数]（字节数 1..=2^40）或 [\"free\", 名字]；名字从 malloc 到 free 之间是活的\n\
     device_memory_bytes：整数 2^20..=2^50，设备显存（默认：参数 capacity_mib）",
);

/// One op of a trace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum TraceOp {
    /// Allocate `bytes` under `name`.
    Malloc {
        /// The name it is freed by.
        name: String,
        /// Bytes asked for.
        bytes: u64,
    },
    /// Free the block allocated under `name`.
    Free {
        /// The name.
        name: String,
    },
}

impl TraceOp {
    /// The name.
    pub fn name(&self) -> &str {
        match self {
            TraceOp::Malloc { name, .. } | TraceOp::Free { name } => name,
        }
    }
}

/// A validated trace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Trace {
    /// The ops in order.
    pub ops: Vec<TraceOp>,
    /// Device memory (bytes).
    pub device_memory_bytes: u64,
}

/// Reads `{trace, device_memory_bytes?}`; `default_device` (bytes) when the key is missing.
///
/// # Errors
/// [`Error::InvalidInput`] naming `trace[i]`: not `["malloc", NAME, BYTES]` or `["free", NAME]`,
/// bytes 0 or over [`MAX_REQUEST`], a malloc of a name that is live, a free of a name that is
/// not (never allocated, or freed already); `trace` empty or longer than [`MAX_TRACE`];
/// `device_memory_bytes` out of range.
pub fn parse_trace(input: &Value, default_device: u64) -> Result<Trace, Error> {
    let map = json::object(input, &["trace", "device_memory_bytes"])?;
    let items = json::list(json::required(map, "trace")?, "trace", MAX_TRACE)?;
    let device_memory_bytes = match map.get("device_memory_bytes") {
        Some(v) => json::integer(v, "device_memory_bytes", 1 << 20, MAX_DEVICE)?,
        None => default_device,
    };
    // Live names → the op that allocated them; freed names → the op that freed them.
    let mut live: BTreeMap<&str, usize> = BTreeMap::new();
    let mut freed: BTreeMap<&str, usize> = BTreeMap::new();
    let mut ops = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let key = format!("trace[{i}]");
        let Value::Array(parts) = item else {
            return Err(Error::input(
                key,
                Text::new(
                    format!(
                        "expected [\"malloc\", NAME, BYTES] or [\"free\", NAME], got {}",
                        json::kind(item)
                    ),
                    format!(
                        "应为 [\"malloc\", NAME, BYTES] 或 [\"free\", NAME]，实为{}",
                        json::kind_zh(item)
                    ),
                ),
            ));
        };
        let op = parts.first().and_then(Value::as_str).unwrap_or("");
        match (op, parts.as_slice()) {
            ("malloc", [_, name, bytes]) => {
                let name = json::string(name, &format!("{key}[1]"))?;
                let bytes = json::integer(bytes, &format!("{key}[2]"), 1, MAX_REQUEST)?;
                if let Some(j) = live.insert(name, i) {
                    return Err(Error::input(
                        key,
                        Text::new(
                            format!(
                                "`{name}` is still allocated (by trace[{j}]): free it first or use \
                                 another name"
                            ),
                            format!(
                                "`{name}` 仍在分配中（由 trace[{j}] 分配）：先释放它，或换个名字"
                            ),
                        ),
                    ));
                }
                freed.remove(name);
                ops.push(TraceOp::Malloc {
                    name: name.to_owned(),
                    bytes,
                });
            }
            ("free", [_, name]) => {
                let name = json::string(name, &format!("{key}[1]"))?;
                if live.remove(name).is_none() {
                    return Err(Error::input(
                        key,
                        match freed.get(name) {
                            Some(j) => Text::new(
                                format!("`{name}` was already freed by trace[{j}]"),
                                format!("`{name}` 已由 trace[{j}] 释放"),
                            ),
                            None => Text::new(
                                format!("`{name}` was never allocated"),
                                format!("`{name}` 从未分配过"),
                            ),
                        },
                    ));
                }
                freed.insert(name, i);
                ops.push(TraceOp::Free {
                    name: name.to_owned(),
                });
            }
            _ => {
                return Err(Error::input_fixed(
                    key,
                    "expected [\"malloc\", NAME, BYTES] or [\"free\", NAME]",
                    "应为 [\"malloc\", NAME, BYTES] 或 [\"free\", NAME]",
                ));
            }
        }
    }
    Ok(Trace {
        ops,
        device_memory_bytes,
    })
}

/// One op replayed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TraceStep {
    /// `malloc` or `free`.
    pub op: &'static str,
    /// The name.
    pub name: String,
    /// Bytes asked for (a free: what its malloc asked for).
    pub bytes: u64,
    /// The request rounded (rule 1: a multiple of 512 B, at least 512 B).
    pub rounded: u64,
    /// The pool (rule 2: small for rounded ≤ 1 MiB).
    pub pool: Pool,
    /// The block handed out or freed (≥ rounded: a large block is not split when the remainder
    /// is ≤ 1 MiB).
    pub block_size: u64,
    /// A segment `cudaMalloc`ed for this op (0: served from the cache, or a free).
    pub new_segment_bytes: u64,
    /// How a malloc was served (`null` for a free).
    pub served: Option<Served>,
    /// Reserved after the op (Σ segment sizes).
    pub reserved: u64,
    /// Allocated after the op (Σ allocated block sizes).
    pub allocated: u64,
}

/// A segment at the end of the trace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SegmentSize {
    /// Its size.
    pub bytes: u64,
    /// Its pool.
    pub pool: Pool,
}

/// The replayed trace.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceOutput {
    /// Device memory (bytes).
    pub device_memory_bytes: u64,
    /// Every op replayed (up to the one that ran out of memory).
    pub per_step: Vec<TraceStep>,
    /// Reserved after the last op replayed.
    pub final_reserved: u64,
    /// Allocated after the last op replayed.
    pub final_allocated: u64,
    /// The segments then, in creation order.
    pub segments: Vec<SegmentSize>,
    /// The largest cached free block then (0: none).
    pub largest_free_block: u64,
    /// Peak reserved over the trace.
    pub peak_reserved: u64,
    /// Peak allocated over the trace.
    pub peak_allocated: u64,
    /// The op that ran out of memory (0-based) and why; the trace stops there.
    pub oom: Option<(usize, String)>,
}

/// Replays `trace` up to and including op `until` (all of it for `None`), returning the steps
/// and the allocator then.
fn replay(
    trace: &Trace,
    until: Option<usize>,
) -> (Vec<TraceStep>, CachingAllocator, Option<(usize, String)>) {
    let mut a = CachingAllocator::new(trace.device_memory_bytes);
    // Name → (block handle, bytes asked for, block size).
    let mut live: BTreeMap<&str, (usize, u64, u64)> = BTreeMap::new();
    let mut steps = Vec::new();
    let end = until.map_or(trace.ops.len(), |u| {
        u.saturating_add(1).min(trace.ops.len())
    });
    for (i, op) in trace.ops.iter().take(end).enumerate() {
        match op {
            TraceOp::Malloc { name, bytes } => {
                let rounded = round_size(*bytes);
                match a.malloc(*bytes, 0) {
                    Ok(got) => {
                        live.insert(name, (got.block, *bytes, got.size));
                        let new = matches!(
                            got.served,
                            Served::NewSegment | Served::NewSegmentAfterRelease
                        );
                        steps.push(TraceStep {
                            op: "malloc",
                            name: name.clone(),
                            bytes: *bytes,
                            rounded,
                            pool: pool_of(rounded),
                            block_size: got.size,
                            new_segment_bytes: if new { segment_size(rounded) } else { 0 },
                            served: Some(got.served),
                            reserved: a.reserved(),
                            allocated: a.allocated(),
                        });
                    }
                    Err(oom) => return (steps, a, Some((i, oom.to_string()))),
                }
            }
            TraceOp::Free { name } => {
                // Validated: every free names a live block.
                if let Some((block, bytes, size)) = live.remove(name.as_str()) {
                    a.free(block);
                    let rounded = round_size(bytes);
                    steps.push(TraceStep {
                        op: "free",
                        name: name.clone(),
                        bytes,
                        rounded,
                        pool: pool_of(rounded),
                        block_size: size,
                        new_segment_bytes: 0,
                        served: None,
                        reserved: a.reserved(),
                        allocated: a.allocated(),
                    });
                }
            }
        }
    }
    (steps, a, None)
}

/// Replays `trace`.
pub fn run_trace(trace: &Trace) -> TraceOutput {
    let (per_step, a, oom) = replay(trace, None);
    let segs = a.segments();
    TraceOutput {
        device_memory_bytes: trace.device_memory_bytes,
        final_reserved: a.reserved(),
        final_allocated: a.allocated(),
        segments: segs
            .iter()
            .map(|s| SegmentSize {
                bytes: s.size,
                pool: s.pool,
            })
            .collect(),
        largest_free_block: segs
            .iter()
            .flat_map(|s| &s.blocks)
            .filter(|b| !b.allocated)
            .map(|b| b.size)
            .max()
            .unwrap_or(0),
        peak_reserved: per_step.iter().map(|s| s.reserved).max().unwrap_or(0),
        peak_allocated: per_step.iter().map(|s| s.allocated).max().unwrap_or(0),
        per_step,
        oom,
    }
}

/// The segment map right after op `step` (0-based) of `trace`.
pub fn segments_after(trace: &Trace, step: usize) -> Vec<SegmentView> {
    replay(trace, Some(step)).1.segments()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::MIB;
    use serde_json::json;

    fn key_of(e: Error) -> String {
        match e {
            Error::InvalidInput { key, .. } => key,
            other => panic!("expected InvalidInput, got {other:?}"),
        }
    }

    #[test]
    fn bad_traces_name_the_op() {
        let bad = |v: Value| key_of(parse_trace(&v, 1 << 30).unwrap_err());
        assert_eq!(bad(json!({"trace": [["free", "a"]]})), "trace[0]");
        assert_eq!(
            bad(json!({"trace": [["malloc", "a", 8], ["free", "a"], ["free", "a"]]})),
            "trace[2]"
        );
        assert_eq!(
            bad(json!({"trace": [["malloc", "a", 8], ["malloc", "a", 8]]})),
            "trace[1]"
        );
        assert_eq!(bad(json!({"trace": [["malloc", "a", 0]]})), "trace[0][2]");
        assert_eq!(
            bad(json!({"trace": [["malloc", "a", 1e15]]})),
            "trace[0][2]"
        );
        assert_eq!(bad(json!({"trace": [["alloc", "a", 8]]})), "trace[0]");
        assert_eq!(bad(json!({"trace": [["malloc", 3, 8]]})), "trace[0][1]");
        assert_eq!(bad(json!({"trace": []})), "trace");
        assert_eq!(
            bad(json!({"trace": [["malloc", "a", 8]], "device_memory_bytes": 5})),
            "device_memory_bytes"
        );
        let long = Value::Array(vec![json!(["free", "x"]); MAX_TRACE + 1]);
        assert_eq!(bad(json!({ "trace": long })), "trace");
        // A name may be reused once freed.
        assert!(
            parse_trace(
                &json!({"trace": [["malloc", "a", 8], ["free", "a"], ["malloc", "a", 8]]}),
                1 << 30
            )
            .is_ok()
        );
    }

    #[test]
    fn rounding_pools_and_segments_by_hand() {
        let t = parse_trace(
            &json!({"trace": [["malloc", "s", 1000], ["malloc", "l", 3 * MIB], ["free", "s"]]}),
            1 << 34,
        )
        .unwrap();
        let o = run_trace(&t);
        // 1000 B → 1024 (a multiple of 512), small pool, a 2 MiB segment.
        let s = &o.per_step[0];
        assert_eq!(
            (s.rounded, s.pool, s.block_size, s.new_segment_bytes),
            (1024, Pool::Small, 1024, 2 * MIB)
        );
        // 3 MiB → large pool, a 20 MiB segment (request under 10 MiB), split (17 MiB > 1 MiB left).
        let l = &o.per_step[1];
        assert_eq!(
            (l.pool, l.block_size, l.new_segment_bytes),
            (Pool::Large, 3 * MIB, 20 * MIB)
        );
        assert_eq!((l.reserved, l.allocated), (22 * MIB, 3 * MIB + 1024));
        // Freeing keeps the segment cached: reserved stays.
        assert_eq!((o.final_reserved, o.final_allocated), (22 * MIB, 3 * MIB));
        assert_eq!(o.largest_free_block, 17 * MIB);
        assert_eq!(segments_after(&t, 0).len(), 1);
    }

    #[test]
    fn running_out_of_memory_stops_the_trace() {
        let t = parse_trace(&json!({"trace": [["malloc", "a", 8 * MIB], ["malloc", "b", 8 * MIB]], "device_memory_bytes": 30 * MIB}), 0).unwrap();
        let o = run_trace(&t);
        // 8 MiB each needs a 20 MiB segment; the second would need 40 MiB > 30 MiB — but the
        // first segment's 12 MiB remainder serves it.
        assert!(o.oom.is_none());
        let t = parse_trace(&json!({"trace": [["malloc", "a", 8 * MIB], ["malloc", "b", 13 * MIB]], "device_memory_bytes": 30 * MIB}), 0).unwrap();
        let o = run_trace(&t);
        // 13 MiB: no free block fits (12 MiB), its own 14 MiB segment would make 34 MiB > 30.
        assert_eq!(o.oom.as_ref().map(|o| o.0), Some(1));
        assert_eq!(o.per_step.len(), 1);
    }
}

#[cfg(test)]
mod preset_tests {
    use super::*;
    use crate::memory::MIB;

    /// Derived from the rules by hand (the preset's note says the same).
    #[test]
    fn preset_fragmentation_by_hand() {
        let p = crate::presets::find("memory-allocator-fragmentation").unwrap();
        let t = parse_trace(p.session.input.as_ref().unwrap(), 1 << 35).unwrap();
        let o = run_trace(&t);
        let r: Vec<(u64, u64, u64)> = o
            .per_step
            .iter()
            .map(|s| (s.new_segment_bytes, s.reserved, s.allocated))
            .collect();
        assert_eq!(
            r,
            vec![
                // a: 6 MiB > 1 MiB is large; under 10 MiB → a 20 MiB segment, split (14 left).
                (20 * MIB, 20 * MIB, 6 * MIB),
                // b, c: from the remainder (14 → 8 → 2 MiB left, each > 1 MiB: split).
                (0, 20 * MIB, 12 * MIB),
                (0, 20 * MIB, 18 * MIB),
                // free b: its neighbours a and c are allocated, no merge; 6 + 2 MiB cached.
                (0, 20 * MIB, 12 * MIB),
                // d: 8 MiB fits neither piece → a second 20 MiB segment.
                (20 * MIB, 40 * MIB, 20 * MIB),
                // e: 1000 B → 1024 B (512-byte rounding), small pool → a 2 MiB segment.
                (2 * MIB, 42 * MIB, 20 * MIB + 1024),
            ]
        );
        assert_eq!(o.per_step[5].rounded, 1024);
        assert_eq!(o.final_reserved, 42 * MIB);
        assert_eq!(o.final_allocated, 20 * MIB + 1024);
        let segs: Vec<(u64, Pool)> = o.segments.iter().map(|s| (s.bytes, s.pool)).collect();
        assert_eq!(
            segs,
            vec![
                (20 * MIB, Pool::Large),
                (20 * MIB, Pool::Large),
                (2 * MIB, Pool::Small)
            ]
        );
        // d's segment keeps 12 MiB free (20 − 8, split: > 1 MiB).
        assert_eq!(o.largest_free_block, 12 * MIB);
    }
}
