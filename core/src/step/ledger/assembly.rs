//! Assembling the step: every kernel timed on the cost model ([`crate::cost`]) at the
//! device and GEMM efficiency, kernels added into stage sides, stages into the two versions'
//! totals, all of it a [`StepLedger`] built by [`step_ledger`].

use serde::Serialize;

use super::check_efficiency;
use super::shapes::{
    Category, STAGES, Stage, StageId, StageSide, StepKernel, StepShape, StepTotals,
};
use super::stages::{
    K, backward_gemms, backward_other_baseline, backward_other_fused, cross_entropy_baseline,
    cross_entropy_fused, embedding_baseline, embedding_fused, forward_gemms,
    forward_other_baseline, forward_other_fused, lm_head_gemms, reused, trainer_kernels,
};
use crate::Error;
use crate::cost::{KernelCost, totals};
use crate::device::Device;
use crate::trainer::census::ModelSpec;
use crate::trainer::workspace::{TrainerLedger, TrainerScheme, trainer_ledger};

fn finish(k: K, dev: &Device, eff: f64) -> StepKernel {
    let per = KernelCost {
        name: k.name.clone(),
        bytes_read: k.reads.iter().map(|o| o.bytes).sum(),
        bytes_written: k.writes.iter().map(|o| o.bytes).sum(),
        flops: k.flops,
        launches: k.launches,
    };
    let n = k.instances as f64;
    let us1 = per.seconds(dev, eff) * 1e6;
    StepKernel {
        name: k.name,
        category: k.category,
        source: k.source,
        instances: k.instances,
        reads: k.reads,
        writes: k.writes,
        us_per_instance: us1,
        flops: per.flops * n,
        bytes: per.bytes() * n,
        launches: per.launches * k.instances,
        us: us1 * n,
        per_instance: per,
    }
}

fn side(kernels: Vec<StepKernel>, dev: &Device, eff: f64) -> StageSide {
    let costs: Vec<KernelCost> = kernels
        .iter()
        .map(|k| KernelCost {
            name: k.name.clone(),
            bytes_read: k.per_instance.bytes_read * k.instances as f64,
            bytes_written: k.per_instance.bytes_written * k.instances as f64,
            flops: k.flops,
            launches: k.launches,
        })
        .collect();
    let t = totals(&costs, dev, eff);
    StageSide {
        flops: kernels.iter().map(|k| k.flops).sum(),
        bytes: t.bytes,
        launches: t.launches,
        launch_ms: t.launch_s * 1e3,
        ms: t.seconds * 1e3,
        kernels,
    }
}

/// One whole step of both versions at one shape, device and GEMM efficiency.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepLedger {
    /// Stages in step order.
    pub stages: Vec<Stage>,
    /// Baseline totals.
    pub baseline: StepTotals,
    /// LightSeq2-style totals.
    pub lightseq2: StepTotals,
    /// baseline.ms / lightseq2.ms.
    pub speedup: f64,
    /// Lab C's per-tensor FP32-master ledger (the baseline trainer stage).
    pub trainer_baseline: TrainerLedger,
    /// Lab C's linked FP16 workspace ledger (the LightSeq2 trainer stage).
    pub trainer_workspace: TrainerLedger,
}

fn step_totals(stages: &[Stage], pick: fn(&Stage) -> &StageSide, dev: &Device) -> StepTotals {
    let mut t = StepTotals {
        ms: 0.0,
        gemm_ms: 0.0,
        other_ms: 0.0,
        trainer_ms: 0.0,
        trainer_share: 0.0,
        flops: 0.0,
        bytes: 0.0,
        launches: 0,
        launch_ms: 0.0,
    };
    for st in stages {
        let sd = pick(st);
        t.ms += sd.ms;
        t.flops += sd.flops;
        t.bytes += sd.bytes;
        t.launches += sd.launches;
        for k in &sd.kernels {
            let ms = k.us / 1e3;
            match k.category {
                Category::Gemm => t.gemm_ms += ms,
                Category::Trainer => t.trainer_ms += ms,
                _ => t.other_ms += ms,
            }
        }
    }
    t.launch_ms = t.launches as f64 * dev.launch_overhead_s * 1e3;
    t.trainer_share = t.trainer_ms / t.ms;
    t
}

/// Builds the step of `spec` at `tokens` tokens (sequences of `seq_len`) on `dev` with GEMMs
/// at `gemm_efficiency` × peak.
///
/// # Errors
/// [`Error::InvalidParam`] for an efficiency outside 0.01..=1, a shape Lab A or Lab B refuses
/// (named after their parameters), or `tokens` not a multiple of `seq_len`.
pub fn step_ledger(
    spec: &ModelSpec,
    tokens: u64,
    seq_len: u64,
    dev: &Device,
    gemm_efficiency: f64,
) -> Result<StepLedger, Error> {
    check_efficiency(gemm_efficiency)?;
    if seq_len == 0 || !tokens.is_multiple_of(seq_len) || tokens == 0 {
        return Err(Error::invalid(
            "tokens",
            tokens,
            crate::error::Expected::custom(
                format!("expected a positive multiple of seq_len = {seq_len}"),
                format!("应为 seq_len = {seq_len} 的正整数倍"),
            ),
        ));
    }
    let s = StepShape::new(spec, tokens, seq_len);
    let r = reused(&s, dev)?;
    let tensors = spec.tensors();
    let tb = trainer_ledger(&tensors, TrainerScheme::PerTensorFp32Master, dev);
    let tw = trainer_ledger(&tensors, TrainerScheme::LinkedFp16Workspace, dev);
    let eff = gemm_efficiency;
    let fin = |v: Vec<K>| -> StageSide {
        side(
            v.into_iter().map(|k| finish(k, dev, eff)).collect(),
            dev,
            eff,
        )
    };
    let mut stages = Vec::with_capacity(STAGES.len());
    for id in STAGES {
        let (b, l) = match id {
            StageId::Embedding => (embedding_baseline(&s), embedding_fused(&s)),
            StageId::ForwardGemm => (forward_gemms(&s), forward_gemms(&s)),
            StageId::ForwardOther => (forward_other_baseline(&s), forward_other_fused(&s)),
            StageId::CrossEntropy => {
                let mut b = lm_head_gemms(&s);
                b.extend(cross_entropy_baseline(&s));
                let mut l = lm_head_gemms(&s);
                l.extend(cross_entropy_fused(&s));
                (b, l)
            }
            StageId::BackwardGemm => (backward_gemms(&s), backward_gemms(&s)),
            StageId::BackwardOther => (
                backward_other_baseline(&s, &r),
                backward_other_fused(&s, &r),
            ),
            StageId::Trainer => (
                trainer_kernels(&tb, s.parameters),
                trainer_kernels(&tw, s.parameters),
            ),
        };
        let (baseline, lightseq2) = (fin(b), fin(l));
        stages.push(Stage {
            id,
            name: id.name(),
            speedup: baseline.ms / lightseq2.ms,
            saved_ms: baseline.ms - lightseq2.ms,
            baseline,
            lightseq2,
        });
    }
    let baseline = step_totals(&stages, |s| &s.baseline, dev);
    let lightseq2 = step_totals(&stages, |s| &s.lightseq2, dev);
    Ok(StepLedger {
        speedup: baseline.ms / lightseq2.ms,
        stages,
        baseline,
        lightseq2,
        trainer_baseline: tb,
        trainer_workspace: tw,
    })
}

impl StepLedger {
    /// Launches of the baseline trainer stage.
    pub fn baseline_trainer_launches(&self) -> u64 {
        self.stages
            .iter()
            .find(|s| s.id == StageId::Trainer)
            .map_or(0, |s| s.baseline.launches)
    }
}
