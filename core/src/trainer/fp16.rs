//! Scene `trainer-fp16` (lecture §4.3, exercise 9): what dropping the FP32 master copy costs.
//!
//! The linked FP16 workspace rounds every updated parameter back to FP16 (round to nearest,
//! ties to even — IEEE 754 binary16, as `half::f16::from_f32` stores it). An update smaller
//! than half the gap to the neighbouring FP16 value is swallowed; the per-tensor trainer keeps
//! it in the FP32 master p′. FP16 has 10 fraction bits, so the spacing in `[2ᵉ, 2ᵉ⁺¹)` is
//! `2ᵉ⁻¹⁰` (2⁻¹⁰ ≈ 9.77e-4 in [1, 2), half that in [0.5, 1)); subnormals below 2⁻¹⁴ are spaced
//! 2⁻²⁴.
//!
//! The experiment (lecture §4.3): `count` LayerNorm γ start at 1 with targets
//! `1 + U(−0.05, 0.05)`, loss `½(γ − target)²`, so the gradient is `γ − target`; Adam (β₁ 0.9,
//! β₂ 0.999, ε 1e-8) for `steps` steps at `lr`. Mixed precision: forward and backward see the
//! FP16 parameter and produce an FP16 gradient, `g = fp16(fp16(γ) − target)`, in both trainers;
//! the FP16-stored trainer keeps only `fp16(γ)`, the FP32-master trainer keeps `γ` in f32 and
//! hands `fp16(γ)` to the forward.

use half::f16;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::Error;
use crate::params::{ParamSpec, ParamValues};
use crate::scene::{Scene, to_json};

use super::adam::{AdamConfig, AdamStep};

/// Rounds to FP16: to nearest, ties to even (IEEE 754 roundTiesToEven), overflow to ±∞.
pub fn to_f16(x: f32) -> f16 {
    f16::from_f32(x)
}

/// The FP16 value next to `h` toward +∞ (`up`) or −∞.
pub fn fp16_neighbour(h: f16, up: bool) -> f16 {
    let b = h.to_bits();
    let mag = b & 0x7fff;
    let negative = b & 0x8000 != 0;
    if mag == 0 {
        return f16::from_bits(if up { 0x0001 } else { 0x8001 });
    }
    // Moving away from zero adds one to the magnitude bits, toward zero subtracts one.
    let away = up != negative;
    f16::from_bits(if away {
        b.wrapping_add(1)
    } else {
        b.wrapping_sub(1)
    })
}

/// The spacing of FP16 values around `x`: the gap from `fp16(x)` to its neighbour above
/// (`2ᵉ⁻¹⁰` for normal values in `[2ᵉ, 2ᵉ⁺¹)`, 2⁻²⁴ for subnormals; 32 at the largest finite
/// value 65504, where the gap below is used).
pub fn fp16_spacing(x: f32) -> f32 {
    let h = to_f16(x.abs());
    if h.is_infinite() || h.is_nan() {
        return f32::NAN;
    }
    let up = fp16_neighbour(h, true);
    if up.is_infinite() {
        h.to_f32() - fp16_neighbour(h, false).to_f32()
    } else {
        up.to_f32() - h.to_f32()
    }
}

/// One binade of FP16.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Binade {
    /// Smallest value of the binade (0 for the subnormals).
    pub from: f32,
    /// Its upper end (exclusive).
    pub to: f32,
    /// Gap between neighbouring values.
    pub spacing: f32,
    /// Half of it: smaller updates are swallowed.
    pub half_spacing: f32,
}

/// The positive FP16 binades, subnormals first, each from its bit patterns.
pub fn fp16_binades() -> Vec<Binade> {
    let mut out = Vec::new();
    let sub = f16::from_bits(0x0001).to_f32();
    out.push(Binade {
        from: 0.0,
        to: f16::from_bits(0x0400).to_f32(),
        spacing: sub,
        half_spacing: sub / 2.0,
    });
    for e in 1u16..=30 {
        let lo = f16::from_bits(e << 10);
        let spacing = f16::from_bits((e << 10) + 1).to_f32() - lo.to_f32();
        out.push(Binade {
            from: lo.to_f32(),
            to: 2.0 * lo.to_f32(),
            spacing,
            half_spacing: spacing / 2.0,
        });
    }
    out
}

/// What an update does to an FP16-stored value (exercise 9).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Fp16Update {
    /// The parameter as given.
    pub gamma: f32,
    /// The update added (e.g. Adam's ≈ ±lr).
    pub update: f32,
    /// `fp16(gamma)`: what the workspace stores.
    pub stored: f32,
    /// The gap from `stored` to its neighbour in the update's direction.
    pub gap: f32,
    /// Half of it.
    pub half_gap: f32,
    /// `fp16(stored + update)` (the sum in f32 registers, then rounded).
    pub stored_after: f32,
    /// What was really added: `stored_after − stored`.
    pub added: f32,
    /// Nothing was added.
    pub swallowed: bool,
    /// `added / update` (1 = exact; 0 = swallowed; > 1 = amplified).
    pub amplification: f32,
}

/// Adds `update` to `gamma` stored in FP16 the way the workspace kernel does: convert to f32,
/// add, round back to FP16 (ties to even). Exercise 9: `(1.5, 3e-4)` is swallowed; `(0.6,
/// 3e-4)` adds a whole spacing 2⁻¹¹ ≈ 4.88e-4.
pub fn fp16_stored_update(gamma: f32, update: f32) -> Fp16Update {
    let h = to_f16(gamma);
    let stored = h.to_f32();
    let gap = (fp16_neighbour(h, update >= 0.0).to_f32() - stored).abs();
    let after = to_f16(stored + update).to_f32();
    let added = after - stored;
    Fp16Update {
        gamma,
        update,
        stored,
        gap,
        half_gap: gap / 2.0,
        stored_after: after,
        added,
        swallowed: added == 0.0,
        amplification: if update != 0.0 { added / update } else { 0.0 },
    }
}

const PARAMS: &[ParamSpec] = &[
    ParamSpec::int("count", "γ parameters", "γ 参数个数", 1, 1_000_000, 2000).log(),
    ParamSpec::int("steps", "Adam steps", "Adam 步数", 1, 100_000, 1000).log(),
    ParamSpec::float("lr", "learning rate", "学习率", 1e-6, 0.1, 3e-4).log(),
    ParamSpec::int(
        "trajectory_steps",
        "steps of the trajectory comparison",
        "轨迹对比的步数",
        1,
        1000,
        20,
    ),
    ParamSpec::int("seed", "random seed", "随机种子", 0, 1 << 31, 1),
    ParamSpec::choice(
        "loss",
        "loss (l1: gradient ±1, so each Adam step is ≈ ±lr as §4.3 assumes; l2: gradient γ − target)",
        "损失（l1：梯度 ±1，Adam 每步约 ±lr；l2：梯度 γ − 目标）",
        &["l1", "l2"],
        "l1",
    ),
];

/// Most element-steps (`count × steps`) one experiment may take; the scene runs it at up to
/// four learning rates.
pub const MAX_ELEMENT_STEPS: u64 = 50_000_000;

/// Learning rates of the sweep (lecture §4.3: 1e-4 and 3e-4, plus 1e-3); the scene's `lr` is
/// added when it is not among them.
pub const SWEEP_LRS: [f64; 3] = [1e-4, 3e-4, 1e-3];

/// The registry entry.
pub const SCENE: Scene = Scene {
    id: "trainer-fp16",
    section: "§4.3",
    title: "FP16 storage swallows small updates",
    title_zh: "FP16 存储会吞掉小的更新量",
    summary: "FP16-stored vs FP32-master γ under Adam: updates below half an FP16 spacing vanish.",
    summary_zh: "Adam 下 FP16 存储与 FP32 主参数的 γ 对比：小于半个 FP16 间距的更新会消失。",
    params: PARAMS,
    run: |v| to_json(&run(&Fp16Params::from_values(v)?)?),
};

/// Validated parameters.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fp16Params {
    /// γ parameters.
    pub count: usize,
    /// Adam steps.
    pub steps: u32,
    /// Learning rate.
    pub lr: f64,
    /// Steps of the step-by-step trajectory comparison (at most `steps`).
    pub trajectory_steps: u32,
    /// Seed of the targets.
    pub seed: u64,
    /// The loss whose gradient drives γ.
    pub loss: Loss,
}

/// The loss of the γ experiment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Loss {
    /// |γ − target|: gradient sign(γ − target), so Adam's update stays ≈ ±lr until γ crosses
    /// its target (lecture §4.3: "Adam 每步的更新量约为 ±lr").
    L1,
    /// ½(γ − target)²: gradient γ − target; Adam's step shrinks as γ nears its target, so the
    /// FP16 copy can stall short of it once the step falls below half a spacing.
    L2,
}

impl Loss {
    /// The gradient at `gamma` (as the forward pass sees it) for `target`.
    pub fn gradient(self, gamma: f32, target: f32) -> f32 {
        let d = gamma - target;
        match self {
            Loss::L1 => {
                if d > 0.0 {
                    1.0
                } else if d < 0.0 {
                    -1.0
                } else {
                    0.0
                }
            }
            Loss::L2 => d,
        }
    }
}

impl Fp16Params {
    /// Reads the values.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for a value out of range or `count × steps` over
    /// [`MAX_ELEMENT_STEPS`].
    pub fn from_values(v: &ParamValues) -> Result<Self, Error> {
        // Ranges come from the specs; only cross-parameter rules are checked here.
        let v = &v.clone().validated(PARAMS)?;
        let count = v.int("count")?;
        let steps = v.int("steps")?;
        let lr = v.float("lr")?;
        let traj = v.int("trajectory_steps")?;
        let seed = v.int("seed")?;
        let work = count as u64 * steps as u64;
        if work > MAX_ELEMENT_STEPS {
            return Err(Error::invalid(
                "count",
                count,
                format!(
                    "count × steps = {work} element-steps; at most {MAX_ELEMENT_STEPS} — fewer \
                     parameters or steps"
                ),
            ));
        }
        Ok(Fp16Params {
            count: count as usize,
            steps: steps as u32,
            lr,
            trajectory_steps: (traj as u32).min(steps as u32),
            seed: seed as u64,
            loss: match v.text("loss")? {
                "l2" => Loss::L2,
                "l1" => Loss::L1,
                other => return Err(Error::invalid("loss", other, "expected l1 or l2")),
            },
        })
    }
}

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

/// FP16 bits → f32, exactly as `half::f16::to_f32` (IEEE 754 widening is exact), written
/// without branches so a loop over many values vectorises (`half`'s per-value call checks the
/// CPU's features each time and keeps the loop scalar). NaN stays NaN (payload not promised).
#[inline(always)]
pub fn f16_bits_to_f32(h: u16) -> f32 {
    const EXP: u32 = 0x7c00 << 13; // FP16's exponent field, shifted to f32's position
    const MAGIC: u32 = 113 << 23; // 2⁻¹⁴, the smallest normal FP16
    let h = u32::from(h);
    let em = (h & 0x7fff) << 13; // exponent and fraction in f32's places
    let exp = em & EXP;
    // Normal: rebias the exponent from 15 to 127.
    let normal = em + ((127 - 15) << 23);
    // Inf/NaN: exponent all ones in f32 too.
    let infnan = em + ((255 - 31) << 23);
    // Zero/subnormal: k·2⁻²⁴ = (2⁻¹⁴ + k·2⁻²⁴) − 2⁻¹⁴, exact in f32.
    let sub = (f32::from_bits(em + MAGIC) - f32::from_bits(MAGIC)).to_bits();
    let r = if exp == EXP {
        infnan
    } else if exp == 0 {
        sub
    } else {
        normal
    };
    f32::from_bits(r | ((h & 0x8000) << 16))
}

/// f32 → FP16 bits rounded to nearest, ties to even, overflow to ±∞ — bitwise what
/// `half::f16::from_f32` returns (NaN → a quiet NaN keeping the top payload bits), without
/// branches so a loop over many values vectorises.
#[inline(always)]
pub fn f32_to_f16_bits(x: f32) -> u16 {
    const F16_OVERFLOW: u32 = (127 + 16) << 23; // 2¹⁶: at or above, ±∞ (or NaN)
    const F16_NORMAL_MIN: u32 = 113 << 23; // 2⁻¹⁴
    const DENORM_MAGIC: u32 = ((127 - 15) + (23 - 10) + 1) << 23; // 0.5: its ulp is 2⁻²⁴
    let u = x.to_bits();
    let sign = (u >> 16) & 0x8000;
    let a = u & 0x7fff_ffff;
    // Normal: rebias, then add 0xfff plus the kept lowest bit (ties to even) before dropping
    // 13 bits; a carry into the exponent is the correct rounding up (up to ∞ at 65520).
    let odd = (a >> 13) & 1;
    let normal = a.wrapping_sub((127 - 15) << 23).wrapping_add(0xfff + odd) >> 13;
    // Subnormal or zero: adding 0.5 rounds |x| to a multiple of 2⁻²⁴ (the FPU's own ties to
    // even); the low bits are then the FP16 subnormal's bits (0x400 = the smallest normal).
    let sub = (f32::from_bits(a) + f32::from_bits(DENORM_MAGIC))
        .to_bits()
        .wrapping_sub(DENORM_MAGIC);
    let infnan = if a > 0x7f80_0000 {
        0x7e00 | ((a >> 13) & 0x3ff)
    } else {
        0x7c00
    };
    let r = if a >= F16_OVERFLOW {
        infnan
    } else if a < F16_NORMAL_MIN {
        sub
    } else {
        normal
    };
    (r | sign) as u16
}

/// `fp16(x)` as an f32: what a value stored in FP16 reads back as.
#[inline(always)]
fn round_f16(x: f32) -> f32 {
    f16_bits_to_f32(f32_to_f16_bits(x))
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
fn gamma_experiment_part(
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

/// A value and its FP16 spacing.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SpacingSample {
    /// The value.
    pub value: f32,
    /// `fp16(value)`.
    pub stored: f32,
    /// Gap to the next FP16 value above.
    pub spacing: f32,
    /// Half of it.
    pub half_spacing: f32,
}

/// The scene's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fp16Output {
    /// Mean |γ − target| of the FP16-stored γ at the scene's `lr`.
    pub mean_error_fp16: f64,
    /// …for targets below 1.
    pub mean_error_fp16_below: f64,
    /// …for targets above 1.
    pub mean_error_fp16_above: f64,
    /// Mean |γ − target| of the FP32 master γ at the scene's `lr`.
    pub mean_error_fp32_master: f64,
    /// …for targets below 1.
    pub mean_error_fp32_master_below: f64,
    /// …for targets above 1.
    pub mean_error_fp32_master_above: f64,
    /// Mean |γ − target| at the start (E|U(−0.05, 0.05)| = 0.025 in expectation).
    pub initial_mean_error: f64,
    /// Targets below 1.
    pub targets_below: usize,
    /// Targets above 1.
    pub targets_above: usize,
    /// The full result at the scene's `lr`.
    pub run: GammaRun,
    /// The same targets at the sweep's learning rates (and `lr`).
    pub sweep: Vec<GammaRun>,
    /// Step-by-step: FP16-stored vs FP32 master over the first `trajectory_steps` steps.
    pub trajectory: Vec<TrajectoryStep>,
    /// Identical bits at step 1.
    pub identical_at_step_1: bool,
    /// Largest |FP16-stored − fp16(FP32 master)| at the last trajectory step.
    pub trajectory_max_diff: f32,
    /// Four γ's trajectories (at most 201 points each).
    pub samples: Vec<SampleTrajectory>,
    /// FP16 binades with their spacing.
    pub binades: Vec<Binade>,
    /// Spacing at a few values.
    pub spacing: Vec<SpacingSample>,
    /// Exercise 9 at the scene's `lr`: γ = 1.5 and γ = 0.6, update +lr.
    pub exercise9: Vec<Fp16Update>,
}

/// Runs the experiment, the sweep and the tables; reports progress ([`crate::progress`]) once
/// per Adam step of each experiment.
///
/// # Errors
/// [`Error::Cancelled`] when the current progress scope is cancelled; nothing else for
/// validated parameters.
pub fn run(p: &Fp16Params) -> Result<Fp16Output, Error> {
    let t = targets(p.count, p.seed);
    let mut lrs: Vec<f64> = SWEEP_LRS.to_vec();
    if !lrs.iter().any(|&l| (l - p.lr).abs() <= 1e-12 * l) {
        lrs.push(p.lr);
        lrs.sort_by(f64::total_cmp);
    }
    // Progress: one part per experiment (the scene's lr, then the rest of the sweep).
    let parts = lrs.len() as u64;
    let (main, trajectory, samples) =
        gamma_experiment_part(p.loss, &t, p.lr, p.steps, p.trajectory_steps, 4, (0, parts))?;
    let mut part = 0;
    let sweep = lrs
        .iter()
        .map(|&lr| {
            if (lr - p.lr).abs() <= 1e-12 * lr {
                Ok(main.clone())
            } else {
                part += 1;
                Ok(gamma_experiment_part(p.loss, &t, lr, p.steps, 0, 0, (part, parts))?.0)
            }
        })
        .collect::<Result<_, Error>>()?;
    let values = [
        1e-3f32, 0.01, 0.1, 0.25, 0.5, 0.6, 1.0, 1.5, 2.0, 10.0, 100.0, 1000.0, 65504.0,
    ];
    let spacing = values
        .iter()
        .map(|&x| {
            let s = fp16_spacing(x);
            SpacingSample {
                value: x,
                stored: to_f16(x).to_f32(),
                spacing: s,
                half_spacing: s / 2.0,
            }
        })
        .collect();
    let lr = p.lr as f32;
    Ok(Fp16Output {
        mean_error_fp16: main.fp16.all,
        mean_error_fp16_below: main.fp16.below,
        mean_error_fp16_above: main.fp16.above,
        mean_error_fp32_master: main.fp32_master.all,
        mean_error_fp32_master_below: main.fp32_master.below,
        mean_error_fp32_master_above: main.fp32_master.above,
        initial_mean_error: main.initial.all,
        targets_below: t.iter().filter(|&&x| x < 1.0).count(),
        targets_above: t.iter().filter(|&&x| x >= 1.0).count(),
        identical_at_step_1: trajectory.first().is_some_and(|s| s.differing == 0),
        trajectory_max_diff: trajectory.last().map_or(0.0, |s| s.max_diff),
        run: main,
        sweep,
        trajectory,
        samples,
        binades: fp16_binades(),
        spacing,
        exercise9: vec![fp16_stored_update(1.5, lr), fp16_stored_update(0.6, lr)],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_is_to_nearest_ties_to_even_by_bit_pattern() {
        // 1.0 = 0x3C00 (sign 0, exponent 15 = 0b01111, fraction 0); spacing 2⁻¹⁰.
        assert_eq!(to_f16(1.0).to_bits(), 0x3C00);
        // 1 + 2⁻¹¹ is exactly halfway between 0x3C00 (even) and 0x3C01 (odd) → 0x3C00.
        assert_eq!(to_f16(1.0 + 2f32.powi(-11)).to_bits(), 0x3C00);
        // 1 + 3·2⁻¹¹ is halfway between 0x3C01 (odd) and 0x3C02 (even) → 0x3C02.
        assert_eq!(to_f16(1.0 + 3.0 * 2f32.powi(-11)).to_bits(), 0x3C02);
        // Just above half rounds up: 1 + 2⁻¹¹ + 2⁻²⁰ → 0x3C01.
        assert_eq!(
            to_f16(1.0 + 2f32.powi(-11) + 2f32.powi(-20)).to_bits(),
            0x3C01
        );
        // Just below half rounds down: 1 + 2⁻¹¹ − 2⁻²⁰ → 0x3C00.
        assert_eq!(
            to_f16(1.0 + 2f32.powi(-11) - 2f32.powi(-20)).to_bits(),
            0x3C00
        );
        // Below 1 the spacing is 2⁻¹¹: 1 − 2⁻¹² is halfway between 0x3BFF (odd) and 0x3C00
        // (even) → 0x3C00; 1 − 3·2⁻¹² halfway between 0x3BFE (even) and 0x3BFF → 0x3BFE.
        assert_eq!(to_f16(1.0 - 2f32.powi(-12)).to_bits(), 0x3C00);
        assert_eq!(to_f16(1.0 - 3.0 * 2f32.powi(-12)).to_bits(), 0x3BFE);
        // Largest finite 65504 = 0x7BFF; 65520 is halfway to 2¹⁶ (which would be 0x7C00's
        // exponent) → ties to even → +∞ = 0x7C00; 65519 → 0x7BFF.
        assert_eq!(to_f16(65504.0).to_bits(), 0x7BFF);
        assert_eq!(to_f16(65520.0).to_bits(), 0x7C00);
        assert_eq!(to_f16(65519.0).to_bits(), 0x7BFF);
        // Subnormals: 2⁻²⁴ = 0x0001; 2⁻²⁵ is halfway between 0 (even) and 0x0001 → 0;
        // 3·2⁻²⁵ halfway between 0x0001 and 0x0002 (even) → 0x0002.
        assert_eq!(to_f16(2f32.powi(-24)).to_bits(), 0x0001);
        assert_eq!(to_f16(2f32.powi(-25)).to_bits(), 0x0000);
        assert_eq!(to_f16(3.0 * 2f32.powi(-25)).to_bits(), 0x0002);
        // Sign is kept: −1.5 = 0xBE00 (1.5 = 1 + 2⁻¹ → fraction 0b10_0000_0000 = 0x200).
        assert_eq!(to_f16(-1.5).to_bits(), 0xBE00);
    }

    #[test]
    fn inline_conversions_are_bitwise_half() {
        // Widening: every one of the 65,536 FP16 bit patterns (NaNs: NaN).
        for h in 0..=u16::MAX {
            let want = f16::from_bits(h).to_f32();
            let got = f16_bits_to_f32(h);
            if want.is_nan() {
                assert!(got.is_nan(), "{h:#06x}");
            } else {
                assert_eq!(got.to_bits(), want.to_bits(), "{h:#06x}");
            }
        }
        // Narrowing: each FP16 value, the f32s next to it and the midpoints to its neighbour
        // (ties, just below, just above) — every rounding boundary, both signs — plus every
        // 4099th f32 bit pattern.
        let check = |x: f32| {
            assert_eq!(
                f32_to_f16_bits(x),
                f16::from_f32(x).to_bits(),
                "{x:e} ({:#010x})",
                x.to_bits()
            );
        };
        for h in 0..0x7c00u16 {
            let lo = f16::from_bits(h).to_f32();
            let hi = f16::from_bits(h + 1).to_f32();
            let mid = ((f64::from(lo) + f64::from(hi)) / 2.0) as f32; // exact in f32
            for x in [lo, mid, hi] {
                for y in [
                    f32::from_bits(x.to_bits().saturating_sub(1)),
                    x,
                    f32::from_bits(x.to_bits() + 1),
                ] {
                    check(y);
                    check(-y);
                }
            }
        }
        for b in (0..=u32::MAX).step_by(4099) {
            check(f32::from_bits(b));
        }
        for x in [
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::MAX,
            65520.0,
            1e-9,
            0.0,
            -0.0,
        ] {
            check(x);
        }
    }

    #[test]
    fn spacing_is_2_to_the_minus_10_near_1_and_halves_below() {
        assert_eq!(fp16_spacing(1.0), 2f32.powi(-10));
        assert_eq!(fp16_spacing(1.5), 2f32.powi(-10));
        assert_eq!(fp16_spacing(0.6), 2f32.powi(-11));
        assert_eq!(fp16_spacing(0.3), 2f32.powi(-12));
        assert_eq!(fp16_spacing(1e-6), 2f32.powi(-24));
        assert_eq!(fp16_spacing(65504.0), 32.0);
        let b = fp16_binades();
        assert_eq!(b.len(), 31);
        let one = b.iter().find(|b| b.from == 1.0).unwrap();
        assert_eq!((one.to, one.spacing), (2.0, 2f32.powi(-10)));
        // Lecture: 2⁻¹⁰ ≈ 9.8e-4.
        assert!((one.spacing - 9.8e-4).abs() < 1e-5);
    }

    #[test]
    fn exercise_9() {
        // γ = 1.5 ∈ [1, 2): spacing 2⁻¹⁰, half 2⁻¹¹ ≈ 4.88e-4 > 3e-4 → swallowed.
        let a = fp16_stored_update(1.5, 3e-4);
        assert!(a.swallowed);
        assert_eq!(a.added, 0.0);
        assert_eq!(a.gap, 2f32.powi(-10));
        assert_eq!(a.stored_after, 1.5);
        // γ = 0.6 ∈ [0.5, 1): stored as round(0.6·2¹¹)/2¹¹ = 1229/2048; + 3e-4 → 1229.61·2⁻¹¹
        // → 1230/2048: a whole spacing 2⁻¹¹ = 4.8828125e-4 is added (lecture: 4.88e-4).
        let b = fp16_stored_update(0.6, 3e-4);
        assert_eq!(b.stored, 1229.0 / 2048.0);
        assert_eq!(b.stored_after, 1230.0 / 2048.0);
        assert_eq!(b.added, 2f32.powi(-11));
        assert!(!b.swallowed);
        assert_eq!(b.half_gap, 2f32.powi(-12));
        assert!((b.added - 4.88e-4).abs() < 1e-6);
        // Going down from 1 the gap is the smaller one, 2⁻¹¹.
        assert_eq!(fp16_stored_update(1.0, -3e-4).gap, 2f32.powi(-11));
    }

    fn params(lr: f64) -> Fp16Params {
        Fp16Params {
            count: 2000,
            steps: 1000,
            lr,
            trajectory_steps: 20,
            seed: 1,
            loss: Loss::L1,
        }
    }

    #[test]
    fn at_lr_1e4_no_fp16_gamma_moves() {
        // Adam's update is at most ≈ lr = 1e-4 < 2⁻¹² (half the spacing below 1) < 2⁻¹¹.
        let t = targets(2000, 1);
        for loss in [Loss::L1, Loss::L2] {
            let (r, _, _) = gamma_experiment(loss, &t, 1e-4, 1000, 0, 0).unwrap();
            assert_eq!(r.moved_fp16, 0, "{loss:?}");
        }
        let (r, _, _) = gamma_experiment(Loss::L2, &t, 1e-4, 1000, 0, 0).unwrap();
        assert_eq!(r.fp16.all, r.initial.all);
        // E|U(−0.05, 0.05)| = 0.025.
        assert!((r.initial.all - 0.025).abs() < 0.002, "{}", r.initial.all);
        // The FP32 master reaches the targets.
        assert!(
            r.fp32_master.all < 0.05 * r.initial.all,
            "{:?}",
            r.fp32_master
        );
        assert_eq!(r.moved_fp32_master, 2000);
    }

    #[test]
    fn at_lr_3e4_with_l1_targets_below_1_are_reached() {
        // With the L1 loss Adam's step stays ≈ lr = 3e-4 > 2⁻¹² (half the spacing below 1), so
        // an FP16 γ walks down to its target and then hovers within one spacing (2⁻¹¹) of it;
        // above 1 the step is under half of 2⁻¹⁰ and rounds away.
        let o = run(&params(3e-4)).unwrap();
        let r = &o.run;
        assert!(r.fp16.below < 2f64.powi(-11), "{:?}", r.fp16);
        assert_eq!(r.fp16.above, r.initial.above);
        assert_eq!(r.moved_fp16, o.targets_below);
    }

    #[test]
    fn at_lr_3e4_below_reached_above_stuck() {
        let o = run(&Fp16Params {
            loss: Loss::L2,
            ..params(3e-4)
        })
        .unwrap();
        let r = &o.run;
        // Above 1: 3e-4 < 2⁻¹¹ (half of 2⁻¹⁰) → never moves.
        assert_eq!(r.fp16.above, r.initial.above);
        // Below 1: 3e-4 > 2⁻¹² → every γ with a target below 1 moves, and more than half
        // the way (Adam's step shrinks as the gradient does, so they approach the targets).
        assert_eq!(r.moved_fp16, o.targets_below);
        assert!(r.fp16.below < 0.5 * r.initial.below, "{:?}", r.fp16);
        // The FP32 master is far better than FP16 storage overall.
        assert!(r.fp32_master.all < 0.1 * r.fp16.all, "{:?}", r);
        assert!(o.mean_error_fp32_master < 0.05 * o.initial_mean_error);
        // Step 1 identical, differing afterwards.
        assert!(o.identical_at_step_1);
        assert!(o.trajectory.iter().skip(1).any(|s| s.differing > 0));
        assert!(o.trajectory_max_diff > 0.0);
        assert_eq!(o.exercise9.len(), 2);
        assert!(o.exercise9[0].swallowed && !o.exercise9[1].swallowed);
    }

    #[test]
    fn too_much_work_is_refused_with_the_number() {
        let mut v = SCENE.defaults();
        v.set(SCENE.params, "count", "1000000").unwrap();
        v.set(SCENE.params, "steps", "100000").unwrap();
        let e = SCENE.report(v).unwrap_err().to_string();
        assert!(e.contains("`count`") && e.contains("100000000000"), "{e}");
    }

    #[test]
    fn deterministic_with_seed() {
        let a = run(&params(3e-4)).unwrap();
        let b = run(&params(3e-4)).unwrap();
        assert_eq!(a, b);
    }
}
