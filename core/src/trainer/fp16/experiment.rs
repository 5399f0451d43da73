//! The γ experiment of lecture §4.3: seeded targets, both trainers (FP16-stored and FP32
//! master) run by Adam over every γ step by step, the step-by-step trajectory comparison, sampled
//! trajectories and the mean errors.

use half::f16;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use super::Loss;
use super::format::{f16_bits_to_f32, f32_to_f16_bits, round_f16, to_f16};
use crate::Error;
use crate::trainer::adam::{AdamConfig, AdamStep};

/// The targets `1 + U(−0.05, 0.05)`, seeded (ChaCha8).
pub fn targets(count: usize, seed: u64) -> Vec<f32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..count)
        .map(|_| 1.0 + rng.random_range(-0.05f32..0.05))
        .collect()
}

/// Mean errors of one run, over all γ and split by target below / above 1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MeanErrors {
    /// Over all.
    pub all: f64,
    /// Over targets < 1.
    pub below: f64,
    /// Over targets > 1.
    pub above: f64,
}

/// One learning rate's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GammaRun {
    /// Learning rate.
    pub lr: f64,
    /// Mean |γ − target| at the start (γ = 1).
    pub initial: MeanErrors,
    /// Mean |γ − target| of the FP16-stored γ after the steps.
    pub fp16: MeanErrors,
    /// Mean |γ − target| of the FP32 master γ after the steps.
    pub fp32_master: MeanErrors,
    /// Mean |fp16(γ) − target| of the FP32 master's FP16 copy (what the forward sees).
    pub fp32_master_as_fp16: MeanErrors,
    /// FP16-stored γ that ever left 1.
    pub moved_fp16: usize,
    /// FP32-master γ whose FP16 copy ever left 1.
    pub moved_fp32_master: usize,
}

/// The step-by-step comparison of the two trainers over the first steps.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrajectoryStep {
    /// Step (1-based).
    pub step: u32,
    /// γ whose FP16-stored bits differ from the FP32 master's FP16 copy.
    pub differing: usize,
    /// Largest |FP16-stored − fp16(FP32 master)|.
    pub max_diff: f32,
    /// Largest |FP16-stored − FP32 master|.
    pub max_diff_to_master: f32,
}

/// Sampled trajectories of a few γ (every `stride`-th step).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SampleTrajectory {
    /// Its target.
    pub target: f32,
    /// Steps sampled.
    pub steps: Vec<u32>,
    /// FP16-stored γ.
    pub fp16: Vec<f32>,
    /// FP32 master γ.
    pub fp32_master: Vec<f32>,
}

/// Runs both trainers on every γ at `lr`; records the first `trajectory_steps` steps'
/// differences and the trajectories of the first `samples` γ.
///
/// The γ are independent, so the loop runs step by step over all of them (each trainer's state
/// in its own array, FP16 conversions inline): the same arithmetic per γ, in the same order, as
/// γ by γ — the compiler vectorises it. Reports progress once per step ([`crate::progress`]).
///
/// # Errors
/// [`Error::Cancelled`] when the current progress scope is cancelled.
pub fn gamma_experiment(
    loss: Loss,
    targets: &[f32],
    lr: f64,
    steps: u32,
    trajectory_steps: u32,
    samples: usize,
) -> Result<(GammaRun, Vec<TrajectoryStep>, Vec<SampleTrajectory>), Error> {
    gamma_experiment_part(loss, targets, lr, steps, trajectory_steps, samples, (0, 1))
}

/// [`gamma_experiment`] as part `part.0` of `part.1` equal parts of one reported computation.
pub(super) fn gamma_experiment_part(
    loss: Loss,
    targets: &[f32],
    lr: f64,
    steps: u32,
    trajectory_steps: u32,
    samples: usize,
    part: (u64, u64),
) -> Result<(GammaRun, Vec<TrajectoryStep>, Vec<SampleTrajectory>), Error> {
    let cfg = AdamConfig::with_lr(lr as f32);
    let traj_n = trajectory_steps.min(steps) as usize;
    let mut traj: Vec<TrajectoryStep> = (0..traj_n)
        .map(|i| TrajectoryStep {
            step: i as u32 + 1,
            differing: 0,
            max_diff: 0.0,
            max_diff_to_master: 0.0,
        })
        .collect();
    let stride = (steps / 200).max(1);
    let n = targets.len();
    let mut tr = Trainers::new(n);
    let mut sampled: Vec<SampleTrajectory> = targets
        .iter()
        .take(samples)
        .map(|&target| SampleTrajectory {
            target,
            steps: vec![0],
            fp16: vec![1.0],
            fp32_master: vec![1.0],
        })
        .collect();
    let total = u64::from(steps) * part.1;
    for k in 0..steps as usize {
        crate::progress::report(part.0 * u64::from(steps) + k as u64, total)?;
        let s = cfg.step(k as u32 + 1);
        // One loop per loss, so the gradient's kind is not decided per element.
        match loss {
            Loss::L1 => tr.step(|d| Loss::L1.gradient(d, 0.0), &s, targets),
            Loss::L2 => tr.step(|d| d, &s, targets),
        }
        if let Some(ts) = traj.get_mut(k) {
            for (&h, &master) in tr.p16.iter().zip(&tr.pm) {
                let seen = f32_to_f16_bits(master);
                if h != seen {
                    ts.differing += 1;
                }
                let p = f16_bits_to_f32(h);
                ts.max_diff = ts.max_diff.max((p - f16_bits_to_f32(seen)).abs());
                ts.max_diff_to_master = ts.max_diff_to_master.max((p - master).abs());
            }
        }
        let step = k as u32 + 1;
        if step.is_multiple_of(stride) || step == steps {
            for (i, sm) in sampled.iter_mut().enumerate() {
                sm.steps.push(step);
                sm.fp16.push(f16_bits_to_f32(tr.p16[i]));
                sm.fp32_master.push(tr.pm[i]);
            }
        }
    }
    let mut sums = [[0.0f64; 3]; 4]; // [initial, fp16, master, master_as_fp16] × [all, below, above]
    let (mut n_below, mut n_above) = (0usize, 0usize);
    for (i, &target) in targets.iter().enumerate() {
        let errs = [
            (1.0 - target).abs(),
            (f16_bits_to_f32(tr.p16[i]) - target).abs(),
            (tr.pm[i] - target).abs(),
            (to_f16(tr.pm[i]).to_f32() - target).abs(),
        ];
        let side = if target < 1.0 {
            n_below += 1;
            1
        } else {
            n_above += 1;
            2
        };
        for (row, e) in sums.iter_mut().zip(errs) {
            row[0] += f64::from(e);
            row[side] += f64::from(e);
        }
    }
    let mean = |row: [f64; 3]| {
        let d = |s: f64, n: usize| if n > 0 { s / n as f64 } else { 0.0 };
        MeanErrors {
            all: d(row[0], targets.len()),
            below: d(row[1], n_below),
            above: d(row[2], n_above),
        }
    };
    crate::progress::report((part.0 + 1) * u64::from(steps), total)?;
    Ok((
        GammaRun {
            lr,
            initial: mean(sums[0]),
            fp16: mean(sums[1]),
            fp32_master: mean(sums[2]),
            fp32_master_as_fp16: mean(sums[3]),
            moved_fp16: tr.left16.iter().filter(|&&b| b).count(),
            moved_fp32_master: tr.left32.iter().filter(|&&b| b).count(),
        },
        traj,
        sampled,
    ))
}

/// Both trainers' state, one array per quantity (index = γ).
struct Trainers {
    /// FP16-stored trainer: p (FP16 bits), m, v.
    p16: Vec<u16>,
    m16: Vec<f32>,
    v16: Vec<f32>,
    /// FP32-master trainer: p, m, v.
    pm: Vec<f32>,
    mm: Vec<f32>,
    vm: Vec<f32>,
    /// Whether each trainer's FP16 γ ever left 1.
    left16: Vec<bool>,
    left32: Vec<bool>,
}

impl Trainers {
    fn new(n: usize) -> Self {
        Trainers {
            p16: vec![f16::ONE.to_bits(); n],
            m16: vec![0.0; n],
            v16: vec![0.0; n],
            pm: vec![1.0; n],
            mm: vec![0.0; n],
            vm: vec![0.0; n],
            left16: vec![false; n],
            left32: vec![false; n],
        }
    }

    /// One Adam step of both trainers over every γ ([`Self::step_body`]), 8 γ per
    /// instruction where the CPU has AVX2, 4 (SSE2) otherwise — the same IEEE operations in the
    /// same order either way (Rust never fuses a multiply and an add), so the same bits.
    fn step(&mut self, grad: impl Fn(f32) -> f32 + Copy, s: &AdamStep, targets: &[f32]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked just above), the only requirement of calling a
            // `#[target_feature(enable = "avx2")]` function.
            unsafe { self.step_avx2(grad, s, targets) };
            return;
        }
        self.step_body(grad, s, targets);
    }

    /// [`Self::step_body`] compiled for AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn step_avx2(&mut self, grad: impl Fn(f32) -> f32 + Copy, s: &AdamStep, targets: &[f32]) {
        self.step_body(grad, s, targets);
    }

    /// One Adam step of both trainers over every γ. `grad(γ − target)` is the loss's
    /// gradient; mixed precision: both forwards see an FP16 γ and produce an FP16 gradient.
    #[inline(always)]
    fn step_body(&mut self, grad: impl Fn(f32) -> f32, s: &AdamStep, targets: &[f32]) {
        let one = f16::ONE.to_bits();
        let n = targets.len();
        let (p16, m16, v16) = (&mut self.p16[..n], &mut self.m16[..n], &mut self.v16[..n]);
        let (pm, mm, vm) = (&mut self.pm[..n], &mut self.mm[..n], &mut self.vm[..n]);
        let (left16, left32) = (&mut self.left16[..n], &mut self.left32[..n]);
        for i in 0..n {
            let t = targets[i];
            // FP16-stored: read p in FP16, update in f32 registers, round p back.
            let p = f16_bits_to_f32(p16[i]);
            let g16 = round_f16(grad(p - t));
            let h = f32_to_f16_bits(s.update(p, g16, &mut m16[i], &mut v16[i]));
            p16[i] = h;
            // FP32 master: the forward sees fp16(p); the master keeps the f32 update.
            let gm = round_f16(grad(round_f16(pm[i]) - t));
            let master = s.update(pm[i], gm, &mut mm[i], &mut vm[i]);
            pm[i] = master;
            left16[i] |= h != one;
            left32[i] |= f32_to_f16_bits(master) != one;
        }
    }
}
