//! The embedding stage, forward and backward: token and position gathers, the embedding
//! dropout and the tied-weight gradient, as separate kernels (baseline) or fused.

use super::super::shapes::{Category, StepShape};
use super::super::{ACT_BYTES, ID_BYTES};
use super::{K, mem};

pub(in crate::step::ledger) fn embedding_baseline(s: &StepShape) -> Vec<K> {
    let d = s.d;
    let e = s.act(d);
    let ids = s.t() * ID_BYTES;
    let wte = (s.vocab * d) as f64 * ACT_BYTES;
    let wpe = (s.context * d) as f64 * ACT_BYTES;
    let wte_rows = (s.tokens.min(s.vocab) * d) as f64 * ACT_BYTES;
    let wpe_rows = (s.seq_len * d) as f64 * ACT_BYTES;
    use Category::Embedding as C;
    vec![
        mem(
            "fwd: token embedding gather",
            C,
            1,
            &[("ids", ids), ("wte rows", e)],
            &[("tok", e)],
        ),
        mem(
            "fwd: position embedding gather",
            C,
            1,
            &[("positions", ids), ("wpe rows", e)],
            &[("pos", e)],
        ),
        mem(
            "fwd: add tok + pos",
            C,
            1,
            &[("tok", e), ("pos", e)],
            &[("h₀", e)],
        ),
        mem(
            "fwd: embedding dropout",
            C,
            1,
            &[("h₀", e)],
            &[("h₀′", e), ("mask (u8)", s.mask(d))],
        ),
        mem(
            "bwd: embedding dropout backward",
            C,
            1,
            &[("∇h₀′", e), ("mask (u8)", s.mask(d))],
            &[("∇h₀", e)],
        ),
        mem("bwd: zero ∇wpe", C, 1, &[], &[("∇wpe", wpe)]),
        mem(
            "bwd: ∇wpe index-add (sorted)",
            C,
            1,
            &[("∇h₀", e), ("positions", ids)],
            &[("∇wpe rows", wpe_rows)],
        ),
        mem(
            "bwd: zero ∇wte (embedding's own gradient)",
            C,
            1,
            &[],
            &[("∇wte (emb)", wte)],
        ),
        mem(
            "bwd: ∇wte index-add (sorted)",
            C,
            1,
            &[("∇h₀", e), ("ids", ids)],
            &[("∇wte rows", wte_rows)],
        ),
        mem(
            "bwd: tied weight ∇wte = ∇W(LM head) + ∇wte(emb)",
            C,
            1,
            &[("∇W (LM head)", wte), ("∇wte (emb)", wte)],
            &[("∇wte", wte)],
        ),
    ]
}

pub(in crate::step::ledger) fn embedding_fused(s: &StepShape) -> Vec<K> {
    let d = s.d;
    let e = s.act(d);
    let ids = s.t() * ID_BYTES;
    let wpe = (s.context * d) as f64 * ACT_BYTES;
    let wte_rows = (s.tokens.min(s.vocab) * d) as f64 * ACT_BYTES;
    let wpe_rows = (s.seq_len * d) as f64 * ACT_BYTES;
    use Category::Embedding as C;
    vec![
        mem(
            "fwd: token + position + dropout (fused)",
            C,
            1,
            &[("ids", ids), ("wte rows", e), ("wpe rows", e)],
            &[("h₀′", e), ("mask (u8)", s.mask(d))],
        ),
        mem("bwd: zero ∇wpe", C, 1, &[], &[("∇wpe", wpe)]),
        mem(
            "bwd: dropout backward + scatter-add into ∇wte (holding the LM head's ∇W) and ∇wpe (fused)",
            C,
            1,
            &[
                ("∇h₀′", e),
                ("mask (u8)", s.mask(d)),
                ("ids", ids),
                ("∇wte rows", wte_rows),
                ("∇wpe rows", wpe_rows),
            ],
            &[("∇wte rows", wte_rows), ("∇wpe rows", wpe_rows)],
        ),
    ]
}
