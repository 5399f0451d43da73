//! Test and benchmark support, not part of the scene: a large seeded snapshot pickle written
//! from the simulator's own run, for the benchmarks (`core/benches`, `app/benches`) and tests
//! that need a file of realistic size without committing one. Reachable as
//! `snapshot::synthetic` (hidden from the docs).

use std::collections::BTreeMap;

use serde_pickle::Value;

use super::read::key;
use crate::Error;
use crate::caching::{CachingAllocator, Pool, Served};

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
            NAMES
                .iter()
                .cycle()
                .zip(FILES.iter().cycle())
                .take(frames)
                .map(|(name, file)| {
                    dict(vec![
                        ("name", text(name)),
                        ("filename", text(file)),
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
            ) && let Some(seg) = a
                .segments()
                .iter()
                .find(|s| s.address <= x.address && x.address < s.address.saturating_add(s.size))
            {
                event(&mut trace, &mut rng, "segment_alloc", seg.address, seg.size);
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
