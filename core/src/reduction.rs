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

use crate::text::Text;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::Error;
use crate::params::{ParamSpec, ParamValues};
use crate::scene::{Scene, to_json};
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
];

/// The registry entry.
pub const SCENE: Scene = Scene {
    id: "reduction",
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
    run: |v| to_json(&run(&ReductionParams::from_values(v)?)?),
    input: None,
};

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
                "expected 4, 8, 16, 32 or 64",
            )
        })?;
        let p = ReductionParams {
            threads: v.int("threads")? as u32,
            values: v.int("values")? as u32,
            warp,
            seed: v.int("seed")? as u64,
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
                "expected 4, 8, 16, 32 or 64",
            ));
        }
        let max = (self.warp * self.warp).min(1024);
        if self.threads > max {
            return Err(Error::invalid(
                "threads",
                self.threads,
                format!(
                    "expected at most {max}: warp 0 reduces one partial sum per warp, so warps ≤ {}",
                    self.warp
                ),
            ));
        }
        if !(1..=8).contains(&self.values) {
            return Err(Error::invalid("values", self.values, "expected 1..=8"));
        }
        Ok(())
    }
}

/// What the scene computes.
#[derive(Debug, Clone, Serialize)]
pub struct ReductionOutput {
    /// Barriers when the K values travel up one tree together.
    pub block_barriers_together: u32,
    /// Barriers when the K values are reduced one after the other.
    pub block_barriers_sequential: u32,
    /// The K block sums (f32) from the together run.
    pub sums: Vec<f32>,
    /// The K block sums (f32) from the sequential run.
    pub sums_sequential: Vec<f32>,
    /// f64 sums of the same f32 inputs.
    pub reference_sums: Vec<f64>,
    /// Largest |sum − reference| over both runs.
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
            &format!("{tag}: partner lane ^ {mask}"),
            Some(level),
        );
        v = v.iter().zip(&other).map(|(a, b)| a + b).collect();
        let shown: Vec<f64> = v.iter().map(|x| f64::from(*x)).collect();
        block.compute(
            warp,
            &shown,
            active,
            &format!("{tag}: add partner's value"),
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
    let shape = block.shape();
    let (n, warps) = (shape.warp_size, shape.warps());
    if warps > n {
        return Err(Error::invalid(
            "threads",
            shape.threads,
            format!(
                "expected at most {} threads: warp 0 reduces one partial per warp, so at most {n} warps of {n} lanes",
                n * n
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
                .map(|l| if exists(l) { value(k, w * n + l) } else { 0.0 })
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
                &format!("v{k}: load one value per thread"),
            );
            let s = warp_sum(block, w, &lanes, &format!("v{k}"));
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
    block.barrier("partial sums visible to warp 0");
    let mut out = Vec::with_capacity(ks.len());
    for &k in ks {
        let addr: Vec<_> = (0..n)
            .map(|l| (l < warps).then(|| at(k, u64::from(l))))
            .collect();
        let got = block.ld_shared(
            0,
            &addr,
            4,
            &format!("v{k}: warp 0 loads the {warps} partials"),
            None,
        )?;
        let lanes: Vec<f32> = (0..n)
            .map(|l| {
                if l < warps {
                    got.get(l as usize).copied().unwrap_or(0.0) as f32
                } else {
                    0.0
                }
            })
            .collect();
        let shown: Vec<f64> = lanes.iter().map(|x| f64::from(*x)).collect();
        block.compute(
            0,
            &shown,
            Mask::first(n),
            &format!("v{k}: lanes ≥ {warps} take 0"),
            Some(0),
        );
        let s = warp_sum(block, 0, &lanes, &format!("v{k} block"));
        let addr: Vec<_> = lane0.iter().map(|a| a.map(|_| at(k, 0))).collect();
        block.st_shared(
            0,
            &addr,
            4,
            &[f64::from(s[0])],
            &format!("v{k}: block sum → shared[{k}][0]"),
            None,
        )?;
        out.push(s[0]);
    }
    block.barrier("block sum visible to every thread");
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
    let shape = BlockShape::new(p.threads, p.warp)?;
    let k = p.values as usize;
    let mut rng = ChaCha8Rng::seed_from_u64(p.seed);
    let inputs: Vec<Vec<f32>> = (0..k)
        .map(|_| {
            (0..p.threads)
                .map(|_| rng.random_range(-1.0f32..1.0))
                .collect()
        })
        .collect();
    let reference_sums: Vec<f64> = inputs
        .iter()
        .map(|v| v.iter().map(|x| f64::from(*x)).sum())
        .collect();
    // shared[k][warp_size]: one row of `warp` floats per value.
    let stride = u64::from(p.warp);
    let mut together = Block::new("block_reduce (K values together)", shape);
    let all: Vec<usize> = (0..k).collect();
    let sums = block_reduce(&mut together, &inputs, &all, stride)?;
    let mut sequential = Block::new("block_reduce (K values one after the other)", shape);
    let mut sums_sequential = Vec::with_capacity(k);
    for i in 0..k {
        sums_sequential.extend(block_reduce(&mut sequential, &inputs, &[i], stride)?);
    }
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
        sums,
        sums_sequential,
        reference_sums,
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
mod tests {
    use super::*;

    fn params(threads: u32, values: u32, warp: u32) -> ReductionParams {
        ReductionParams {
            threads,
            values,
            warp,
            seed: 7,
        }
    }

    #[test]
    fn barriers_two_versus_two_k() {
        let o = run(&params(256, 2, 32)).unwrap();
        assert_eq!(o.block_barriers_together, 2);
        assert_eq!(o.block_barriers_sequential, 4);
        let o = run(&params(1024, 5, 32)).unwrap();
        assert_eq!(
            (o.block_barriers_together, o.block_barriers_sequential),
            (2, 10)
        );
    }

    #[test]
    fn sums_match_the_f64_reference() {
        for (t, k, w) in [
            (256, 2, 32),
            (1024, 8, 32),
            (64, 3, 8),
            (16, 1, 4),
            (4096 / 64, 2, 64),
        ] {
            let o = run(&params(t, k, w)).unwrap();
            for (s, r) in o.sums.iter().zip(&o.reference_sums) {
                // f32 summation of ≤ 1024 values in [−1, 1): error well under 1e-4.
                assert!((f64::from(*s) - r).abs() < 1e-4, "{s} vs {r}");
            }
            assert_eq!(o.sums.len(), k as usize);
        }
    }

    #[test]
    fn integers_sum_exactly() {
        // With inputs replaced by small integers the f32 tree is exact: check the kernel's
        // plumbing (every partial reaches the right slot) independently of rounding.
        let shape = BlockShape::new(128, 32).unwrap();
        let inputs = vec![
            (0..128).map(|t| t as f32).collect::<Vec<_>>(),
            vec![1.0; 128],
        ];
        let mut b = Block::new("t", shape);
        let s = block_reduce(&mut b, &inputs, &[0, 1], 32).unwrap();
        assert_eq!(s, vec![8128.0, 128.0], "0+…+127 = 8128");
    }

    #[test]
    fn trace_costs_are_as_the_rules_say() {
        let o = run(&params(256, 1, 32)).unwrap();
        let s = o.summary_together;
        // 8 warps × 5 shuffles, plus warp 0's second-stage 5.
        assert_eq!(s.shuffles, 8 * 5 + 5);
        // Every request here is conflict-free: lane-0 stores, a row load, broadcast reads.
        assert_eq!(s.shared_wavefronts, s.shared_ideal_wavefronts);
        let json = serde_json::to_string(&o.trace_together).unwrap();
        let back: Trace = serde_json::from_str(&json).unwrap();
        assert!(
            back == o.trace_together,
            "trace JSON round trip changed the trace"
        );
    }

    #[test]
    fn a_partial_last_warp_sums_only_the_threads_that_exist() {
        // 48 threads = one full warp of 32 and a warp of 16: every one of the 48 values counted
        // once, the 16 missing lanes adding 0.
        let o = run(&params(48, 1, 32)).unwrap();
        assert_eq!(o.warps, 2);
        assert_eq!(o.inputs[0].len(), 48);
        let exact: f64 = o.inputs[0].iter().map(|x| f64::from(*x)).sum();
        assert!(
            (f64::from(o.sums[0]) - exact).abs() < 1e-5,
            "{} vs {exact}",
            o.sums[0]
        );
        assert_eq!(o.block_barriers_together, 2);
        // A block of one thread: the butterfly adds 31 zeros to its value.
        let one = run(&params(1, 1, 32)).unwrap();
        assert_eq!(one.sums[0], one.inputs[0][0]);
    }

    #[test]
    fn bad_shapes_are_refused() {
        assert!(params(128, 2, 8).validate().is_err(), "16 warps > 8 lanes");
        assert!(params(256, 0, 32).validate().is_err());
    }
}
