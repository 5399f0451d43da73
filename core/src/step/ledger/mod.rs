//! Scene `step-ledger` (lecture §1.2, §6.1, §6.2; script 05): one training step of a GPT-2
//! model on paper, baseline vs LightSeq2-style, stage by stage and kernel by kernel.
//!
//! # The model
//!
//! Shapes: T tokens per batch = B sequences × L tokens, hidden d, FFN width f = 4d, h heads of
//! d_h = d/h, vocabulary V, `layers` blocks (GPT-2: pre-norm, learned positions, LM head tied to
//! the token embedding). Activations are FP16 (2 bytes), dropout masks uint8 (1 byte, as HW4 /
//! LightSeq2 store them), per-row statistics f32 (4 bytes), token ids int64 (8 bytes).
//!
//! Every kernel reads each operand once from DRAM and writes each output once (the tensors are
//! far larger than L2, and no kernel re-reads what it wrote; a second pass over a row that a
//! kernel makes is assumed to hit cache). Its time is [`crate::cost`]'s:
//! `max(bytes / bandwidth, FLOPs / (peak × gemm_efficiency)) + launches × launch overhead`.
//! A GEMM `C[m×n] = A[m×k]·B[k×n]` (batched `batch` times) does `2·m·n·k` FLOPs per batch and
//! moves A, B and C once; the attention score GEMMs are memory-bound by that rule (they write
//! or read the B·h·L² score tensor), the projection GEMMs compute-bound. GEMMs are the same in
//! both versions: LightSeq2 does not change them (it folds the 1/√d_h scale into the score
//! GEMM's α, which changes no byte).
//!
//! **Baseline** (PyTorch eager, no cross-op fusion — the lecture's "PyTorch 不跨运算融合、逐张量
//! 更新"): LayerNorm as its 7-op decomposition forward and Lab A's 9-kernel autograd chain
//! backward; bias add, head split/merge copies, 1/√d_h scale, causal mask, softmax, dropout,
//! GELU and residual add each a kernel; attention dropout + softmax backward as Lab B's 5-kernel
//! chain; bias gradients as column-sum kernels; cross-entropy in fp32 (cast, log-softmax,
//! NLL, their backwards, cast back); per-tensor FP32-master trainer (Lab C, 3 launches per
//! tensor).
//!
//! **LightSeq2-style** (paper §IV-A/B, HW4 kernels): LayerNorm forward fused; Lab A's fused
//! LayerNorm backward (with the residual gradient added in the same kernel); bias + head split
//! fused, softmax with the causal mask fused (in place; y is saved for the backward) and the
//! attention dropout as its own kernel (as LightSeq2 ships them: `ker_attn_softmax`, then
//! `ls_dropout` writing P and the mask), bias + dropout + residual fused, bias + GELU fused;
//! Lab B's fused dropout + softmax backward; bias gradients computed inside the dropout / GELU
//! backward kernels; one fused cross-entropy kernel (loss and ∇logits in one pass over FP16
//! logits); fused embedding; the linked FP16 workspace trainer (Lab C, 1 launch).
//!
//! # Lecture figures (checks in the tests, quoted in [`LectureCheck`], never used here)
//!
//! Step speedup 1.39× on paper, measured 1.6–1.9× (slides p.37); cross-entropy 37.9 → 4.2 bytes
//! per logit, that segment 1.79× at a 50k vocabulary; trainer ≈ 6 % of the baseline step with
//! 1,308 launches (25.1 ms = 5.2 ms launches + 19.9 ms bytes); trainer share 32 % → 3 % from 1024
//! to 16384 tokens; at 60 % GEMM efficiency 1.31×. The lecture's own stage table is not in the
//! text we have, so where this first-principles ledger differs the note in [`LectureCheck`]
//! says by how much and why.
//!
//! # Layout
//!
//! - `shapes` — the ledger's types ([`StageId`], [`Category`], [`StepKernel`], [`Stage`], …)
//!   and the [`StepShape`] the kernels are sized by;
//! - `stages` — the kernels of each stage, baseline and LightSeq2-style, before timing;
//! - `assembly` — timing every kernel on the cost model and adding stages into a
//!   [`StepLedger`] ([`step_ledger`]);
//! - `summary` — the cross-entropy segment and the per-operator rows beside the paper;
//! - `sweeps` — §6.2's sweeps over tokens, GEMM efficiency and device;
//! - `checks` — the lecture's figures and the paper's measured ones, quoted beside the model.

mod assembly;
mod checks;
mod shapes;
mod stages;
mod summary;
mod sweeps;
#[cfg(test)]
mod tests;

use crate::text::Text;
use serde::Serialize;

use crate::Error;
use crate::device::{DEVICE_IDS, device};
use crate::params::{ParamSpec, ParamValues};
use crate::scene::{Chapter, Cost, Featured, Scene, SceneDef, erase};
use crate::trainer::census::{Family, ModelSpec, model};
use crate::trainer::workspace::TrainerLedger;

pub use assembly::{StepLedger, step_ledger};
pub use checks::{LectureCheck, ReportedFigure};
pub use shapes::{
    Category, Operand, STAGES, Stage, StageId, StageSide, StepKernel, StepShape, StepTotals,
};
pub use summary::{CrossEntropySummary, OperatorRow};
pub use sweeps::{EFFICIENCY_SWEEP, SweepPoint, Sweeps, TOKEN_SWEEP_BATCHES, sweeps};

use checks::{lecture_checks, reported_figures};
use summary::{cross_entropy_summary, operator_rows};

/// Bytes of one FP16 activation element.
pub const ACT_BYTES: f64 = 2.0;
/// Bytes of one dropout-mask element (uint8).
pub const MASK_BYTES: f64 = 1.0;
/// Bytes of one per-row statistic (f32).
pub const STAT_BYTES: f64 = 4.0;
/// Bytes of one FP32 element (the baseline's fp32 cross-entropy).
pub const FP32_BYTES: f64 = 4.0;
/// Bytes of one token id (int64).
pub const ID_BYTES: f64 = 8.0;
/// FFN width as a multiple of d (GPT-2: 4).
pub const FFN_MULT: u64 = 4;
/// Most tokens per batch the scene models (a ledger is arithmetic; this keeps Lab B's
/// batch ≤ 1024 sequences at L = 256).
pub const MAX_TOKENS: u64 = 1 << 18;
/// Shortest sequence length accepted.
pub const MIN_SEQ_LEN: u64 = 64;
/// Dropout ratio of GPT-2 (attn/resid/embd_pdrop 0.1); it changes no byte, only Lab B's call.
const DROPOUT: f64 = 0.1;

/// GPT-2 model ids this scene accepts (the census's GPT-2 family).
pub const GPT2_IDS: &[&str] = &["gpt2-small", "gpt2-medium", "gpt2-large", "gpt2-xl"];

const PARAMS: &[ParamSpec] = &[
    ParamSpec::choice(
        "model",
        "model (GPT-2 family)",
        "模型（GPT-2 系列）",
        GPT2_IDS,
        "gpt2-large",
    ),
    ParamSpec::int(
        "tokens",
        "tokens per batch T (multiple of seq_len)",
        "每批 token 数 T（seq_len 的倍数）",
        64,
        MAX_TOKENS as i64,
        8192,
    )
    .log(),
    ParamSpec::choice("device", "device", "设备", DEVICE_IDS, "a100"),
    ParamSpec::float(
        "gemm_efficiency",
        "GEMM efficiency (fraction of peak, 0.01–1)",
        "GEMM 效率（峰值的比例，0.01–1）",
        MIN_GEMM_EFFICIENCY,
        1.0,
        1.0,
    ),
    ParamSpec::int(
        "seq_len",
        "sequence length L (tokens)",
        "序列长度 L（token）",
        MIN_SEQ_LEN as i64,
        1024,
        1024,
    )
    .log(),
];

/// The scene's typed definition (`step-ledger`).
pub struct StepScene;

impl SceneDef for StepScene {
    const ID: &'static str = "step-ledger";
    type Output = StepOutput;

    fn run(v: &ParamValues) -> Result<Self::Output, Error> {
        run(&StepParams::from_values(v)?)
    }
}

/// The registry entry.
pub const SCENE: Scene = Scene {
    id: StepScene::ID,
    section: "§6.1",
    title: Text::new(
        "The whole training step on paper: baseline vs LightSeq2",
        "一整步训练的纸面账：基线 vs LightSeq2",
    ),
    summary: Text::new(
        "GPT-2 large, 8 × 1024 tokens: every kernel's FLOPs, bytes, launches and time, stage by stage; sweeps over tokens, GEMM efficiency and device; the paper's measured speedups beside the model.",
        "GPT-2 large，8 × 1024 个 token：逐阶段列出每个内核的 FLOPs、字节、发射次数和时间；按 token 数、GEMM 效率和设备扫描；论文实测的加速比放在模型旁边。",
    ),
    params: PARAMS,
    run: erase::<StepScene>(),
    input: None,
    chapter: &Chapter::STEP,
    featured: Featured::Nothing,
    cost: Cost::Light,
};

/// Validated parameters.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepParams {
    /// Model id, one of [`GPT2_IDS`].
    pub model: String,
    /// Tokens per batch T, a multiple of `seq_len`, `seq_len..=`[`MAX_TOKENS`].
    pub tokens: u64,
    /// Device id.
    pub device: String,
    /// GEMM throughput as a fraction of the device's peak, in 0.01..=1 ([`MIN_GEMM_EFFICIENCY`]).
    pub gemm_efficiency: f64,
    /// Sequence length L, [`MIN_SEQ_LEN`]`..=` the model's context (1024 for GPT-2).
    pub seq_len: u64,
}

impl StepParams {
    /// Reads and validates the values.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] naming the parameter and its valid range.
    pub fn from_values(v: &ParamValues) -> Result<Self, Error> {
        let p = StepParams {
            model: v.text("model")?.to_owned(),
            tokens: nonneg(v, "tokens")?,
            device: v.text("device")?.to_owned(),
            gemm_efficiency: v.float("gemm_efficiency")?,
            seq_len: nonneg(v, "seq_len")?,
        };
        p.validate()?;
        Ok(p)
    }

    /// Checks every parameter.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] naming the parameter and its valid range.
    pub fn validate(&self) -> Result<&'static ModelSpec, Error> {
        let spec = gpt2_model(&self.model)?;
        device(&self.device)?;
        check_efficiency(self.gemm_efficiency)?;
        let ctx = spec.context as u64;
        if !(MIN_SEQ_LEN..=ctx).contains(&self.seq_len) {
            return Err(Error::invalid(
                "seq_len",
                self.seq_len,
                crate::error::Expected::IntRange {
                    min: MIN_SEQ_LEN as i64,
                    max: ctx as i64,
                }
                .noted("the model's context length", "模型的上下文长度"),
            ));
        }
        if !(self.seq_len..=MAX_TOKENS).contains(&self.tokens)
            || !self.tokens.is_multiple_of(self.seq_len)
        {
            return Err(Error::invalid(
                "tokens",
                self.tokens,
                crate::error::Expected::custom(
                    format!(
                        "expected a multiple of seq_len = {} in {}..={MAX_TOKENS}",
                        self.seq_len, self.seq_len
                    ),
                    format!(
                        "应为 {}..={MAX_TOKENS} 之间 seq_len = {} 的倍数",
                        self.seq_len, self.seq_len
                    ),
                ),
            ));
        }
        let batch = self.tokens / self.seq_len;
        if batch > 1024 {
            return Err(Error::invalid(
                "tokens",
                self.tokens,
                crate::error::Expected::custom(
                    format!(
                        "expected at most 1024 sequences: tokens ≤ 1024 × seq_len = {}",
                        1024 * self.seq_len
                    ),
                    format!(
                        "应不多于 1024 个序列：tokens ≤ 1024 × seq_len = {}",
                        1024 * self.seq_len
                    ),
                ),
            ));
        }
        Ok(spec)
    }
}

fn nonneg(v: &ParamValues, name: &str) -> Result<u64, Error> {
    let x = v.int(name)?;
    u64::try_from(x).map_err(|_| Error::invalid(name, x, crate::error::Expected::PositiveInteger))
}

/// [`Error::InvalidParam`] (`gemm_efficiency`) unless `0.01 ≤ e ≤ 1` ([`MIN_GEMM_EFFICIENCY`]).
pub fn check_efficiency(e: f64) -> Result<(), Error> {
    if e.is_finite() && (MIN_GEMM_EFFICIENCY..=1.0).contains(&e) {
        Ok(())
    } else {
        Err(Error::invalid(
            "gemm_efficiency",
            e,
            crate::error::Expected::real(0.01, 1.0)
                .noted("fraction of the device's peak", "占设备峰值的比例"),
        ))
    }
}

/// The lowest GEMM efficiency the model takes: 1 % of the device's peak (a GEMM slower than
/// that is not a GEMM the model describes; 0 would divide by zero).
pub const MIN_GEMM_EFFICIENCY: f64 = 0.01;

/// The GPT-2 model `id` from the census.
///
/// # Errors
/// [`Error::InvalidParam`] (`model`) for an unknown id or a model that is not GPT-2.
pub fn gpt2_model(id: &str) -> Result<&'static ModelSpec, Error> {
    let bad = || {
        Error::invalid(
            "model",
            id,
            crate::error::Expected::one_of(GPT2_IDS).noted("GPT-2 family", "GPT-2 系列"),
        )
    };
    let spec = model(id).map_err(|_| bad())?;
    if spec.family != Family::Gpt2 {
        return Err(bad());
    }
    Ok(spec)
}

/// The scene's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepOutput {
    /// Model id.
    pub model: String,
    /// Device id.
    pub device: String,
    /// Tokens per batch.
    pub tokens: u64,
    /// GEMM efficiency.
    pub gemm_efficiency: f64,
    /// The shape.
    pub shape: StepShape,
    /// Baseline step, ms.
    pub baseline_ms: f64,
    /// LightSeq2-style step, ms.
    pub lightseq2_ms: f64,
    /// baseline_ms / lightseq2_ms (lecture: 1.39× on paper, 1.6–1.9× measured).
    pub speedup: f64,
    /// Stages in step order, every kernel itemised.
    pub stages: Vec<Stage>,
    /// Baseline totals.
    pub baseline: StepTotals,
    /// LightSeq2-style totals.
    pub lightseq2: StepTotals,
    /// Trainer share of the baseline step (lecture: ≈ 6 %).
    pub trainer_share_baseline: f64,
    /// The trainer stage's source ledgers (Lab C), baseline then workspace.
    pub trainer: [TrainerLedger; 2],
    /// The cross-entropy segment.
    pub cross_entropy: Option<CrossEntropySummary>,
    /// Per operator family, modelled beside the paper's measured speedups.
    pub operators: Vec<OperatorRow>,
    /// §6.2 sweeps.
    pub sweeps: Sweeps,
    /// The lecture's figures beside the ledger's.
    pub lecture: Vec<LectureCheck>,
    /// The paper's measured end-to-end figures (quoted).
    pub reported: Vec<ReportedFigure>,
    /// The modelling assumptions, in words.
    pub assumptions: Vec<&'static str>,
}

/// Builds the ledger, the sweeps and the comparisons.
///
/// # Errors
/// [`Error::InvalidParam`] from [`StepParams::validate`] or [`step_ledger`].
pub fn run(p: &StepParams) -> Result<StepOutput, Error> {
    let spec = p.validate()?;
    let dev = device(&p.device)?;
    let l = step_ledger(spec, p.tokens, p.seq_len, dev, p.gemm_efficiency)?;
    let sw = sweeps(spec, p)?;
    let ce = cross_entropy_summary(&l);
    let lecture = lecture_checks(p, &l, &sw, ce);
    let reported = reported_figures(&l, &sw);
    Ok(StepOutput {
        model: p.model.clone(),
        device: p.device.clone(),
        tokens: p.tokens,
        gemm_efficiency: p.gemm_efficiency,
        shape: StepShape::new(spec, p.tokens, p.seq_len),
        baseline_ms: l.baseline.ms,
        lightseq2_ms: l.lightseq2.ms,
        speedup: l.speedup,
        trainer_share_baseline: l.baseline.trainer_share,
        trainer: [l.trainer_baseline.clone(), l.trainer_workspace.clone()],
        cross_entropy: ce,
        operators: operator_rows(&l),
        stages: l.stages,
        baseline: l.baseline,
        lightseq2: l.lightseq2,
        sweeps: sw,
        lecture,
        reported,
        assumptions: ASSUMPTIONS.to_vec(),
    })
}

/// The ledger's assumptions, carried in the output.
pub const ASSUMPTIONS: &[&str] = &[
    "every kernel reads each operand once and writes each output once from/to DRAM; time = max(bytes/bandwidth, FLOPs/(peak·gemm_efficiency)) + launches × launch overhead (crate::cost)",
    "activations FP16, dropout masks uint8, row statistics f32, token ids int64; the baseline cross-entropy runs in f32 (autocast)",
    "GEMMs move A, B, C once and are identical in both versions; the attention score GEMMs are memory-bound by that rule",
    "baseline: PyTorch eager with no cross-op fusion — LayerNorm as its 7-op decomposition forward and Lab A's 9-kernel autograd chain backward, attention dropout + softmax backward as Lab B's 5-kernel chain, GELU as one kernel",
    "LightSeq2-style: fused LayerNorm forward, Lab A's fused backward with the residual gradient added in it, softmax + causal mask in place then attention dropout (LightSeq2's shipped kernel boundaries), fused bias + dropout + residual and bias + GELU with bias gradients in the backward kernels, Lab B's fused backward, one fused cross-entropy kernel, fused embedding, Lab C's workspace trainer",
    "no gradient synchronisation, no optimizer zero_grad kernels (gradients set to none), no activation recomputation",
];
