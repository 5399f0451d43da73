//! Tests of the allocator state at an event ([`super::history`]), the file checks
//! ([`super::check`]) and the `event` parameter: hand-made traces whose every state is written
//! out by hand, the mini fixture's figures counted by hand from its 50 events, checkpoints
//! against a full undo, and malformed files built with serde-pickle's writer.

use std::collections::BTreeMap;

use serde_pickle::Value;

use super::tests::ev;
use super::*;
use crate::torch::timeline::timeline;

const M: u64 = 1 << 20;

fn blk(address: u64, size: u64, requested_size: u64, state: BlockState) -> SnapBlock {
    SnapBlock {
        address,
        size,
        requested_size,
        state,
        frames: 0,
    }
}

/// A device-0 segment holding `blocks`, its `allocated_size` their active bytes (shared with
/// `warning_tests`).
pub(super) fn seg(
    address: u64,
    total_size: u64,
    expandable: bool,
    blocks: Vec<SnapBlock>,
) -> SnapSegment {
    let allocated_size = blocks
        .iter()
        .filter(|b| b.state == BlockState::ActiveAllocated)
        .map(|b| b.size)
        .sum();
    SnapSegment {
        device: 0,
        address,
        total_size,
        allocated_size,
        active_size: 0,
        requested_size: 0,
        stream: 0,
        segment_type: "large".into(),
        is_expandable: expandable,
        private_pool: false,
        blocks,
    }
}

fn snap(segments: Vec<SnapSegment>, trace: Vec<TraceEvent>) -> Snapshot {
    Snapshot {
        layout: "dict",
        protocol: 4,
        blocks_have_addresses: true,
        segments,
        device_traces: vec![trace],
        allocator_settings: BTreeMap::new(),
        frames: Default::default(),
    }
}

fn history(s: &Snapshot) -> History {
    History::new(s, &timeline(s, 0).unwrap()).unwrap()
}

/// `(address, size, state, estimated)` of every block, segment by segment.
type Layout = Vec<(u64, u64, Vec<(u64, u64, BlockState, bool)>)>;

fn layout(a: &StateAt) -> Layout {
    a.segments
        .iter()
        .map(|s| {
            (
                s.address,
                s.total_size,
                s.blocks
                    .iter()
                    .map(|b| (b.address, b.size, b.state.clone(), b.estimated))
                    .collect(),
            )
        })
        .collect()
}

use BlockState::{ActiveAllocated as Alloc, ActivePendingFree as Pending, Inactive as Free};

#[test]
fn a_hand_made_trace_is_undone_event_by_event() {
    // From an empty allocator (PyTorch's default rules, `caching::rules`):
    //  0 segment_alloc 1000M, 20M
    //  1 alloc 1000M, 8M    → block 8M (the 12M rest > 1 MiB is split off)
    //  2 alloc 1008M, 3M    → block 3M (the 9M rest is split off)
    //  3 free_requested 1000M
    //  4 free_completed 1000M → free again
    //  5 segment_alloc 2000M, 2M (a small-pool segment)
    //  6 alloc 2000M, 1000 B → block 1024 B (round_size), the rest split off (≥ 512 B)
    //  7 free_requested 2000M → pending at the snapshot
    let k = 1024;
    let s = snap(
        vec![
            seg(
                1000 * M,
                20 * M,
                false,
                vec![
                    blk(1000 * M, 8 * M, 8 * M, Free),
                    blk(1008 * M, 3 * M, 3 * M, Alloc),
                    blk(1011 * M, 9 * M, 0, Free),
                ],
            ),
            seg(
                2000 * M,
                2 * M,
                false,
                vec![
                    blk(2000 * M, k, 1000, Pending),
                    blk(2000 * M + k, 2 * M - k, 0, Free),
                ],
            ),
        ],
        vec![
            ev("segment_alloc", 1000 * M, 20 * M),
            ev("alloc", 1000 * M, 8 * M),
            ev("alloc", 1008 * M, 3 * M),
            ev("free_requested", 1000 * M, 8 * M),
            ev("free_completed", 1000 * M, 8 * M),
            ev("segment_alloc", 2000 * M, 2 * M),
            ev("alloc", 2000 * M, 1000),
            ev("free_requested", 2000 * M, 1000),
        ],
    );
    let h = history(&s);
    assert_eq!(h.inconsistent, 0, "{:?}", h.examples);
    let s1_end = vec![
        (1000 * M, 8 * M, Free, false),
        (1008 * M, 3 * M, Alloc, false),
        (1011 * M, 9 * M, Free, false),
    ];
    let s2 = |state: BlockState| {
        (
            2000 * M,
            2 * M,
            vec![
                (2000 * M, k, state, false),
                (2000 * M + k, 2 * M - k, Free, false),
            ],
        )
    };
    let expected: Vec<Layout> = vec![
        vec![(1000 * M, 20 * M, vec![(1000 * M, 20 * M, Free, false)])],
        vec![(
            1000 * M,
            20 * M,
            vec![
                (1000 * M, 8 * M, Alloc, true),
                (1008 * M, 12 * M, Free, false),
            ],
        )],
        vec![(
            1000 * M,
            20 * M,
            vec![
                (1000 * M, 8 * M, Alloc, true),
                (1008 * M, 3 * M, Alloc, false),
                (1011 * M, 9 * M, Free, false),
            ],
        )],
        vec![(
            1000 * M,
            20 * M,
            vec![
                (1000 * M, 8 * M, Pending, true),
                (1008 * M, 3 * M, Alloc, false),
                (1011 * M, 9 * M, Free, false),
            ],
        )],
        vec![(1000 * M, 20 * M, s1_end.clone())],
        vec![
            (1000 * M, 20 * M, s1_end.clone()),
            (2000 * M, 2 * M, vec![(2000 * M, 2 * M, Free, false)]),
        ],
        vec![(1000 * M, 20 * M, s1_end.clone()), s2(Alloc)],
        vec![(1000 * M, 20 * M, s1_end), s2(Pending)],
    ];
    // Reserved, allocated (active_allocated blocks), live requested bytes after each event.
    let figures = [
        (20 * M, 0, 0),
        (20 * M, 8 * M, 8 * M),
        (20 * M, 11 * M, 11 * M),
        (20 * M, 3 * M, 11 * M),
        (20 * M, 3 * M, 3 * M),
        (22 * M, 3 * M, 3 * M),
        (22 * M, 3 * M + k, 3 * M + 1000),
        (22 * M, 3 * M, 3 * M + 1000),
    ];
    for (i, (want, fig)) in expected.iter().zip(figures).enumerate() {
        let a = h.at(i);
        assert_eq!(&layout(&a), want, "event {i}");
        assert_eq!(
            (a.reserved_bytes, a.allocated_bytes, a.requested_bytes),
            fig,
            "event {i}"
        );
        assert_eq!(
            (a.index, a.action),
            (i, s.device_traces[0][i].action.as_str())
        );
    }
}

#[test]
fn a_block_too_close_to_its_run_end_to_split_takes_the_rest() {
    // alloc 19.5 MiB from a 20 MiB segment: the 0.5 MiB rest is not split off in the large pool
    // (should_split: remaining > kSmallSize = 1 MiB), so the block was the whole 20 MiB.
    let s = snap(
        vec![seg(
            3000 * M,
            20 * M,
            false,
            vec![blk(3000 * M, 20 * M, 0, Free)],
        )],
        vec![
            ev("segment_alloc", 3000 * M, 20 * M),
            ev("alloc", 3000 * M, 19 * M + M / 2),
            ev("free_requested", 3000 * M, 19 * M + M / 2),
            ev("free_completed", 3000 * M, 19 * M + M / 2),
        ],
    );
    let h = history(&s);
    assert_eq!(h.inconsistent, 0);
    assert_eq!(
        layout(&h.at(2)),
        vec![(3000 * M, 20 * M, vec![(3000 * M, 20 * M, Pending, true)])]
    );
    assert_eq!(h.at(1).allocated_bytes, 20 * M);
}

#[test]
fn expandable_segments_shrink_and_grow_with_segment_map_and_unmap() {
    //  0 segment_map 5000M, 2M;  1 alloc 5000M, 2M;  2 segment_map 5002M, 4M;
    //  3 segment_unmap 5004M, 2M → the file: one 4 MiB expandable segment.
    let s = snap(
        vec![seg(
            5000 * M,
            4 * M,
            true,
            vec![
                blk(5000 * M, 2 * M, 2 * M, Alloc),
                blk(5002 * M, 2 * M, 0, Free),
            ],
        )],
        vec![
            ev("segment_map", 5000 * M, 2 * M),
            ev("alloc", 5000 * M, 2 * M),
            ev("segment_map", 5002 * M, 4 * M),
            ev("segment_unmap", 5004 * M, 2 * M),
        ],
    );
    let h = history(&s);
    assert_eq!(h.inconsistent, 0, "{:?}", h.examples);
    let f = |a: u64, z: u64, st: BlockState| (a * M, z * M, st, false);
    assert_eq!(
        layout(&h.at(2)),
        vec![(5000 * M, 6 * M, vec![f(5000, 2, Alloc), f(5002, 4, Free)])]
    );
    assert_eq!(
        layout(&h.at(1)),
        vec![(5000 * M, 2 * M, vec![f(5000, 2, Alloc)])]
    );
    assert_eq!(
        layout(&h.at(0)),
        vec![(5000 * M, 2 * M, vec![f(5000, 2, Free)])]
    );
    let reserved: Vec<u64> = (0..4).map(|i| h.at(i).reserved_bytes).collect();
    assert_eq!(reserved, vec![2 * M, 2 * M, 6 * M, 4 * M]);
    // The timeline walks reserved back the same way.
    let t = timeline(&s, 0).unwrap();
    assert_eq!(
        t.events.iter().map(|e| e.reserved).collect::<Vec<_>>(),
        reserved
    );
}

#[test]
fn the_mini_fixture_at_its_hand_counted_events() {
    // Read with Python's pickle: events 0–12 of the fixture are segment_alloc 24 MiB, alloc
    // 24 MiB, segment_alloc 20 MiB, alloc 8 MiB, segment_alloc 24 MiB, alloc 24 MiB, alloc 8 MiB,
    // segment_alloc 24 MiB, alloc 24 MiB, segment_alloc 20 MiB, alloc 8 MiB, segment_alloc
    // 24 MiB, alloc 24 MiB; nothing is freed before event 32. So after event 12:
    // reserved = 24 + 20 + 24 + 24 + 20 + 24 = 136 MiB = 142,606,336 B and
    // requested = 24 + 8 + 24 + 8 + 24 + 8 + 24 = 120 MiB = 125,829,120 B; after event 2:
    // 44 MiB = 46,137,344 B reserved, 24 MiB = 25,165,824 B requested.
    let s = parse(BUILTIN_FIXTURE).unwrap();
    let a = analyse("mini", &s, 12).unwrap();
    let at = a.output.at_event.as_ref().unwrap();
    assert_eq!((at.index, at.action), (12, "alloc"));
    assert_eq!(
        (at.reserved_bytes, at.requested_bytes),
        (142_606_336, 125_829_120)
    );
    assert_eq!(at.segments.len(), 6);
    let at = analyse("mini", &s, 2).unwrap().output.at_event.unwrap();
    assert_eq!(
        (at.reserved_bytes, at.requested_bytes),
        (46_137_344, 25_165_824)
    );
    // The file's 14 segments hold only free blocks, but 24 of its 28 allocs are never freed:
    // those cannot be undone, and the output says so instead of drawing them as fine.
    let h = a.histories.first().unwrap();
    assert_eq!(h.inconsistent, 24);
    // Typed, and worded from the same fields: the file's blocks are all free, so they request
    // 0 B while the trace leaves the 24 allocs' bytes live.
    let w = &a.output.warnings;
    let undone = Warning::EventsNotUndone {
        device: 0,
        events: 24,
    };
    assert!(w.contains(&undone), "{w:?}");
    assert!(
        undone
            .text()
            .en
            .contains("24 trace events cannot be undone")
    );
    assert!(
        undone
            .text()
            .zh
            .contains("有 24 个轨迹事件无法在文件的块上撤销")
    );
    assert!(
        w.iter().any(|w| matches!(
            w,
            Warning::LiveBytesDiffer {
                device: 0,
                trace_live: 402_719_744,
                file_requested: 0
            }
        )),
        "{w:?}"
    );
    // The last event is the default, and it is the file's own state.
    let last = analyse("mini", &s, -1).unwrap().output.at_event.unwrap();
    assert_eq!(last.index, 49);
    assert_eq!(last.reserved_bytes, 421_527_552);
    assert_eq!(last.allocated_bytes, 0);
    let file: Vec<(u64, u64, usize)> = s
        .segments
        .iter()
        .map(|g| (g.address, g.total_size, g.blocks.len()))
        .collect();
    let shown: Vec<(u64, u64, usize)> = last
        .segments
        .iter()
        .map(|g| (g.address, g.total_size, g.blocks.len()))
        .collect();
    assert_eq!(shown, file);
}

#[test]
fn the_event_parameter_is_checked_against_the_trace() {
    let s = parse(BUILTIN_FIXTURE).unwrap();
    for bad in [50, 1000, -2] {
        match analyse("mini", &s, bad) {
            Err(Error::InvalidParam { name, expected, .. }) => {
                assert_eq!(name, "event");
                assert!(
                    expected.to_string().contains("last is event 49"),
                    "{expected}"
                );
            }
            other => panic!("{bad}: {other:?}"),
        }
    }
    // Through the scene: `--set event=50` names the parameter.
    let scene = crate::scene::find("memory-snapshot").unwrap();
    let mut v = scene.defaults();
    v.set(scene.params, "event", "50").unwrap();
    let e = scene.report(v).unwrap_err();
    assert!(e.to_string().contains("`event` = 50"), "{e}");
    // A file without a trace accepts only the default.
    let mut s = parse(BUILTIN_FIXTURE).unwrap();
    s.device_traces.clear();
    assert!(analyse("x", &s, -1).unwrap().output.at_event.is_none());
    assert!(matches!(
        analyse("x", &s, 0),
        Err(Error::InvalidParam { .. })
    ));
}

#[test]
fn checkpoints_give_the_same_state_as_undoing_everything() {
    // The generator ends on a lone free_requested when one event is left over, and writes that
    // block as active_allocated (its files know no pending state): take a length that does not.
    let s = (3000..3010)
        .map(|n| parse(&synthetic(n, 0, 7).unwrap()).unwrap())
        .find(|s| s.device_traces[0].last().unwrap().action != "free_requested")
        .unwrap();
    let n = s.device_traces[0].len();
    let t = timeline(&s, 0).unwrap();
    let fast = History::new(&s, &t).unwrap();
    let slow = History::build(&s, &t, usize::MAX).unwrap();
    assert!(fast.interval() < n && slow.interval() >= n);
    // The synthetic trace starts from an empty allocator and is the simulator's own run: every
    // event undoes cleanly, reserved follows the timeline, and blocks tile their segments.
    assert_eq!(fast.inconsistent, 0, "{:?}", fast.examples);
    for i in (0..n).step_by(97).chain([0, 255, 256, 257, n - 1]) {
        let a = fast.at(i);
        assert_eq!(a, slow.at(i), "event {i}");
        assert_eq!(a.reserved_bytes, t.events[i].reserved, "event {i}");
        for g in &a.segments {
            assert_eq!(
                g.blocks.iter().map(|b| b.size).sum::<u64>(),
                g.total_size,
                "event {i}"
            );
        }
    }
    // The first event is a segment_alloc: one segment, one free block.
    let first = fast.at(0);
    assert_eq!(first.segments.len(), 1);
    assert_eq!(first.segments[0].blocks.len(), 1);
}

// ---------------------------------------------------------------------------------------------
// Malformed files: pickles written with serde-pickle's serializer.

fn dict(pairs: Vec<(&str, Value)>) -> Value {
    Value::Dict(pairs.into_iter().map(|(k, v)| (read::key(k), v)).collect())
}

fn int(x: i64) -> Value {
    Value::I64(x)
}

fn text(s: &str) -> Value {
    Value::String(s.into())
}

/// A segment as `(address, total_size, [(address, size, state)])`.
type SegSpec<'a> = (i64, i64, &'a [(i64, i64, &'a str)]);

/// A snapshot pickle of `segments` and one device trace.
fn pickle_of(segments: &[SegSpec<'_>], trace: Vec<Value>) -> Vec<u8> {
    let segs = segments
        .iter()
        .map(|&(address, total, blocks)| {
            dict(vec![
                ("device", int(0)),
                ("address", int(address)),
                ("total_size", int(total)),
                (
                    "blocks",
                    Value::List(
                        blocks
                            .iter()
                            .map(|&(a, z, st)| {
                                dict(vec![
                                    ("address", int(a)),
                                    ("size", int(z)),
                                    ("state", text(st)),
                                ])
                            })
                            .collect(),
                    ),
                ),
            ])
        })
        .collect();
    let top = dict(vec![
        ("segments", Value::List(segs)),
        ("device_traces", Value::List(vec![Value::List(trace)])),
    ]);
    serde_pickle::value_to_vec(&top, serde_pickle::SerOptions::new()).unwrap()
}

fn trace_event(action: &str, addr: i64, size: Value) -> Value {
    dict(vec![
        ("action", text(action)),
        ("addr", int(addr)),
        ("size", size),
    ])
}

#[test]
fn a_size_that_is_not_a_byte_count_is_refused_with_the_event_index() {
    let m = M as i64;
    let segs: &[SegSpec<'_>] = &[(4096, 2 * m, &[(4096, 2 * m, "inactive")])];
    for (bad, says) in [
        (text("512"), "the string \"512\""),
        (Value::F64(512.0), "the float 512"),
        (Value::F64(f64::NAN), "NaN"),
        (int(-512), "-512 (negative)"),
    ] {
        let trace = vec![
            trace_event("alloc", 4096, int(512)),
            trace_event("free_requested", 4096, int(512)),
            trace_event("free_completed", 4096, bad),
        ];
        let e = parse(&pickle_of(segs, trace)).unwrap_err().to_string();
        assert!(e.contains("trace event 2"), "{e}");
        assert!(e.contains(says), "{e}");
        assert!(e.contains("`size`"), "{e}");
    }
    // A negative address is refused the same way.
    let trace = vec![trace_event("alloc", -4096, int(512))];
    let e = parse(&pickle_of(segs, trace)).unwrap_err().to_string();
    assert!(e.contains("trace event 0") && e.contains("`addr`"), "{e}");
}

#[test]
fn blocks_and_segments_that_break_the_allocators_invariants_are_warnings() {
    let m = M as i64;
    let clean = pickle_of(
        &[(0x1000_0000, 2 * m, &[(0x1000_0000, 2 * m, "inactive")])],
        vec![],
    );
    assert!(
        summarise("clean", &parse(&clean).unwrap())
            .warnings
            .is_empty()
    );
    for real in [
        "torch2.0-flexgen-opt1.3b.pickle",
        "torch2.6-verl.pickle",
        "torch2.11-cs336-a2.pickle",
    ] {
        let path = format!("{}/tests/data/snapshots/{real}", env!("CARGO_MANIFEST_DIR"));
        let o = run_path(&path).unwrap();
        assert!(o.warnings.is_empty(), "{real}: {:?}", o.warnings);
    }
    let cases: &[(&[SegSpec<'_>], &str)] = &[
        (
            &[(
                0x1000_0000,
                2 * m,
                &[(0x1000_0000, 3 * m, "active_allocated")],
            )],
            "larger than the segment's 2097152 B",
        ),
        (
            &[(
                0x1000_0000,
                2 * m,
                &[
                    (0x1000_0000, m, "active_allocated"),
                    (0x1000_0000 + m / 2, m, "inactive"),
                ],
            )],
            "overlaps the block before it",
        ),
        (
            &[
                (0x1000_0000, 2 * m, &[(0x1000_0000, 2 * m, "inactive")]),
                (
                    0x1000_0000 + m,
                    2 * m,
                    &[(0x1000_0000 + m, 2 * m, "inactive")],
                ),
            ],
            "segments 0 and 1 of device 0 overlap",
        ),
        (
            &[
                (
                    0x1000_0000,
                    i64::MAX,
                    &[(0x1000_0000, i64::MAX, "inactive")],
                ),
                (
                    0x2000_0000,
                    i64::MAX,
                    &[(0x2000_0000, i64::MAX, "inactive")],
                ),
                (
                    0x3000_0000,
                    i64::MAX,
                    &[(0x3000_0000, i64::MAX, "inactive")],
                ),
            ],
            "add up to more than 2⁶⁴ − 1 bytes",
        ),
    ];
    for (segs, says) in cases {
        let bytes = pickle_of(segs, vec![]);
        let o = summarise("bad", &parse(&bytes).unwrap());
        assert!(
            o.warnings.iter().any(|w| w.text().en.contains(says)),
            "{says}: {:?}",
            o.warnings
        );
        // The scene's JSON carries them too.
        let a = analyse("bad", &parse(&bytes).unwrap(), -1).unwrap();
        let json = serde_json::to_value(&a.output).unwrap();
        assert!(json["warnings"].as_array().is_some_and(|w| !w.is_empty()));
    }
}
