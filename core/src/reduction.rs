//! Scene `reduction` (lecture §2.2): a block reduction of K values per thread, run two ways —
//! all K reduced together in one tree (one pair of barriers), and one after the other (a pair
//! per value) — so the barrier count the LayerNorm-backward rewrite saves is visible.
//!
//! The kernels, in CUDA terms (LightSeq's `blockReduce` shape):
//!
//! 1. [`warp_sum`]: each warp sums a lane vector with the butterfly `__shfl_xor_sync` at masks
//!    `warp/2, …, 2, 1` (16, 8, 4, 2, 1 for 32 lanes); afterwards every lane holds the sum.
//! 2. lane 0 of warp `w` writes its sum to `shared[k][w]`; `__syncthreads()` (barrier 1);
//! 3. warp 0 loads `shared[k][lane]` for `lane < warps` (0 elsewhere) and runs [`warp_sum`];
//!    lane 0 writes the block sum to `shared[k][0]`; `__syncthreads()` (barrier 2);
//! 4. every thread reads `shared[k][0]` (a broadcast).
//!
//! Summation is in f32, as a kernel does; the reference is the f64 sum of the same f32 inputs.
//!
//! The operation is a parameter, `op` = sum or max: lanes that hold no value (a partial last
//! warp, warp 0's lanes past the number of warps) enter the butterfly as the operation's
//! *identity* — 0 for the sum, −∞ for the max (CUDA: `-INFINITY`, PyTorch's softmax kernels'
//! `-std::numeric_limits<T>::infinity()`). The result also carries what the same kernel gives
//! with 0 in those lanes, the classic slip for a max over negative values.
//!
//! Input (`--input`, [`INPUT`]): `{values: […]}` (one set, K = 1) or `{values: [[…], …]}`
//! (K ≤ 8 sets), each with one value per thread.

use crate::text::Text;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::Error;
use crate::input::json;
use crate::params::{ParamSpec, ParamValues, check_int};
use crate::scene::{Chapter, Cost, Featured, InputSpec, Scene, SceneDef, erase};
use crate::simt::shuffle::ShuffleMode;
use crate::simt::trace::TraceSummary;
use crate::simt::{Block, BlockShape, Mask, Trace};

/// The scene's parameters (validated).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ReductionParams {
    /// Threads per block, 1..=1024 and at most `warp²` (warp 0 reduces one partial per warp);
    /// a partial last warp is masked, its missing lanes contributing the sum's identity, 0.
    pub threads: u32,
    /// Values each thread contributes (K), reduced into K block sums.
    pub values: u32,
    /// Lanes per warp (power of two, 4..=64).
    pub warp: u32,
    /// Seed of the inputs (uniform in [−1, 1)).
    pub seed: u64,
    /// The reduction: sum or max.
    pub op: ReduceOp,
}

/// The operation a reduction applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReduceOp {
    /// a + b, identity 0.
    Sum,
    /// max(a, b), identity −∞.
    Max,
}

impl ReduceOp {
    /// The identity: `op(identity, x) = x` for every x (0 for the sum, −∞ for the max).
    pub fn identity(self) -> f32 {
        match self {
            ReduceOp::Sum => 0.0,
            ReduceOp::Max => f32::NEG_INFINITY,
        }
    }

    /// `op(a, b)` in f32.
    pub fn apply(self, a: f32, b: f32) -> f32 {
        match self {
            ReduceOp::Sum => a + b,
            ReduceOp::Max => a.max(b),
        }
    }

    /// The reduction of `v` in f64 (the reference): the exact maximum, or the f64 sum.
    pub fn reference(self, v: &[f32]) -> f64 {
        match self {
            ReduceOp::Sum => v.iter().map(|x| f64::from(*x)).sum(),
            ReduceOp::Max => v
                .iter()
                .map(|x| f64::from(*x))
                .fold(f64::NEG_INFINITY, f64::max),
        }
    }

    /// `sum` or `max`.
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Max => "max",
        }
    }
}

const PARAMS: &[ParamSpec] = &[
    ParamSpec::int("threads", "threads per block", "每块线程数", 1, 1024, 256).log(),
    ParamSpec::int(
        "values",
        "values reduced per thread (K)",
        "每线程归约的值个数 K",
        1,
        8,
        2,
    ),
    ParamSpec::choice(
        "warp",
        "warp width (lanes)",
        "线程束宽度（lane）",
        &["4", "8", "16", "32", "64"],
        "32",
    ),
    ParamSpec::int("seed", "random seed", "随机种子", 0, 1 << 31, 1),
    ParamSpec::choice(
        "op",
        "operation (sum: identity 0; max: identity −∞)",
        "运算（sum：单位元 0；max：单位元 −∞）",
        &["sum", "max"],
        "sum",
    ),
];

/// The scene's typed definition (`reduction`).
pub struct ReductionScene;

impl SceneDef for ReductionScene {
    const ID: &'static str = "reduction";
    type Output = ReductionOutput;

    fn run(v: &ParamValues) -> Result<Self::Output, Error> {
        run(&ReductionParams::from_values(v)?)
    }

    fn run_input(v: &ParamValues, input: &serde_json::Value) -> Result<Self::Output, Error> {
        let p = ReductionParams::from_values(v)?;
        run_on(&p, read_values(input, p.threads)?)
    }
}

/// The registry entry.
pub const SCENE: Scene = Scene {
    id: ReductionScene::ID,
    section: "§2.2",
    title: Text::new(
        "Reductions: warp butterfly and block reduction",
        "归约：线程束蝶形归约与块内归约",
    ),
    summary: Text::new(
        "K values reduced together need one pair of barriers; reduced one after the other, K pairs.",
        "K 个值一起归约只要一对栅栏；一个接一个归约要 K 对。",
    ),
    params: PARAMS,
    run: erase::<ReductionScene>(),
    input: Some(&INPUT),
    chapter: &Chapter::FOUNDATIONS,
    featured: Featured::Event(6),
    cost: Cost::Light,
};

/// The scene's input: the values each thread holds.
pub const INPUT: InputSpec = InputSpec {
    keys: Text::new(
        "values: […] one finite number per thread (threads of them), or [[…], …] up to 8 such \
         sets (K); stored as f32",
        "values: […] 每个线程一个有限数（共 threads 个），或 [[…], …] 至多 8 组（K）；以 f32 存储",
    ),
    example_params: &[("threads", "8")],
    params: &["threads", "warp", "op"],
    example: r#"{"values": [-3, -1.5, -2, -0.5, -4, -2.5, -1, -3.5]}"#,
};

/// Reads `{values: […] | [[…], …]}`: K sets of `threads` f32 values.
///
/// # Errors
/// [`Error::InvalidInput`] naming `values` (or `values[k]`, `values[k][t]`): missing, empty,
/// more than 8 sets, a set whose length is not `threads`, a value that is not a finite number
/// or overflows f32.
pub fn read_values(input: &serde_json::Value, threads: u32) -> Result<Vec<Vec<f32>>, Error> {
    let map = json::object(input, &["values"])?;
    let v = json::required(map, "values")?;
    let nested = v
        .as_array()
        .and_then(|a| a.first())
        .is_some_and(serde_json::Value::is_array);
    let sets = if nested {
        json::list(v, "values", 8)?;
        json::matrix(v, "values", json::number)?
    } else {
        vec![json::vector(v, "values", json::number)?]
    };
    let key = |k: usize| {
        if nested {
            format!("values[{k}]")
        } else {
            "values".to_owned()
        }
    };
    sets.iter()
        .enumerate()
        .map(|(k, set)| {
            if set.len() != threads as usize {
                // Suggest a thread count only where one would take this many values.
                let (advice, advice_zh) = if (1..=1024).contains(&set.len()) {
                    (
                        format!(" (or --set threads={})", set.len()),
                        format!("（或 `--set threads={}`）", set.len()),
                    )
                } else {
                    (
                        " (a block has at most 1024 threads: give one value per thread, \
                         1 ..= 1024)"
                            .to_owned(),
                        "（一个线程块至多 1024 个线程：每个线程一个值，1 ..= 1024）".to_owned(),
                    )
                };
                return Err(Error::input(
                    key(k),
                    Text::new(
                        format!(
                            "{} values but threads = {threads}: one value per thread{advice}",
                            set.len(),
                        ),
                        format!(
                            "{} 个值，而 threads = {threads}：每个线程一个值{advice_zh}",
                            set.len(),
                        ),
                    ),
                ));
            }
            set.iter()
                .enumerate()
                .map(|(t, &x)| {
                    let f = x as f32;
                    if f.is_finite() {
                        Ok(f)
                    } else {
                        Err(Error::input(
                            format!("{}[{t}]", key(k)),
                            Text::new(
                                format!("{x} overflows f32 (largest finite ≈ 3.4e38)"),
                                format!("{x} 超出 f32 的范围（最大有限值 ≈ 3.4e38）"),
                            ),
                        ))
                    }
                })
                .collect()
        })
        .collect()
}

impl ReductionParams {
    /// Reads and cross-checks the values.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] when `threads` exceeds `warp²` or 1024.
    pub fn from_values(v: &ParamValues) -> Result<Self, Error> {
        let warp: u32 = v.text("warp")?.parse().map_err(|_| {
            Error::invalid(
                "warp",
                v.text("warp").unwrap_or(""),
                crate::error::Expected::either(&["4", "8", "16", "32", "64"]),
            )
        })?;
        let p = ReductionParams {
            threads: v.int("threads")? as u32,
            values: v.int("values")? as u32,
            warp,
            seed: v.int("seed")? as u64,
            op: match v.text("op")? {
                "max" => ReduceOp::Max,
                "sum" => ReduceOp::Sum,
                other => {
                    return Err(Error::invalid(
                        "op",
                        other,
                        crate::error::Expected::either(&["sum", "max"]),
                    ));
                }
            },
        };
        p.validate()?;
        Ok(p)
    }

    /// Checks the cross-parameter rules.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] naming the offending parameter.
    pub fn validate(&self) -> Result<(), Error> {
        BlockShape::new(self.threads, self.warp)?;
        if self.warp < 4 {
            return Err(Error::invalid(
                "warp",
                self.warp,
                crate::error::Expected::either(&["4", "8", "16", "32", "64"]),
            ));
        }
        let max = (self.warp * self.warp).min(1024);
        if self.threads > max {
            return Err(Error::invalid(
                "threads",
                self.threads,
                crate::error::Expected::custom(
                    format!(
                        "expected at most {max}: warp 0 reduces one partial sum per warp, so \
                         warps ≤ {}",
                        self.warp
                    ),
                    format!(
                        "应不大于 {max}：0 号线程束为每个线程束归约一个部分和，所以线程束数 ≤ {}",
                        self.warp
                    ),
                ),
            ));
        }
        check_int(PARAMS, "values", self.values)
    }
}

/// What the scene computes.
#[derive(Debug, Clone, Serialize)]
pub struct ReductionOutput {
    /// Barriers when the K values travel up one tree together.
    pub block_barriers_together: u32,
    /// Barriers when the K values are reduced one after the other.
    pub block_barriers_sequential: u32,
    /// The operation.
    pub op: ReduceOp,
    /// The identity the empty lanes took (0 for the sum, −∞ for the max; JSON `"-inf"`).
    #[serde(serialize_with = "json::ser_extended_f32")]
    pub identity: f32,
    /// The K block results (f32; sums, or maxima for `op = max`) from the together run.
    pub sums: Vec<f32>,
    /// The K block results (f32) from the sequential run.
    pub sums_sequential: Vec<f32>,
    /// The same reduction in f64 on the same f32 inputs.
    pub reference_sums: Vec<f64>,
    /// The K results of the together run with 0 in the empty lanes instead of the identity —
    /// the same as [`ReductionOutput::sums`] for the sum, wrong for a max over negative values
    /// whenever a lane is empty.
    pub sums_zero_identity: Vec<f32>,
    /// Lanes that entered a butterfly holding the identity: the partial last warp's missing
    /// lanes plus warp 0's lanes past the number of warps in the second stage.
    pub identity_lanes: u32,
    /// Largest |result − reference| over both runs.
    pub max_abs_error: f64,
    /// Warps per block.
    pub warps: u32,
    /// Butterfly steps per warp sum, log2(warp).
    pub shuffle_steps: u32,
    /// Totals of the together run.
    pub summary_together: TraceSummary,
    /// Totals of the sequential run.
    pub summary_sequential: TraceSummary,
    /// The inputs: `inputs[k][thread]`.
    #[serde(skip)]
    pub inputs: Vec<Vec<f32>>,
    /// The together run, warp by warp.
    #[serde(skip)]
    pub trace_together: Trace,
    /// The sequential run.
    #[serde(skip)]
    pub trace_sequential: Trace,
}

/// The butterfly sum of `values` (one per lane) on warp `warp`: `log2(warp_size)` rounds of
/// `shfl_xor` at masks `warp/2 … 1`, each followed by an add. Every lane ends with the sum.
/// `tag` names the value in labels; levels count from 1 (level 0 = the inputs).
pub fn warp_sum(block: &mut Block, warp: u32, values: &[f32], tag: &str) -> Vec<f32> {
    warp_reduce(block, warp, values, tag, ReduceOp::Sum)
}

/// [`warp_sum`] with any [`ReduceOp`]: each butterfly round combines a lane's value with its
/// partner's by `op`.
pub fn warp_reduce(
    block: &mut Block,
    warp: u32,
    values: &[f32],
    tag: &str,
    op: ReduceOp,
) -> Vec<f32> {
    let n = block.shape().warp_size;
    let active = Mask::first(n);
    let mut v = values.to_vec();
    let mut mask = n / 2;
    let mut level = 1;
    while mask >= 1 {
        let other = block.shfl(
            warp,
            ShuffleMode::Xor,
            mask,
            &v,
            active,
            Text::new(
                format!("{tag}: partner lane ^ {mask}"),
                format!("{tag}: 伙伴 lane ^ {mask}"),
            ),
            Some(level),
        );
        v = v
            .iter()
            .zip(&other)
            .map(|(a, b)| op.apply(*a, *b))
            .collect();
        let shown: Vec<f64> = v.iter().map(|x| f64::from(*x)).collect();
        let what = match op {
            ReduceOp::Sum => ("add partner's value", "加上伙伴的值"),
            ReduceOp::Max => ("max with partner's value", "与伙伴的值取 max"),
        };
        block.compute(
            warp,
            &shown,
            active,
            Text::new(format!("{tag}: {}", what.0), format!("{tag}: {}", what.1)),
            Some(level),
        );
        mask /= 2;
        level += 1;
    }
    v
}

/// One block reduction of the value sets `ks` (indices into `inputs`) reduced together:
/// `inputs[k][thread]` is thread `thread`'s value of set `k` (one per thread of the block);
/// set `k`'s partials live in `shared[k][…]` at byte `4·(k·row_stride + slot)`. Two barriers
/// per call, whatever `ks.len()`. Returns the block sum of each set in `ks`, in f32. A partial
/// last warp loads only its existing lanes; the others enter the butterfly as 0, the identity
/// of the sum (as CUDA code does with `v = (tid < n) ? x[tid] : 0`).
///
/// # Errors
/// [`Error::InvalidParam`] (`threads`) when the block has more warps than a warp has lanes
/// (warp 0 could not hold every partial); [`Error::BadInput`] when a set in `ks` is missing
/// from `inputs` or holds fewer values than the block has threads; the shared-memory model's
/// errors (an address past the block's shared memory).
pub fn block_reduce(
    block: &mut Block,
    inputs: &[Vec<f32>],
    ks: &[usize],
    row_stride: u64,
) -> Result<Vec<f32>, Error> {
    block_reduce_with(block, inputs, ks, row_stride, ReduceOp::Sum, 0.0)
}

/// [`block_reduce`] with any [`ReduceOp`], the empty lanes (a partial last warp's missing
/// lanes, warp 0's lanes past the number of warps) holding `pad` — the op's
/// [`ReduceOp::identity`] for a correct kernel, anything else to show what a wrong one does.
///
/// # Errors
/// As [`block_reduce`].
pub fn block_reduce_with(
    block: &mut Block,
    inputs: &[Vec<f32>],
    ks: &[usize],
    row_stride: u64,
    op: ReduceOp,
    pad: f32,
) -> Result<Vec<f32>, Error> {
    let shape = block.shape();
    let (n, warps) = (shape.warp_size, shape.warps());
    if warps > n {
        return Err(Error::invalid(
            "threads",
            shape.threads,
            crate::error::Expected::custom(
                format!(
                    "expected at most {} threads: warp 0 reduces one partial per warp, so at \
                     most {n} warps of {n} lanes",
                    n * n
                ),
                format!(
                    "线程数应不大于 {}：0 号线程束为每个线程束归约一个部分和，所以至多 {n} 个\
                     {n} 条通道的线程束",
                    n * n
                ),
            ),
        ));
    }
    let threads = shape.threads as usize;
    for &k in ks {
        if inputs.get(k).is_none_or(|v| v.len() < threads) {
            return Err(Error::BadInput(format!(
                "block_reduce: value set {k} needs {threads} values, one per thread"
            )));
        }
    }
    let value = |k: usize, t: u32| {
        inputs
            .get(k)
            .and_then(|v| v.get(t as usize))
            .copied()
            .unwrap_or(0.0)
    };
    let lane0: Vec<Option<u64>> = (0..n).map(|l| (l == 0).then_some(0)).collect();
    let at = |k: usize, col: u64| 4 * (k as u64 * row_stride + col);
    for w in 0..warps {
        for &k in ks {
            let exists = |l: u32| w * n + l < shape.threads;
            let lanes: Vec<f32> = (0..n)
                .map(|l| if exists(l) { value(k, w * n + l) } else { pad })
                .collect();
            let shown: Vec<f64> = lanes.iter().map(|x| f64::from(*x)).collect();
            let threads = u64::from(shape.threads);
            let gaddr: Vec<_> = (0..n)
                .map(|l| exists(l).then(|| 4 * (k as u64 * threads + u64::from(w * n + l))))
                .collect();
            block.global(
                w,
                false,
                &gaddr,
                4,
                &shown,
                Text::new(
                    format!("v{k}: load one value per thread"),
                    format!("v{k}: 每个线程载入一个值"),
                ),
            );
            let live = shape.threads.saturating_sub(w * n).min(n);
            if live < n {
                // Shown as its own step so the butterfly starts from what the lanes hold.
                block.compute(
                    w,
                    &shown,
                    Mask::first(n),
                    Text::new(
                        format!("v{k}: lanes ≥ {live} hold no thread and take {pad}"),
                        format!("v{k}: lane ≥ {live} 没有线程，取 {pad}"),
                    ),
                    Some(0),
                );
            }
            let s = warp_reduce(block, w, &lanes, &format!("v{k}"), op);
            let addr: Vec<_> = lane0
                .iter()
                .map(|a| a.map(|_| at(k, u64::from(w))))
                .collect();
            block.st_shared(
                w,
                &addr,
                4,
                &[f64::from(s[0])],
                &format!("v{k}: lane 0 → shared[{k}][{w}]"),
                None,
            )?;
        }
    }
    block.barrier(Text::new(
        "partial sums visible to warp 0",
        "部分和对线程束 0 可见",
    ));
    let mut out = Vec::with_capacity(ks.len());
    for &k in ks {
        let addr: Vec<_> = (0..n)
            .map(|l| (l < warps).then(|| at(k, u64::from(l))))
            .collect();
        let got = block.ld_shared(
            0,
            &addr,
            4,
            Text::new(
                format!("v{k}: warp 0 loads the {warps} partials"),
                format!("v{k}: 线程束 0 载入 {warps} 个部分和"),
            ),
            None,
        )?;
        let lanes: Vec<f32> = (0..n)
            .map(|l| {
                if l < warps {
                    got.get(l as usize).copied().unwrap_or(f64::from(pad)) as f32
                } else {
                    pad
                }
            })
            .collect();
        let shown: Vec<f64> = lanes.iter().map(|x| f64::from(*x)).collect();
        block.compute(
            0,
            &shown,
            Mask::first(n),
            Text::new(
                format!("v{k}: lanes ≥ {warps} take {pad}"),
                format!("v{k}: lane ≥ {warps} 取 {pad}"),
            ),
            Some(0),
        );
        let s = warp_reduce(block, 0, &lanes, &format!("v{k} block"), op);
        let addr: Vec<_> = lane0.iter().map(|a| a.map(|_| at(k, 0))).collect();
        block.st_shared(
            0,
            &addr,
            4,
            &[f64::from(s[0])],
            Text::new(
                format!("v{k}: block sum → shared[{k}][0]"),
                format!("v{k}: 块内和 → shared[{k}][0]"),
            ),
            None,
        )?;
        out.push(s[0]);
    }
    block.barrier(Text::new(
        "block sum visible to every thread",
        "块内和对每个线程可见",
    ));
    for w in 0..warps {
        for &k in ks {
            let addr: Vec<_> = (0..n).map(|_| Some(at(k, 0))).collect();
            block.ld_shared(
                w,
                &addr,
                4,
                &format!("v{k}: broadcast read of shared[{k}][0]"),
                None,
            )?;
        }
    }
    Ok(out)
}

/// Runs both versions on seeded inputs.
///
/// # Errors
/// [`Error::InvalidParam`] from [`ReductionParams::validate`].
pub fn run(p: &ReductionParams) -> Result<ReductionOutput, Error> {
    p.validate()?;
    let mut rng = ChaCha8Rng::seed_from_u64(p.seed);
    let inputs: Vec<Vec<f32>> = (0..p.values)
        .map(|_| {
            (0..p.threads)
                .map(|_| rng.random_range(-1.0f32..1.0))
                .collect()
        })
        .collect();
    run_on(p, inputs)
}

/// Runs both versions on `inputs[k][thread]` (K = `inputs.len()` sets of `threads` values;
/// `p.values` is ignored).
///
/// # Errors
/// [`Error::InvalidParam`] from [`ReductionParams::validate`]; [`Error::BadInput`] for a set
/// shorter than the block or K outside 1..=8.
pub fn run_on(p: &ReductionParams, inputs: Vec<Vec<f32>>) -> Result<ReductionOutput, Error> {
    p.validate()?;
    let shape = BlockShape::new(p.threads, p.warp)?;
    let k = inputs.len();
    if !(1..=8).contains(&k) {
        return Err(Error::BadInput(format!(
            "a reduction takes 1 to 8 value sets, not {k}"
        )));
    }
    let reference_sums: Vec<f64> = inputs.iter().map(|v| p.op.reference(v)).collect();
    // shared[k][warp_size]: one row of `warp` floats per value.
    let stride = u64::from(p.warp);
    let mut together = Block::new(
        Text::new(
            "block_reduce (K values together)",
            "block_reduce（K 组值一起归约）",
        ),
        shape,
    );
    let all: Vec<usize> = (0..k).collect();
    let id = p.op.identity();
    let sums = block_reduce_with(&mut together, &inputs, &all, stride, p.op, id)?;
    let mut sequential = Block::new(
        Text::new(
            "block_reduce (K values one after the other)",
            "block_reduce（K 组值逐组归约）",
        ),
        shape,
    );
    let mut sums_sequential = Vec::with_capacity(k);
    for i in 0..k {
        sums_sequential.extend(block_reduce_with(
            &mut sequential,
            &inputs,
            &[i],
            stride,
            p.op,
            id,
        )?);
    }
    // The same kernel with 0 where the identity belongs (its trace is not kept).
    let mut scratch = Block::new(
        Text::new(
            "block_reduce (0 in the empty lanes)",
            "block_reduce（空 lane 填 0）",
        ),
        shape,
    );
    let sums_zero_identity = block_reduce_with(&mut scratch, &inputs, &all, stride, p.op, 0.0)?;
    let warps = shape.warps();
    let identity_lanes = (warps * p.warp - p.threads) + (p.warp - warps);
    let max_abs_error = sums
        .iter()
        .chain(&sums_sequential)
        .zip(reference_sums.iter().chain(&reference_sums))
        .map(|(s, r)| (f64::from(*s) - r).abs())
        .fold(0.0, f64::max);
    let (trace_together, trace_sequential) = (together.finish(), sequential.finish());
    Ok(ReductionOutput {
        block_barriers_together: trace_together.summary().barriers,
        block_barriers_sequential: trace_sequential.summary().barriers,
        op: p.op,
        identity: id,
        sums,
        sums_sequential,
        reference_sums,
        sums_zero_identity,
        identity_lanes,
        max_abs_error,
        warps: shape.warps(),
        shuffle_steps: p.warp.trailing_zeros(),
        summary_together: trace_together.summary(),
        summary_sequential: trace_sequential.summary(),
        inputs,
        trace_together,
        trace_sequential,
    })
}

#[cfg(test)]
#[path = "reduction_tests.rs"]
mod tests;
