//! The cross-entropy kernels (the LM-head GEMMs are in `gemms`): the baseline's fp32 chain
//! (cast, log-softmax, NLL and their backwards, cast back) and the one fused kernel over FP16
//! logits.

use super::super::shapes::{Category, StepShape};
use super::super::{ACT_BYTES, FP32_BYTES, ID_BYTES};
use super::{K, mem};

pub(in crate::step::ledger) fn cross_entropy_baseline(s: &StepShape) -> Vec<K> {
    let n = s.logits();
    let (h, w) = (n * ACT_BYTES, n * FP32_BYTES);
    let ids = s.t() * ID_BYTES;
    let rows = s.t() * FP32_BYTES;
    use Category::CrossEntropy as C;
    vec![
        mem(
            "fwd: cast logits fp16 → fp32",
            C,
            1,
            &[("logits", h)],
            &[("logits (f32)", w)],
        ),
        mem(
            "fwd: log_softmax (f32)",
            C,
            1,
            &[("logits (f32)", w)],
            &[("logp", w)],
        ),
        mem(
            "fwd: nll_loss (gather −logp[target], mean)",
            C,
            1,
            &[("targets", ids), ("logp[target]", rows)],
            &[("loss", FP32_BYTES)],
        ),
        mem(
            "bwd: nll_loss backward: zero ∇logp",
            C,
            1,
            &[],
            &[("∇logp", w)],
        ),
        mem(
            "bwd: nll_loss backward: scatter −1/T at targets",
            C,
            1,
            &[("targets", ids)],
            &[("∇logp[target]", rows)],
        ),
        mem(
            "bwd: log_softmax backward ∇x = ∇y − eʸ·Σ∇y",
            C,
            1,
            &[("∇logp", w), ("logp", w)],
            &[("∇logits (f32)", w)],
        ),
        mem(
            "bwd: cast ∇logits fp32 → fp16",
            C,
            1,
            &[("∇logits (f32)", w)],
            &[("∇logits", h)],
        ),
    ]
}

pub(in crate::step::ledger) fn cross_entropy_fused(s: &StepShape) -> Vec<K> {
    let n = s.logits();
    let h = n * ACT_BYTES;
    let ids = s.t() * ID_BYTES;
    let rows = s.t() * FP32_BYTES;
    use Category::CrossEntropy as C;
    vec![
        mem(
            "fused softmax cross-entropy: row max and Σe in one pass, loss and ∇logits = (softmax − onehot)·∇loss written in the second (row re-read from cache)",
            C,
            1,
            &[("logits", h), ("targets", ids)],
            &[("∇logits", h), ("row losses (f32)", rows)],
        ),
        mem(
            "loss = mean of row losses",
            C,
            1,
            &[("row losses (f32)", rows)],
            &[("loss", FP32_BYTES)],
        ),
    ]
}
