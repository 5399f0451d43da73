//! `softmax-formula` on the user's own rows (`--input FILE.json`, the window's Input panel):
//! `{scores: [[…]] | y: [[…]], dy: [[…]], mask: [[bool]], keep: [[0|1]], dropout_p}`.
//!
//! Forward (from `scores`): masked entries (`mask` true, or a score of `"-inf"`) are left out
//! of the softmax; yⱼ = exp(xⱼ − m)/Σ exp(xₖ − m) over the others, m their maximum, and yⱼ = 0
//! where masked. A **fully masked row** gives y = 0 — and so ∇x = y ⊙ (…) = 0: no probability
//! mass, no gradient. That is what `jax.nn.softmax(where=…)` and Keras return and what NVIDIA
//! Apex issue #1390 asks of `ScaledMaskedSoftmax`. The naive forms give something else, and
//! the result carries both for such a row: a finite fill (−10000, the value Apex's and
//! Megatron's fused kernels write into masked scores) turns the row into a uniform 1/L, and a
//! true −∞ makes the max-subtracted softmax compute −∞ − (−∞) = NaN.
//!
//! Backward (lecture §3.1, §3.2): with dropout after the softmax (`keep`, `dropout_p`), the
//! gradient reaching y is g = ∇y ⊙ keep / (1 − p); then ∇x = y ⊙ (g − Σ g·y), all in f64.
//! Beside it the explicit Jacobian product of [`super::formula`] when the rows are small
//! enough ([`super::formula::MAX_WORK`]).

use serde::Serialize;
use serde_json::Value;

use super::formula::{MAX_WORK, jacobian_product_f64};
use crate::Error;
use crate::input::json::{self, ser_extended_vec};
use crate::scene::InputSpec;
use crate::text::Text;

/// The score Apex's and Megatron's fused masked-softmax kernels write into masked positions.
pub const MASK_FILL: f64 = -10000.0;

/// How far a given `y` row may sum from 1 (a probability row stored in f16 is off by ~L·2⁻¹¹).
pub const Y_SUM_TOLERANCE: f64 = 1e-2;

const KEYS: &[&str] = &["scores", "y", "dy", "mask", "keep", "dropout_p"];

/// The scene's input: keys, an example, and the run.
pub const INPUT: InputSpec = InputSpec {
    keys: Text::new(
        "scores: [[…]] rows × L, the softmax's input (numbers or \"-inf\"), or\n\
         y: [[…]] rows × L, its output (each row in [0, 1] summing to 1, or all 0)\n\
         dy: [[…]] ∇y, same shape, required (finite)\n\
         mask: [[true|false]] same shape, true = masked (with scores only)\n\
         keep: [[0|1]] same shape, the dropout keep mask\n\
         dropout_p: 0 ≤ p < 1, with keep (default 0)",
        "scores: [[…]] 行 × L，softmax 的输入（数或 \"-inf\"），或\n\
         y: [[…]] 行 × L，softmax 的输出（每行在 [0, 1] 内且和为 1，或全为 0）\n\
         dy: [[…]] ∇y，同形，必需（有限数）\n\
         mask: [[true|false]] 同形，true = 屏蔽（仅与 scores 一起用）\n\
         keep: [[0|1]] 同形，dropout 的保留掩码\n\
         dropout_p: 0 ≤ p < 1，与 keep 一起用（默认 0）",
    ),
    example_params: &[],
    params: &[],
    example: r#"{"scores": [[2, 1, 0.5, "-inf"], [0, 0, 0, 0]], "dy": [[1, 0, 0, 0], [0.5, -0.5, 1, 0]], "mask": [[false, false, false, true], [true, true, true, true]]}"#,
};

/// Where y comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Forward {
    /// Scores (−∞ allowed) and the mask (true = masked), rows × L each.
    Scores(Vec<Vec<f64>>, Vec<Vec<bool>>),
    /// y given directly.
    Y(Vec<Vec<f64>>),
}

/// A validated input.
#[derive(Debug, Clone, PartialEq)]
pub struct SoftmaxInput {
    /// The forward's input or output.
    pub forward: Forward,
    /// ∇y, rows × L.
    pub dy: Vec<Vec<f64>>,
    /// Dropout keep mask (rows × L) and p, if any.
    pub dropout: Option<(Vec<Vec<bool>>, f64)>,
}

/// A score that may be −∞ but not +∞ or NaN.
fn score(v: &Value, key: &str) -> Result<f64, Error> {
    let x = json::extended_number(v, key)?;
    if x.is_nan() || x == f64::INFINITY {
        return Err(Error::input_fixed(
            key,
            "a score is a finite number or \"-inf\" (masked); NaN and +∞ have no softmax",
            "分数是有限的数或 \"-inf\"（被遮蔽）；NaN 与 +∞ 没有 softmax",
        ));
    }
    Ok(x)
}

fn flag(v: &Value, key: &str) -> Result<f64, Error> {
    json::boolean(v, key).map(|b| if b { 1.0 } else { 0.0 })
}

fn keep_bit(v: &Value, key: &str) -> Result<f64, Error> {
    json::integer(v, key, 0, 1).map(|n| n as f64)
}

fn bools(m: Vec<Vec<f64>>) -> Vec<Vec<bool>> {
    m.into_iter()
        .map(|r| r.into_iter().map(|v| v != 0.0).collect())
        .collect()
}

impl SoftmaxInput {
    /// Validates a JSON input.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the key: neither or both of `scores` and `y`; ragged,
    /// empty or over-long matrices; a score that is NaN or +∞; a y outside [0, 1] or a y row
    /// not summing to 1 (nor all 0); `dy`, `mask` or `keep` not of the same shape; `mask` with
    /// `y`; `dropout_p` outside 0 ≤ p < 1 or without `keep`.
    pub fn read(input: &Value) -> Result<Self, Error> {
        let map = json::object(input, KEYS)?;
        let forward = match (map.get("scores"), map.get("y")) {
            (Some(_), Some(_)) => {
                return Err(Error::input_fixed(
                    "y",
                    "give either scores or y, not both",
                    "scores 与 y 只给其一，不可都给",
                ));
            }
            (None, None) => {
                return Err(Error::input_fixed(
                    "scores",
                    "missing: give scores (the softmax's input) or y (its output)",
                    "缺失：请给 scores（softmax 的输入）或 y（它的输出）",
                ));
            }
            (Some(s), None) => {
                let s = json::matrix(s, "scores", score)?;
                let mask = match map.get("mask") {
                    Some(m) => {
                        let m = json::matrix(m, "mask", flag)?;
                        json::same_shape(&m, "mask", s.len(), width(&s), "scores")?;
                        bools(m)
                    }
                    None => s.iter().map(|r| vec![false; r.len()]).collect(),
                };
                Forward::Scores(s, mask)
            }
            (None, Some(y)) => {
                if map.contains_key("mask") {
                    return Err(Error::input_fixed(
                        "mask",
                        "a mask applies to scores; with y, give y already 0 where masked",
                        "mask 作用于 scores；给 y 时，被遮蔽处的 y 应已为 0",
                    ));
                }
                let y = json::matrix(y, "y", json::number)?;
                for (r, row) in y.iter().enumerate() {
                    if let Some(c) = row.iter().position(|v| !(0.0..=1.0).contains(v)) {
                        return Err(Error::input_fixed(
                            format!("y[{r}][{c}]"),
                            "a probability is in [0, 1]",
                            "概率在 [0, 1] 之内",
                        ));
                    }
                    let sum: f64 = row.iter().sum();
                    if sum != 0.0 && (sum - 1.0).abs() > Y_SUM_TOLERANCE {
                        return Err(Error::input(
                            format!("y[{r}]"),
                            Text::new(
                                format!(
                                    "the row sums to {sum}; a softmax row sums to 1 (or is all \
                                     0, fully masked)"
                                ),
                                format!(
                                    "此行之和为 {sum}；softmax 的一行之和为 1（或全为 0，即全被遮蔽）"
                                ),
                            ),
                        ));
                    }
                }
                Forward::Y(y)
            }
        };
        let (rows, cols, like) = match &forward {
            Forward::Scores(s, _) => (s.len(), width(s), "scores"),
            Forward::Y(y) => (y.len(), width(y), "y"),
        };
        let dy = json::matrix(json::required(map, "dy")?, "dy", json::number)?;
        json::same_shape(&dy, "dy", rows, cols, like)?;
        let dropout = match (map.get("keep"), map.get("dropout_p")) {
            (None, Some(_)) => {
                return Err(Error::input_fixed(
                    "dropout_p",
                    "needs keep, the dropout mask it scales",
                    "需要 keep，即它所缩放的丢弃掩码",
                ));
            }
            (None, None) => None,
            (Some(k), p) => {
                let k = json::matrix(k, "keep", keep_bit)?;
                json::same_shape(&k, "keep", rows, cols, like)?;
                let p = match p {
                    None => 0.0,
                    Some(p) => {
                        let p = json::number_in(p, "dropout_p", 0.0, 1.0)?;
                        if p >= 1.0 {
                            return Err(Error::input_fixed(
                                "dropout_p",
                                "p = 1 drops everything: 1/(1 − p) is infinite; 0 ≤ p < 1",
                                "p = 1 丢弃一切：1/(1 − p) 为无穷大；应 0 ≤ p < 1",
                            ));
                        }
                        p
                    }
                };
                Some((bools(k), p))
            }
        };
        Ok(SoftmaxInput {
            forward,
            dy,
            dropout,
        })
    }
}

fn width(m: &[Vec<f64>]) -> usize {
    m.first().map_or(0, Vec::len)
}

/// The masked softmax of one row: masked entries (`mask` true, or a score of −∞) get y = 0;
/// a row with every entry masked is all 0 (see the module docs). Returns (y, fully masked).
pub fn masked_softmax_row(scores: &[f64], mask: &[bool]) -> (Vec<f64>, bool) {
    let live = |j: usize| {
        !mask.get(j).copied().unwrap_or(false)
            && scores.get(j).is_some_and(|s| *s > f64::NEG_INFINITY)
    };
    let m = (0..scores.len())
        .filter(|&j| live(j))
        .filter_map(|j| scores.get(j).copied())
        .fold(f64::NEG_INFINITY, f64::max);
    if m == f64::NEG_INFINITY {
        return (vec![0.0; scores.len()], true);
    }
    let e: Vec<f64> = scores
        .iter()
        .enumerate()
        .map(|(j, s)| if live(j) { (s - m).exp() } else { 0.0 })
        .collect();
    let z: f64 = e.iter().sum();
    (e.iter().map(|v| v / z).collect(), false)
}

/// What the naive forms give on a fully masked row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NaiveRow {
    /// Softmax with masked scores set to [`MASK_FILL`]: uniform 1/L.
    pub y_fill: Vec<f64>,
    /// ∇x from that y (not 0).
    pub dx_fill: Vec<f64>,
    /// Max-subtracted softmax with masked scores at −∞: −∞ − (−∞) = NaN everywhere.
    #[serde(serialize_with = "ser_extended_vec")]
    pub y_inf: Vec<f64>,
    /// ∇x from that y: NaN.
    #[serde(serialize_with = "ser_extended_vec")]
    pub dx_inf: Vec<f64>,
}

/// One row of the result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SoftmaxRow {
    /// y (given, or the masked softmax of the scores).
    pub y: Vec<f64>,
    /// ∇x with respect to the scores.
    pub dx: Vec<f64>,
    /// The gradient reaching y: ∇y, or ∇y ⊙ keep / (1 − p) with dropout.
    pub g: Vec<f64>,
    /// s = Σ g·y.
    pub s: f64,
    /// Σⱼ ∇xⱼ (0 up to rounding: Σy = 1, or y = 0).
    pub sum_dx: f64,
    /// Entries masked in this row.
    pub masked: usize,
    /// Every entry masked: y = 0, ∇x = 0.
    pub fully_masked: bool,
    /// For a fully masked row, what the naive forms give.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub naive: Option<NaiveRow>,
}

/// The result on the user's input.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SoftmaxInputOutput {
    /// Row length L.
    pub len: usize,
    /// Whether y came from scores (`true`) or was given.
    pub from_scores: bool,
    /// Dropout p, when a keep mask was given.
    pub dropout_p: Option<f64>,
    /// max |formula − explicit Jacobian product| over all elements (the contract key); `None`
    /// when rows · L² is over [`MAX_WORK`] and the Jacobians were not built.
    pub max_abs_diff_jacobian: Option<f64>,
    /// Rows fully masked.
    pub fully_masked_rows: Vec<usize>,
    /// Per row.
    pub rows: Vec<SoftmaxRow>,
}

/// ∇x = y ⊙ (g − Σ g·y) and s. Where y = 0 the gradient is +0 (not the −0 that 0·(negative)
/// would print).
fn backward(y: &[f64], g: &[f64]) -> (Vec<f64>, f64) {
    let s: f64 = y.iter().zip(g).map(|(a, b)| a * b).sum();
    let dx = y
        .iter()
        .zip(g)
        .map(|(yj, gj)| if *yj == 0.0 { 0.0 } else { yj * (gj - s) })
        .collect();
    (dx, s)
}

/// Runs the forward (when scores are given), the backward and the checks on every row.
///
/// # Errors
/// [`Error::Cancelled`] when the current progress scope is cancelled.
pub fn run(input: &SoftmaxInput) -> Result<SoftmaxInputOutput, Error> {
    let n = input.dy.len();
    let len = width(&input.dy);
    let jacobians = (n as u64)
        .saturating_mul(len as u64)
        .saturating_mul(len as u64)
        <= MAX_WORK;
    let mut max_jac = 0.0_f64;
    let mut rows = Vec::with_capacity(n);
    for (r, dy) in input.dy.iter().enumerate() {
        crate::progress::report(r as u64, n as u64)?;
        let (y, masked, fully_masked, scores) = match &input.forward {
            Forward::Scores(s, m) => {
                let (s, m) = (
                    s.get(r).map_or(&[][..], Vec::as_slice),
                    m.get(r).map_or(&[][..], Vec::as_slice),
                );
                let (y, full) = masked_softmax_row(s, m);
                let masked = s
                    .iter()
                    .zip(m)
                    .filter(|(v, k)| **k || **v == f64::NEG_INFINITY)
                    .count();
                (y, masked, full, Some(s))
            }
            Forward::Y(y) => {
                let y = y.get(r).cloned().unwrap_or_default();
                let full = y.iter().all(|v| *v == 0.0);
                (y, 0, full, None)
            }
        };
        let g: Vec<f64> = match &input.dropout {
            None => dy.clone(),
            Some((keep, p)) => dy
                .iter()
                .zip(keep.get(r).map_or(&[][..], Vec::as_slice))
                .map(|(d, k)| if *k { d / (1.0 - p) } else { 0.0 })
                .collect(),
        };
        let (dx, s) = backward(&y, &g);
        if jacobians {
            let j = jacobian_product_f64(&y, &g);
            max_jac = dx
                .iter()
                .zip(&j)
                .fold(max_jac, |m, (a, b)| m.max((a - b).abs()));
        }
        let naive = (fully_masked && scores.is_some()).then(|| {
            let l = y.len();
            let y_fill = super::softmax_f64(&vec![MASK_FILL; l]);
            let (dx_fill, _) = backward(&y_fill, &g);
            let y_inf = super::softmax_f64(&vec![f64::NEG_INFINITY; l]);
            let (dx_inf, _) = backward(&y_inf, &g);
            NaiveRow {
                y_fill,
                dx_fill,
                y_inf,
                dx_inf,
            }
        });
        rows.push(SoftmaxRow {
            sum_dx: dx.iter().sum(),
            y,
            dx,
            g,
            s,
            masked,
            fully_masked,
            naive,
        });
    }
    Ok(SoftmaxInputOutput {
        len,
        from_scores: matches!(input.forward, Forward::Scores(..)),
        dropout_p: input.dropout.as_ref().map(|(_, p)| *p),
        max_abs_diff_jacobian: jacobians.then_some(max_jac),
        fully_masked_rows: rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r.fully_masked)
            .map(|(i, _)| i)
            .collect(),
        rows,
    })
}

#[cfg(test)]
#[path = "input_tests.rs"]
mod tests;
