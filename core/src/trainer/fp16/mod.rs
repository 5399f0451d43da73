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
//!
//! Layout: `format` holds the FP16 number format (rounding, neighbours, spacing per binade, a
//! single stored update, and branch-free bit conversions); `experiment` the γ experiment with
//! both trainers ([`gamma_experiment`]); this module the scene's parameters, output and
//! [`run`].

mod experiment;
mod format;
#[cfg(test)]
mod tests;

use crate::text::Text;
use serde::Serialize;

use crate::Error;
use crate::params::{ParamSpec, ParamValues};
use crate::scene::{Chapter, Cost, Featured, Scene, SceneDef, erase};

pub use experiment::{
    GammaRun, MeanErrors, SampleTrajectory, TrajectoryStep, gamma_experiment, targets,
};
pub use format::{
    Binade, Fp16Update, f16_bits_to_f32, f32_to_f16_bits, fp16_binades, fp16_neighbour,
    fp16_spacing, fp16_stored_update, to_f16,
};

use experiment::gamma_experiment_part;

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

/// The scene's typed definition (`trainer-fp16`).
pub struct Fp16Scene;

impl SceneDef for Fp16Scene {
    const ID: &'static str = "trainer-fp16";
    type Output = Fp16Output;

    fn run(v: &ParamValues) -> Result<Self::Output, Error> {
        run(&Fp16Params::from_values(v)?)
    }
}

/// The registry entry.
pub const SCENE: Scene = Scene {
    id: Fp16Scene::ID,
    section: "§4.3",
    title: Text::new(
        "FP16 storage swallows small updates",
        "FP16 存储会吞掉小的更新量",
    ),
    summary: Text::new(
        "FP16-stored vs FP32-master γ under Adam: updates below half an FP16 spacing vanish.",
        "Adam 下 FP16 存储与 FP32 主参数的 γ 对比：小于半个 FP16 间距的更新会消失。",
    ),
    params: PARAMS,
    run: erase::<Fp16Scene>(),
    input: None,
    chapter: &Chapter::TRAINER,
    featured: Featured::Nothing,
    cost: Cost::Heavy {
        caps: &[("count", 20_000), ("steps", 200)],
    },
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
            // Blame the one the user moved from the lecture's value (`count` when both moved).
            let default_count = ParamValues::defaults(PARAMS).int("count")?;
            let (name, value, other) = if count == default_count {
                ("steps", steps, format!("count = {count}"))
            } else {
                ("count", count, format!("steps = {steps}"))
            };
            return Err(Error::invalid(
                name,
                value,
                crate::error::Expected::custom(
                    format!(
                        "with {other}, count × steps = {work} element-steps; at most \
                         {MAX_ELEMENT_STEPS} — fewer parameters or steps"
                    ),
                    format!(
                        "{other} 时，count × steps = {work} 元素步；至多 \
                         {MAX_ELEMENT_STEPS}——请减少参数个数或步数"
                    ),
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
                other => {
                    return Err(Error::invalid(
                        "loss",
                        other,
                        crate::error::Expected::either(&["l1", "l2"]),
                    ));
                }
            },
        })
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
