//! Scene `memory-plan` (lecture §5.2; LightSeq2 paper fig. 8, right): the static plan computed
//! once before training. Tensors are taken in creation order; each goes into a block that is free
//! at its creation step (every tensor already in the block has died) and grows least; ties go to
//! the smallest such block, then the lowest index; with no free block a new one is opened. A
//! block's size is its largest tensor. Lecture case: 4 blocks of 1, 8, 1, 1 BLH = 11 BLH, the
//! lower bound of §5.1.

use crate::text::Text;
use serde::Serialize;

use super::arena::{self, ArenaPlan, PLANNERS, Placement, Planner};
use super::lifetimes::{self, AttentionShape, shape_params};
use super::{DTYPES, mib};
use crate::Error;
use crate::params::{ParamSpec, ParamValues};
use crate::scene::{Chapter, Cost, Featured, InputSpec, Scene, SceneDef, erase};

/// A tensor to place: its size and lifetime (steps are inclusive, 1-based or any ordered ints).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Lifetime {
    /// Name.
    pub name: String,
    /// Size in bytes.
    pub bytes: u64,
    /// Step that creates it.
    pub created: usize,
    /// Last step that uses it.
    pub last_use: usize,
}

/// One block of the plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanBlock {
    /// 0-based index (order of opening).
    pub index: usize,
    /// Size in bytes (its largest tensor).
    pub bytes: u64,
    /// Indices into the input tensors placed here, in placement order.
    pub tensors: Vec<usize>,
}

/// Greedy static planning (§5.2). Tensors are placed in the order given (creation order).
pub fn plan_blocks(tensors: &[Lifetime]) -> Vec<PlanBlock> {
    let mut blocks: Vec<PlanBlock> = Vec::new();
    // The last step of the tensors in each block.
    let mut busy_until: Vec<usize> = Vec::new();
    for (i, t) in tensors.iter().enumerate() {
        let best = blocks
            .iter()
            .enumerate()
            .filter(|(b, _)| busy_until[*b] < t.created)
            .min_by_key(|(b, blk)| (t.bytes.saturating_sub(blk.bytes), blk.bytes, *b))
            .map(|(b, _)| b);
        match best {
            Some(b) => {
                blocks[b].bytes = blocks[b].bytes.max(t.bytes);
                blocks[b].tensors.push(i);
                busy_until[b] = t.last_use;
            }
            None => {
                blocks.push(PlanBlock {
                    index: blocks.len(),
                    bytes: t.bytes,
                    tensors: vec![i],
                });
                busy_until.push(t.last_use);
            }
        }
    }
    blocks
}

/// A tensor's bar in the Gantt chart.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bar {
    /// Tensor name.
    pub name: &'static str,
    /// First step (1-based).
    pub start_step: usize,
    /// Last step (1-based, inclusive).
    pub end_step: usize,
    /// Size in BLH units.
    pub size_blh: f64,
    /// Size in bytes.
    pub bytes: u64,
}

/// A block of the self-attention plan (a Gantt row).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BlockRow {
    /// 0-based block index.
    pub index: usize,
    /// Size in BLH units.
    pub size_blh: f64,
    /// Size in bytes.
    pub bytes: u64,
    /// Its tensors in order.
    pub tensors: Vec<Bar>,
}

/// The scene's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanOutput {
    /// The shape.
    pub shape: AttentionShape,
    /// Block sizes in BLH units, in opening order (lecture: [1, 8, 1, 1]).
    pub blocks_blh: Vec<f64>,
    /// Σ blocks in BLH units.
    pub total_blh: f64,
    /// Σ blocks in bytes.
    pub total_bytes: u64,
    /// Σ blocks in MiB (2²⁰ bytes).
    pub total_mib: f64,
    /// 3BLH + max{BL²N, 3BLH} in BLH units.
    pub lower_bound_blh: f64,
    /// The bound in bytes.
    pub lower_bound_bytes: u64,
    /// Whether the plan reaches the bound.
    pub at_lower_bound: bool,
    /// Gantt rows: one per block, bars = tensors.
    pub blocks: Vec<BlockRow>,
    /// Steps on the x axis (10).
    pub steps: usize,
    /// Whether BL²N ≥ 3BLH here (the score block dominates).
    pub scores_dominate: bool,
    /// The shortest L at which BL²N ≥ 3BLH for this H and N (3·d_h; exercise 6).
    pub crossover_len: u64,
    /// The same ten temporaries placed in one arena by the `planner` parameter (offsets in
    /// bytes, [`arena`]).
    pub arena: ArenaPlan,
}

/// The parameters: the shape (B, L, H, N, dtype) and the planner of `--input` tensors.
const PARAMS: &[ParamSpec] = shape_params!(ParamSpec::choice(
    "planner",
    "planner (creation-order: the lecture's blocks; greedy-by-size: TFLite's)",
    "规划算法（creation-order：讲义的按创建顺序分块；greedy-by-size：TFLite 的按大小贪心）",
    PLANNERS,
    "creation-order",
));

/// The `planner` parameter.
///
/// # Errors
/// [`Error::InvalidParam`] naming `planner`.
pub fn planner(v: &ParamValues) -> Result<Planner, Error> {
    Planner::parse(v.text("planner")?)
}

/// What the scene takes from a file: the user's tensors.
pub const INPUT: InputSpec = InputSpec {
    keys: arena::INPUT_KEYS,
    example_params: &[],
    params: &["planner"],
    example: r#"{"tensors": [{"name": "x", "size_bytes": 4096, "first_op": 0, "last_op": 1}, {"name": "y", "size_bytes": 4096, "first_op": 1, "last_op": 2}, {"name": "z", "size_bytes": 8192, "first_op": 2, "last_op": 3}]}"#,
};

/// Plans the user's tensors (`--input`) with the `planner` parameter.
///
/// # Errors
/// [`Error::InvalidInput`] from [`arena::parse_tensors`]; [`Error::InvalidParam`] for the
/// planner.
pub fn run_input(v: &ParamValues, input: &serde_json::Value) -> Result<ArenaPlan, Error> {
    Ok(arena::plan(&arena::parse_tensors(input)?, planner(v)?))
}

/// `memory-plan`'s result: the lecture's ten temporaries, or the user's tensors. Serialises as
/// the variant's own value (the report's `result` has no tag).
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum PlanRun {
    /// The lecture's plan at the parameters' shape.
    Lecture(Box<PlanOutput>),
    /// The user's tensors (`--input`) in one arena.
    Input(ArenaPlan),
}

/// The scene's typed definition (`memory-plan`).
pub struct PlanScene;

impl SceneDef for PlanScene {
    const ID: &'static str = "memory-plan";
    type Output = PlanRun;

    fn run(v: &ParamValues) -> Result<Self::Output, Error> {
        Ok(PlanRun::Lecture(Box::new(run_with(
            &AttentionShape::from_values(v)?,
            planner(v)?,
        )?)))
    }

    fn run_input(v: &ParamValues, input: &serde_json::Value) -> Result<Self::Output, Error> {
        Ok(PlanRun::Input(run_input(v, input)?))
    }
}

/// The registry entry.
pub const SCENE: Scene = Scene {
    id: PlanScene::ID,
    section: "§5.2",
    title: Text::new(
        "Static plan: reusable blocks for backward's temporaries",
        "静态规划：反向临时张量共用的显存块",
    ),
    summary: Text::new(
        "Greedy planning packs the ten temporaries into a few blocks; at the lecture case 1 + 8 + 1 + 1 BLH = the lower bound.",
        "贪心规划把十个临时张量装进几个块；讲义的例子里 1 + 8 + 1 + 1 BLH = 下界。",
    ),
    params: PARAMS,
    run: erase::<PlanScene>(),
    input: Some(&INPUT),
    chapter: &Chapter::MEMORY,
    featured: Featured::Nothing,
    cost: Cost::Light,
};

/// Plans self-attention backward's temporaries at shape `s` (the arena by creation order).
///
/// # Errors
/// None for a validated shape (kept fallible for the scene signature).
pub fn run(s: &AttentionShape) -> Result<PlanOutput, Error> {
    run_with(s, Planner::CreationOrder)
}

/// [`run`], the arena placed by `planner`.
///
/// # Errors
/// None for a validated shape (kept fallible for the scene signature).
pub fn run_with(s: &AttentionShape, planner: Planner) -> Result<PlanOutput, Error> {
    let ts = lifetimes::tensors(s);
    let input: Vec<Lifetime> = ts
        .iter()
        .map(|t| Lifetime {
            name: t.name.to_owned(),
            bytes: t.bytes,
            created: t.created_step,
            last_use: t.last_use_step,
        })
        .collect();
    let planned = plan_blocks(&input);
    let arena = arena::plan(
        &ts.iter()
            .map(|t| Placement {
                name: t.name.to_owned(),
                offset: 0,
                size_bytes: t.bytes,
                first_op: t.created_step as u64,
                last_op: t.last_use_step as u64,
            })
            .collect::<Vec<_>>(),
        planner,
    );
    let blocks: Vec<BlockRow> = planned
        .iter()
        .map(|b| BlockRow {
            index: b.index,
            // Sizes in BLH from the tensors' own BLH sizes (exact, no float division of bytes).
            size_blh: b
                .tensors
                .iter()
                .map(|&i| ts[i].size_blh)
                .fold(0.0, f64::max),
            bytes: b.bytes,
            tensors: b
                .tensors
                .iter()
                .map(|&i| Bar {
                    name: ts[i].name,
                    start_step: ts[i].created_step,
                    end_step: ts[i].last_use_step,
                    size_blh: ts[i].size_blh,
                    bytes: ts[i].bytes,
                })
                .collect(),
        })
        .collect();
    let total_bytes: u64 = blocks.iter().map(|b| b.bytes).sum();
    let lower_bound_bytes = lifetimes::lower_bound_bytes(s);
    Ok(PlanOutput {
        shape: *s,
        blocks_blh: blocks.iter().map(|b| b.size_blh).collect(),
        total_blh: blocks.iter().map(|b| b.size_blh).sum(),
        total_bytes,
        total_mib: mib(total_bytes),
        lower_bound_blh: 3.0 + s.bl2n_in_blh().max(3.0),
        lower_bound_bytes,
        at_lower_bound: total_bytes == lower_bound_bytes,
        blocks,
        steps: lifetimes::STEPS.len(),
        scores_dominate: lifetimes::scores_dominate(s),
        crossover_len: lifetimes::crossover_len(s.hidden, s.heads),
        arena,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::Dtype;
    use proptest::prelude::*;

    fn lecture() -> AttentionShape {
        AttentionShape {
            batch: 16,
            len: 512,
            hidden: 1024,
            heads: 16,
            dtype: Dtype::F16,
        }
    }

    #[test]
    fn lecture_plan_is_four_blocks_at_the_bound() {
        let o = run(&lecture()).unwrap();
        let mut sorted = o.blocks_blh.clone();
        sorted.sort_by(f64::total_cmp);
        assert_eq!(sorted, vec![1.0, 1.0, 1.0, 8.0]);
        assert_eq!(o.total_blh, 11.0);
        assert_eq!(o.lower_bound_blh, 11.0);
        assert!(o.at_lower_bound);
        // The lecture's columns (§5.2).
        let names: Vec<Vec<&str>> = o
            .blocks
            .iter()
            .map(|b| b.tensors.iter().map(|t| t.name).collect())
            .collect();
        assert_eq!(
            names,
            vec![
                vec!["∇Y", "∇Y′", "∇Q", "∇Y″"],
                vec!["∇Z", "∇S", "∇Q̃∇K̃∇Ṽ"],
                vec!["∇V", "∇in"],
                vec!["∇K"],
            ]
        );
    }

    #[test]
    fn the_arena_planners_meet_the_lectures_bound_on_the_ten_temporaries() {
        // 1 BLH = 16 · 512 · 1024 elements × 2 bytes; the lecture's bound is 11 BLH (§5.1).
        let blh = 16 * 512 * 1024 * 2;
        for planner in [Planner::CreationOrder, Planner::GreedyBySize] {
            let o = run_with(&lecture(), planner).unwrap();
            assert_eq!(o.arena.lower_bound_peak_live, 11 * blh);
            assert_eq!(o.arena.total_bytes, 11 * blh, "{planner:?}");
        }
    }

    #[test]
    fn plan_reaches_the_bound_on_both_sides_of_the_crossover() {
        for len in [32, 128, 191, 192, 256, 1024, 2048] {
            let s = AttentionShape { len, ..lecture() };
            let o = run(&s).unwrap();
            assert!(o.at_lower_bound, "len {len}: {:?}", o.blocks_blh);
        }
    }

    #[test]
    fn hand_made_lifetimes() {
        // a [1,2] 10 B, b [2,3] 4 B, c [3,4] 6 B: c can't use a's block? a died at 2 < 3 → yes.
        let t = |n: &str, bytes, c, l| Lifetime {
            name: n.into(),
            bytes,
            created: c,
            last_use: l,
        };
        let blocks = plan_blocks(&[t("a", 10, 1, 2), t("b", 4, 2, 3), t("c", 6, 3, 4)]);
        assert_eq!(blocks.len(), 2);
        assert_eq!(blocks[0].tensors, vec![0, 2]);
        assert_eq!(blocks[0].bytes, 10);
        assert_eq!(blocks[1].bytes, 4);
    }

    proptest! {
        #[test]
        fn tensors_alive_together_never_share_a_block(
            spec in proptest::collection::vec((1u64..1000, 0usize..20, 0usize..5), 1..40)
        ) {
            let mut ts: Vec<Lifetime> = spec
                .iter()
                .enumerate()
                .map(|(i, &(bytes, c, d))| Lifetime { name: i.to_string(), bytes, created: c, last_use: c + d })
                .collect();
            ts.sort_by_key(|t| t.created);
            let blocks = plan_blocks(&ts);
            let total: u64 = blocks.iter().map(|b| b.bytes).sum();
            // Never worse than one block per tensor.
            prop_assert!(total <= ts.iter().map(|t| t.bytes).sum::<u64>());
            for b in &blocks {
                for (x, &i) in b.tensors.iter().enumerate() {
                    prop_assert!(ts[i].bytes <= b.bytes);
                    for &j in &b.tensors[x + 1..] {
                        let overlap = ts[i].created <= ts[j].last_use && ts[j].created <= ts[i].last_use;
                        prop_assert!(!overlap, "{} and {} share block {}", i, j, b.index);
                    }
                }
            }
            // And the plan is at least the peak of live bytes.
            let max_step = ts.iter().map(|t| t.last_use).max().unwrap_or(0);
            let peak = (0..=max_step)
                .map(|s| ts.iter().filter(|t| t.created <= s && s <= t.last_use).map(|t| t.bytes).sum::<u64>())
                .max()
                .unwrap_or(0);
            prop_assert!(total >= peak);
        }
    }
}
