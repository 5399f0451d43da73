//! Tests of the snapshot reader and replay: the four real snapshots against the README's table,
//! the mini fixture's replay, mid-run traces, the PyTorch ≤ 2.0 layout, truncated, garbage and
//! hostile files, a hand-made pickle and trace, and the synthetic file read back.

use super::*;

/// A bundled snapshot's path (`core/tests/data/snapshots/`).
pub(super) fn data(name: &str) -> String {
    format!("{}/tests/data/snapshots/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// A trace event of `action` at `addr` of `size` bytes, on stream 0, without frames.
pub(super) fn ev(action: &str, addr: u64, size: u64) -> TraceEvent {
    TraceEvent {
        action: action.into(),
        addr: Some(addr),
        size,
        stream: 0,
        device_free: None,
        frames: 0,
    }
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
    assert_eq!(o.segments_match, Some(true), "{}", o.replay_note.en);
    assert_eq!(o.replay_reserved_final_bytes, 421_527_552);
    assert_eq!(o.replay_reserved_peak_bytes, 421_527_552);
    // The built-in default is the same file.
    let d = run_path("").unwrap();
    assert_eq!(d.replay_segments, expected);
}

#[test]
fn mid_run_traces_replay_from_their_rebuilt_start() {
    // Both mid-run traces replay from the state rebuilt at their first event — the file's
    // segments, as neither creates or frees one — and leave the file's segments; cs336's
    // requests all land at the addresses PyTorch recorded (its 1,721 allocs, counted with
    // Python's pickle).
    for (file, start, allocs) in [
        ("torch2.0-flexgen-opt1.3b.pickle", 266, 0),
        ("torch2.11-cs336-a2.pickle", 216, 1721),
    ] {
        let o = run_path(&data(file)).unwrap();
        assert!(!o.trace_starts_empty, "{file}");
        assert_eq!(o.segments_match, Some(true), "{file}: {}", o.replay_note.en);
        let d = &o.replay_devices[0];
        assert_eq!((d.start_segments, d.segments_created), (start, 0), "{file}");
        assert_eq!(
            (d.allocs, d.allocs_at_recorded_address),
            (allocs, allocs),
            "{file}"
        );
        assert!(!o.replay_note.en.is_empty() && !o.replay_note.zh.is_empty());
    }
    // An empty trace: no claim.
    let o = run_path(&data("torch2.6-verl.pickle")).unwrap();
    assert!(!o.trace_starts_empty);
    assert_eq!(o.segments_match, None);
    assert!(o.blocks_by_state.contains_key("active_pending_free"));
    assert!(o.private_pool_segments > 0);
    let o = run_path(&data("torch2.0-flexgen-opt1.3b.pickle")).unwrap();
    assert!(!o.blocks_have_addresses);
    assert_eq!(o.replay_unmatched_frees, 1);
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
        frames: 0,
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
                    frames: 0,
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
                frames: 0,
            },
        ]],
        allocator_settings: BTreeMap::new(),
        frames: Default::default(),
    };
    let r = replay(&snap);
    assert_eq!(r.segments, vec![20 * M, 30 * M]);
    assert_eq!(r.reserved_peak_bytes, 50 * M);
    assert_eq!(r.needed_peak_bytes, 30 * M);
    assert_eq!(r.segments_match, Some(true), "{}", r.note.en);
}

#[test]
fn synthetic_snapshot_reads_back_and_replays_from_empty() {
    let bytes = synthetic(3000, 3, 7).unwrap();
    let s = parse(&bytes).unwrap();
    assert_eq!(s.device_traces[0].len(), 3000);
    assert!(s.blocks_have_addresses);
    let o = summarise("synthetic", &s);
    assert!(o.trace_starts_empty, "{}", o.replay_note.en);
    assert_eq!(o.segments_match, Some(true), "{}", o.replay_note.en);
    assert_eq!(o.replay_reserved_final_bytes, o.reserved_bytes);
}

#[test]
fn frames_are_kept_as_pythons_pickle_load_reads_them() {
    // Figures from Python's own `pickle.load` of each file.
    let s = read_file(&data("torch2.11-cs336-a2.pickle")).unwrap();
    let trace = &s.device_traces[0];
    assert_eq!(trace.len(), 5_163);
    let e = &trace[100];
    assert_eq!((e.action.as_str(), e.addr), ("alloc", Some(0xcdb9aec00)));
    let f = s.frames.frames(e.frames);
    assert_eq!(f.len(), 10);
    assert_eq!((f[0].name.as_str(), f[0].line), ("forward", 101));
    assert_eq!(
        f[0].filename,
        "D:\\Dev\\assignment2-systems\\cs336-basics\\cs336_basics\\model.py"
    );
    let top = s.frames.top_user_frame(e.frames).unwrap();
    assert_eq!((top.name.as_str(), top.line), ("forward", 101));
    // The last event, through the scene: `at_event.frames`.
    let o = run_path(&data("torch2.11-cs336-a2.pickle")).unwrap();
    let at = o.at_event.unwrap();
    assert_eq!(at.action, "free_completed");
    assert_eq!(at.frames.len(), 2);
    assert_eq!(
        (at.frames[0].name.as_str(), at.frames[0].line),
        ("backward", 631)
    );
    assert_eq!(
        (at.frames[1].name.as_str(), at.frames[1].line),
        ("<module>", 73)
    );
    // Blocks: verl's first block has 174 frames, the last `_start` in `??`; 87,780 in all.
    let s = read_file(&data("torch2.6-verl.pickle")).unwrap();
    let b = &s.segments[0].blocks[0];
    let f = s.frames.frames(b.frames);
    assert_eq!(f.len(), 174);
    assert_eq!(
        (f[173].name.as_str(), f[173].filename.as_str(), f[173].line),
        ("_start", "??", 0)
    );
    let total: usize = s
        .segments
        .iter()
        .flat_map(|g| &g.blocks)
        .map(|b| s.frames.len_of(b.frames))
        .sum();
    assert_eq!(total, 87_780);
    // PyTorch 2.0: a block's frames are its last `history` entry's.
    let s = read_file(&data("torch2.0-flexgen-opt1.3b.pickle")).unwrap();
    let f = s.frames.frames(s.segments[0].blocks[0].frames);
    assert_eq!(f.len(), 10);
    assert_eq!((f[0].name.as_str(), f[0].line), ("decompress", 177));
    assert_eq!(f[9].name, "_run_module_as_main");
}

#[test]
fn the_serde_pickle_path_keeps_the_same_frames() {
    // The fallback reads frames from serde-pickle's value; serde-pickle turns some shared lists,
    // and some shared strings inside them, into `None` (read as no frames, `""`): everything
    // it keeps equals the fast path's.
    for name in ["torch2.11-cs336-a2.pickle", "torch2.11-mini-fixture.pickle"] {
        let bytes = std::fs::read(data(name)).unwrap();
        let fast = parse(&bytes).unwrap();
        let slow = read::parse_with_serde_pickle(&bytes).unwrap();
        let (mut same, mut lost) = (0, 0);
        for (a, b) in fast.device_traces[0].iter().zip(&slow.device_traces[0]) {
            let (fa, fb) = (fast.frames.frames(a.frames), slow.frames.frames(b.frames));
            if fb.is_empty() && !fa.is_empty() {
                lost += 1;
                continue;
            }
            assert_eq!(fa.len(), fb.len(), "{name}");
            for (x, y) in fa.iter().zip(&fb) {
                assert!(y.line == 0 || x.line == y.line, "{name}");
                assert!(y.name.is_empty() || x.name == y.name, "{name}");
                assert!(y.filename.is_empty() || x.filename == y.filename, "{name}");
            }
            same += 1;
        }
        assert!(same > lost, "{name}: {same} kept, {lost} lost");
    }
}
