//! `memory-plan` on the user's own tensors (`--input`): each tensor gets an offset in one arena,
//! by one of two planners, and the arena's size is compared with the lower bound — the peak of
//! live bytes over the ops.
//!
//! Lifetimes are closed intervals `[first_op, last_op]`: an op reads its inputs while it writes
//! its output, so a tensor whose last use is op k and a tensor op k creates are alive together
//! and must not share bytes. (A planner that treats lifetimes as half-open `[first, last)` lets
//! them share — and op k overwrites its own input.)
//!
//! - `creation-order` (the lecture's, §5.2; [`super::plan::plan_blocks`]): tensors in creation
//!   order, each into the reusable block that is free and grows least; blocks laid end to end.
//! - `greedy-by-size` (TFLite's `GreedyMemoryPlanner`, `tensorflow/lite/micro/memory_planner/
//!   greedy_memory_planner.cc`): tensors by size, largest first; for each, the already placed
//!   tensors whose lifetimes overlap it are scanned in increasing offset, the smallest gap
//!   between them that fits is taken, else the tensor goes after the highest overlapping end.
//!
//! Sizes are bytes.

#![deny(clippy::indexing_slicing)]

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::plan::{Lifetime, plan_blocks};
use crate::Error;
use crate::input::json;
use crate::text::Text;

/// Most tensors one input may hold.
pub const MAX_TENSORS: usize = 4096;

/// Largest op index (ops are numbered by the user; the live-bytes curve has one point per op).
pub const MAX_OP: u64 = 100_000;

/// Largest tensor (bytes): 2⁴⁰, one TiB — sums of a few thousand stay far from overflow.
pub const MAX_TENSOR_BYTES: u64 = 1 << 40;

/// The keys, one per line (the README's list says the same).
pub const INPUT_KEYS: Text<&'static str> = Text::new(
    "tensors: list of at most 4096 {name, size_bytes, first_op, last_op}, required\n\
     name: text, unique\n\
     size_bytes: whole number 1..=2^40 (bytes)\n\
     first_op, last_op: whole numbers 0..=100000, first_op ≤ last_op; closed: the tensor is alive at both",
    "tensors：至多 4096 个 {name, size_bytes, first_op, last_op} 的列表，必填\n\
     name：文本，不可重复\n\
     size_bytes：整数 1..=2^40（字节）\n\
     first_op、last_op：整数 0..=100000，first_op ≤ last_op；闭区间：两端的 op 上张量都活着",
);

/// A planner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Planner {
    /// The lecture's: creation order into reusable blocks.
    CreationOrder,
    /// TFLite's greedy by size.
    GreedyBySize,
}

/// The planner names the `planner` parameter takes.
pub const PLANNERS: &[&str] = &["creation-order", "greedy-by-size"];

impl Planner {
    /// Parses a [`PLANNERS`] name.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] naming `planner`.
    pub fn parse(name: &str) -> Result<Self, Error> {
        match name {
            "creation-order" => Ok(Planner::CreationOrder),
            "greedy-by-size" => Ok(Planner::GreedyBySize),
            other => Err(Error::invalid(
                "planner",
                other,
                crate::error::Expected::one_of(PLANNERS),
            )),
        }
    }
}

/// One placed tensor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Placement {
    /// Name.
    pub name: String,
    /// Offset in the arena (bytes).
    pub offset: u64,
    /// Size (bytes).
    pub size_bytes: u64,
    /// First op it is alive at.
    pub first_op: u64,
    /// Last op it is alive at (inclusive).
    pub last_op: u64,
}

/// Two tensors whose lifetimes meet at one op: one's last op is the other's first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Touching {
    /// The tensor that dies at `op` (read by it).
    pub input: String,
    /// The tensor created at `op` (written by it).
    pub output: String,
    /// The op.
    pub op: u64,
}

/// The plan of the user's tensors.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ArenaPlan {
    /// The planner used.
    pub planner: Planner,
    /// Each tensor's offset (bytes), by name.
    pub offsets: BTreeMap<String, u64>,
    /// The arena: the highest end of any tensor (bytes).
    pub total_bytes: u64,
    /// `(op, live bytes)` for every op from the first to the last.
    pub per_op_live_bytes: Vec<(u64, u64)>,
    /// The peak of live bytes: no plan can be smaller.
    pub lower_bound_peak_live: u64,
    /// The tensors in input order with their offsets.
    pub placements: Vec<Placement>,
    /// Pairs alive together only at one op (op k's input and output): closed lifetimes keep them
    /// apart; a half-open planner would let them share memory.
    pub touching: Vec<Touching>,
    /// How many such pairs there are (`touching` lists the first [`MAX_TOUCHING`]).
    pub touching_pairs: usize,
}

/// Most [`Touching`] pairs a plan lists.
pub const MAX_TOUCHING: usize = 64;

/// Reads `{tensors: [...]}`.
///
/// # Errors
/// [`Error::InvalidInput`] naming `tensors[i].key`: not an object, a missing or unknown key, a
/// size 0 or over [`MAX_TENSOR_BYTES`], ops out of range or `first_op > last_op`, a name given
/// twice; `tensors` empty or longer than [`MAX_TENSORS`].
pub fn parse_tensors(input: &Value) -> Result<Vec<Placement>, Error> {
    let map = json::object(input, &["tensors"])?;
    let items = json::list(json::required(map, "tensors")?, "tensors", MAX_TENSORS)?;
    let mut seen = BTreeMap::new();
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = |k: &str| format!("tensors[{i}].{k}");
        let t = json::object(item, &["name", "size_bytes", "first_op", "last_op"])
            .map_err(|e| rekey(e, &format!("tensors[{i}]")))?;
        let field = |k: &str| {
            t.get(k)
                .ok_or_else(|| Error::input_fixed(at(k), "missing (required)", "缺失（必填）"))
        };
        let name = json::string(field("name")?, &at("name"))?.to_owned();
        if let Some(j) = seen.insert(name.clone(), i) {
            return Err(Error::input(
                at("name"),
                Text::new(
                    format!("`{name}` is already the name of tensors[{j}]"),
                    format!("`{name}` 已是 tensors[{j}] 的名字"),
                ),
            ));
        }
        let size_bytes =
            json::integer(field("size_bytes")?, &at("size_bytes"), 1, MAX_TENSOR_BYTES)?;
        let first_op = json::integer(field("first_op")?, &at("first_op"), 0, MAX_OP)?;
        let last_op = json::integer(field("last_op")?, &at("last_op"), 0, MAX_OP)?;
        if last_op < first_op {
            return Err(Error::input(
                at("last_op"),
                Text::new(
                    format!("{last_op} is before first_op {first_op}"),
                    format!("{last_op} 早于 first_op {first_op}"),
                ),
            ));
        }
        out.push(Placement {
            name,
            offset: 0,
            size_bytes,
            first_op,
            last_op,
        });
    }
    Ok(out)
}

/// An error of a nested object with its key prefixed by where it sits.
fn rekey(e: Error, prefix: &str) -> Error {
    match e {
        Error::InvalidInput { key, problem } if key.is_empty() => Error::input(prefix, problem),
        Error::InvalidInput { key, problem } => Error::input(format!("{prefix}.{key}"), problem),
        other => other,
    }
}

fn overlap(a: &Placement, b: &Placement) -> bool {
    a.first_op <= b.last_op && b.first_op <= a.last_op
}

/// Offsets by the lecture's creation-order planner: blocks from [`plan_blocks`] laid end to end.
fn creation_order(ts: &[Placement]) -> Vec<u64> {
    let mut order: Vec<usize> = (0..ts.len()).collect();
    order.sort_by_key(|&i| ts.get(i).map(|t| (t.first_op, t.last_op)));
    let lifetimes: Vec<Lifetime> = order
        .iter()
        .filter_map(|&i| ts.get(i))
        .map(|t| Lifetime {
            name: t.name.clone(),
            bytes: t.size_bytes,
            // Ops may start at 0; plan_blocks compares `busy_until < created`, which is the
            // closed-interval test for any ordered integers.
            created: t.first_op as usize,
            last_use: t.last_op as usize,
        })
        .collect();
    let mut offsets = vec![0; ts.len()];
    let mut base = 0u64;
    for b in plan_blocks(&lifetimes) {
        for k in &b.tensors {
            if let Some(slot) = order.get(*k).and_then(|&i| offsets.get_mut(i)) {
                *slot = base;
            }
        }
        base += b.bytes;
    }
    offsets
}

/// Offsets by TFLite's greedy-by-size planner.
fn greedy_by_size(ts: &[Placement]) -> Vec<u64> {
    let mut order: Vec<usize> = (0..ts.len()).collect();
    // Largest first; ties in input order (a stable sort), as TFLite's `ReverseSortInPlace`
    // keeps equal sizes in the order they were added.
    order.sort_by_key(|&i| std::cmp::Reverse(ts.get(i).map_or(0, |t| t.size_bytes)));
    let mut offsets = vec![0u64; ts.len()];
    // (offset, end, index) of the tensors placed so far.
    let mut placed: Vec<(u64, u64, usize)> = Vec::new();
    for &i in &order {
        let Some(t) = ts.get(i) else { continue };
        let mut prior: Vec<(u64, u64)> = placed
            .iter()
            .filter(|&&(_, _, j)| ts.get(j).is_some_and(|p| overlap(p, t)))
            .map(|&(o, e, _)| (o, e))
            .collect();
        prior.sort_unstable();
        let mut candidate = 0u64;
        let mut best: Option<(u64, u64)> = None; // (gap, offset)
        for (o, e) in prior {
            if candidate + t.size_bytes <= o {
                let gap = o - candidate;
                if best.is_none_or(|(g, _)| gap < g) {
                    best = Some((gap, candidate));
                }
            }
            candidate = candidate.max(e);
        }
        let offset = best.map_or(candidate, |(_, o)| o);
        if let Some(slot) = offsets.get_mut(i) {
            *slot = offset;
        }
        placed.push((offset, offset + t.size_bytes, i));
    }
    offsets
}

/// Plans `tensors` with `planner`.
pub fn plan(tensors: &[Placement], planner: Planner) -> ArenaPlan {
    let offsets = match planner {
        Planner::CreationOrder => creation_order(tensors),
        Planner::GreedyBySize => greedy_by_size(tensors),
    };
    let placements: Vec<Placement> = tensors
        .iter()
        .zip(&offsets)
        .map(|(t, &offset)| Placement {
            offset,
            ..t.clone()
        })
        .collect();
    let first = placements.iter().map(|t| t.first_op).min().unwrap_or(0);
    let last = placements.iter().map(|t| t.last_op).max().unwrap_or(0);
    // Live bytes per op by a sweep (+size at first_op, −size after last_op): ops × tensors
    // would be 4·10⁸ steps at the input's bounds.
    let span = (last - first) as usize + 2;
    let mut delta = vec![0i128; span];
    for t in &placements {
        if let Some(d) = delta.get_mut((t.first_op - first) as usize) {
            *d += i128::from(t.size_bytes);
        }
        if let Some(d) = delta.get_mut((t.last_op - first) as usize + 1) {
            *d -= i128::from(t.size_bytes);
        }
    }
    let mut live = 0i128;
    let per_op_live_bytes: Vec<(u64, u64)> = (first..=last)
        .zip(&delta)
        .map(|(op, d)| {
            live += d;
            (op, u64::try_from(live).unwrap_or(0))
        })
        .collect();
    let mut touching = Vec::new();
    let mut touching_pairs = 0usize;
    for a in &placements {
        for b in &placements {
            if a.last_op == b.first_op && a.first_op < b.first_op {
                touching_pairs += 1;
                if touching.len() < MAX_TOUCHING {
                    touching.push(Touching {
                        input: a.name.clone(),
                        output: b.name.clone(),
                        op: a.last_op,
                    });
                }
            }
        }
    }
    ArenaPlan {
        planner,
        offsets: placements
            .iter()
            .map(|t| (t.name.clone(), t.offset))
            .collect(),
        total_bytes: placements
            .iter()
            .map(|t| t.offset + t.size_bytes)
            .max()
            .unwrap_or(0),
        lower_bound_peak_live: per_op_live_bytes.iter().map(|&(_, b)| b).max().unwrap_or(0),
        per_op_live_bytes,
        placements,
        touching,
        touching_pairs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn t(name: &str, size_bytes: u64, first_op: u64, last_op: u64) -> Placement {
        Placement {
            name: name.into(),
            offset: 0,
            size_bytes,
            first_op,
            last_op,
        }
    }

    fn key_of(e: Error) -> String {
        match e {
            Error::InvalidInput { key, .. } => key,
            other => panic!("expected InvalidInput, got {other:?}"),
        }
    }

    #[test]
    fn greedy_by_size_takes_the_smallest_gap_that_fits() {
        // big [0,3] 100 B at 0; a [0,0] 40 B → after big at 100; c [2,3] 30 B → after big at 100;
        // d [1,1] 20 B overlaps big only (a died at 0, c starts at 2): 100.
        let ts = [
            t("big", 100, 0, 3),
            t("a", 40, 0, 0),
            t("c", 30, 2, 3),
            t("d", 20, 1, 1),
        ];
        let p = plan(&ts, Planner::GreedyBySize);
        assert_eq!(p.offsets["big"], 0);
        assert_eq!(p.offsets["a"], 100);
        assert_eq!(p.offsets["c"], 100);
        assert_eq!(p.offsets["d"], 100);
        assert_eq!(p.total_bytes, 140);
        assert_eq!(p.lower_bound_peak_live, 140);
        // A gap: x [0,2] 50 at 0, y [0,0] 30 at 50, z [1,2] 30: overlaps x (0..50) only → 50.
        // Then w [0,2] 10 overlaps x, y, z: gaps none between 0..50 and 50..80 → after at 80.
        let ts = [
            t("x", 50, 0, 2),
            t("y", 30, 0, 0),
            t("z", 30, 1, 2),
            t("w", 10, 0, 2),
        ];
        let p = plan(&ts, Planner::GreedyBySize);
        assert_eq!(
            (p.offsets["y"], p.offsets["z"], p.offsets["w"]),
            (50, 50, 80)
        );
    }

    #[test]
    fn a_smaller_gap_is_preferred_to_a_larger_one() {
        // Sizes descending: x1 0..100, x2 100..190, y 190..270, x3 270..340, z 340..400 (all
        // alive at op 0, so each goes after the last). w [1, 9] overlaps only y and z: the gaps
        // are 0..190 (190 B) and 270..340 (70 B); it takes the smaller, at 270.
        let ts = [
            t("x1", 100, 0, 0),
            t("x2", 90, 0, 0),
            t("y", 80, 0, 9),
            t("x3", 70, 0, 0),
            t("z", 60, 0, 9),
            t("w", 25, 1, 9),
        ];
        let p = plan(&ts, Planner::GreedyBySize);
        let at: Vec<u64> = ["x1", "x2", "y", "x3", "z", "w"]
            .iter()
            .map(|n| p.offsets[*n])
            .collect();
        assert_eq!(at, vec![0, 100, 190, 270, 340, 270]);
        assert_eq!(p.total_bytes, 400);
    }

    #[test]
    fn creation_order_lays_blocks_end_to_end() {
        // The plan.rs hand case: a [1,2] 10, b [2,3] 4, c [3,4] 6 → blocks {a, c} 10 B, {b} 4 B.
        let ts = [t("a", 10, 1, 2), t("b", 4, 2, 3), t("c", 6, 3, 4)];
        let p = plan(&ts, Planner::CreationOrder);
        assert_eq!((p.offsets["a"], p.offsets["b"], p.offsets["c"]), (0, 10, 0));
        assert_eq!(p.total_bytes, 14);
        assert_eq!(p.per_op_live_bytes, vec![(1, 10), (2, 14), (3, 10), (4, 6)]);
        assert_eq!(p.touching.len(), 2);
    }

    #[test]
    fn bad_tensors_are_refused_naming_the_key() {
        let bad = |v: Value| key_of(parse_tensors(&v).unwrap_err());
        assert_eq!(bad(json!({})), "tensors");
        assert_eq!(bad(json!({"tensors": []})), "tensors");
        let ok = json!({"name": "a", "size_bytes": 4, "first_op": 0, "last_op": 1});
        assert_eq!(
            bad(
                json!({"tensors": [ok, {"name": "a", "size_bytes": 4, "first_op": 0, "last_op": 1}]})
            ),
            "tensors[1].name"
        );
        assert_eq!(
            bad(json!({"tensors": [{"name": "a", "size_bytes": 0, "first_op": 0, "last_op": 1}]})),
            "tensors[0].size_bytes"
        );
        assert_eq!(
            bad(json!({"tensors": [{"name": "a", "size_bytes": 4, "first_op": 2, "last_op": 1}]})),
            "tensors[0].last_op"
        );
        assert_eq!(
            bad(json!({"tensors": [{"name": "a", "size_bytes": 4, "first_op": 0}]})),
            "tensors[0].last_op"
        );
        assert_eq!(
            bad(json!({"tensors": [{"name": "a", "size": 4, "first_op": 0, "last_op": 1}]})),
            "tensors[0].size"
        );
        assert_eq!(bad(json!({"tensors": [7]})), "tensors[0]");
    }

    proptest! {
        #[test]
        fn no_two_live_tensors_share_bytes_and_the_arena_covers_the_peak(
            spec in proptest::collection::vec((1u64..1000, 0u64..20, 0u64..6), 1..40),
            greedy in any::<bool>(),
        ) {
            let ts: Vec<Placement> = spec
                .iter()
                .enumerate()
                .map(|(i, &(s, f, d))| t(&i.to_string(), s, f, f + d))
                .collect();
            let planner = if greedy { Planner::GreedyBySize } else { Planner::CreationOrder };
            let p = plan(&ts, planner);
            for (i, a) in p.placements.iter().enumerate() {
                for b in &p.placements[i + 1..] {
                    if overlap(a, b) {
                        let apart = a.offset + a.size_bytes <= b.offset || b.offset + b.size_bytes <= a.offset;
                        prop_assert!(apart, "{} and {} overlap in memory", a.name, b.name);
                    }
                }
            }
            prop_assert!(p.total_bytes >= p.lower_bound_peak_live);
            prop_assert!(p.total_bytes <= ts.iter().map(|t| t.size_bytes).sum::<u64>());
        }
    }
}

#[cfg(test)]
mod preset_tests {
    use super::*;

    #[test]
    fn preset_closed_lifetimes_keep_an_ops_input_and_output_apart() {
        let p = crate::presets::find("memory-plan-closed-lifetimes").unwrap();
        let ts = parse_tensors(p.session.input.as_ref().unwrap()).unwrap();
        for planner in [Planner::CreationOrder, Planner::GreedyBySize] {
            let plan = plan(&ts, planner);
            // At op 1 both x and gelu(x) (4096 B each) are alive: 8192 B, and they are apart.
            assert_ne!(plan.offsets["x"], plan.offsets["gelu(x)"]);
            assert_ne!(plan.offsets["gelu(x)"], plan.offsets["y"]);
            // x (dead after op 1) and y (born at op 2) may share.
            assert_eq!(plan.offsets["x"], plan.offsets["y"]);
            assert_eq!(plan.total_bytes, 2 * 4096);
            assert_eq!(plan.lower_bound_peak_live, 2 * 4096);
            let pairs: Vec<(&str, &str, u64)> = plan
                .touching
                .iter()
                .map(|t| (t.input.as_str(), t.output.as_str(), t.op))
                .collect();
            assert_eq!(pairs, vec![("x", "gelu(x)", 1), ("gelu(x)", "y", 2)]);
        }
    }
}
