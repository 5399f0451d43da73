//! The ledger's types: the stages of a step ([`StageId`]), the operator families
//! ([`Category`]), one timed kernel ([`StepKernel`]) with its operands, one version's side of a
//! stage, a stage with both sides, a version's step totals, and the [`StepShape`] (model,
//! tokens, sequence length) whose byte helpers size every kernel.

use serde::Serialize;

use super::{ACT_BYTES, MASK_BYTES, STAT_BYTES};
use crate::cost::KernelCost;
use crate::trainer::census::{ModelSpec, total_parameters};

/// Which stage of the step a kernel belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StageId {
    /// Token + position embedding, forward and backward (with the tied-weight gradient).
    Embedding,
    /// The blocks' GEMMs, forward: QKV, QKᵀ, PV, output projection, FFN.
    ForwardGemm,
    /// Everything else in the blocks' forward (and the final LayerNorm).
    ForwardOther,
    /// The LM-head GEMMs (forward and both backward) and the cross-entropy kernels — the
    /// lecture's "cross-entropy" segment (§6.1: 1.79× at a 50k vocabulary).
    CrossEntropy,
    /// The blocks' GEMMs, backward (data and weight gradients).
    BackwardGemm,
    /// Everything else in the blocks' backward (and the final LayerNorm).
    BackwardOther,
    /// The parameter update (Lab C).
    Trainer,
}

/// Every stage in step order.
pub const STAGES: [StageId; 7] = [
    StageId::Embedding,
    StageId::ForwardGemm,
    StageId::ForwardOther,
    StageId::CrossEntropy,
    StageId::BackwardGemm,
    StageId::BackwardOther,
    StageId::Trainer,
];

impl StageId {
    /// Display name.
    pub fn name(self) -> &'static str {
        match self {
            StageId::Embedding => "embedding (forward + backward)",
            StageId::ForwardGemm => "forward: GEMMs",
            StageId::ForwardOther => {
                "forward: LayerNorm, softmax, dropout, bias+activation, residual"
            }
            StageId::CrossEntropy => "LM head GEMMs + cross-entropy (forward + backward)",
            StageId::BackwardGemm => "backward: GEMMs (data + weight gradients)",
            StageId::BackwardOther => {
                "backward: LayerNorm, softmax, dropout, bias+activation, residual"
            }
            StageId::Trainer => "trainer (parameter update)",
        }
    }
}

/// The operator family of a kernel (for the per-operator comparison with the paper).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// Matrix multiplies (cuBLAS in both versions).
    Gemm,
    /// LayerNorm forward and backward.
    LayerNorm,
    /// Attention: scale, causal mask, softmax and attention dropout, forward and backward.
    Softmax,
    /// Hidden-size dropout with its bias add and residual add (and their backwards, bias
    /// gradients included).
    Dropout,
    /// FFN bias + GELU (and backward, bias gradient included).
    BiasActivation,
    /// Head split / merge copies (with the QKV bias and its gradient).
    Transform,
    /// Token + position embedding.
    Embedding,
    /// Cross-entropy kernels (the LM-head GEMMs are [`Category::Gemm`]).
    CrossEntropy,
    /// The parameter update.
    Trainer,
}

/// One tensor a kernel reads or writes, bytes per instance.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Operand {
    /// The tensor, e.g. `∇y` or `mask (u8)`.
    pub name: String,
    /// Bytes.
    pub bytes: f64,
}

/// One kernel (or one part of a fused launch) of the step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepKernel {
    /// What it computes.
    pub name: String,
    /// Operator family.
    pub category: Category,
    /// Where the figures come from (this ledger, or the lab whose ledger is reused).
    pub source: &'static str,
    /// How many times it runs per step (`layers` for a block's kernel, 1 otherwise).
    pub instances: u64,
    /// Operands read, per instance.
    pub reads: Vec<Operand>,
    /// Operands written, per instance.
    pub writes: Vec<Operand>,
    /// The cost-model entry of one instance.
    pub per_instance: KernelCost,
    /// Time of one instance, µs.
    pub us_per_instance: f64,
    /// FLOPs, all instances.
    pub flops: f64,
    /// Bytes moved, all instances.
    pub bytes: f64,
    /// Launches, all instances (0 for a part of a launch counted elsewhere).
    pub launches: u64,
    /// Time, all instances, µs.
    pub us: f64,
}

/// One version's kernels in one stage.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StageSide {
    /// Kernels in order.
    pub kernels: Vec<StepKernel>,
    /// FLOPs.
    pub flops: f64,
    /// Bytes moved.
    pub bytes: f64,
    /// Launches.
    pub launches: u64,
    /// Launch overhead, ms.
    pub launch_ms: f64,
    /// Time, ms.
    pub ms: f64,
}

/// One stage, both versions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stage {
    /// Which stage.
    pub id: StageId,
    /// Display name.
    pub name: &'static str,
    /// Baseline.
    pub baseline: StageSide,
    /// LightSeq2-style.
    pub lightseq2: StageSide,
    /// `baseline.ms / lightseq2.ms`.
    pub speedup: f64,
    /// Baseline ms − LightSeq2 ms.
    pub saved_ms: f64,
}

/// One version's whole step.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StepTotals {
    /// Step time, ms.
    pub ms: f64,
    /// GEMM kernels (blocks and LM head), ms.
    pub gemm_ms: f64,
    /// Every other kernel except the trainer, ms.
    pub other_ms: f64,
    /// The trainer, ms.
    pub trainer_ms: f64,
    /// trainer_ms / ms.
    pub trainer_share: f64,
    /// FLOPs.
    pub flops: f64,
    /// Bytes moved.
    pub bytes: f64,
    /// Launches.
    pub launches: u64,
    /// Launch overhead, ms.
    pub launch_ms: f64,
}

/// The shape the ledger is built for.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StepShape {
    /// Layers.
    pub layers: u64,
    /// Hidden size d.
    pub d: u64,
    /// FFN width f = 4d.
    pub f: u64,
    /// Heads h.
    pub heads: u64,
    /// Head dimension d_h = d/h.
    pub d_head: u64,
    /// Vocabulary V.
    pub vocab: u64,
    /// Learned positions (rows of wpe).
    pub context: u64,
    /// Tokens per batch T.
    pub tokens: u64,
    /// Sequence length L.
    pub seq_len: u64,
    /// Sequences B = T/L.
    pub batch: u64,
    /// Parameters (Lab C's census).
    pub parameters: u64,
    /// Parameter tensors.
    pub tensors: u64,
}

impl StepShape {
    /// The shape of `spec` at `tokens` tokens in sequences of `seq_len`.
    pub fn new(spec: &ModelSpec, tokens: u64, seq_len: u64) -> Self {
        let t = spec.tensors();
        StepShape {
            layers: spec.layers as u64,
            d: spec.d_model as u64,
            f: spec.d_ff as u64,
            heads: spec.heads as u64,
            d_head: (spec.d_model / spec.heads.max(1)) as u64,
            vocab: spec.vocab as u64,
            context: spec.context as u64,
            tokens,
            seq_len,
            batch: tokens / seq_len.max(1),
            parameters: total_parameters(&t),
            tensors: t.len() as u64,
        }
    }
    pub(super) fn t(&self) -> f64 {
        self.tokens as f64
    }
    /// Bytes of a T × n FP16 activation.
    pub(super) fn act(&self, n: u64) -> f64 {
        self.t() * n as f64 * ACT_BYTES
    }
    /// Bytes of a T × n uint8 mask.
    pub(super) fn mask(&self, n: u64) -> f64 {
        self.t() * n as f64 * MASK_BYTES
    }
    /// Bytes of an n-element FP16 vector (bias, γ, β, their gradients).
    pub(super) fn col(&self, n: u64) -> f64 {
        n as f64 * ACT_BYTES
    }
    /// Bytes of a per-row f32 statistic.
    pub(super) fn row(&self) -> f64 {
        self.t() * STAT_BYTES
    }
    /// Elements of the score tensor, B·h·L².
    pub fn score_elements(&self) -> f64 {
        (self.batch * self.heads) as f64 * (self.seq_len * self.seq_len) as f64
    }
    /// Bytes of the FP16 score tensor.
    pub(super) fn score(&self) -> f64 {
        self.score_elements() * ACT_BYTES
    }
    /// Logits, T·V.
    pub fn logits(&self) -> f64 {
        self.t() * self.vocab as f64
    }
}
