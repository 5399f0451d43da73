//! §6.2's sweeps: the step at seq_len × 1 … 16 tokens, at GEMM efficiency 1.0 … 0.5, and on
//! every device, each point the two versions' step times, speedup and trainer shares.

use serde::Serialize;

use super::StepParams;
use super::assembly::{StepLedger, step_ledger};
use crate::Error;
use crate::device::{device, devices};
use crate::trainer::census::ModelSpec;

/// One point of a sweep.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepPoint {
    /// Tokens per batch.
    pub tokens: u64,
    /// Device id.
    pub device: &'static str,
    /// GEMM efficiency.
    pub gemm_efficiency: f64,
    /// Baseline step, ms.
    pub baseline_ms: f64,
    /// LightSeq2-style step, ms.
    pub lightseq2_ms: f64,
    /// baseline_ms / lightseq2_ms.
    pub speedup: f64,
    /// Trainer share of the baseline step (lecture: 32 % at 1024 tokens → 3 % at 16384).
    pub trainer_share_baseline: f64,
    /// Trainer share of the LightSeq2-style step.
    pub trainer_share_lightseq2: f64,
}

fn point(l: &StepLedger, tokens: u64, dev: &'static str, eff: f64) -> SweepPoint {
    SweepPoint {
        tokens,
        device: dev,
        gemm_efficiency: eff,
        baseline_ms: l.baseline.ms,
        lightseq2_ms: l.lightseq2.ms,
        speedup: l.speedup,
        trainer_share_baseline: l.baseline.trainer_share,
        trainer_share_lightseq2: l.lightseq2.trainer_share,
    }
}

/// The three sweeps of §6.2.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sweeps {
    /// Tokens per batch: seq_len × 1, 2, 4, 8, 16 (1024 … 16384 at L = 1024), at the chosen
    /// device and efficiency.
    pub tokens: Vec<SweepPoint>,
    /// GEMM efficiency 1.0, 0.9, …, 0.5 at the chosen tokens and device.
    pub gemm_efficiency: Vec<SweepPoint>,
    /// Every device at the chosen tokens and efficiency.
    pub devices: Vec<SweepPoint>,
}

/// Batch multiples the token sweep uses.
pub const TOKEN_SWEEP_BATCHES: [u64; 5] = [1, 2, 4, 8, 16];
/// GEMM efficiencies the efficiency sweep uses.
pub const EFFICIENCY_SWEEP: [f64; 6] = [1.0, 0.9, 0.8, 0.7, 0.6, 0.5];

/// The sweeps around `p`.
///
/// # Errors
/// As [`step_ledger`].
pub fn sweeps(spec: &ModelSpec, p: &StepParams) -> Result<Sweeps, Error> {
    let dev = device(&p.device)?;
    let mut tokens = Vec::new();
    for b in TOKEN_SWEEP_BATCHES {
        let t = b * p.seq_len;
        let l = step_ledger(spec, t, p.seq_len, dev, p.gemm_efficiency)?;
        tokens.push(point(&l, t, dev.id, p.gemm_efficiency));
    }
    let mut gemm_efficiency = Vec::new();
    for e in EFFICIENCY_SWEEP {
        let l = step_ledger(spec, p.tokens, p.seq_len, dev, e)?;
        gemm_efficiency.push(point(&l, p.tokens, dev.id, e));
    }
    let mut by_device = Vec::new();
    for d in devices() {
        let l = step_ledger(spec, p.tokens, p.seq_len, d, p.gemm_efficiency)?;
        by_device.push(point(&l, p.tokens, d.id, p.gemm_efficiency));
    }
    Ok(Sweeps {
        tokens,
        gemm_efficiency,
        devices: by_device,
    })
}
