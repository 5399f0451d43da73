//! The kernels of each stage of the step, before timing: a kernel is a [`K`] (name, family,
//! source, instances, operands read and written, FLOPs, launches) built by [`mem`] (a
//! memory-bound kernel of this ledger) or [`gemm`], or converted from the Lab A, Lab B and
//! Lab C ledgers it reuses. One submodule per stage family: `gemms` (the blocks' and the LM
//! head's GEMMs), `forward` and `backward` (the blocks' other kernels), `embedding`,
//! `cross_entropy` and `trainer`.

mod backward;
mod cross_entropy;
mod embedding;
mod forward;
mod gemms;
mod trainer;

pub(in crate::step::ledger) use backward::{backward_other_baseline, backward_other_fused, reused};
pub(in crate::step::ledger) use cross_entropy::{cross_entropy_baseline, cross_entropy_fused};
pub(in crate::step::ledger) use embedding::{embedding_baseline, embedding_fused};
pub(in crate::step::ledger) use forward::{forward_other_baseline, forward_other_fused};
pub(in crate::step::ledger) use gemms::{backward_gemms, forward_gemms, lm_head_gemms};
pub(in crate::step::ledger) use trainer::trainer_kernels;

use super::ACT_BYTES;
use super::shapes::{Category, Operand};

fn ops(list: &[(&str, f64)]) -> Vec<Operand> {
    list.iter()
        .map(|(n, b)| Operand {
            name: (*n).to_owned(),
            bytes: *b,
        })
        .collect()
}

/// A kernel before timing.
pub(in crate::step::ledger) struct K {
    pub(in crate::step::ledger) name: String,
    pub(in crate::step::ledger) category: Category,
    pub(in crate::step::ledger) source: &'static str,
    pub(in crate::step::ledger) instances: u64,
    pub(in crate::step::ledger) reads: Vec<Operand>,
    pub(in crate::step::ledger) writes: Vec<Operand>,
    pub(in crate::step::ledger) flops: f64,
    pub(in crate::step::ledger) launches: u64,
}

const HERE: &str = "this ledger (lecture §6.1 model)";
pub(in crate::step::ledger) const LAB_A_AUTOGRAD: &str = "Lab A layernorm-bytes: autograd chain";
pub(in crate::step::ledger) const LAB_A_FUSED: &str = "Lab A layernorm-bytes: fused kernel";
pub(in crate::step::ledger) const LAB_B_UNFUSED: &str = "Lab B softmax-fusion: unfused chain";
pub(in crate::step::ledger) const LAB_B_FUSED: &str = "Lab B softmax-fusion: fused kernel";
pub(in crate::step::ledger) const LAB_C: &str = "Lab C trainer_ledger";

pub(in crate::step::ledger) fn mem(
    name: impl Into<String>,
    category: Category,
    instances: u64,
    reads: &[(&str, f64)],
    writes: &[(&str, f64)],
) -> K {
    K {
        name: name.into(),
        category,
        source: HERE,
        instances,
        reads: ops(reads),
        writes: ops(writes),
        flops: 0.0,
        launches: 1,
    }
}

/// A (batched) GEMM C[m×n] = A[m×k]·B[k×n], FP16 operands, each moved once.
#[allow(clippy::too_many_arguments)]
pub(in crate::step::ledger) fn gemm(
    name: &str,
    instances: u64,
    batch: u64,
    m: u64,
    n: u64,
    k: u64,
    a: &str,
    b: &str,
    c: &str,
) -> K {
    let (bt, m, n, k) = (batch as f64, m as f64, n as f64, k as f64);
    K {
        name: format!("{name}  [{}×{}·{}×{}]", m, k, k, n),
        category: Category::Gemm,
        source: HERE,
        instances,
        reads: ops(&[(a, bt * m * k * ACT_BYTES), (b, bt * k * n * ACT_BYTES)]),
        writes: ops(&[(c, bt * m * n * ACT_BYTES)]),
        flops: 2.0 * bt * m * n * k,
        launches: 1,
    }
}
