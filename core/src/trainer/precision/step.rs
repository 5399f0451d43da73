//! One parameter through Adam, step by step, in a chosen precision.
//!
//! Each step, in the order a mixed-precision trainer runs it:
//! 1. the backward pass hands the gradient in the storage format, scaled:
//!    `g = storage(grad × loss_scale)`; a non-finite `g` makes the step a skipped one (what
//!    PyTorch's `GradScaler` does on overflow; the scale here is static);
//! 2. the optimizer reads it in the parameter's precision (f32 with FP32 master weights, the
//!    storage format without) and unscales it `unscale_times` times, each `g ← round(g ×
//!    (1/loss_scale))` (1 is right; 0 forgets it; 2 unscales twice);
//! 3. decoupled weight decay (AdamW; LightSeq2's and Apex's trainers):
//!    `p ← round(p × (1 − lr·weight_decay))`;
//! 4. Adam (Kingma & Ba 2015, algorithm 1):
//!    - state `f32`: the fused trainer kernel (lecture §4.2) — [`AdamStep::update`], one f32
//!      computation in registers, with m, v and ε in f32;
//!    - state `f16`: PyTorch's `torch.optim.Adam` on FP16 tensors (`_single_tensor_adam`), op by
//!      op, each op computed in f32 and its result rounded to FP16 (PyTorch's opmath):
//!      `m ← f16(m + (1−β₁)(g − m))`, `v ← f16(β₂v)`, `v ← f16(v + (1−β₂)g²)`,
//!      `d ← f16(f16(f16(√v) / √(1−β₂ᵗ)) + ε)`, `p ← round(p − lr/(1−β₁ᵗ) · m/d)` (bias
//!      corrections in f64, as Python computes them). ε = 1e-8 added to an FP16 value that is 0
//!      rounds to 0 (below 2⁻²⁵, half the smallest subnormal), so a `v` that underflowed gives
//!      `m/0 = ±∞`, or `0/0 = NaN` with a zero gradient;
//! 5. the parameter is kept in its precision (f32 master or storage); the forward pass sees it
//!    in the storage format.

use serde::Serialize;

use super::format::Format;
use crate::text::Text;
use crate::trainer::adam::AdamConfig;

/// Where the parameter, the gradient and Adam's state live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Precision {
    /// The model's copy of the parameter and the gradient the backward pass writes.
    pub storage: Format,
    /// An FP32 master copy of the parameter that the optimizer updates (the storage copy is
    /// rounded from it every step).
    pub master: bool,
    /// m and v (and the arithmetic of Adam's denominator): [`Format::F32`] or [`Format::F16`].
    pub state: Format,
}

impl Precision {
    /// The precision the optimizer keeps the parameter (and reads the gradient) in.
    pub fn param_format(self) -> Format {
        if self.master {
            Format::F32
        } else {
            self.storage
        }
    }

    /// A short label in both languages, e.g. `f16 storage, FP32 master, f32 state` /
    /// `f16 存储，有 FP32 主参数，f32 状态`.
    pub fn label(self) -> Text {
        let (storage, state) = (self.storage.name(), self.state.name());
        let (master, master_zh) = if self.master {
            ("FP32 master", "有 FP32 主参数")
        } else {
            ("no master", "无主参数")
        };
        Text::new(
            format!("{storage} storage, {master}, {state} state"),
            format!("{storage} 存储，{master_zh}，{state} 状态"),
        )
    }
}

/// The hyper-parameters and data of one run (validated: finite, in range).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AdamRunInput {
    /// The parameter's initial value.
    pub param: f64,
    /// The true gradient per step (one value: the same every step).
    pub grad: Vec<f64>,
    /// Steps.
    pub steps: u32,
    /// Learning rate.
    pub lr: f64,
    /// β₁, β₂.
    pub betas: [f64; 2],
    /// ε.
    pub eps: f64,
    /// Decoupled weight decay (AdamW).
    pub weight_decay: f64,
    /// Loss scale the backward pass multiplies the gradient by.
    pub loss_scale: f64,
    /// How many times the optimizer divides the gradient by the loss scale (1 is right).
    pub unscale_times: u32,
}

impl AdamRunInput {
    /// The gradient at step `t` (1-based).
    pub fn grad_at(&self, t: u32) -> f64 {
        let i = (t as usize).saturating_sub(1);
        self.grad
            .get(i)
            .or(self.grad.last())
            .copied()
            .unwrap_or(0.0)
    }
}

/// One step of a run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StepRecord {
    /// 1-based step.
    pub step: u32,
    /// The gradient Adam used (after storage, scaling and unscaling).
    pub grad: f32,
    /// First moment after the step.
    pub m: f32,
    /// Second moment after the step.
    pub v: f32,
    /// The update Adam computed, before the parameter was rounded (0 on a skipped step).
    pub update: f32,
    /// The parameter as the optimizer keeps it (the master copy, or the storage copy).
    pub param: f32,
    /// The parameter as the forward pass sees it (storage format).
    pub model_param: f32,
    /// The scaled gradient overflowed: the step was skipped.
    pub skipped: bool,
}

/// Runs `input` in precision `prec`: one record per step.
pub fn run_steps(input: &AdamRunInput, prec: Precision) -> Vec<StepRecord> {
    let pf = prec.param_format();
    let (lr, b1, b2) = (
        input.lr as f32,
        input.betas[0] as f32,
        input.betas[1] as f32,
    );
    let config = AdamConfig {
        lr,
        beta1: b1,
        beta2: b2,
        eps: input.eps as f32,
    };
    let inv_scale = (1.0 / input.loss_scale) as f32;
    let decay = (1.0 - input.lr * input.weight_decay) as f32;
    let state_eps = prec.state.round64(input.eps);
    let mut p = pf.round64(input.param);
    let (mut m, mut v) = (0.0f32, 0.0f32);
    let mut out = Vec::with_capacity(input.steps as usize);
    for t in 1..=input.steps {
        let scaled = prec.storage.round64(input.grad_at(t) * input.loss_scale);
        if !scaled.is_finite() {
            out.push(StepRecord {
                step: t,
                grad: scaled,
                m,
                v,
                update: 0.0,
                param: p,
                model_param: prec.storage.round(p),
                skipped: true,
            });
            continue;
        }
        let mut g = pf.round(scaled);
        for _ in 0..input.unscale_times {
            g = pf.round(g * inv_scale);
        }
        if input.weight_decay != 0.0 {
            p = pf.round(p * decay);
        }
        // The update alone (`p + update` is bitwise the kernel's `p − lr·…`: IEEE 754 subtraction
        // is addition of the negation), so it is reported to f32's precision, not 1.0's.
        let update = if prec.state == Format::F32 {
            config.step(t).update(0.0, g, &mut m, &mut v)
        } else {
            let h = |x: f32| prec.state.round(x);
            let tt = t as i32;
            let c1 = 1.0 - input.betas[0].powi(tt);
            let c2 = 1.0 - input.betas[1].powi(tt);
            // Python computes 1 − β in f64; the kernel receives it as an f32 scalar.
            let (w1, w2) = ((1.0 - input.betas[0]) as f32, (1.0 - input.betas[1]) as f32);
            m = h(m + w1 * (g - m));
            v = h(b2 * v);
            v = h(v + w2 * g * g);
            let d = h(h(h(v.sqrt()) / c2.sqrt() as f32) + state_eps);
            (-(input.lr / c1) as f32) * (m / d)
        };
        p = pf.round(p + update);
        out.push(StepRecord {
            step: t,
            grad: g,
            m,
            v,
            update,
            param: p,
            model_param: prec.storage.round(p),
            skipped: false,
        });
    }
    out
}
