//! The blocks' forward kernels other than GEMMs: LayerNorm as its 7-op decomposition or
//! fused, and the baseline's and the LightSeq2-style attention, dropout, bias + activation and
//! residual kernels (final LayerNorm included).

use super::super::MASK_BYTES;
use super::super::shapes::{Category, StepShape};
use super::{K, mem};

/// LayerNorm forward as the 7-op decomposition whose backward is Lab A's autograd chain
/// (it saves xc, x̂ and σ, which that chain reads).
pub(in crate::step::ledger) fn ln_forward_unfused(s: &StepShape, tag: &str, n: u64) -> Vec<K> {
    let (e, r, c) = (s.act(s.d), s.row(), s.col(s.d));
    let cat = Category::LayerNorm;
    vec![
        mem(
            format!("{tag} fwd (1) μ = mean(x)"),
            cat,
            n,
            &[("x", e)],
            &[("μ (f32)", r)],
        ),
        mem(
            format!("{tag} fwd (2) xc = x − μ"),
            cat,
            n,
            &[("x", e), ("μ", r)],
            &[("xc", e)],
        ),
        mem(
            format!("{tag} fwd (3) s = xc²"),
            cat,
            n,
            &[("xc", e)],
            &[("s", e)],
        ),
        mem(
            format!("{tag} fwd (4) v = mean(s)"),
            cat,
            n,
            &[("s", e)],
            &[("v (f32)", r)],
        ),
        mem(
            format!("{tag} fwd (5) σ = √(v + ε)"),
            cat,
            n,
            &[("v", r)],
            &[("σ (f32)", r)],
        ),
        mem(
            format!("{tag} fwd (6) x̂ = xc/σ"),
            cat,
            n,
            &[("xc", e), ("σ", r)],
            &[("x̂", e)],
        ),
        mem(
            format!("{tag} fwd (7) y = γ⊙x̂ + β"),
            cat,
            n,
            &[("x̂", e), ("γ", c), ("β", c)],
            &[("y", e)],
        ),
    ]
}

/// LayerNorm forward fused (LightSeq2 / HW4 `ker_layer_norm`): saves μ and r per row.
pub(in crate::step::ledger) fn ln_forward_fused(s: &StepShape, tag: &str, n: u64) -> K {
    let (e, r, c) = (s.act(s.d), s.row(), s.col(s.d));
    mem(
        format!("{tag} fwd fused (ker_layer_norm)"),
        Category::LayerNorm,
        n,
        &[("x", e), ("γ", c), ("β", c)],
        &[("y", e), ("μ (f32)", r), ("r (f32)", r)],
    )
}

pub(in crate::step::ledger) fn forward_other_baseline(s: &StepShape) -> Vec<K> {
    let n = s.layers;
    let (d, f) = (s.d, s.f);
    let (e, e3, ef) = (s.act(d), s.act(3 * d), s.act(f));
    let sc = s.score();
    let causal = (s.seq_len * s.seq_len) as f64; // bool mask, L² bytes, broadcast
    use Category::*;
    let mut v = ln_forward_unfused(s, "LN1", n);
    v.extend([
        mem(
            "QKV bias add",
            Transform,
            n,
            &[("QKV", e3), ("b_qkv", s.col(3 * d))],
            &[("QKV", e3)],
        ),
        mem(
            "split heads: copy Q, K, V to [B, h, L, d_h]",
            Transform,
            n,
            &[("QKV", e3)],
            &[("Q, K, V", e3)],
        ),
        mem("scale S/√d_h", Softmax, n, &[("S", sc)], &[("S′", sc)]),
        mem(
            "causal mask (where)",
            Softmax,
            n,
            &[("S′", sc), ("causal mask (bool)", causal)],
            &[("S″", sc)],
        ),
        mem(
            "softmax y = softmax(S″)",
            Softmax,
            n,
            &[("S″", sc)],
            &[("y", sc)],
        ),
        mem(
            "attention dropout P = y⊙M/keep",
            Softmax,
            n,
            &[("y", sc)],
            &[("P", sc), ("M (u8)", s.score_elements() * MASK_BYTES)],
        ),
        mem(
            "merge heads: copy context to [T, d]",
            Transform,
            n,
            &[("context", e)],
            &[("context", e)],
        ),
        mem(
            "output bias add",
            Dropout,
            n,
            &[("attn out", e), ("b_o", s.col(d))],
            &[("attn out", e)],
        ),
        mem(
            "residual dropout",
            Dropout,
            n,
            &[("attn out", e)],
            &[("dropped", e), ("mask (u8)", s.mask(d))],
        ),
        mem(
            "residual add r₁ = x + dropped",
            Dropout,
            n,
            &[("x", e), ("dropped", e)],
            &[("r₁", e)],
        ),
    ]);
    v.extend(ln_forward_unfused(s, "LN2", n));
    v.extend([
        mem(
            "fc1 bias add",
            BiasActivation,
            n,
            &[("fc1 out", ef), ("b_fc1", s.col(f))],
            &[("fc1 out", ef)],
        ),
        mem(
            "GELU",
            BiasActivation,
            n,
            &[("fc1 out", ef)],
            &[("GELU out", ef)],
        ),
        mem(
            "fc2 bias add",
            Dropout,
            n,
            &[("fc2 out", e), ("b_fc2", s.col(d))],
            &[("fc2 out", e)],
        ),
        mem(
            "residual dropout",
            Dropout,
            n,
            &[("fc2 out", e)],
            &[("dropped", e), ("mask (u8)", s.mask(d))],
        ),
        mem(
            "residual add r₂ = r₁ + dropped",
            Dropout,
            n,
            &[("r₁", e), ("dropped", e)],
            &[("r₂", e)],
        ),
    ]);
    v.extend(ln_forward_unfused(s, "final LN", 1));
    v
}

pub(in crate::step::ledger) fn forward_other_fused(s: &StepShape) -> Vec<K> {
    let n = s.layers;
    let (d, f) = (s.d, s.f);
    let (e, e3, ef) = (s.act(d), s.act(3 * d), s.act(f));
    let sc = s.score();
    use Category::*;
    vec![
        ln_forward_fused(s, "LN1", n),
        mem(
            "bias + split heads (fused)",
            Transform,
            n,
            &[("QKV", e3), ("b_qkv", s.col(3 * d))],
            &[("Q, K, V", e3)],
        ),
        mem(
            "softmax with causal mask, in place (ker_attn_softmax; 1/√d_h in the GEMM's α)",
            Softmax,
            n,
            &[("S", sc)],
            &[("y (saved)", sc)],
        ),
        mem(
            "attention dropout P = y⊙M/keep (LightSeq2 ships it as its own kernel)",
            Softmax,
            n,
            &[("y", sc)],
            &[("P", sc), ("M (u8)", s.score_elements() * MASK_BYTES)],
        ),
        mem(
            "merge heads",
            Transform,
            n,
            &[("context", e)],
            &[("context", e)],
        ),
        mem(
            "bias + dropout + residual (fused)",
            Dropout,
            n,
            &[("attn out", e), ("b_o", s.col(d)), ("x", e)],
            &[("r₁", e), ("mask (u8)", s.mask(d))],
        ),
        ln_forward_fused(s, "LN2", n),
        mem(
            "bias + GELU (fused)",
            BiasActivation,
            n,
            &[("fc1 out", ef), ("b_fc1", s.col(f))],
            &[("GELU out", ef)],
        ),
        mem(
            "bias + dropout + residual (fused)",
            Dropout,
            n,
            &[("fc2 out", e), ("b_fc2", s.col(d)), ("r₁", e)],
            &[("r₂", e), ("mask (u8)", s.mask(d))],
        ),
        ln_forward_fused(s, "final LN", 1),
    ]
}
