//! Tests of the forward replay ([`super::drive`]) on hand-made traces, every expected value
//! worked out by hand from `c10/cuda/CUDACachingAllocator.cpp`'s rules: per-device start-empty
//! detection and the expandable rules of a file that has expandable segments, a mid-run trace
//! replayed from its rebuilt start, recorded segment releases and `oom` events.

use super::tests::ev;
use super::whatif::{WhatIfParams, whatif};
use super::*;

const M: u64 = 1 << 20;

fn block(address: u64, size: u64, requested: u64) -> SnapBlock {
    SnapBlock {
        address,
        size,
        requested_size: requested,
        state: if requested > 0 {
            BlockState::ActiveAllocated
        } else {
            BlockState::Inactive
        },
        frames: 0,
    }
}

fn segment(device: i64, address: u64, expandable: bool, blocks: Vec<SnapBlock>) -> SnapSegment {
    let total_size = blocks.iter().map(|b| b.size).sum();
    let allocated_size = blocks
        .iter()
        .filter(|b| b.requested_size > 0)
        .map(|b| b.size)
        .sum();
    SnapSegment {
        device,
        address,
        total_size,
        allocated_size,
        active_size: allocated_size,
        requested_size: 0,
        stream: 0,
        segment_type: "large".into(),
        is_expandable: expandable,
        private_pool: false,
        blocks,
    }
}

fn snapshot(segments: Vec<SnapSegment>, device_traces: Vec<Vec<TraceEvent>>) -> Snapshot {
    Snapshot {
        layout: "dict",
        protocol: 4,
        blocks_have_addresses: true,
        segments,
        device_traces,
        allocator_settings: BTreeMap::new(),
        frames: Default::default(),
    }
}

const A: u64 = 0x7f00_0000_0000;
const B: u64 = 0x7e00_0000_0000;

/// Device 0: expandable, from empty. Two 12 MiB requests: the first maps one 20 MiB page
/// (`kLargeBuffer`) and takes 12 MiB of it; the second finds the 8 MiB left at the mapped edge,
/// maps one more page behind it and takes 12 MiB from A + 12 MiB: one 40 MiB segment with
/// 16 MiB free at its end. (Without expandable segments each 12 MiB request — at least
/// `kMinLargeAlloc`, 10 MiB — gets its own 12 MiB segment.)
/// Device 1: mid-run. A 4 MiB block at B allocated before the trace is freed (its 20 MiB
/// segment is then one free block) and a 4 MiB request takes the front of it again (best fit,
/// split: 16 MiB left > 1 MiB).
fn two_devices() -> Snapshot {
    snapshot(
        vec![
            segment(
                0,
                A,
                true,
                vec![
                    block(A, 12 * M, 12 * M),
                    block(A + 12 * M, 12 * M, 12 * M),
                    block(A + 24 * M, 16 * M, 0),
                ],
            ),
            segment(
                1,
                B,
                false,
                vec![block(B, 4 * M, 4 * M), block(B + 4 * M, 16 * M, 0)],
            ),
        ],
        vec![
            vec![
                ev("segment_map", A, 20 * M),
                ev("alloc", A, 12 * M),
                ev("segment_map", A + 20 * M, 20 * M),
                ev("alloc", A + 12 * M, 12 * M),
            ],
            vec![
                ev("free_requested", B, 4 * M),
                ev("free_completed", B, 4 * M),
                ev("alloc", B, 4 * M),
            ],
        ],
    )
}

#[test]
fn start_empty_is_decided_per_device_and_expandable_files_replay_under_expandable_rules() {
    let s = two_devices();
    let r = replay(&s);
    let d = &r.devices;
    assert_eq!(d.len(), 2);
    assert!(d[0].starts_empty && !d[1].starts_empty, "{}", r.note.en);
    assert!(!r.starts_empty);
    // Device 0 under the expandable rules: one 40 MiB range, the file's one segment.
    assert_eq!(
        (d[0].segments_created, d[0].segments_match),
        (1, true),
        "{}",
        r.note.en
    );
    // Device 1 from its rebuilt start (one segment): no new segment, the block back at B.
    assert_eq!((d[1].start_segments, d[1].segments_created), (1, 0));
    assert!(d[1].segments_match);
    assert_eq!((d[1].allocs, d[1].allocs_at_recorded_address), (1, 1));
    assert_eq!(d[1].unmatched_frees, 1);
    assert_eq!(r.segments_match, Some(true));
    assert_eq!(r.segments, vec![40 * M, 20 * M]);
    // The file records no settings: its expandable segments say which rules it ran under.
    let w = whatif(&s, &WhatIfParams::default()).unwrap();
    assert!(w.settings.expandable_segments);
    assert_eq!(w.settings.from_file, vec!["expandable_segments"]);
    assert_eq!((w.device, w.reserved_final_bytes), (Some(0), 40 * M));
    // Under the default rules device 0 needs two 12 MiB segments instead.
    let off = WhatIfParams {
        expandable_segments: Some(false),
        ..WhatIfParams::default()
    };
    let w = whatif(&s, &off).unwrap();
    assert_eq!((w.segments_created, w.reserved_final_bytes), (2, 24 * M));
}

#[test]
fn a_trace_that_frees_what_it_never_allocated_or_uses_older_segments_is_mid_run() {
    // Frees an address it never allocated.
    let s = snapshot(
        vec![segment(0, A, false, vec![block(A, 20 * M, 0)])],
        vec![vec![
            ev("segment_alloc", A, 20 * M),
            ev("free_completed", A + 2 * M, M),
        ]],
    );
    assert_eq!(drive::starts_empty(&s, 0, &s.device_traces[0]), (false, 1));
    // Allocates inside a segment the trace did not create.
    let s = snapshot(
        vec![segment(0, A, false, vec![block(A, 20 * M, 0)])],
        vec![vec![ev("alloc", A, M), ev("free_completed", A, M)]],
    );
    assert_eq!(drive::starts_empty(&s, 0, &s.device_traces[0]), (false, 0));
    // A file segment the trace never created.
    let s = snapshot(
        vec![
            segment(0, A, false, vec![block(A, 20 * M, 0)]),
            segment(0, B, false, vec![block(B, 20 * M, 0)]),
        ],
        vec![vec![ev("segment_alloc", A, 20 * M)]],
    );
    assert_eq!(drive::starts_empty(&s, 0, &s.device_traces[0]), (false, 0));
}

#[test]
fn recorded_segment_frees_release_the_cache() {
    // 8 MiB in a 20 MiB segment, freed; empty_cache releases the segment; the next 8 MiB needs
    // a new one: two segments created, 20 MiB at the end (without the release: one, reused).
    let s = snapshot(
        vec![segment(
            0,
            B,
            false,
            vec![block(B, 8 * M, 8 * M), block(B + 8 * M, 12 * M, 0)],
        )],
        vec![vec![
            ev("segment_alloc", A, 20 * M),
            ev("alloc", A, 8 * M),
            ev("free_completed", A, 8 * M),
            ev("segment_free", A, 20 * M),
            ev("segment_alloc", B, 20 * M),
            ev("alloc", B, 8 * M),
        ]],
    );
    let r = replay(&s);
    let d = &r.devices[0];
    assert!(d.starts_empty, "{}", r.note.en);
    assert_eq!((d.segments_created, d.segments_match), (2, true));
    assert_eq!(
        (r.reserved_peak_bytes, r.reserved_final_bytes),
        (20 * M, 20 * M)
    );
}

/// From empty: a 30 MiB request (its own 30 MiB segment: at least 10 MiB, rounded to 2 MiB),
/// then a 40 MiB request that failed with 10 MiB free on the device.
fn with_oom() -> Snapshot {
    let mut oom = ev("oom", 0, 40 * M);
    (oom.addr, oom.device_free) = (None, Some(10 * M));
    snapshot(
        vec![segment(0, A, false, vec![block(A, 30 * M, 30 * M)])],
        vec![vec![
            ev("segment_alloc", A, 30 * M),
            ev("alloc", A, 30 * M),
            oom,
        ]],
    )
}

#[test]
fn an_oom_is_asked_for_again_and_fails_at_the_files_device_size() {
    let s = with_oom();
    // The device's size then: 30 MiB reserved + 10 MiB free.
    assert_eq!(drive::oom_device_bytes(&s, 0).unwrap(), Some(40 * M));
    // Without a limit the request is left out (it cannot fail, and never reached the program).
    let r = replay(&s);
    assert_eq!(
        (r.devices[0].recorded_ooms, r.devices[0].reproduced_ooms),
        (1, 0)
    );
    assert_eq!(r.segments_match, Some(true), "{}", r.note.en);
    // At the file's size (−1): a 40 MiB segment does not fit beside the live 30 MiB.
    let file = WhatIfParams {
        device_memory_from_oom: true,
        ..WhatIfParams::default()
    };
    let w = whatif(&s, &file).unwrap();
    assert_eq!(w.settings.device_memory_bytes, Some(40 * M));
    assert_eq!((w.recorded_ooms, w.reproduced_ooms, w.ooms), (1, 1, 0));
    // On a 70 MiB device it fits: 70 MiB reserved at the peak, the request given back.
    let big = WhatIfParams {
        device_memory_mib: 70,
        ..WhatIfParams::default()
    };
    let w = whatif(&s, &big).unwrap();
    assert_eq!((w.reproduced_ooms, w.reserved_peak_bytes), (0, 70 * M));
    // A file without an oom has no size to take.
    let s = two_devices();
    match whatif(&s, &file) {
        Err(Error::InvalidParam { name, .. }) => assert_eq!(name, "device_memory_mib"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_device_parameter_picks_the_state_and_the_whatif_and_refuses_an_absent_one() {
    let s = two_devices();
    let one = WhatIfParams {
        device: Some(1),
        ..WhatIfParams::default()
    };
    let a = analyse_with("x", &s, -1, &one).unwrap();
    let at = a.output.at_event.unwrap();
    assert_eq!((at.device, at.index, at.reserved_bytes), (1, 2, 20 * M));
    let w = a.output.whatif.unwrap();
    assert_eq!((w.device, w.reserved_final_bytes), (Some(1), 20 * M));
    // Event 3 exists on device 0 (four events), not on device 1 (three).
    assert!(analyse_with("x", &s, 3, &WhatIfParams::default()).is_ok());
    assert!(matches!(
        analyse_with("x", &s, 3, &one),
        Err(Error::InvalidParam { name, .. }) if name == "event"
    ));
    let five = WhatIfParams {
        device: Some(5),
        ..WhatIfParams::default()
    };
    match analyse_with("x", &s, -1, &five) {
        Err(Error::InvalidParam { name, expected, .. }) => {
            assert_eq!(name, "device");
            assert!(expected.to_string().contains("0, 1"), "{expected}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_peak_its_blocks_by_frame_and_category_and_the_fragmentation() {
    // From empty: a 20 MiB segment; 4 MiB under a module's forward; 6 MiB − 100 B under the
    // optimizer's step (rounded to 6 MiB: 100 B internal fragmentation); the 4 MiB freed.
    let mut s = snapshot(
        vec![segment(
            0,
            A,
            false,
            vec![
                block(A, 4 * M, 0),
                block(A + 4 * M, 6 * M, 6 * M - 100),
                block(A + 10 * M, 10 * M, 0),
            ],
        )],
        Vec::new(),
    );
    let mut stack = |frames: &[(&str, &str, i64)]| {
        let ids: Vec<u32> = frames
            .iter()
            .filter_map(|&(name, file, line)| {
                let (n, f) = (s.frames.string(name)?, s.frames.string(file)?);
                s.frames.frame(n, f, line)
            })
            .collect();
        s.frames.list(ids).unwrap()
    };
    let forward = stack(&[("forward", "/home/u/m/model.py", 3)]);
    let step = stack(&[
        (
            "step",
            "/usr/lib/python3.11/site-packages/torch/optim/adam.py",
            200,
        ),
        ("train", "/home/u/m/train.py", 10),
    ]);
    let with = |mut e: TraceEvent, frames| {
        e.frames = frames;
        e
    };
    s.device_traces = vec![vec![
        ev("segment_alloc", A, 20 * M),
        with(ev("alloc", A, 4 * M), forward),
        with(ev("alloc", A + 4 * M, 6 * M - 100), step),
        ev("free_requested", A, 4 * M),
        ev("free_completed", A, 4 * M),
    ]];
    let p = analyse("x", &s, -1).unwrap().output.peak.unwrap();
    // Live requested: 4 MiB, then 10 MiB − 100 B (events 2 and 3: the first), then 6 MiB −
    // 100 B; reserved is 20 MiB from event 0.
    assert_eq!(
        (p.allocated_event, p.requested_bytes),
        (Some(2), 10 * M - 100)
    );
    assert_eq!(
        (p.reserved_event, p.reserved_bytes, p.allocated_bytes),
        (Some(0), 20 * M, 10 * M)
    );
    let groups = |g: &[peak::PeakGroup]| -> Vec<(String, u64)> {
        g.iter().map(|g| (g.name.clone(), g.bytes)).collect()
    };
    assert_eq!(
        groups(&p.by_frame),
        vec![
            ("train (m/train.py:10)".to_owned(), 6 * M),
            ("forward (m/model.py:3)".to_owned(), 4 * M)
        ]
    );
    assert_eq!(
        groups(&p.by_category),
        vec![
            ("optimizer_state".to_owned(), 6 * M),
            ("activations".to_owned(), 4 * M)
        ]
    );
    let f: Vec<(usize, u64, u64, u64)> = p
        .fragmentation
        .iter()
        .map(|f| {
            (
                f.event,
                f.internal_bytes,
                f.external_bytes,
                f.largest_free_block_bytes,
            )
        })
        .collect();
    assert_eq!(
        f,
        vec![
            (0, 0, 20 * M, 20 * M),
            (1, 0, 16 * M, 16 * M),
            (2, 100, 10 * M, 10 * M),
            // Freed by the program (pending), then back in the free space beside its
            // neighbour in use: 6 MiB allocated either way.
            (3, 100, 14 * M, 10 * M),
            (4, 100, 14 * M, 10 * M),
        ]
    );
}

#[test]
fn categories_follow_the_documented_frame_rules() {
    let f = |name: &str, file: &str| crate::torch::frames::Frame {
        name: name.into(),
        filename: file.into(),
        line: 1,
    };
    let user = f("main", "train.py");
    for (stack, want) in [
        (
            vec![
                f(
                    "_init_group",
                    "C:\\py\\Lib\\site-packages\\torch\\optim\\adamw.py",
                ),
                user.clone(),
            ],
            "optimizer_state",
        ),
        (
            vec![f("backward", "torch/_tensor.py"), user.clone()],
            "gradients",
        ),
        (
            vec![f("_engine_run_backward", "torch/autograd/graph.py")],
            "gradients",
        ),
        (
            vec![f("_apply", "torch/nn/modules/module.py"), user.clone()],
            "parameters",
        ),
        (
            vec![f("__init__", "torch/nn/modules/linear.py"), user.clone()],
            "parameters",
        ),
        (
            vec![
                f("softmax", "nn_utils.py"),
                f("forward", "model.py"),
                user.clone(),
            ],
            "activations",
        ),
        (vec![user.clone()], "temporaries"),
        (vec![], "unknown"),
    ] {
        assert_eq!(peak::category(&stack), want, "{stack:?}");
    }
}
