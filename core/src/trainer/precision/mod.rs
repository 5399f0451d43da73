//! Scene `trainer-adam` (lecture §4.3, §8): one parameter through Adam, step by step, in every
//! precision — FP32, FP16 or bfloat16 storage, with or without FP32 master weights, Adam's state
//! in f32 or f16 — with a loss scale and the user's own gradients.
//!
//! It shows two classic failures: an update below half the storage spacing is swallowed when
//! there is no master copy (at 1.0 going down, FP16's gap is 2⁻¹¹ ≈ 4.88e-4, so Adam's ≈ lr =
//! 1e-4 never lands; lecture §4.3), and ε = 1e-8 flushing to zero in FP16 state, so Adam divides
//! by zero once v underflows. The arithmetic is documented in `step`; the formats in `format`
//! (FP16 through [`crate::trainer::fp16`]).

mod format;
mod input;
mod step;
#[cfg(test)]
mod tests;

use serde::Serialize;

use crate::Error;
use crate::params::{ParamSpec, ParamValues};
use crate::scene::{Chapter, Cost, Featured, InputSpec, Scene, SceneDef, erase};
use crate::text::Text;

pub use format::Format;
pub use input::{INPUT_KEYS, MAX_STEPS, parse_input};
pub use step::{AdamRunInput, Precision, StepRecord, run_steps};

const PARAMS: &[ParamSpec] = &[
    ParamSpec::choice(
        "storage",
        "storage of the parameter and its gradient",
        "参数和梯度的存储格式",
        &["f16", "bf16", "f32"],
        "f16",
    ),
    ParamSpec::choice(
        "master",
        "FP32 master weights",
        "FP32 主参数",
        &["false", "true"],
        "false",
    ),
    ParamSpec::choice(
        "state",
        "Adam's state m, v",
        "Adam 的状态 m、v",
        &["f32", "f16"],
        "f32",
    ),
];

/// The input the scene runs on without a file: the lecture's case (§4.3) — a parameter at 1.0,
/// a steady gradient, learning rate 1e-4 (Adam's update ≈ lr, below half FP16's gap under 1).
pub fn lecture_input() -> AdamRunInput {
    AdamRunInput {
        param: 1.0,
        grad: vec![1e-3],
        steps: 20,
        lr: 1e-4,
        betas: [0.9, 0.999],
        eps: 1e-8,
        weight_decay: 0.0,
        loss_scale: 1.0,
        unscale_times: 1,
    }
}

/// What the scene takes from a file.
pub const INPUT: InputSpec = InputSpec {
    keys: INPUT_KEYS,
    example_params: &[],
    params: &["storage", "master", "state"],
    example: r#"{"param": 1.0, "grad": 0.001, "steps": 20, "lr": 0.0001, "betas": [0.9, 0.999], "eps": 1e-8, "weight_decay": 0.0, "loss_scale": 1.0, "unscale_times": 1}"#,
};

/// The scene's typed definition (`trainer-adam`).
pub struct AdamScene;

impl SceneDef for AdamScene {
    const ID: &'static str = "trainer-adam";
    type Output = AdamOutput;

    fn run(v: &ParamValues) -> Result<Self::Output, Error> {
        Ok(run(&lecture_input(), precision(v)?))
    }

    fn run_input(v: &ParamValues, input: &serde_json::Value) -> Result<Self::Output, Error> {
        Ok(run(&parse_input(input)?, precision(v)?))
    }
}

/// The registry entry.
pub const SCENE: Scene = Scene {
    id: AdamScene::ID,
    section: "§4.3",
    title: Text::new(
        "Adam on one parameter, in every precision",
        "一个参数上的 Adam：各种精度",
    ),
    summary: Text::new(
        "One parameter through Adam step by step: FP16 or bfloat16 storage without master weights swallows small updates; ε = 1e-8 in FP16 state flushes to zero.",
        "一个参数逐步走 Adam：没有主参数的 FP16 或 bfloat16 存储会吞掉小的更新；FP16 状态里 ε = 1e-8 会被舍入成 0。",
    ),
    params: PARAMS,
    run: erase::<AdamScene>(),
    input: Some(&INPUT),
    chapter: &Chapter::TRAINER,
    featured: Featured::Nothing,
    cost: Cost::Light,
};

/// The precision the parameters choose.
///
/// # Errors
/// [`Error::InvalidParam`] for a name outside the choices.
pub fn precision(v: &ParamValues) -> Result<Precision, Error> {
    let v = v.clone().validated(PARAMS)?;
    let format = |name: &str, allowed: &[Format]| -> Result<Format, Error> {
        let text = v.text(name)?;
        Format::parse(text)
            .filter(|f| allowed.contains(f))
            .ok_or_else(|| {
                Error::invalid(
                    name,
                    text,
                    crate::error::Expected::one_of(
                        &allowed.iter().map(|f| f.name()).collect::<Vec<_>>(),
                    ),
                )
            })
    };
    Ok(Precision {
        storage: format("storage", &[Format::F32, Format::F16, Format::Bf16])?,
        master: match v.text("master")? {
            "true" => true,
            "false" => false,
            other => {
                return Err(Error::invalid(
                    "master",
                    other,
                    crate::error::Expected::either(&["true", "false"]),
                ));
            }
        },
        state: format("state", &[Format::F32, Format::F16])?,
    })
}

/// One precision's run, as the comparison plot draws it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PrecisionRun {
    /// Where the parameter, gradient and state live.
    pub precision: Precision,
    /// [`Precision::label`], in both languages.
    pub label: Text,
    /// The parameter as the optimizer keeps it after each step (JSON `null` where ±∞ or NaN).
    pub trajectory: Vec<f32>,
    /// The parameter as the forward pass sees it (storage format) after each step.
    pub model_trajectory: Vec<f32>,
    /// The first update was swallowed.
    pub swallowed: bool,
    /// The first step (1-based) after which the parameter is ±∞ or NaN.
    pub non_finite_at: Option<u32>,
}

/// The scene's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AdamOutput {
    /// The run's input (defaults filled in).
    pub input: AdamRunInput,
    /// The chosen precision.
    pub precision: Precision,
    /// The parameter as the optimizer keeps it after each step (the master copy with master
    /// weights); JSON `null` where ±∞ or NaN.
    pub trajectory: Vec<f32>,
    /// The parameter as the forward pass sees it (storage format) after each step.
    pub model_trajectory: Vec<f32>,
    /// The initial parameter as the optimizer keeps it.
    pub initial: f32,
    /// Adam's first update, before the parameter is rounded (≈ −lr·sign(grad)).
    pub first_update: f32,
    /// What the first step really changed the kept parameter by.
    pub first_applied: f32,
    /// The storage format's spacing at the initial parameter (gap to the next value above).
    pub spacing_at_param: f32,
    /// The gap from the kept initial parameter to its neighbour in the first update's
    /// direction (at 1.0 going down, half the spacing above).
    pub gap_in_update_direction: f32,
    /// The first update was non-zero and finite but did not change the kept parameter.
    pub swallowed: bool,
    /// Steps whose update did not change the kept parameter.
    pub swallowed_steps: u32,
    /// Steps skipped because the scaled gradient overflowed.
    pub skipped_steps: u32,
    /// The first step after which the parameter is ±∞ or NaN.
    pub non_finite_at: Option<u32>,
    /// ε as Adam's state holds it (0 for 1e-8 in FP16).
    pub eps_in_state: f32,
    /// Every step.
    pub steps: Vec<StepRecord>,
    /// The same input in the other precisions (FP32; FP16 and bfloat16 with and without master
    /// weights), all with the chosen state.
    pub comparison: Vec<PrecisionRun>,
}

/// The precisions of the comparison, with `state`.
pub fn compared(state: Format) -> [Precision; 5] {
    let p = |storage, master| Precision {
        storage,
        master,
        state,
    };
    [
        p(Format::F32, false),
        p(Format::F16, true),
        p(Format::F16, false),
        p(Format::Bf16, true),
        p(Format::Bf16, false),
    ]
}

fn non_finite_at(records: &[StepRecord]) -> Option<u32> {
    records
        .iter()
        .find(|r| !r.param.is_finite())
        .map(|r| r.step)
}

/// The first step swallowed: a finite, non-zero update that left the kept parameter as it was.
fn swallowed(initial: f32, records: &[StepRecord]) -> bool {
    records.first().is_some_and(|r| {
        !r.skipped && r.update != 0.0 && r.update.is_finite() && r.param == initial
    })
}

/// Runs `input` in `prec` and beside it in the [`compared`] precisions.
pub fn run(input: &AdamRunInput, prec: Precision) -> AdamOutput {
    let records = run_steps(input, prec);
    let pf = prec.param_format();
    let initial = pf.round64(input.param);
    let first = records.first().copied();
    let first_update = first.map_or(0.0, |r| r.update);
    let mut before = initial;
    let mut swallowed_steps = 0;
    for r in &records {
        if !r.skipped && r.update != 0.0 && r.update.is_finite() && r.param == before {
            swallowed_steps += 1;
        }
        before = r.param;
    }
    let comparison = compared(prec.state)
        .into_iter()
        .map(|c| {
            let rs = run_steps(input, c);
            PrecisionRun {
                precision: c,
                label: c.label(),
                trajectory: rs.iter().map(|r| r.param).collect(),
                model_trajectory: rs.iter().map(|r| r.model_param).collect(),
                swallowed: swallowed(c.param_format().round64(input.param), &rs),
                non_finite_at: non_finite_at(&rs),
            }
        })
        .collect();
    AdamOutput {
        input: input.clone(),
        precision: prec,
        trajectory: records.iter().map(|r| r.param).collect(),
        model_trajectory: records.iter().map(|r| r.model_param).collect(),
        initial,
        first_update,
        first_applied: first.map_or(0.0, |r| r.param - initial),
        spacing_at_param: prec.storage.spacing(initial),
        gap_in_update_direction: pf.gap(initial, first_update >= 0.0),
        swallowed: swallowed(initial, &records),
        swallowed_steps,
        skipped_steps: records.iter().filter(|r| r.skipped).count() as u32,
        non_finite_at: non_finite_at(&records),
        eps_in_state: prec.state.round64(input.eps),
        steps: records,
        comparison,
    }
}
