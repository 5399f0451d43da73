//! Every GEMM of the step, the same in both versions: a block's forward GEMMs (QKV, the two
//! attention GEMMs per head, output projection, FFN), its backward GEMMs (data and weight
//! gradients, the four attention GEMMs), and the LM head's three GEMMs.

use super::super::shapes::StepShape;
use super::{K, gemm};

/// Forward GEMMs of one block (same in both versions).
pub(in crate::step::ledger) fn forward_gemms(s: &StepShape) -> Vec<K> {
    let (n, t, d, f) = (s.layers, s.tokens, s.d, s.f);
    let (bh, l, dh) = (s.batch * s.heads, s.seq_len, s.d_head);
    vec![
        gemm(
            "QKV projection",
            n,
            1,
            t,
            3 * d,
            d,
            "LN1 out",
            "W_qkv",
            "QKV",
        ),
        gemm("scores S = Q·Kᵀ (per head)", n, bh, l, l, dh, "Q", "K", "S"),
        gemm(
            "context = P·V (per head)",
            n,
            bh,
            l,
            dh,
            l,
            "P",
            "V",
            "context",
        ),
        gemm(
            "output projection",
            n,
            1,
            t,
            d,
            d,
            "context",
            "W_o",
            "attn out",
        ),
        gemm("FFN up (fc1)", n, 1, t, f, d, "LN2 out", "W_fc1", "fc1 out"),
        gemm(
            "FFN down (fc2)",
            n,
            1,
            t,
            d,
            f,
            "GELU out",
            "W_fc2",
            "fc2 out",
        ),
    ]
}

/// Backward GEMMs of one block: data gradient and weight gradient of each projection, and the
/// four attention GEMMs (same in both versions).
pub(in crate::step::ledger) fn backward_gemms(s: &StepShape) -> Vec<K> {
    let (n, t, d, f) = (s.layers, s.tokens, s.d, s.f);
    let (bh, l, dh) = (s.batch * s.heads, s.seq_len, s.d_head);
    vec![
        gemm(
            "fc2 data grad ∇GELU out = ∇y·W_fc2ᵀ",
            n,
            1,
            t,
            f,
            d,
            "∇fc2 out",
            "W_fc2",
            "∇GELU out",
        ),
        gemm(
            "fc2 weight grad ∇W_fc2",
            n,
            1,
            f,
            d,
            t,
            "GELU outᵀ",
            "∇fc2 out",
            "∇W_fc2",
        ),
        gemm(
            "fc1 data grad",
            n,
            1,
            t,
            d,
            f,
            "∇fc1 out",
            "W_fc1",
            "∇LN2 out",
        ),
        gemm(
            "fc1 weight grad ∇W_fc1",
            n,
            1,
            d,
            f,
            t,
            "LN2 outᵀ",
            "∇fc1 out",
            "∇W_fc1",
        ),
        gemm(
            "output projection data grad",
            n,
            1,
            t,
            d,
            d,
            "∇attn out",
            "W_o",
            "∇context",
        ),
        gemm(
            "output projection weight grad ∇W_o",
            n,
            1,
            d,
            d,
            t,
            "contextᵀ",
            "∇attn out",
            "∇W_o",
        ),
        gemm(
            "∇P = ∇context·Vᵀ (per head)",
            n,
            bh,
            l,
            l,
            dh,
            "∇context",
            "V",
            "∇P",
        ),
        gemm(
            "∇V = Pᵀ·∇context (per head)",
            n,
            bh,
            l,
            dh,
            l,
            "P",
            "∇context",
            "∇V",
        ),
        gemm("∇Q = ∇S·K (per head)", n, bh, l, dh, l, "∇S", "K", "∇Q"),
        gemm("∇K = ∇Sᵀ·Q (per head)", n, bh, l, dh, l, "∇S", "Q", "∇K"),
        gemm(
            "QKV data grad",
            n,
            1,
            t,
            d,
            3 * d,
            "∇QKV",
            "W_qkv",
            "∇LN1 out",
        ),
        gemm(
            "QKV weight grad ∇W_qkv",
            n,
            1,
            d,
            3 * d,
            t,
            "LN1 outᵀ",
            "∇QKV",
            "∇W_qkv",
        ),
    ]
}

pub(in crate::step::ledger) fn lm_head_gemms(s: &StepShape) -> Vec<K> {
    let (t, d, v) = (s.tokens, s.d, s.vocab);
    vec![
        gemm(
            "LM head logits = h·wteᵀ",
            1,
            1,
            t,
            v,
            d,
            "final LN out",
            "wteᵀ",
            "logits",
        ),
        gemm(
            "LM head data grad ∇h = ∇logits·wte",
            1,
            1,
            t,
            d,
            v,
            "∇logits",
            "wte",
            "∇h",
        ),
        gemm(
            "LM head weight grad ∇W = ∇logitsᵀ·h",
            1,
            1,
            v,
            d,
            t,
            "∇logitsᵀ",
            "h",
            "∇W (LM head)",
        ),
    ]
}
