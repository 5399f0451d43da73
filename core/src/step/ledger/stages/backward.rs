//! The blocks' backward kernels other than GEMMs: Lab A's LayerNorm backward ledgers and Lab
//! B's dropout + softmax backward ledgers converted to step kernels ([`Reused`] holds both at
//! this shape), and the baseline's and the LightSeq2-style dropout, bias-gradient, GELU and
//! head-transform backward kernels around them.

use super::super::DROPOUT;
use super::super::shapes::{Category, Operand, StepShape};
use super::{K, LAB_A_AUTOGRAD, LAB_A_FUSED, LAB_B_FUSED, LAB_B_UNFUSED, mem};
use crate::Error;
use crate::device::Device;
use crate::layernorm::bytes::{self as ln_bytes, BytesParams};
use crate::softmax::fusion::{self, FusionParams};

/// Lab A's ledger at (T, d), as step kernels.
pub(in crate::step::ledger) fn ln_backward(
    ledger: &ln_bytes::Ledger,
    tag: &str,
    n: u64,
    source: &'static str,
) -> Vec<K> {
    ledger
        .kernels
        .iter()
        .map(|k| K {
            name: format!("{tag} bwd: {}", k.name.en),
            category: Category::LayerNorm,
            source,
            instances: n,
            reads: k
                .reads
                .iter()
                .map(|o| Operand {
                    name: o.name.en.to_owned(),
                    bytes: o.bytes as f64,
                })
                .collect(),
            writes: k
                .writes
                .iter()
                .map(|o| Operand {
                    name: o.name.en.to_owned(),
                    bytes: o.bytes as f64,
                })
                .collect(),
            flops: 0.0,
            launches: k.cost.launches,
        })
        .collect()
}

/// Lab B's kernels at (B, h, L), as step kernels.
pub(in crate::step::ledger) fn softmax_backward(
    kernels: &[fusion::KernelAudit],
    n: u64,
    source: &'static str,
) -> Vec<K> {
    kernels
        .iter()
        .map(|k| K {
            name: format!("attention {}", k.name.en),
            category: Category::Softmax,
            source,
            instances: n,
            reads: k
                .reads
                .iter()
                .map(|a| Operand {
                    name: a.tensor.to_owned(),
                    bytes: a.bytes,
                })
                .collect(),
            writes: k
                .writes
                .iter()
                .map(|a| Operand {
                    name: a.tensor.to_owned(),
                    bytes: a.bytes,
                })
                .collect(),
            flops: 0.0,
            launches: k.launches,
        })
        .collect()
}

/// The Lab A and Lab B ledgers at this shape.
pub(in crate::step::ledger) struct Reused {
    ln: ln_bytes::BytesOutput,
    sm: fusion::FusionOutput,
}

pub(in crate::step::ledger) fn reused(s: &StepShape, dev: &Device) -> Result<Reused, Error> {
    let ln = ln_bytes::run(&BytesParams {
        tokens: s.tokens,
        hidden: s.d,
        dtype: "f16".to_owned(),
        device: dev.id.to_owned(),
    })?;
    let sm = fusion::run(&FusionParams {
        batch: s.batch,
        heads: s.heads,
        len: s.seq_len,
        dtype: crate::softmax::Dtype::F16,
        device: dev.id.to_owned(),
        dropout: DROPOUT,
        seed: 0,
        example_rows: 4,
        example_len: 8,
    })?;
    Ok(Reused { ln, sm })
}

pub(in crate::step::ledger) fn backward_other_baseline(s: &StepShape, r: &Reused) -> Vec<K> {
    let n = s.layers;
    let (d, f) = (s.d, s.f);
    let (e, e3, ef) = (s.act(d), s.act(3 * d), s.act(f));
    let sc = s.score();
    let causal = (s.seq_len * s.seq_len) as f64;
    use Category::*;
    let mut v = ln_backward(&r.ln.autograd, "final LN", 1, LAB_A_AUTOGRAD);
    v.extend([
        mem(
            "residual dropout backward",
            Dropout,
            n,
            &[("∇r₂", e), ("mask (u8)", s.mask(d))],
            &[("∇fc2 out", e)],
        ),
        mem(
            "fc2 bias grad ∇b = Σ_rows",
            Dropout,
            n,
            &[("∇fc2 out", e)],
            &[("∇b_fc2", s.col(d))],
        ),
        mem(
            "GELU backward",
            BiasActivation,
            n,
            &[("∇GELU out", ef), ("fc1 out (saved)", ef)],
            &[("∇fc1 out", ef)],
        ),
        mem(
            "fc1 bias grad ∇b = Σ_rows",
            BiasActivation,
            n,
            &[("∇fc1 out", ef)],
            &[("∇b_fc1", s.col(f))],
        ),
    ]);
    v.extend(ln_backward(&r.ln.autograd, "LN2", n, LAB_A_AUTOGRAD));
    v.extend([
        mem(
            "residual grad accumulate ∇r₁ = ∇r₂ + ∇LN2",
            Dropout,
            n,
            &[("∇r₂", e), ("∇LN2 in", e)],
            &[("∇r₁", e)],
        ),
        mem(
            "residual dropout backward",
            Dropout,
            n,
            &[("∇r₁", e), ("mask (u8)", s.mask(d))],
            &[("∇attn out", e)],
        ),
        mem(
            "output bias grad ∇b = Σ_rows",
            Dropout,
            n,
            &[("∇attn out", e)],
            &[("∇b_o", s.col(d))],
        ),
        mem(
            "merge heads backward: copy ∇context to [B, h, L, d_h]",
            Transform,
            n,
            &[("∇context", e)],
            &[("∇context", e)],
        ),
    ]);
    v.extend(softmax_backward(&r.sm.unfused_kernels, n, LAB_B_UNFUSED));
    v.extend([
        mem(
            "causal mask backward (where)",
            Softmax,
            n,
            &[("∇S″", sc), ("causal mask (bool)", causal)],
            &[("∇S′", sc)],
        ),
        mem(
            "scale backward ∇S = ∇S′/√d_h",
            Softmax,
            n,
            &[("∇S′", sc)],
            &[("∇S", sc)],
        ),
        mem(
            "split heads backward: copy ∇Q, ∇K, ∇V to [T, 3d]",
            Transform,
            n,
            &[("∇Q, ∇K, ∇V", e3)],
            &[("∇QKV", e3)],
        ),
        mem(
            "QKV bias grad ∇b = Σ_rows",
            Transform,
            n,
            &[("∇QKV", e3)],
            &[("∇b_qkv", s.col(3 * d))],
        ),
    ]);
    v.extend(ln_backward(&r.ln.autograd, "LN1", n, LAB_A_AUTOGRAD));
    v.push(mem(
        "residual grad accumulate ∇x = ∇r₁ + ∇LN1",
        Dropout,
        n,
        &[("∇r₁", e), ("∇LN1 in", e)],
        &[("∇x", e)],
    ));
    v
}

pub(in crate::step::ledger) fn backward_other_fused(s: &StepShape, r: &Reused) -> Vec<K> {
    let n = s.layers;
    let (d, f) = (s.d, s.f);
    let (e, e3, ef) = (s.act(d), s.act(3 * d), s.act(f));
    use Category::*;
    let residual = |tag: &str| {
        mem(
            format!("{tag} bwd: residual gradient added in the same kernel"),
            LayerNorm,
            n,
            &[("∇residual", e)],
            &[],
        )
    };
    let mut v = ln_backward(&r.ln.fused, "final LN", 1, LAB_A_FUSED);
    v.extend([
        mem(
            "dropout backward + bias grad (fused)",
            Dropout,
            n,
            &[("∇r₂", e), ("mask (u8)", s.mask(d))],
            &[("∇fc2 out", e), ("∇b_fc2", s.col(d))],
        ),
        mem(
            "GELU backward + bias grad (fused)",
            BiasActivation,
            n,
            &[
                ("∇GELU out", ef),
                ("fc1 out (saved)", ef),
                ("b_fc1", s.col(f)),
            ],
            &[("∇fc1 out", ef), ("∇b_fc1", s.col(f))],
        ),
    ]);
    v.extend(ln_backward(&r.ln.fused, "LN2", n, LAB_A_FUSED));
    let mut acc = residual("LN2");
    acc.launches = 0;
    v.push(acc);
    v.extend([
        mem(
            "dropout backward + bias grad (fused)",
            Dropout,
            n,
            &[("∇r₁", e), ("mask (u8)", s.mask(d))],
            &[("∇attn out", e), ("∇b_o", s.col(d))],
        ),
        mem(
            "merge heads backward",
            Transform,
            n,
            &[("∇context", e)],
            &[("∇context", e)],
        ),
    ]);
    v.extend(softmax_backward(&r.sm.fused_kernels, n, LAB_B_FUSED));
    v.push(mem(
        "split heads backward + QKV bias grad (fused)",
        Transform,
        n,
        &[("∇Q, ∇K, ∇V", e3)],
        &[("∇QKV", e3), ("∇b_qkv", s.col(3 * d))],
    ));
    v.extend(ln_backward(&r.ln.fused, "LN1", n, LAB_A_FUSED));
    let mut acc = residual("LN1");
    acc.launches = 0;
    v.push(acc);
    v
}
