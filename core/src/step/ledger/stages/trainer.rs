//! The trainer stage: Lab C's trainer ledger (per-tensor FP32 master or linked FP16
//! workspace) as step kernels, operand bytes scaled by the parameter count.

use super::super::shapes::{Category, Operand};
use super::{K, LAB_C};
use crate::trainer::workspace::TrainerLedger;

pub(in crate::step::ledger) fn trainer_kernels(t: &TrainerLedger, params: u64) -> Vec<K> {
    let n = params as f64;
    t.stages
        .iter()
        .zip(&t.kernels)
        .map(|(st, k)| K {
            name: k.name.clone(),
            category: Category::Trainer,
            source: LAB_C,
            instances: 1,
            reads: st
                .stage
                .reads
                .iter()
                .map(|o| Operand {
                    name: o.name.to_owned(),
                    bytes: o.bytes as f64 * n,
                })
                .collect(),
            writes: st
                .stage
                .writes
                .iter()
                .map(|o| Operand {
                    name: o.name.to_owned(),
                    bytes: o.bytes as f64 * n,
                })
                .collect(),
            flops: 0.0,
            launches: k.launches,
        })
        .collect()
}
