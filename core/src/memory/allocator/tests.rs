//! Tests of the allocator scene: the lecture's workload fragments the cache, the simulator's
//! invariants and incremental segment map hold at every event, and the workload and its
//! parameters check out.

use super::workload::{ALLOCS_PER_LAYER, PARAMS};
use super::*;
use crate::memory::MIB;
use crate::params::ParamValues;

fn defaults() -> AllocatorParams {
    AllocatorParams::from_values(&ParamValues::defaults(PARAMS)).unwrap()
}

#[test]
fn lecture_workload_fragments() {
    let o = run(&defaults()).unwrap();
    assert!(o.oom.is_none());
    assert!(
        o.reserved_peak_mib > o.needed_peak_mib,
        "reserved {} vs needed {}",
        o.reserved_peak_mib,
        o.needed_peak_mib
    );
    // LightSeq2's preallocation = the largest batch's need, recomputed here from the ops.
    let p = defaults();
    let max_need = batch_lengths(&p)
        .iter()
        .map(|&l| needed_bytes(&batch_ops(&p, (p.tokens / l).max(1), l)))
        .max()
        .unwrap();
    assert_eq!(o.preallocated_mib, max_need as f64 / MIB as f64);
    assert_eq!(o.preallocated_mib, o.needed_peak_mib);
    assert_eq!(o.timeline.len(), 300);
}

#[test]
fn invariants_hold_at_every_event_of_a_short_run() {
    let mut p = defaults();
    p.batches = 25;
    p.capacity = 600 * MIB; // small enough to force releases
    let sim = simulate(&p, true).unwrap();
    assert!(!sim.events.is_empty());
    for e in &sim.events {
        assert!(e.allocated <= e.reserved);
    }
}

#[test]
fn incremental_segment_map_equals_a_full_copy_after_every_event() {
    // The simulator's frames are kept up to date segment by segment; after every malloc,
    // free and cache release the incremental map must equal a fresh full copy.
    let mut p = defaults();
    p.batches = 30;
    let mut a = CachingAllocator::new(p.capacity);
    let (mut out, mut keys) = (Vec::new(), Vec::new());
    let mut released = 0;
    for (i, len) in batch_lengths(&p).into_iter().enumerate() {
        let ops = batch_ops(&p, (p.tokens / len).max(1), len);
        let mut handles = vec![None; ops.len()];
        for op in &ops {
            match *op {
                Op::Alloc { slot, bytes } => {
                    handles[slot] = Some(a.malloc(bytes, 0).unwrap().block);
                }
                Op::Free { slot } => {
                    a.free(handles[slot].take().unwrap());
                }
            }
            a.segments_update(&mut out, &mut keys);
            assert_eq!(out, a.segments());
        }
        if i % 7 == 6 {
            // Segments disappear from the middle of the list.
            released += a.empty_cache();
            a.segments_update(&mut out, &mut keys);
            assert_eq!(out, a.segments());
        }
    }
    assert!(released > 0, "the run should release cached segments");
}

#[test]
fn needed_bytes_by_hand() {
    let ops = [
        Op::Alloc { slot: 0, bytes: 10 },
        Op::Alloc { slot: 1, bytes: 5 },
        Op::Free { slot: 0 },
        Op::Alloc { slot: 2, bytes: 7 },
    ];
    assert_eq!(needed_bytes(&ops), 15);
}

#[test]
fn every_batch_frees_what_it_allocates() {
    let p = defaults();
    let ops = batch_ops(&p, 16, 256);
    let allocs = ops.iter().filter(|o| matches!(o, Op::Alloc { .. })).count();
    let frees = ops.iter().filter(|o| matches!(o, Op::Free { .. })).count();
    assert_eq!(allocs, frees);
    assert_eq!(allocs as u64, 2 + ALLOCS_PER_LAYER * p.layers);
}

#[test]
fn validation() {
    let mut v = ParamValues::defaults(PARAMS);
    v.set(PARAMS, "len_min", "300").unwrap();
    let e = AllocatorParams::from_values(&v).unwrap_err();
    assert!(e.to_string().contains("len_min"), "{e}");
    let mut v = ParamValues::defaults(PARAMS);
    v.set(PARAMS, "layers", "48").unwrap();
    v.set(PARAMS, "batches", "2000").unwrap();
    let e = AllocatorParams::from_values(&v).unwrap_err();
    assert!(e.to_string().contains("events"), "{e}");
}

#[test]
fn after_out_of_memory_the_summary_stands_on_what_was_reached() {
    // The hostile tester's run: 48 layers of 65,536-token batches of short sequences outgrow
    // the 32 GiB device in the first batch.
    let mut v = ParamValues::defaults(PARAMS);
    for (k, x) in [
        ("layers", "48"),
        ("batches", "1200"),
        ("tokens", "65536"),
        ("len_min", "1"),
        ("len_max", "32"),
    ] {
        v.set(PARAMS, k, x).unwrap();
    }
    let p = AllocatorParams::from_values(&v).unwrap();
    let o = run(&p).unwrap();
    assert!(o.oom.is_some());
    let failed = o.oom_batch.as_ref().expect("the failing batch is reported");
    assert_eq!(o.batches_completed, o.timeline.len() as u64);
    // The largest batch is one that was reached, with a length the workload can draw.
    assert!(o.largest_batch <= failed.batch);
    assert!(
        (1..=32).contains(&o.largest_batch_len),
        "L = {}",
        o.largest_batch_len
    );
    // The failing batch's own need, recomputed here from its ops, bounds the reached need.
    let need = needed_bytes(&batch_ops(&p, failed.seqs, failed.len));
    assert!(o.needed_peak_mib >= need as f64 / MIB as f64 - 1e-9);
    // Memory was allocated before the failure: the peak is not left unset.
    assert!(o.allocated_peak_mib > 0.0);
    assert!(o.allocated_peak_mib <= o.reserved_peak_mib);
    // No ratio against a need the device could not hold, and no "-0 %" idle share.
    assert_eq!(o.reserved_over_needed, None);
    assert!(o.preallocated_mean_idle_share >= 0.0);
    assert!(!o.preallocated_mean_idle_share.is_sign_negative());
}
