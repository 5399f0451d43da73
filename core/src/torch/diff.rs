//! `memory-diff`: two PyTorch memory snapshots compared — reserved and allocated bytes (b − a),
//! the segments only one of them holds, and the live bytes of each grouped by the innermost
//! user frame of the stack that allocated them ([`crate::torch::frames`]): where memory went
//! between two runs, or two moments of one run.
//!
//! Both files are read as `memory-snapshot` reads them ([`super::snapshot::open`]: the opcode
//! guard, the fast decoder with frames indexed). *Reserved* is Σ segment `total_size`,
//! *allocated* Σ segment `allocated_size` (the file's figures); *live bytes* are the sizes of
//! `active_allocated` blocks; a segment is "the same" in both files when its address and size
//! are. Units: bytes; deltas are signed (b − a).

#![deny(clippy::indexing_slicing)]

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::frames::frame_line;
use super::snapshot::{self, BlockState, Snapshot, Source};
use crate::Error;
use crate::params::{ParamSpec, ParamValues};
use crate::scene::{Chapter, Cost, Featured, Scene, SceneDef, erase};
use crate::text::Text;

/// Most frame groups listed; the rest are summed into one row.
pub const MAX_GROUPS: usize = 200;

/// How [`FrameGroup::NoUserFrame`] reads in English (and in the JSON).
pub const NO_USER_FRAME: &str = "(no user frame: library or no stack recorded)";
/// How [`FrameGroup::Other`] reads in English (and in the JSON).
pub const OTHER_FRAMES: &str = "(other frames)";

/// A group of live bytes: one innermost user frame, the stacks without one, or the groups past
/// [`MAX_GROUPS`] summed. Serialised as the frame's line, [`NO_USER_FRAME`] or [`OTHER_FRAMES`].
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum FrameGroup {
    /// `name (file:line)`, the file shortened to its last two components (as the file
    /// spells it: not translated).
    Frame(String),
    /// Stacks with no user frame (library code only, or no stack recorded).
    NoUserFrame,
    /// The groups past [`MAX_GROUPS`].
    Other,
}

impl FrameGroup {
    /// The English wording (what the JSON holds).
    pub fn as_str(&self) -> &str {
        match self {
            FrameGroup::Frame(line) => line,
            FrameGroup::NoUserFrame => NO_USER_FRAME,
            FrameGroup::Other => OTHER_FRAMES,
        }
    }

    /// The group in both languages (a frame's line is the same in both).
    pub fn text(&self) -> Text<&str> {
        match self {
            FrameGroup::Frame(line) => Text::new(line, line),
            FrameGroup::NoUserFrame => Text::new(
                NO_USER_FRAME,
                "（没有用户栈帧：都在库里，或没有记录调用栈）",
            ),
            FrameGroup::Other => Text::new(OTHER_FRAMES, "（其余栈帧）"),
        }
    }
}

impl Serialize for FrameGroup {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

const PARAMS: &[ParamSpec] = &[
    ParamSpec::text(
        "a",
        "snapshot a (empty: the built-in mini fixture)",
        "快照 a（留空：内置小样例）",
        "",
    ),
    ParamSpec::text(
        "b",
        "snapshot b (empty: the built-in mini fixture)",
        "快照 b（留空：内置小样例）",
        "",
    ),
];

/// The scene's typed definition (`memory-diff`).
pub struct DiffScene;

impl SceneDef for DiffScene {
    const ID: &'static str = "memory-diff";
    type Output = DiffOutput;

    fn run(v: &ParamValues) -> Result<Self::Output, Error> {
        run(v)
    }
}

/// The registry entry.
pub const SCENE: Scene = Scene {
    id: DiffScene::ID,
    section: "§5.3",
    title: Text::new("Two memory snapshots compared", "比较两个显存快照"),
    summary: Text::new(
        "Reserved and allocated deltas, segments only in one file, and live bytes by the user frame that allocated them, in each of two torch.cuda.memory._snapshot() pickles.",
        "比较两个 torch.cuda.memory._snapshot() pickle：保留和已分配字节之差、只在一个文件里的段，以及按分配它们的用户栈帧分组的存活字节。",
    ),
    params: PARAMS,
    run: erase::<DiffScene>(),
    input: None,
    chapter: &Chapter::MEMORY,
    featured: Featured::Nothing,
    cost: Cost::Light,
};

/// A segment of one file only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OnlySegment {
    /// Address.
    pub address: u64,
    /// `total_size` (bytes).
    pub total_size: u64,
}

/// Live bytes of one user frame in each file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FrameBytes {
    /// The frame, or the stacks without one, or the rest ([`FrameGroup`]).
    pub frame: FrameGroup,
    /// Σ `active_allocated` block sizes in a (bytes).
    pub bytes_a: u64,
    /// The same in b (bytes).
    pub bytes_b: u64,
}

/// The scene's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiffOutput {
    /// File a, as given (or the built-in fixture).
    pub a: Source,
    /// File b, as given.
    pub b: Source,
    /// Reserved in a and in b (bytes).
    pub reserved_bytes: (u64, u64),
    /// Allocated in a and in b (bytes).
    pub allocated_bytes: (u64, u64),
    /// Reserved b − a (bytes).
    pub reserved_delta_bytes: i128,
    /// Allocated b − a (bytes).
    pub allocated_delta_bytes: i128,
    /// Segments of a that b does not hold (same address and size; one a holds twice and b once
    /// is listed once), in a's order.
    pub segments_only_in_a: Vec<OnlySegment>,
    /// Segments of b that a does not hold.
    pub segments_only_in_b: Vec<OnlySegment>,
    /// Live bytes by innermost user frame, the largest (in either file) first.
    pub by_frame: Vec<FrameBytes>,
}

/// Σ of byte counts, saturating.
fn sum(it: impl Iterator<Item = u64>) -> u64 {
    it.fold(0, u64::saturating_add)
}

/// Live bytes of `s` by innermost user frame.
fn live_by_frame(s: &Snapshot) -> BTreeMap<FrameGroup, u64> {
    let mut out: BTreeMap<FrameGroup, u64> = BTreeMap::new();
    for b in s.segments.iter().flat_map(|g| &g.blocks) {
        if b.state != BlockState::ActiveAllocated {
            continue;
        }
        let key = s
            .frames
            .top_user_frame(b.frames)
            .map_or(FrameGroup::NoUserFrame, |f| {
                FrameGroup::Frame(frame_line(&f))
            });
        let e = out.entry(key).or_default();
        *e = e.saturating_add(b.size);
    }
    out
}

/// The segments of `x` that `other` does not hold, counted as a multiset: a segment `x` holds
/// twice and `other` once is listed once, so the lists account for the reserved difference.
fn only(x: &Snapshot, other: &Snapshot) -> Vec<OnlySegment> {
    let mut theirs: BTreeMap<(u64, u64), usize> = BTreeMap::new();
    for g in &other.segments {
        *theirs.entry((g.address, g.total_size)).or_default() += 1;
    }
    x.segments
        .iter()
        .filter(|g| match theirs.get_mut(&(g.address, g.total_size)) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        })
        .map(|g| OnlySegment {
            address: g.address,
            total_size: g.total_size,
        })
        .collect()
}

/// Compares two decoded snapshots (labels `a`, `b`).
pub fn compare(
    a: impl Into<Source>,
    sa: &Snapshot,
    b: impl Into<Source>,
    sb: &Snapshot,
) -> DiffOutput {
    let reserved = |s: &Snapshot| sum(s.segments.iter().map(|g| g.total_size));
    let allocated = |s: &Snapshot| sum(s.segments.iter().map(|g| g.allocated_size));
    let (ra, rb) = (reserved(sa), reserved(sb));
    let (aa, ab) = (allocated(sa), allocated(sb));
    let (fa, fb) = (live_by_frame(sa), live_by_frame(sb));
    let mut rows: Vec<FrameBytes> = fa
        .keys()
        .chain(fb.keys())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .map(|k| FrameBytes {
            frame: k.clone(),
            bytes_a: fa.get(k).copied().unwrap_or(0),
            bytes_b: fb.get(k).copied().unwrap_or(0),
        })
        .collect();
    rows.sort_by(|x, y| {
        y.bytes_a
            .max(y.bytes_b)
            .cmp(&x.bytes_a.max(x.bytes_b))
            // By the wording the JSON holds, so the order reads as it always has.
            .then_with(|| x.frame.as_str().cmp(y.frame.as_str()))
    });
    if rows.len() > MAX_GROUPS {
        let rest = rows.split_off(MAX_GROUPS - 1);
        rows.push(FrameBytes {
            frame: FrameGroup::Other,
            bytes_a: sum(rest.iter().map(|r| r.bytes_a)),
            bytes_b: sum(rest.iter().map(|r| r.bytes_b)),
        });
    }
    DiffOutput {
        a: a.into(),
        b: b.into(),
        reserved_bytes: (ra, rb),
        allocated_bytes: (aa, ab),
        reserved_delta_bytes: i128::from(rb) - i128::from(ra),
        allocated_delta_bytes: i128::from(ab) - i128::from(aa),
        segments_only_in_a: only(sa, sb),
        segments_only_in_b: only(sb, sa),
        by_frame: rows,
    }
}

/// Reads both files (as [`snapshot::open`]) and compares them.
///
/// # Errors
/// [`Error::BadInput`] naming the file that cannot be read; [`Error::Cancelled`].
pub fn run_paths(a: &str, b: &str) -> Result<DiffOutput, Error> {
    let named = |which: &str, e: Error| match e {
        Error::BadInput(m) => Error::BadInput(format!("{which}: {m}")),
        other => other,
    };
    let (la, sa) = snapshot::open(a).map_err(|e| named("a", e))?;
    let (lb, sb) = snapshot::open(b).map_err(|e| named("b", e))?;
    Ok(compare(la, &sa, lb, &sb))
}

/// The scene's computation on validated values (`a`, `b`).
///
/// # Errors
/// As [`run_paths`].
pub fn run(v: &ParamValues) -> Result<DiffOutput, Error> {
    run_paths(v.text("a")?, v.text("b")?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(name: &str) -> String {
        format!(
            "{}/tests/data/snapshots/{name}.pickle",
            env!("CARGO_MANIFEST_DIR")
        )
    }

    #[test]
    fn cs336_against_verl_as_python_counts_them() {
        let d = run_paths(&data("torch2.11-cs336-a2"), &data("torch2.6-verl")).unwrap();
        // Reserved and allocated: the bundled snapshots' README table.
        assert_eq!(d.reserved_bytes, (14_180_941_824, 26_189_234_176));
        assert_eq!(d.reserved_delta_bytes, 26_189_234_176 - 14_180_941_824);
        assert_eq!(d.allocated_delta_bytes, 24_916_034_560 - 1_377_753_600);
        // No segment in common (Python: 216 and 127 (address, size) pairs, disjoint).
        assert_eq!(
            (d.segments_only_in_a.len(), d.segments_only_in_b.len()),
            (216, 127)
        );
        // Live bytes by innermost user frame, grouped with Python over the files' own
        // `active_allocated` blocks: verl's vLLM rollout `__init__` holds 22,300,669,952 B,
        // cs336's model.py line 39 `forward` 327,680,000 B, and 1,050,073,088 B of cs336 have
        // no user frame (their stacks are empty).
        let row = |f: &str| d.by_frame.iter().find(|r| r.frame.as_str() == f).unwrap();
        assert_eq!(
            d.by_frame[0].frame.as_str(),
            "__init__ (vllm_rollout/vllm_rollout_spmd.py:114)"
        );
        assert_eq!(
            (d.by_frame[0].bytes_a, d.by_frame[0].bytes_b),
            (0, 22_300_669_952)
        );
        assert_eq!(
            row("forward (cs336_basics/model.py:39)").bytes_a,
            327_680_000
        );
        assert_eq!(row(NO_USER_FRAME).bytes_a, 1_050_073_088);
        assert_eq!(row(NO_USER_FRAME).bytes_b, 318_254_592);
        assert_eq!(d.by_frame.len(), 3 + 6 - 1);
        // Every live byte is in one group.
        assert_eq!(sum(d.by_frame.iter().map(|r| r.bytes_a)), 1_377_753_600);
        assert_eq!(sum(d.by_frame.iter().map(|r| r.bytes_b)), 24_916_034_560);
    }

    #[test]
    fn a_duplicated_segment_is_listed_as_the_reserved_difference() {
        let p = data("torch2.11-mini-fixture");
        let a = crate::torch::snapshot::parse(&std::fs::read(&p).unwrap()).unwrap();
        let mut b = a.clone();
        let dup = b.segments[0].clone();
        b.segments.push(dup.clone());
        let d = compare("a", &a, "b", &b);
        assert_eq!(d.reserved_delta_bytes, i128::from(dup.total_size));
        assert!(d.segments_only_in_a.is_empty());
        assert_eq!(
            d.segments_only_in_b,
            vec![OnlySegment {
                address: dup.address,
                total_size: dup.total_size
            }]
        );
    }

    #[test]
    fn a_file_against_itself_differs_in_nothing() {
        let p = data("torch2.11-cs336-a2");
        let d = run_paths(&p, &p).unwrap();
        assert_eq!((d.reserved_delta_bytes, d.allocated_delta_bytes), (0, 0));
        assert!(d.segments_only_in_a.is_empty() && d.segments_only_in_b.is_empty());
        assert!(d.by_frame.iter().all(|r| r.bytes_a == r.bytes_b));
        // An unreadable b is named as b.
        match run_paths(&p, "/nonexistent.pickle") {
            Err(Error::BadInput(m)) => assert!(m.starts_with("b: "), "{m}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_builtin_fixture_and_the_frame_groups_read_in_both_languages() {
        let d = run_paths("", " ").unwrap();
        assert_eq!((&d.a, &d.b), (&Source::Builtin, &Source::Builtin));
        assert_eq!(d.a.text().zh, "（内置小样例）");
        let json = serde_json::to_value(&d).unwrap();
        // The JSON still names the fixture and the groups in English, as strings.
        assert_eq!(json["a"], "(built-in mini fixture)");
        let rows = [
            FrameGroup::NoUserFrame,
            FrameGroup::Other,
            FrameGroup::Frame("f (a.py:1)".into()),
        ];
        let json = serde_json::to_value(rows.clone()).unwrap();
        assert_eq!(
            json,
            serde_json::json!([
                "(no user frame: library or no stack recorded)",
                "(other frames)",
                "f (a.py:1)"
            ])
        );
        assert_eq!(
            rows.map(|r| r.text().zh.to_owned()),
            [
                "（没有用户栈帧：都在库里，或没有记录调用栈）".to_owned(),
                "（其余栈帧）".to_owned(),
                "f (a.py:1)".to_owned(),
            ]
        );
        // A file's name is shown as given in both languages.
        let file = Source::from("runs/a.pickle").text();
        assert_eq!(
            (file.en.as_str(), file.zh.as_str()),
            ("runs/a.pickle", "runs/a.pickle")
        );
    }
}
