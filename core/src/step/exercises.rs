//! Scene `exercises` (lecture §9): all twelve exercises, each answer computed by the lab that
//! owns the computation — never stored. Keys `ex1` … `ex12`; each holds the question (`{"en", "zh"}`:
//! short in English, the lecture's own words in Chinese), the computed answer with its inputs,
//! the lecture's reference answer quoted where it gives one (§9 "参考答案", both languages),
//! and whether the two agree. The words live in `exercise_words.rs`.
//!
//! | ex | computed by |
//! |---|---|
//! | 1 | [`crate::softmax::exercise1`] (softmax backward of one row) |
//! | 2 | [`crate::layernorm::forward_row`] + [`crate::layernorm::backward_hw4`] on seeded rows |
//! | 3 | [`crate::trainer::workspace::trainer_stages`] (bytes per parameter per stage) |
//! | 4 | [`crate::trainer::workspace::fp32_copies`] |
//! | 5 | [`crate::memory::lifetimes::lower_bound_bytes`] |
//! | 6 | [`crate::memory::lifetimes::exercise6_min_len`], [`crate::memory::lifetimes::scores_dominate`] |
//! | 7 | [`crate::layernorm::dgamma::run`] (two-stage scheme) |
//! | 8 | [`crate::trainer::workspace::trainer_comparison`] |
//! | 9 | [`crate::trainer::fp16::fp16_stored_update`] |
//! | 10 | [`crate::memory::allocator::CachingAllocator`] (PyTorch's caching-allocator rules) |
//! | 11 | [`super::ledger::step_ledger`] (trainer share vs tokens; gradient accumulation) |
//! | 12 | [`crate::cost`] on three data flows of attention backward at the GPT-2 large shape |
//!
//! Units: GB = 10⁹ bytes, MB = 10⁶ bytes, MiB = 2²⁰ bytes; ms and µs as named.

use crate::text::Text;
use serde::Serialize;

use crate::Error;
use crate::cost::{KernelCost, totals};
use crate::device::device;
use crate::layernorm::dgamma::{self, DgammaParams, TwoStageDetail};
use crate::layernorm::{backward_hw4, formulas, forward_row};
use crate::memory::allocator::{CachingAllocator, Served};
use crate::memory::lifetimes::{
    AttentionShape, crossover_len, exercise6_min_len, lower_bound_bytes, scores_dominate,
};
use crate::memory::{Dtype as MemDtype, mib};
use crate::params::{ParamSpec, ParamValues};
use crate::scene::{Chapter, Cost, Featured, Scene, SceneDef, erase};
use crate::softmax::{Exercise1, exercise1};
use crate::trainer::fp16::{Fp16Update, fp16_stored_update};
use crate::trainer::workspace::{
    Stage as TrainerStage, TrainerScheme, fp32_copies, trainer_comparison, trainer_stages,
};

use super::exercise_words as words;
use super::ledger::{gpt2_model, step_ledger};

const PARAMS: &[ParamSpec] = &[];

/// The scene's typed definition (`exercises`).
pub struct ExercisesScene;

impl SceneDef for ExercisesScene {
    const ID: &'static str = "exercises";
    type Output = ExercisesOutput;

    fn run(v: &ParamValues) -> Result<Self::Output, Error> {
        let _ = v;
        run()
    }
}

/// The registry entry.
pub const SCENE: Scene = Scene {
    id: ExercisesScene::ID,
    section: "§9",
    title: Text::new(
        "Exercises: all twelve, computed",
        "练习：十二道题，逐题计算",
    ),
    summary: Text::new(
        "Every §9 exercise answered by the lab that owns the computation, beside the lecture's reference answer.",
        "§9 的每道练习都由负责那项计算的实验算出，旁边是讲义的参考答案。",
    ),
    params: PARAMS,
    run: erase::<ExercisesScene>(),
    input: None,
    chapter: &Chapter::EXERCISES,
    featured: Featured::Nothing,
    cost: Cost::Light,
};

/// One exercise.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Exercise<T> {
    /// The question, short in English, as the lecture asks it in Chinese.
    pub question: Text<&'static str>,
    /// The computed answer (with its inputs).
    pub answer: T,
    /// The lecture's reference answer, quoted (`None` where it gives none).
    pub lecture_answer: Option<Text<&'static str>>,
    /// Whether the computed answer matches the lecture's (`None`: nothing to compare).
    pub agrees: Option<bool>,
    /// What was computed, and by what.
    pub computed: Text<&'static str>,
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs().max(1e-300)
}

/// Exercise 2: Σᵢ∇xᵢ of LayerNorm backward (HW4 form) on seeded rows, f64.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ex2 {
    /// Rows × columns tried.
    pub rows: usize,
    /// Columns (m).
    pub cols: usize,
    /// Seed of the inputs (ChaCha8, as `layernorm-formulas`).
    pub seed: u64,
    /// max over rows of |Σᵢ ∇xᵢ|.
    pub max_abs_row_sum: f64,
    /// max over rows of Σᵢ |∇xᵢ| (the scale the sum is small against).
    pub max_row_abs_total: f64,
    /// max over rows of |Σᵢ x̂ᵢ| (the reason: Σ x̂ = 0).
    pub max_abs_sum_xhat: f64,
    /// The algebra.
    pub proof: &'static str,
}

fn ex2() -> Ex2 {
    let (rows, cols, seed) = (8usize, 64usize, 1u64);
    let (x, dy, gamma, _) = formulas::inputs(rows, cols, seed);
    let (mut worst, mut scale, mut xh_worst) = (0.0f64, 0.0f64, 0.0f64);
    for r in 0..rows {
        let xr = &x[r * cols..(r + 1) * cols];
        let dyr = &dy[r * cols..(r + 1) * cols];
        let s = forward_row(xr, crate::layernorm::EPS);
        let dx = backward_hw4(xr, dyr, &gamma, s);
        worst = worst.max(dx.iter().sum::<f64>().abs());
        scale = scale.max(dx.iter().map(|v| v.abs()).sum::<f64>());
        xh_worst = xh_worst.max(xr.iter().map(|v| (v - s.mu) * s.r).sum::<f64>().abs());
    }
    Ex2 {
        rows,
        cols,
        seed,
        max_abs_row_sum: worst,
        max_row_abs_total: scale,
        max_abs_sum_xhat: xh_worst,
        proof: "Σᵢ∇xᵢ = r[Σg − (m·Σg + Σᵢx̂ᵢ·Σgx̂)/m] = r[Σg − Σg − 0] = 0 because Σx̂ᵢ = 0: LayerNorm is invariant to adding a constant to a row, so its gradient has no component along (1, …, 1)",
    }
}

/// Exercise 3: bytes per parameter per trainer stage.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ex3 {
    /// Per-tensor FP32-master trainer, stage by stage (operands with their bytes).
    pub baseline_stages: Vec<TrainerStage>,
    /// Its total, bytes per parameter.
    pub baseline_bytes_per_param: usize,
    /// Linked FP16 workspace.
    pub workspace_stages: Vec<TrainerStage>,
    /// Its total, bytes per parameter.
    pub workspace_bytes_per_param: usize,
}

fn ex3() -> Ex3 {
    let b = trainer_stages(TrainerScheme::PerTensorFp32Master);
    let w = trainer_stages(TrainerScheme::LinkedFp16Workspace);
    Ex3 {
        baseline_bytes_per_param: b.iter().map(TrainerStage::bytes_per_param).sum(),
        workspace_bytes_per_param: w.iter().map(TrainerStage::bytes_per_param).sum(),
        baseline_stages: b,
        workspace_stages: w,
    }
}

/// Exercise 4: memory of the FP32 copies of a 7B model.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Ex4 {
    /// Parameters.
    pub parameters: u64,
    /// Dropping the FP32 master and gradient copies saves this, GB (10⁹ bytes).
    pub master_and_grad_gb: f64,
    /// Dropping only the FP32 gradient copy saves this, GB.
    pub grad_only_gb: f64,
}

/// Exercise 5: the self-attention backward lower bound.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Ex5 {
    /// The shape (B = 4, L = 2048, H = 4096, N = 32, fp16).
    pub shape: AttentionShape,
    /// One BLH tensor, MiB.
    pub blh_mib: f64,
    /// One BL²N tensor, MiB.
    pub bl2n_mib: f64,
    /// 3BLH + max{BL²N, 3BLH}, MiB.
    pub lower_bound_mib: f64,
}

/// Exercise 6: when the score tensor dominates.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ex6 {
    /// The condition in d_h.
    pub condition: &'static str,
    /// d_h.
    pub d_head: u64,
    /// Shortest L with BL²N ≥ 3BLH.
    pub min_len: u64,
    /// Check on a model with H = 4096, N = 64 (d_h = 64): dominates at L = min_len − 1?
    pub dominates_below: bool,
    /// … at L = min_len?
    pub dominates_at: bool,
    /// The same crossover from (H, N) = (4096, 64).
    pub crossover_from_hidden_and_heads: u64,
}

fn ex6() -> Ex6 {
    let d_head = 64;
    let min_len = exercise6_min_len(d_head);
    let at = |len: u64| {
        scores_dominate(&AttentionShape {
            batch: 1,
            len,
            hidden: 4096,
            heads: 64,
            dtype: MemDtype::F16,
        })
    };
    Ex6 {
        condition: "BL²N ≥ 3BLH ⇔ L·N ≥ 3H ⇔ L ≥ 3·d_h",
        d_head,
        min_len,
        dominates_below: at(min_len.saturating_sub(1)),
        dominates_at: at(min_len),
        crossover_from_hidden_and_heads: crossover_len(4096, 64),
    }
}

/// Exercise 7: the two-stage ∇γ/∇β reduction sized to fill an A100.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ex7 {
    /// Rows N.
    pub rows: u64,
    /// Columns d.
    pub cols: u64,
    /// Resident threads on an A100: 108 SMs × 2048 threads per SM (NVIDIA A100 whitepaper).
    pub resident_threads: u64,
    /// Segments P = resident threads / d.
    pub segments: u64,
    /// Lab A's two-stage figures at that P.
    pub two_stage: TwoStageDetail,
}

/// A100 SMs (NVIDIA A100 whitepaper, SXM4).
pub const A100_SMS: u64 = 108;
/// Resident threads per SM on A100 (compute capability 8.0).
pub const A100_THREADS_PER_SM: u64 = 2048;

fn ex7() -> Result<Ex7, Error> {
    let (rows, cols) = (8192, 1024);
    let resident = A100_SMS * A100_THREADS_PER_SM;
    let segments = (resident / cols).max(1);
    let out = dgamma::run(&DgammaParams {
        rows,
        cols,
        scheme: "two_stage".to_owned(),
        pad: 0,
        segments,
        orders: 2,
        seed: 1,
    })?;
    Ok(Ex7 {
        rows,
        cols,
        resident_threads: resident,
        segments,
        two_stage: out.two_stage,
    })
}

/// Exercise 8: the trainer ledger of GPT-2 large on A100.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Ex8 {
    /// Parameter tensors.
    pub tensors: usize,
    /// Parameters.
    pub parameters: u64,
    /// Per-tensor trainer: launches.
    pub baseline_launches: u64,
    /// … launch time, ms.
    pub baseline_launch_ms: f64,
    /// … byte time, ms.
    pub baseline_bytes_ms: f64,
    /// … total, ms.
    pub baseline_total_ms: f64,
    /// Workspace: launches.
    pub workspace_launches: u64,
    /// … launch time, µs.
    pub workspace_launch_us: f64,
    /// … byte time, ms.
    pub workspace_bytes_ms: f64,
    /// … total, ms.
    pub workspace_total_ms: f64,
}

fn ex8() -> Result<Ex8, Error> {
    let c = trainer_comparison("gpt2-large", "a100")?;
    Ok(Ex8 {
        tensors: c.tensors,
        parameters: c.parameters,
        baseline_launches: c.baseline.launches,
        baseline_launch_ms: c.baseline.launch_ms,
        baseline_bytes_ms: c.baseline.bytes_ms,
        baseline_total_ms: c.baseline.total_ms,
        workspace_launches: c.workspace.launches,
        workspace_launch_us: c.workspace.launch_ms * 1e3,
        workspace_bytes_ms: c.workspace.bytes_ms,
        workspace_total_ms: c.workspace.total_ms,
    })
}

/// Exercise 9: an FP16-stored γ updated by 3e-4.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Ex9 {
    /// γ = 1.5.
    pub at_1_5: Fp16Update,
    /// γ = 0.6.
    pub at_0_6: Fp16Update,
}

/// Exercise 10: two free 100 MB blocks, a 150 MB request.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ex10 {
    /// Size of each free block, bytes (100 MB = 10⁸).
    pub free_block_bytes: u64,
    /// The request, bytes (150 MB).
    pub request_bytes: u64,
    /// Caching allocator: reserved before the request, bytes (two segments, rounded to 2 MiB).
    pub reserved_before: u64,
    /// How the request was served (a new segment: neither free block is large enough).
    pub served: Served,
    /// Reserved after, bytes.
    pub reserved_after: u64,
    /// Reserved after, MB.
    pub reserved_after_mb: f64,
    /// Segments `cudaMalloc`ed.
    pub segments_created: u64,
    /// LightSeq2: one buffer sized before training for the largest need (here the two 100 MB
    /// tensors live together, 200 MB), every batch's tensors placed inside it, bytes.
    pub preallocated_bytes: u64,
    /// In words.
    pub explanation: &'static str,
}

fn ex10() -> Result<Ex10, Error> {
    const MB: u64 = 1_000_000;
    let (block, request) = (100 * MB, 150 * MB);
    let mut a = CachingAllocator::new(40 << 30);
    let oom = |e: crate::memory::allocator::OutOfMemory| Error::BadInput(e.to_string());
    let x = a.malloc(block, 0).map_err(oom)?;
    let y = a.malloc(block, 0).map_err(oom)?;
    a.free(x.block);
    a.free(y.block);
    let before = a.reserved();
    let r = a.malloc(request, 0).map_err(oom)?;
    Ok(Ex10 {
        free_block_bytes: block,
        request_bytes: request,
        reserved_before: before,
        served: r.served,
        reserved_after: a.reserved(),
        reserved_after_mb: a.reserved() as f64 / MB as f64,
        segments_created: a.segments_created,
        preallocated_bytes: (2 * block).max(request),
        explanation: "each 100 MB block is its own segment, so the free blocks cannot merge; no cached block holds 150 MB, so the allocator cudaMallocs a new 150 MB segment and reserved grows past 350 MB. LightSeq2 plans the temporaries for the largest shape before training and places every batch's tensors in that one buffer, so nothing is split or re-allocated",
    })
}

/// Exercise 11: trainer share and gradient accumulation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ex11 {
    /// Trainer share of the baseline step at 1024 tokens (GPT-2 large, A100).
    pub share_1024: f64,
    /// … at 16384 tokens.
    pub share_16384: f64,
    /// Baseline trainer time, ms (independent of tokens).
    pub trainer_ms: f64,
    /// Gradient accumulation: k micro-batches of 1024 tokens per update.
    pub accumulation: Vec<Accumulation>,
    /// Why.
    pub explanation: &'static str,
}

/// One gradient-accumulation setting.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Accumulation {
    /// Micro-batches per update.
    pub micro_batches: u64,
    /// Trainer share of one update, baseline.
    pub trainer_share_baseline: f64,
    /// Trainer share of one update, LightSeq2-style.
    pub trainer_share_lightseq2: f64,
    /// Update time baseline / LightSeq2-style.
    pub speedup: f64,
}

fn ex11() -> Result<Ex11, Error> {
    let spec = gpt2_model("gpt2-large")?;
    let dev = device("a100")?;
    let small = step_ledger(spec, 1024, 1024, dev, 1.0)?;
    let large = step_ledger(spec, 16384, 1024, dev, 1.0)?;
    let (tb, tl) = (small.baseline.trainer_ms, small.lightseq2.trainer_ms);
    let (rb, rl) = (small.baseline.ms - tb, small.lightseq2.ms - tl);
    let accumulation = [1u64, 2, 4, 8, 16]
        .iter()
        .map(|&k| {
            let (b, l) = (k as f64 * rb + tb, k as f64 * rl + tl);
            Accumulation {
                micro_batches: k,
                trainer_share_baseline: tb / b,
                trainer_share_lightseq2: tl / l,
                speedup: b / l,
            }
        })
        .collect();
    Ok(Ex11 {
        share_1024: small.baseline.trainer_share,
        share_16384: large.baseline.trainer_share,
        trainer_ms: tb,
        accumulation,
        explanation: "the trainer touches every parameter once per update whatever the batch; GEMM and non-GEMM time grow with tokens. With gradient accumulation the one update is shared by k micro-batches (its share falls like 1/k), but each micro-batch is small, so launch overhead and the fused kernels matter more",
    })
}

/// Exercise 12: fusing softmax backward into the ∇Q/∇K GEMMs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ex12 {
    /// The shape: (B, h, L, d_h) of GPT-2 large at 8 × 1024 tokens, one layer.
    pub shape: [u64; 4],
    /// The three data flows of attention backward from ∇context to ∇Q, ∇K, ∇V.
    pub flows: Vec<Flow12>,
    /// The answer in words.
    pub explanation: &'static str,
}

/// One data flow of exercise 12.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Flow12 {
    /// Which.
    pub name: &'static str,
    /// Kernels.
    pub kernels: Vec<KernelCost>,
    /// DRAM bytes.
    pub bytes: f64,
    /// FLOPs.
    pub flops: f64,
    /// Launches.
    pub launches: u64,
    /// Modelled time on A100 at peak GEMM throughput, µs.
    pub us: f64,
}

fn ex12() -> Result<Ex12, Error> {
    let dev = device("a100")?;
    let (b, h, l, dh) = (8u64, 20u64, 1024u64, 64u64);
    let s = (b * h * l * l) as f64; // score elements
    let act = (b * l * h * dh) as f64 * 2.0; // one T × d FP16 tensor
    let rows = (b * h * l) as f64 * 4.0; // f32 per row
    let gemm_flops = 2.0 * s * dh as f64; // one L×L×d_h GEMM per head
    let k = |name: &str, r: f64, w: f64, flops: f64| KernelCost {
        name: name.to_owned(),
        bytes_read: r,
        bytes_written: w,
        flops,
        launches: 1,
    };
    let dp = k("∇P = ∇context·Vᵀ", 2.0 * act, 2.0 * s, gemm_flops);
    let dv = k("∇V = Pᵀ·∇context", 2.0 * s + act, act, gemm_flops);
    let flows = [
        (
            "separate kernel (Lab B fused: reads ∇P, M, y; writes ∇S), then ∇Q and ∇K GEMMs read ∇S",
            vec![
                dp.clone(),
                dv.clone(),
                k("softmax + dropout backward", 5.0 * s, 2.0 * s, 0.0),
                k("∇Q = ∇S·K", 2.0 * s + act, act, gemm_flops),
                k("∇K = ∇Sᵀ·Q", 2.0 * s + act, act, gemm_flops),
            ],
        ),
        (
            "softmax backward in the ∇Q and ∇K GEMMs' prologue (each reads ∇P, M, y tile by tile; s = rowsum(∇context ⊙ context) first)",
            vec![
                dp,
                dv,
                k("s = rowsum(∇context ⊙ context)", 2.0 * act, rows, 0.0),
                k("∇Q = (y⊙(g′ − s))·K", 5.0 * s + rows + act, act, gemm_flops),
                k(
                    "∇K = (y⊙(g′ − s))ᵀ·Q",
                    5.0 * s + rows + act,
                    act,
                    gemm_flops,
                ),
            ],
        ),
        (
            "FlashAttention-style: one kernel recomputes S = QKᵀ and ∇P tile by tile, no L × L tensor in DRAM (mask from the RNG seed)",
            vec![k(
                "fused attention backward",
                5.0 * act + rows,
                3.0 * act,
                5.0 * gemm_flops,
            )],
        ),
    ];
    let flows = flows
        .into_iter()
        .map(|(name, kernels)| {
            let t = totals(&kernels, dev, 1.0);
            Flow12 {
                name,
                flops: kernels.iter().map(|k| k.flops).sum(),
                bytes: t.bytes,
                launches: t.launches,
                us: t.seconds * 1e6,
                kernels,
            }
        })
        .collect();
    Ok(Ex12 {
        shape: [b, h, l, dh],
        flows,
        explanation: "yes, but the GEMM needs ∇S tile by tile: compute y⊙(g′ − s) as each tile is loaded, with the row sums s computed first (s = rowsum(∇O ⊙ O), one number per row). Both ∇Q and ∇K need ∇S, so without recomputation they each re-read ∇P, M and y — little is saved; the real win (FlashAttention's backward) recomputes the scores and ∇P inside the kernel so no L × L tensor touches DRAM, at the price of extra FLOPs and a much more complex kernel",
    })
}

/// The scene's result: one key per exercise.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExercisesOutput {
    /// Softmax backward of one row.
    pub ex1: Exercise<Exercise1>,
    /// LayerNorm backward sums to zero.
    pub ex2: Exercise<Ex2>,
    /// Trainer bytes per parameter.
    pub ex3: Exercise<Ex3>,
    /// FP32 copies of a 7B model.
    pub ex4: Exercise<Ex4>,
    /// Self-attention backward lower bound.
    pub ex5: Exercise<Ex5>,
    /// When the scores dominate.
    pub ex6: Exercise<Ex6>,
    /// Two-stage ∇γ/∇β.
    pub ex7: Exercise<Ex7>,
    /// Trainer ledger of GPT-2 large.
    pub ex8: Exercise<Ex8>,
    /// FP16 storage swallowing updates.
    pub ex9: Exercise<Ex9>,
    /// Caching-allocator fragmentation.
    pub ex10: Exercise<Ex10>,
    /// Trainer share vs tokens; gradient accumulation.
    pub ex11: Exercise<Ex11>,
    /// Softmax backward into the GEMM.
    pub ex12: Exercise<Ex12>,
}

/// Computes all twelve.
///
/// # Errors
/// Only if a lab's computation refuses its fixed inputs (it does not at the lecture's values).
pub fn run() -> Result<ExercisesOutput, Error> {
    let e1 = exercise1()?;
    let ok1 = e1.dx.len() == 3
        && [0.25, -0.15, -0.10]
            .iter()
            .zip(&e1.dx)
            .all(|(a, b)| (a - b).abs() < 1e-12)
        && e1.sum_dx.abs() < 1e-12;
    let e2 = ex2();
    let ok2 = e2.max_abs_row_sum <= 1e-12 * e2.max_row_abs_total.max(1.0);
    let e3 = ex3();
    let ok3 = e3.baseline_bytes_per_param == 40 && e3.workspace_bytes_per_param == 22;
    let c = fp32_copies(7_000_000_000);
    let e4 = Ex4 {
        parameters: 7_000_000_000,
        master_and_grad_gb: c.master_and_grad_bytes as f64 / 1e9,
        grad_only_gb: c.grad_only_bytes as f64 / 1e9,
    };
    let ok4 = close(e4.master_and_grad_gb, 56.0, 1e-12) && close(e4.grad_only_gb, 28.0, 1e-12);
    let shape5 = AttentionShape {
        batch: 4,
        len: 2048,
        hidden: 4096,
        heads: 32,
        dtype: MemDtype::F16,
    };
    let e5 = Ex5 {
        shape: shape5,
        blh_mib: mib(shape5.blh() * shape5.dtype.bytes()),
        bl2n_mib: mib(shape5.bl2n() * shape5.dtype.bytes()),
        lower_bound_mib: mib(lower_bound_bytes(&shape5)),
    };
    let ok5 = close(e5.lower_bound_mib, 1216.0, 1e-12);
    let e6 = ex6();
    let ok6 = e6.min_len == 192 && e6.dominates_at && !e6.dominates_below;
    let e7 = ex7()?;
    let ok7 = e7.two_stage.stage1_threads == 221_184 && e7.two_stage.stage1_steps == 38;
    let e8 = ex8()?;
    let ok8 = (e8.baseline_launch_ms - 5.2).abs() < 0.05
        && (e8.baseline_bytes_ms - 19.9).abs() < 0.05
        && (e8.workspace_launch_us - 4.0).abs() < 0.05
        && (e8.workspace_bytes_ms - 10.95).abs() < 0.01;
    let e9 = Ex9 {
        at_1_5: fp16_stored_update(1.5, 3e-4),
        at_0_6: fp16_stored_update(0.6, 3e-4),
    };
    let ok9 = e9.at_1_5.swallowed
        && !e9.at_0_6.swallowed
        && (f64::from(e9.at_0_6.added) - 4.88e-4).abs() < 5e-7;
    let e10 = ex10()?;
    let ok10 = e10.reserved_after >= 350_000_000 && e10.served == Served::NewSegment;
    let e11 = ex11()?;
    let e12 = ex12()?;
    Ok(ExercisesOutput {
        ex1: Exercise {
            question: words::EX1.question,
            answer: e1,
            lecture_answer: Some(words::EX1.answer),
            agrees: Some(ok1),
            computed: Text::new(
                "crate::softmax::exercise1 (∇x = y ⊙ (∇y − Σ∇y·y))",
                "crate::softmax::exercise1（∇x = y ⊙ (∇y − Σ∇y·y)）",
            ),
        },
        ex2: Exercise {
            question: words::EX2.question,
            answer: e2,
            lecture_answer: Some(words::EX2.answer),
            agrees: Some(ok2),
            computed: Text::new(
                "Lab A's backward_hw4 on 8 seeded rows of 64 in f64; max |Σ∇x| against the row's Σ|∇x|",
                "Lab A 的 backward_hw4，在 8 行（固定种子）× 64 个 f64 上；最大的 |Σ∇x| 与该行的 Σ|∇x| 相比",
            ),
        },
        ex3: Exercise {
            question: words::EX3.question,
            answer: e3,
            lecture_answer: Some(words::EX3.answer),
            agrees: Some(ok3),
            computed: Text::new(
                "Lab C's trainer_stages: operand sizes from the element types",
                "Lab C 的 trainer_stages：操作数的大小由元素类型得出",
            ),
        },
        ex4: Exercise {
            question: words::EX4.question,
            answer: e4,
            lecture_answer: Some(words::EX4.answer),
            agrees: Some(ok4),
            computed: Text::new(
                "Lab C's fp32_copies(7e9), GB = 10⁹ bytes",
                "Lab C 的 fp32_copies(7e9)，GB = 10⁹ 字节",
            ),
        },
        ex5: Exercise {
            question: words::EX5.question,
            answer: e5,
            lecture_answer: Some(words::EX5.answer),
            agrees: Some(ok5),
            computed: Text::new(
                "Lab D's lower_bound_bytes (3BLH + max{BL²N, 3BLH}), MiB = 2²⁰ bytes",
                "Lab D 的 lower_bound_bytes（3BLH + max{BL²N, 3BLH}），MiB = 2²⁰ 字节",
            ),
        },
        ex6: Exercise {
            question: words::EX6.question,
            answer: e6,
            lecture_answer: Some(words::EX6.answer),
            agrees: Some(ok6),
            computed: Text::new(
                "Lab D's exercise6_min_len and scores_dominate at L = 191, 192 (H = 4096, N = 64)",
                "Lab D 的 exercise6_min_len，以及 L = 191、192 时的 scores_dominate（H = 4096，N = 64）",
            ),
        },
        ex7: Exercise {
            question: words::EX7.question,
            answer: e7,
            lecture_answer: Some(words::EX7.answer),
            agrees: Some(ok7),
            computed: Text::new(
                "Lab A's layernorm-dgamma two_stage scheme at P = 108 × 2048 / d",
                "Lab A 的 layernorm-dgamma two_stage 方案，P = 108 × 2048 / d",
            ),
        },
        ex8: Exercise {
            question: words::EX8.question,
            answer: e8,
            lecture_answer: Some(words::EX8.answer),
            agrees: Some(ok8),
            computed: Text::new(
                "Lab C's trainer_comparison(gpt2-large, a100) on the device table and cost model",
                "Lab C 的 trainer_comparison(gpt2-large, a100)，用设备表和代价模型",
            ),
        },
        ex9: Exercise {
            question: words::EX9.question,
            answer: e9,
            lecture_answer: Some(words::EX9.answer),
            agrees: Some(ok9),
            computed: Text::new(
                "Lab C's fp16_stored_update (f32 add, round to FP16 ties-to-even)",
                "Lab C 的 fp16_stored_update（f32 相加，再按就近偶数舍入到 FP16）",
            ),
        },
        ex10: Exercise {
            question: words::EX10.question,
            answer: e10,
            lecture_answer: Some(words::EX10.answer),
            agrees: Some(ok10),
            computed: Text::new(
                "Lab D's CachingAllocator (PyTorch's rules: large requests get their own 2 MiB-rounded segment; blocks merge only within a segment)",
                "Lab D 的 CachingAllocator（PyTorch 的规则：大请求单独占一个按 2 MiB 取整的段；块只在同一段内合并）",
            ),
        },
        ex11: Exercise {
            question: words::EX11.question,
            answer: e11,
            lecture_answer: Some(words::EX11.answer),
            agrees: None,
            computed: Text::new(
                "Lab E's step_ledger (GPT-2 large, A100, GEMMs at peak) at 1024 and 16384 tokens, and k micro-batches of 1024 per update; the shares are this ledger's, not the lecture's script's (see step-ledger's lecture checks)",
                "Lab E 的 step_ledger（GPT-2 large，A100，GEMM 跑满峰值），1024 和 16384 个 token，以及每次更新累积 k 个 1024 token 的小批次；占比是本账的，不是讲义脚本的（见 step-ledger 里与讲义的对照）",
            ),
        },
        ex12: Exercise {
            question: words::EX12.question,
            answer: e12,
            lecture_answer: Some(words::EX12.answer),
            agrees: None,
            computed: Text::new(
                "bytes, FLOPs and modelled A100 time of three data flows of one layer's attention backward (GPT-2 large, 8 × 1024 tokens) on crate::cost",
                "一层注意力反向的三种数据流的读写字节、FLOPs 和模型估算的 A100 时间（GPT-2 large，8 × 1024 个 token），用 crate::cost 计算",
            ),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ex1_softmax_row() {
        let o = run().unwrap();
        // Hand: s = 0.5; (0.5·0.5, 0.3·(−0.5), 0.2·(−0.5)).
        let dx = &o.ex1.answer.dx;
        for (a, b) in dx.iter().zip([0.25, -0.15, -0.10]) {
            assert!((a - b).abs() < 1e-12);
        }
        assert!(o.ex1.answer.sum_dx.abs() < 1e-12);
        assert_eq!(o.ex1.agrees, Some(true));
    }

    #[test]
    fn ex2_layernorm_sums_to_zero() {
        let e = ex2();
        assert!(e.max_abs_row_sum < 1e-12 * e.max_row_abs_total, "{e:?}");
        assert!(e.max_abs_sum_xhat < 1e-12 * e.cols as f64);
    }

    #[test]
    fn ex3_and_ex4_trainer_bytes() {
        let o = run().unwrap();
        assert_eq!(o.ex3.answer.baseline_bytes_per_param, 6 + 28 + 6);
        assert_eq!(o.ex3.answer.workspace_bytes_per_param, 4 + 8 + 2 + 8);
        // 7e9 × 8 bytes = 56 GB, 7e9 × 4 = 28 GB.
        assert_eq!(o.ex4.answer.master_and_grad_gb, 56.0);
        assert_eq!(o.ex4.answer.grad_only_gb, 28.0);
    }

    #[test]
    fn ex5_and_ex6_memory() {
        let o = run().unwrap();
        // BLH = 4·2048·4096·2 B = 64 MiB; BL²N = 4·2048²·32·2 B = 1024 MiB; 3·64 + 1024.
        assert_eq!(o.ex5.answer.blh_mib, 64.0);
        assert_eq!(o.ex5.answer.bl2n_mib, 1024.0);
        assert_eq!(o.ex5.answer.lower_bound_mib, 1216.0);
        assert_eq!(o.ex6.answer.min_len, 192);
        assert!(o.ex6.answer.dominates_at && !o.ex6.answer.dominates_below);
        assert_eq!(o.ex6.answer.crossover_from_hidden_and_heads, 3 * 4096 / 64);
    }

    #[test]
    fn ex7_two_stage() {
        let e = ex7().unwrap();
        assert_eq!(e.segments, 216);
        assert_eq!(e.two_stage.stage1_threads, 108 * 2048);
        assert_eq!(e.two_stage.stage1_steps, 8192_u64.div_ceil(216));
        assert_eq!(e.two_stage.stage2_threads, 1024);
        assert_eq!(e.two_stage.stage2_steps, 216);
    }

    #[test]
    fn ex8_trainer_ledger() {
        let e = ex8().unwrap();
        assert_eq!(
            (e.tensors, e.baseline_launches, e.workspace_launches),
            (436, 1308, 1)
        );
        // Lecture: 5.2 ms + 19.9 ms vs 4 µs + 10.95 ms.
        assert!((e.baseline_launch_ms - 5.232).abs() < 1e-9);
        assert!(
            (e.baseline_bytes_ms - 19.9).abs() < 0.05,
            "{}",
            e.baseline_bytes_ms
        );
        assert!((e.workspace_launch_us - 4.0).abs() < 1e-9);
        assert!(
            (e.workspace_bytes_ms - 10.95).abs() < 0.01,
            "{}",
            e.workspace_bytes_ms
        );
    }

    #[test]
    fn ex9_fp16_swallows() {
        let o = run().unwrap();
        assert!(o.ex9.answer.at_1_5.swallowed);
        assert!(!o.ex9.answer.at_0_6.swallowed);
        // A whole spacing 2⁻¹¹ in [0.5, 1): 4.8828125e-4.
        assert_eq!(o.ex9.answer.at_0_6.added, 2f32.powi(-11));
        assert!((f64::from(o.ex9.answer.at_0_6.added) - 4.88e-4).abs() < 1e-6);
    }

    #[test]
    fn ex10_fragmentation() {
        let e = ex10().unwrap();
        assert_eq!(e.served, Served::NewSegment);
        assert_eq!(e.segments_created, 3);
        assert!(e.reserved_after >= 350_000_000, "{}", e.reserved_after);
        assert!(e.preallocated_bytes < e.reserved_after);
    }

    #[test]
    fn ex11_and_ex12() {
        let e = ex11().unwrap();
        assert!(e.share_1024 > e.share_16384);
        for w in e.accumulation.windows(2) {
            assert!(w[1].trainer_share_baseline < w[0].trainer_share_baseline);
        }
        let e = ex12().unwrap();
        // The FlashAttention-style flow moves no L × L tensor: far fewer bytes, more FLOPs.
        assert!(e.flows[2].bytes < e.flows[0].bytes / 10.0);
        assert!(e.flows[2].flops > e.flows[0].flops);
        // Prologue fusion: each of two GEMMs re-reads ∇P, M, y (5 B) instead of ∇S (2 B) but
        // the 7-byte kernel goes: 7 + 2·2 = 11 vs 2·5 = 10 bytes per score element.
        let per = |f: &Flow12| f.bytes;
        assert!(per(&e.flows[1]) < per(&e.flows[0]));
    }

    #[test]
    fn every_key_is_present_and_agrees() {
        let v = (SCENE.run)(&SCENE.defaults(), None)
            .unwrap()
            .to_json()
            .unwrap();
        for i in 1..=12 {
            let k = format!("ex{i}");
            assert!(v.get(&k).is_some(), "{k}");
            // Both wordings, and the Chinese one really Chinese.
            assert!(v[&k]["question"]["en"].is_string(), "{k}");
            let zh = v[&k]["question"]["zh"].as_str().unwrap_or_default();
            assert!(
                zh.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)),
                "{k}: {zh}"
            );
            let zh = v[&k]["lecture_answer"]["zh"].as_str().unwrap_or_default();
            assert!(
                zh.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)),
                "{k}: {zh}"
            );
            assert!(v[&k]["answer"].is_object());
            if v[&k]["agrees"].is_boolean() {
                assert_eq!(v[&k]["agrees"], true, "{k}");
            }
        }
    }
}
