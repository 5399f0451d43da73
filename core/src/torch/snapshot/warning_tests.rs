//! Snapshot warnings: both wordings of a few variants checked by hand on small snapshots built
//! here, the "… and N more" grouping, the JSON a script reads, and no English sentence in any
//! Chinese wording a set of malformed snapshots produces.

use std::collections::BTreeMap;

use super::tests::ev;
use super::*;
use crate::torch::snapshot::warning::Kind;

const M: u64 = 1 << 20;

fn block(address: u64, size: u64, state: BlockState) -> SnapBlock {
    SnapBlock {
        address,
        size,
        requested_size: size,
        state,
        frames: crate::torch::frames::NO_FRAMES,
    }
}

fn segment(address: u64, total_size: u64, blocks: Vec<SnapBlock>) -> SnapSegment {
    super::history_tests::seg(address, total_size, false, blocks)
}

fn snapshot(segments: Vec<SnapSegment>, trace: Vec<TraceEvent>) -> Snapshot {
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

/// A 2 MiB segment at 0x10000000 holding one 3 MiB active block.
fn block_too_large() -> Snapshot {
    let seg = segment(
        0x1000_0000,
        2 * M,
        vec![block(0x1000_0000, 3 * M, BlockState::ActiveAllocated)],
    );
    snapshot(vec![seg], Vec::new())
}

#[test]
fn a_block_larger_than_its_segment_is_said_in_both_languages() {
    let o = summarise("bad", &block_too_large());
    // 3 MiB = 3145728 B against 2 MiB = 2097152 B; the block also ends 1 MiB past the
    // segment's end 0x10200000, and the blocks sum to 3 MiB where the segment holds 2 MiB.
    let larger = Warning::BlockLargerThanSegment {
        segment: 0,
        address: 0x1000_0000,
        block: 0,
        size: 3_145_728,
        total_size: 2_097_152,
    };
    assert!(o.warnings.contains(&larger), "{:?}", o.warnings);
    let t = larger.text();
    assert_eq!(
        t.en,
        "segment 0 at 0x10000000 block 0: 3145728 B, larger than the segment's 2097152 B"
    );
    assert_eq!(
        t.zh,
        "段 0（0x10000000）的块 0：3145728 B，比段的 2097152 B 还大"
    );
    let outside = Warning::BlockOutsideSegment {
        segment: 0,
        address: 0x1000_0000,
        block: 0,
        block_address: 0x1000_0000,
        size: 3_145_728,
        end: 0x1020_0000,
    };
    assert!(o.warnings.contains(&outside), "{:?}", o.warnings);
    assert_eq!(
        outside.text().zh,
        "段 0（0x10000000）的块 0（0x10000000，3145728 B）不在段的范围 0x10000000..0x10200000 内"
    );
    let tile = Warning::BlocksDoNotTile {
        segment: 0,
        address: 0x1000_0000,
        blocks_total: 3_145_728,
        total_size: 2_097_152,
    };
    assert!(o.warnings.contains(&tile), "{:?}", o.warnings);
    assert_eq!(
        tile.text().en,
        "segment 0 at 0x10000000: its blocks add up to 3145728 B, the segment's total_size is 2097152 B"
    );
}

#[test]
fn a_free_of_another_size_reads_the_same_numbers_in_both_languages() {
    // alloc 4 MiB at 0x6400000 (100 MiB), then free_completed says 1 MiB.
    let s = snapshot(
        Vec::new(),
        vec![
            ev("alloc", 100 * M, 4 * M),
            ev("free_completed", 100 * M, M),
        ],
    );
    let o = summarise("bad", &s);
    let w = Warning::FreeDiffersFromAlloc {
        trace: 0,
        event: 1,
        action: Action::FreeCompleted,
        addr: 0x640_0000,
        size: 1_048_576,
        alloc_event: 0,
        alloc_size: 4_194_304,
    };
    assert!(o.warnings.contains(&w), "{:?}", o.warnings);
    assert_eq!(
        w.text().en,
        "trace 0 event 1 (free_completed) at 0x6400000: 1048576 B, but the alloc at event 0 was 4194304 B"
    );
    assert_eq!(
        w.text().zh,
        "轨迹 0 的事件 1（free_completed，0x6400000）：1048576 B，而事件 0 的 alloc 是 4194304 B"
    );
    // A script reads the kind, both wordings and the fields.
    let json = serde_json::to_value(&w).unwrap();
    assert_eq!(json["kind"], "free_differs_from_alloc");
    assert_eq!(json["action"], "free_completed");
    assert_eq!(json["addr"], 0x640_0000);
    assert_eq!(json["alloc_size"], 4_194_304);
    assert_eq!(json["en"], w.text().en.as_str());
    assert_eq!(json["zh"], w.text().zh.as_str());
}

#[test]
fn past_five_of_a_kind_the_rest_are_counted_in_one_line() {
    // Seven events with an action this reader does not know: five listed, "2 more".
    let trace = (0..7).map(|k| ev("rewind", k * M, M)).collect();
    let o = summarise("bad", &snapshot(Vec::new(), trace));
    assert_eq!(o.warnings.len(), 6, "{:?}", o.warnings);
    let more = Warning::More {
        of: Kind::UnknownAction,
        count: 2,
    };
    assert_eq!(o.warnings.last(), Some(&more));
    assert_eq!(
        more.text().en,
        "… and 2 more of the kind \"unknown action\""
    );
    assert_eq!(more.text().zh, "……另有 2 个同类问题（未知的 action）");
    let json = serde_json::to_value(&o).unwrap();
    let last = &json["warnings"][5];
    assert_eq!(
        (&last["kind"], &last["of"], &last["count"]),
        (&"more".into(), &"unknown_action".into(), &2.into())
    );
}

/// Words a Chinese wording may hold: PyTorch's own names (actions, fields, block states) and
/// units. Anything else made of Latin letters counts as an English word.
const IDENTIFIERS: &[&str] = &[
    "alloc",
    "action",
    "free_requested",
    "free_completed",
    "segment_alloc",
    "size",
    "total_size",
    "allocated_size",
    "requested_size",
    "active_allocated",
    "reserved",
    "allocated",
    "B",
];

/// The longest run of English words in `s`: Latin-letter words (hyphens and apostrophes
/// allowed) that are not identifiers,
/// one after another with only ASCII spaces and punctuation between them (a Chinese character,
/// a number or an identifier ends a run).
fn english_run(s: &str) -> usize {
    let mut most = 0;
    for chunk in s.split(|c: char| !c.is_ascii()) {
        let mut run = 0;
        for token in chunk.split_ascii_whitespace() {
            let word = token.trim_matches(|c: char| c.is_ascii_punctuation());
            let english = word.len() > 1
                && word
                    .chars()
                    .all(|c| c.is_ascii_alphabetic() || c == '-' || c == '\'')
                && !IDENTIFIERS.contains(&word);
            run = if english { run + 1 } else { 0 };
            most = most.max(run);
        }
    }
    most
}

#[test]
fn the_checker_catches_an_english_sentence() {
    assert_eq!(english_run("轨迹 0 的事件 1：未知的 action \"rewind\""), 1);
    assert!(english_run("段 0：is more than the block") >= 3);
    assert_eq!(english_run("设备 0 第 4 个事件（alloc at 0x10，256 B）"), 1);
}

const ALL_KINDS: &[Kind] = &[
    Kind::SegmentEndOverflows,
    Kind::RequestedMoreThanBlock,
    Kind::BlockLargerThanSegment,
    Kind::BlockOutsideSegment,
    Kind::OverlappingBlocks,
    Kind::SumOverflows,
    Kind::BlocksDoNotTile,
    Kind::AllocatedSizeDiffers,
    Kind::OverlappingSegments,
    Kind::UnknownAction,
    Kind::NoByteCount,
    Kind::FreeDiffersFromAlloc,
    Kind::TraceDisagrees,
    Kind::CannotUndo,
];

#[test]
fn every_warning_a_malformed_snapshot_gives_has_a_chinese_wording() {
    let overlapping = snapshot(
        vec![
            segment(
                0x1000_0000,
                2 * M,
                vec![
                    block(0x1000_0000, M, BlockState::ActiveAllocated),
                    block(0x1000_0000 + M / 2, M, BlockState::Inactive),
                ],
            ),
            segment(
                0x1000_0000 + M,
                2 * M,
                vec![block(0x1000_0000 + M, 2 * M, BlockState::Inactive)],
            ),
        ],
        Vec::new(),
    );
    let huge = snapshot(
        (1..=3u64)
            .map(|k| {
                let mut g = segment(
                    k << 60,
                    u64::MAX / 2,
                    vec![block(k << 60, u64::MAX / 2, BlockState::Inactive)],
                );
                g.allocated_size = u64::MAX / 2;
                g
            })
            .chain([
                // Its end passes 2⁶⁴ − 1.
                segment(u64::MAX - M, 2 * M, Vec::new()),
                // Its two blocks sum past 2⁶⁴ − 1.
                segment(
                    0x1000,
                    4 * M,
                    vec![
                        block(0x1000, u64::MAX, BlockState::Inactive),
                        block(0x2000, u64::MAX, BlockState::Inactive),
                    ],
                ),
            ])
            .collect(),
        Vec::new(),
    );
    let mut requested = block_too_large();
    if let Some(g) = requested.segments.first_mut() {
        g.allocated_size = 0;
        if let Some(b) = g.blocks.first_mut() {
            b.requested_size = 4 * M;
        }
    }
    let events = snapshot(
        Vec::new(),
        (0..7)
            .map(|k| ev("rewind", k, 0))
            .chain([
                ev("alloc", 100 * M, 0),
                ev("alloc", 104 * M, 4 * M),
                ev("free_completed", 104 * M, M),
            ])
            .collect(),
    );
    let mut seen = Vec::new();
    for s in [block_too_large(), overlapping, huge, requested, events] {
        seen.extend(analyse("bad", &s, -1).unwrap().output.warnings);
    }
    // The mini fixture's trace cannot all be undone against its blocks.
    let mini = parse(BUILTIN_FIXTURE).unwrap();
    seen.extend(analyse("mini", &mini, -1).unwrap().output.warnings);
    let kinds: std::collections::HashSet<Kind> = seen.iter().map(Warning::kind).collect();
    // Every check of the file and of the trace has fired somewhere above.
    assert_eq!(kinds.len(), ALL_KINDS.len(), "{kinds:?}");
    for w in &seen {
        let t = w.text();
        assert!(!t.zh.is_empty() && t.zh != t.en, "{w:?}");
        assert!(english_run(&t.zh) < 3, "{}", t.zh);
    }
    // Every kind's name too (the "… and N more" line shows it).
    for &kind in ALL_KINDS {
        let t = Warning::More { of: kind, count: 1 }.text();
        assert!(english_run(&t.zh) < 3, "{}", t.zh);
    }
}
