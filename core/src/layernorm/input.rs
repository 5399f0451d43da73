//! `layernorm-formulas` on the user's own rows (`--input FILE.json`, the window's Input panel):
//! `{x: [[…]], dy: [[…]], gamma: […], beta: […], eps}` — the forward and both closed forms of ∇x
//! (lecture §2.1) in a chosen storage type and a chosen arithmetic of the sums, each beside the
//! f64 reverse-mode reference ([`super::reference_row`]) on the same stored inputs.
//!
//! The arithmetic, spelt out so a result can be checked by hand:
//!
//! - **storage** (`dtype`: f64, f32, f16, bf16): x, ∇y, γ, β are rounded to it on reading; x̂,
//!   y, ∇x (both forms), ∇γ, ∇β are rounded to it on writing.
//! - **sums** (`accumulate`: f64, f32, f16): every sum — Σx, Σx², Σ(x−μ)², Σg, Σg·x̂, Σg·x, and
//!   the column sums of ∇γ, ∇β — runs left to right in this type, each term rounded to it
//!   before the add and each partial sum after (a `__half` accumulator overflows to ∞ past
//!   65,504, IEEE 754 §7.4).
//! - **every other operation** (x − μ, products, quotients, √) runs in f64 when the sums are
//!   f64, else in f32 — as a kernel does that loads `(float)inp[i]`.
//!
//! Each operation is computed in f64 and rounded once to its type; for +, −, ×, ÷ and √ of f32
//! or f16 operands that is exactly the IEEE result in that type, since f64 carries more than
//! twice their significand bits plus two.
//!
//! Per row: `var` is two-pass (Σ(x − μ)²/m, what the forward uses), `var_one_pass` is
//! E\[x²\] − E\[x\]² (the rewrite that fails on a large mean), `rstd_one_pass` what r would be
//! from it (NaN when it goes negative past −ε). Non-finite numbers are written `"inf"`,
//! `"-inf"`, `"nan"` in the JSON, as the input spells them.

use serde::Serialize;
use serde_json::Value;

use super::{Dtype, reference_row};
use crate::Error;
use crate::input::json::{self, ser_extended, ser_extended_vec};
use crate::params::ParamValues;
use crate::scene::InputSpec;
use crate::text::Text;

/// The names the `accumulate` parameter takes; `auto` (the default) is what PyTorch's LayerNorm
/// accumulates in for the storage type ([`Accumulate::pytorch_for`]).
pub const ACCUMULATE: &[&str] = &["auto", "f64", "f32", "f16"];

/// The keys of the input.
const KEYS: &[&str] = &["x", "dy", "gamma", "beta", "eps"];

/// Rows whose details (statistics and vectors) the result keeps: the first this many, fewer
/// when they would hold more than [`MAX_ELEMENTS_KEPT`] values each vector. Every row is still
/// computed and counted in the summaries (the largest errors, ∇γ, ∇β); `rows_total` says how
/// many there were. Without the bound a million one-element rows made a 260 MB report and
/// 3.5 GB of memory on the way (about 250 bytes per byte of input).
pub const MAX_ROWS_KEPT: usize = 1024;

/// Values per vector the kept rows hold at most together (at least one row is kept).
pub const MAX_ELEMENTS_KEPT: usize = 1 << 16;

/// Largest ε accepted (PyTorch's default is 1e-5; 1 is already far past any real use).
pub const MAX_EPS: f64 = 1.0;

/// The scene's input: keys, an example, and the run.
pub const INPUT: InputSpec = InputSpec {
    keys: Text::new(
        "x: [[…]] rows × m, required (finite)\n\
         dy: [[…]] ∇y, same shape as x, required (finite)\n\
         gamma: […] γ, m values, default all 1\n\
         beta: […] β, m values, default all 0\n\
         eps: ε inside √(var + ε), 0 ..= 1, default 1e-5",
        "x: [[…]] 行 × m，必需（有限数）\n\
         dy: [[…]] ∇y，与 x 同形，必需（有限数）\n\
         gamma: […] γ，m 个值，默认全为 1\n\
         beta: […] β，m 个值，默认全为 0\n\
         eps: √(var + ε) 中的 ε，0 ..= 1，默认 1e-5",
    ),
    example_params: &[],
    params: &["dtype", "accumulate"],
    example: r#"{"x": [[1, 2, 3, 4], [10000, 10001, 9999, 10000]], "dy": [[1, 0, 0, 0], [0.5, -0.5, 1, 0]], "eps": 1e-5}"#,
};

/// The arithmetic of the sums.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Accumulate {
    /// IEEE binary64.
    F64,
    /// IEEE binary32.
    F32,
    /// IEEE binary16 (largest finite 65,504).
    F16,
}

impl Accumulate {
    /// Rounds `v` to this type (round to nearest even; overflow to ±∞).
    pub fn round(self, v: f64) -> f64 {
        match self {
            Accumulate::F64 => v,
            Accumulate::F32 => f64::from(v as f32),
            Accumulate::F16 => f64::from(half::f16::from_f64(v)),
        }
    }

    /// What PyTorch's LayerNorm accumulates in for a storage type: its `acc_type` — f64 for
    /// f64, f32 for f32, f16 and bf16.
    pub fn pytorch_for(dtype: Dtype) -> Self {
        match dtype {
            Dtype::F64 => Accumulate::F64,
            Dtype::F32 | Dtype::F16 | Dtype::Bf16 => Accumulate::F32,
        }
    }

    /// The name.
    pub fn name(self) -> &'static str {
        match self {
            Accumulate::F64 => "f64",
            Accumulate::F32 => "f32",
            Accumulate::F16 => "f16",
        }
    }
}

/// The two precision parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Modes {
    /// Storage type of inputs and outputs.
    pub dtype: Dtype,
    /// Arithmetic of the sums.
    pub accumulate: Accumulate,
}

impl Modes {
    /// Reads `dtype` and `accumulate` (`auto`: PyTorch's for the dtype).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] naming the parameter.
    pub fn from_values(v: &ParamValues) -> Result<Self, Error> {
        let dtype = Dtype::parse("dtype", v.text("dtype")?)?;
        let accumulate = match v.text("accumulate")? {
            "auto" => Accumulate::pytorch_for(dtype),
            "f64" => Accumulate::F64,
            "f32" => Accumulate::F32,
            "f16" => Accumulate::F16,
            other => {
                return Err(Error::invalid(
                    "accumulate",
                    other,
                    crate::error::Expected::one_of(ACCUMULATE),
                ));
            }
        };
        Ok(Modes { dtype, accumulate })
    }
}

/// A validated input: `rows × m` matrices x and ∇y, γ and β of m values, ε.
#[derive(Debug, Clone, PartialEq)]
pub struct LnInput {
    /// Rows of x.
    pub x: Vec<Vec<f64>>,
    /// Rows of ∇y.
    pub dy: Vec<Vec<f64>>,
    /// γ (m values).
    pub gamma: Vec<f64>,
    /// β (m values).
    pub beta: Vec<f64>,
    /// ε.
    pub eps: f64,
}

impl LnInput {
    /// Validates a JSON input.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the key: unknown keys, x or dy missing, ragged, empty,
    /// non-finite or over [`json::MAX_ELEMENTS`] numbers; dy not of x's shape; γ or β not of m
    /// values; ε outside 0 ..= [`MAX_EPS`].
    pub fn read(input: &Value) -> Result<Self, Error> {
        let map = json::object(input, KEYS)?;
        let x = json::matrix(json::required(map, "x")?, "x", json::number)?;
        let (rows, m) = (x.len(), x.first().map_or(0, Vec::len));
        let dy = json::matrix(json::required(map, "dy")?, "dy", json::number)?;
        json::same_shape(&dy, "dy", rows, m, "x")?;
        let per_column = |key: &str, default: f64| -> Result<Vec<f64>, Error> {
            match map.get(key) {
                None => Ok(vec![default; m]),
                Some(v) => {
                    let c = json::vector(v, key, json::number)?;
                    if c.len() != m {
                        return Err(Error::input(
                            key,
                            Text::new(
                                format!("{} values but x has {m} columns", c.len()),
                                format!("{} 个值，而 x 有 {m} 列", c.len()),
                            ),
                        ));
                    }
                    Ok(c)
                }
            }
        };
        let gamma = per_column("gamma", 1.0)?;
        let beta = per_column("beta", 0.0)?;
        let eps = match map.get("eps") {
            None => super::EPS,
            Some(v) => json::number_in(v, "eps", 0.0, MAX_EPS)?,
        };
        Ok(LnInput {
            x,
            dy,
            gamma,
            beta,
            eps,
        })
    }
}

/// One row of the result. Vectors have the row's m values.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LnRow {
    /// μ = Σx/m.
    #[serde(serialize_with = "ser_extended")]
    pub mean: f64,
    /// Two-pass variance Σ(x − μ)²/m (what the forward uses).
    #[serde(serialize_with = "ser_extended")]
    pub var: f64,
    /// One-pass variance E\[x²\] − E\[x\]², in the chosen arithmetic, summed left to right.
    #[serde(serialize_with = "ser_extended")]
    pub var_one_pass: f64,
    /// The two-pass variance in f64 on the stored inputs (the yardstick of both).
    pub var_reference: f64,
    /// r = 1/√(var + ε).
    #[serde(serialize_with = "ser_extended")]
    pub rstd: f64,
    /// 1/√(var_one_pass + ε): NaN once the one-pass variance falls below −ε.
    #[serde(serialize_with = "ser_extended")]
    pub rstd_one_pass: f64,
    /// x̂ = (x − μ)·r, stored.
    #[serde(serialize_with = "ser_extended_vec")]
    pub xhat: Vec<f64>,
    /// y = γ ⊙ x̂ + β, stored.
    #[serde(serialize_with = "ser_extended_vec")]
    pub y: Vec<f64>,
    /// ∇x by the HW4 form, stored.
    #[serde(serialize_with = "ser_extended_vec")]
    pub dx_hw4: Vec<f64>,
    /// ∇x by the slides / paper form, stored.
    #[serde(serialize_with = "ser_extended_vec")]
    pub dx_slides: Vec<f64>,
    /// ∇x by f64 reverse mode on the stored inputs.
    pub dx_reference: Vec<f64>,
    /// max |∇x_HW4 − ∇x_ref| over the row (NaN if a value is not finite).
    #[serde(serialize_with = "ser_extended")]
    pub max_abs_diff_hw4: f64,
    /// max |∇x_slides − ∇x_ref| over the row.
    #[serde(serialize_with = "ser_extended")]
    pub max_abs_diff_slides: f64,
}

/// The result on the user's input.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LnInputOutput {
    /// Storage type.
    pub dtype: Dtype,
    /// Arithmetic of the sums.
    pub accumulate: Accumulate,
    /// The arithmetic of the other operations: `f64` with f64 sums, else `f32`.
    pub compute: &'static str,
    /// ε used.
    pub eps: f64,
    /// Columns m.
    pub cols: usize,
    /// max over rows of [`LnRow::max_abs_diff_hw4`] (the scene's contract key).
    #[serde(serialize_with = "ser_extended")]
    pub max_abs_diff_hw4: f64,
    /// max over rows of [`LnRow::max_abs_diff_slides`].
    #[serde(serialize_with = "ser_extended")]
    pub max_abs_diff_slides: f64,
    /// Rows of the input (all of them computed and in the summaries).
    pub rows_total: usize,
    /// The first rows in detail: at most [`MAX_ROWS_KEPT`], and at most
    /// [`MAX_ELEMENTS_KEPT`] values per vector over them (at least one row).
    pub rows: Vec<LnRow>,
    /// ∇γⱼ = Σ_rows ∇y·x̂ (sums in `accumulate`), stored.
    #[serde(serialize_with = "ser_extended_vec")]
    pub dgamma: Vec<f64>,
    /// ∇βⱼ = Σ_rows ∇y, stored.
    #[serde(serialize_with = "ser_extended_vec")]
    pub dbeta: Vec<f64>,
    /// ∇γ in f64 with the reference x̂.
    pub dgamma_reference: Vec<f64>,
    /// ∇β in f64.
    pub dbeta_reference: Vec<f64>,
}

/// The arithmetic of one run: sums in `acc`, everything else in `c`.
#[derive(Clone, Copy)]
struct Arith {
    acc: Accumulate,
    c: Accumulate,
}

impl Arith {
    /// `v` rounded to the compute type (the result of one operation).
    fn c(self, v: f64) -> f64 {
        self.c.round(v)
    }

    /// Σ terms left to right in the accumulate type.
    fn sum(self, terms: impl Iterator<Item = f64>) -> f64 {
        terms.fold(0.0, |s, t| self.acc.round(s + self.acc.round(t)))
    }
}

/// The largest |a − b| (NaN as soon as one pair is not comparable: a broken form must not look
/// exact).
fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).fold(0.0, |m: f64, (x, y)| {
        let d = (x - y).abs();
        if d.is_nan() || m.is_nan() {
            f64::NAN
        } else {
            m.max(d)
        }
    })
}

/// Runs the forward, both closed forms and the reference on every row.
///
/// # Errors
/// None beyond what [`LnInput::read`] checks; kept fallible for the scene's signature.
pub fn run(input: &LnInput, modes: &Modes) -> Result<LnInputOutput, Error> {
    let Modes { dtype, accumulate } = *modes;
    let ar = Arith {
        acc: accumulate,
        c: if accumulate == Accumulate::F64 {
            Accumulate::F64
        } else {
            Accumulate::F32
        },
    };
    let st = |v: &[f64]| v.iter().map(|&a| dtype.store(a)).collect::<Vec<f64>>();
    let gamma = st(&input.gamma);
    let beta = st(&input.beta);
    let m = gamma.len();
    let mf = m as f64;
    let eps = ar.c(input.eps);
    let total = input.x.len();
    let keep = MAX_ROWS_KEPT
        .min((MAX_ELEMENTS_KEPT / m.max(1)).max(1))
        .min(total);
    let mut rows = Vec::with_capacity(keep);
    // The largest per-row errors, NaN as soon as one is (a broken form must not look exact).
    let worst = |m: f64, d: f64| {
        if d.is_nan() || m.is_nan() {
            f64::NAN
        } else {
            m.max(d)
        }
    };
    let (mut worst_hw4, mut worst_slides) = (0.0, 0.0);
    let (mut dgamma, mut dbeta) = (vec![0.0; m], vec![0.0; m]);
    let (mut dgamma_ref, mut dbeta_ref) = (vec![0.0; m], vec![0.0; m]);
    for (i, (xr, dyr)) in input.x.iter().zip(&input.dy).enumerate() {
        crate::progress::report(i as u64, total as u64)?;
        let (x, dy) = (st(xr), st(dyr));
        // Forward.
        let mean = ar.c(ar.sum(x.iter().copied()) / mf);
        let d: Vec<f64> = x.iter().map(|&v| ar.c(v - mean)).collect();
        let var = ar.c(ar.sum(d.iter().map(|&v| ar.c(v * v))) / mf);
        let ex2 = ar.c(ar.sum(x.iter().map(|&v| ar.c(v * v))) / mf);
        let var_one_pass = ar.c(ex2 - ar.c(mean * mean));
        let sigma = ar.c(ar.c(var + eps).sqrt());
        let rstd = ar.c(1.0 / sigma);
        let rstd_one_pass = ar.c(1.0 / ar.c(ar.c(var_one_pass + eps).sqrt()));
        let xh: Vec<f64> = d.iter().map(|&v| ar.c(v * rstd)).collect();
        let y: Vec<f64> = xh
            .iter()
            .zip(&gamma)
            .zip(&beta)
            .map(|((&h, &g), &b)| dtype.store(ar.c(ar.c(g * h) + b)))
            .collect();
        // Backward, g = γ ⊙ ∇y.
        let g: Vec<f64> = dy.iter().zip(&gamma).map(|(&a, &b)| ar.c(a * b)).collect();
        let sg = ar.sum(g.iter().copied());
        let sgxh = ar.sum(g.iter().zip(&xh).map(|(&a, &b)| ar.c(a * b)));
        let dx_hw4: Vec<f64> = g
            .iter()
            .zip(&xh)
            .map(|(&gi, &hi)| {
                let inner = ar.c(ar.c(sg + ar.c(hi * sgxh)) / mf);
                dtype.store(ar.c(rstd * ar.c(gi - inner)))
            })
            .collect();
        let sgx = ar.sum(g.iter().zip(&x).map(|(&a, &b)| ar.c(a * b)));
        let ms3 = ar.c(ar.c(ar.c(mf * sigma) * sigma) * sigma);
        let s2 = ar.c(sigma * sigma);
        let dx_slides: Vec<f64> = g
            .iter()
            .zip(&x)
            .zip(&d)
            .map(|((&gi, &xi), &di)| {
                let alpha = ar.c(ar.c(ar.c(di * mean) - s2) / ms3);
                let beta = ar.c(ar.c(mean - xi) / ms3);
                let t = ar.c(ar.c(gi / sigma) + ar.c(alpha * sg));
                dtype.store(ar.c(t + ar.c(beta * sgx)))
            })
            .collect();
        let (dx_reference, xh_ref) = reference_row(&x, &dy, &gamma, input.eps);
        let mu_ref = x.iter().sum::<f64>() / mf;
        let var_reference = x.iter().map(|v| (v - mu_ref).powi(2)).sum::<f64>() / mf;
        // Column sums, left to right over the rows in the accumulate type.
        for j in 0..m {
            let (dyj, xhj, xrj) = (
                dy.get(j).copied().unwrap_or(0.0),
                xh.get(j).copied().unwrap_or(0.0),
                xh_ref.get(j).copied().unwrap_or(0.0),
            );
            if let (Some(a), Some(b), Some(c), Some(e)) = (
                dgamma.get_mut(j),
                dbeta.get_mut(j),
                dgamma_ref.get_mut(j),
                dbeta_ref.get_mut(j),
            ) {
                *a = accumulate.round(*a + accumulate.round(ar.c(dyj * xhj)));
                *b = accumulate.round(*b + accumulate.round(dyj));
                *c += dyj * xrj;
                *e += dyj;
            }
        }
        let (diff_hw4, diff_slides) = (
            max_abs_diff(&dx_hw4, &dx_reference),
            max_abs_diff(&dx_slides, &dx_reference),
        );
        worst_hw4 = worst(worst_hw4, diff_hw4);
        worst_slides = worst(worst_slides, diff_slides);
        if i >= keep {
            continue;
        }
        rows.push(LnRow {
            mean,
            var,
            var_one_pass,
            var_reference,
            rstd,
            rstd_one_pass,
            max_abs_diff_hw4: diff_hw4,
            max_abs_diff_slides: diff_slides,
            xhat: xh.iter().map(|&v| dtype.store(v)).collect(),
            y,
            dx_hw4,
            dx_slides,
            dx_reference,
        });
    }
    Ok(LnInputOutput {
        dtype,
        accumulate,
        compute: ar.c.name(),
        eps: input.eps,
        cols: m,
        max_abs_diff_hw4: worst_hw4,
        max_abs_diff_slides: worst_slides,
        rows_total: total,
        dgamma: st(&dgamma),
        dbeta: st(&dbeta),
        dgamma_reference: dgamma_ref,
        dbeta_reference: dbeta_ref,
        rows,
    })
}

#[cfg(test)]
#[path = "input_tests.rs"]
mod tests;
