//! `trainer-adam`'s input file: every key optional, the lecture's value where one is missing
//! ([`super::lecture_input`]).

use serde_json::Value;

use super::step::AdamRunInput;
use crate::Error;
use crate::input::json;
use crate::text::Text;

/// Most Adam steps one run may take.
pub const MAX_STEPS: u64 = 10_000;

/// The keys, one per line (the README's list says the same).
pub const INPUT_KEYS: Text<&'static str> = Text::new(
    "param: number, the initial parameter (default 1.0)\n\
     grad: number (every step) or list of numbers (one per step), the true gradient (default 0.001)\n\
     steps: whole number 1..=10000 (default 20, or the length of a grad list)\n\
     lr: learning rate 0..=10 (default 0.0001)\n\
     betas: [β₁, β₂], each 0 ≤ β < 1 (default [0.9, 0.999])\n\
     eps: ε 0..=1 (default 1e-8)\n\
     weight_decay: decoupled (AdamW) 0..=1 (default 0)\n\
     loss_scale: > 0, up to 2^32 (default 1)\n\
     unscale_times: whole number 0..=4, times the optimizer divides by the loss scale (default 1)",
    "param：数，参数初值（默认 1.0）\n\
     grad：数（每步相同）或数的列表（每步一个），真实梯度（默认 0.001）\n\
     steps：整数 1..=10000（默认 20，或 grad 列表的长度）\n\
     lr：学习率 0..=10（默认 0.0001）\n\
     betas：[β₁, β₂]，每个 0 ≤ β < 1（默认 [0.9, 0.999]）\n\
     eps：ε 0..=1（默认 1e-8）\n\
     weight_decay：与梯度分开的权重衰减（AdamW）0..=1（默认 0）\n\
     loss_scale：> 0，至多 2^32（默认 1）\n\
     unscale_times：整数 0..=4，优化器除以损失缩放的次数（默认 1）",
);

const KEYS: &[&str] = &[
    "param",
    "grad",
    "steps",
    "lr",
    "betas",
    "eps",
    "weight_decay",
    "loss_scale",
    "unscale_times",
];

/// Reads a `trainer-adam` input.
///
/// # Errors
/// [`Error::InvalidInput`] naming the key: an unknown key, a value that is not a finite number
/// in its range, `grad` longer than [`MAX_STEPS`] or of another length than `steps`, `betas`
/// not two numbers in `[0, 1)`.
pub fn parse_input(input: &Value) -> Result<AdamRunInput, Error> {
    let map = json::object(input, KEYS)?;
    let mut out = super::lecture_input();
    if let Some(v) = map.get("param") {
        out.param = json::number_in(v, "param", -1e30, 1e30)?;
    }
    if let Some(v) = map.get("grad") {
        out.grad = match v {
            Value::Array(_) => {
                json::list(v, "grad", MAX_STEPS as usize)?;
                json::vector(v, "grad", json::number)?
            }
            _ => vec![json::number(v, "grad")?],
        };
        if v.is_array() {
            out.steps = out.grad.len() as u32;
        }
    }
    if let Some(v) = map.get("steps") {
        out.steps = json::integer(v, "steps", 1, MAX_STEPS)? as u32;
        if map.get("grad").is_some_and(Value::is_array) && out.grad.len() != out.steps as usize {
            return Err(Error::input(
                "grad",
                Text::new(
                    format!(
                        "{} gradients but steps = {}: give one per step, or a single number",
                        out.grad.len(),
                        out.steps
                    ),
                    format!(
                        "{} 个梯度，而 steps = {}：每步给一个，或只给一个数",
                        out.grad.len(),
                        out.steps
                    ),
                ),
            ));
        }
    }
    if let Some(v) = map.get("lr") {
        out.lr = json::number_in(v, "lr", 0.0, 10.0)?;
    }
    if let Some(v) = map.get("betas") {
        let items = json::list(v, "betas", 2)?;
        if items.len() != 2 {
            return Err(Error::input_fixed(
                "betas",
                "expected two numbers [β₁, β₂]",
                "应为两个数 [β₁, β₂]",
            ));
        }
        for (i, b) in items.iter().enumerate() {
            let key = format!("betas[{i}]");
            let x = json::number_in(b, &key, 0.0, 1.0)?;
            if x >= 1.0 {
                return Err(Error::input_fixed(
                    key,
                    "must be below 1 (1 − β is Adam's step)",
                    "须小于 1（1 − β 是此优化器的步长）",
                ));
            }
            if let Some(slot) = out.betas.get_mut(i) {
                *slot = x;
            }
        }
    }
    if let Some(v) = map.get("eps") {
        out.eps = json::number_in(v, "eps", 0.0, 1.0)?;
    }
    if let Some(v) = map.get("weight_decay") {
        out.weight_decay = json::number_in(v, "weight_decay", 0.0, 1.0)?;
    }
    if let Some(v) = map.get("loss_scale") {
        let s = json::number_in(v, "loss_scale", 0.0, 4_294_967_296.0)?;
        if s <= 0.0 {
            return Err(Error::input_fixed(
                "loss_scale",
                "must be above 0",
                "须大于 0",
            ));
        }
        out.loss_scale = s;
    }
    if let Some(v) = map.get("unscale_times") {
        out.unscale_times = json::integer(v, "unscale_times", 0, 4)? as u32;
    }
    Ok(out)
}
