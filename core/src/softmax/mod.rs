//! Lab B: softmax backward (lecture §3, script 02; HW4's `ker_attn_softmax_bw`).
//!
//! y = softmax(x) has the Jacobian ∂yᵢ/∂xⱼ = yᵢ(δᵢⱼ − yⱼ), a diagonal minus a rank-one matrix,
//! so the vector–Jacobian product collapses to one dot product per row:
//!
//! ∇xⱼ = Σᵢ ∇yᵢ yᵢ(δᵢⱼ − yⱼ) = yⱼ (∇yⱼ − Σᵢ ∇yᵢ yᵢ)
//!
//! Four scenes, in lecture order:
//!
//! - [`formula`] (`softmax-formula`, §3.1): the formula vs the explicit L × L Jacobian product,
//!   in f64 and f32; Σⱼ ∇xⱼ = 0 per row.
//! - [`warp`] (`softmax-warp`, §3.1, §3.4): the HW4 kernel on the SIMT [`crate::simt::Block`] —
//!   one warp per row, ITERATIONS = ⌈L/32⌉ values per lane in registers, one butterfly
//!   `__shfl_xor_sync` sum, no block barrier; the template buckets and their register cost.
//! - [`fusion`] (`softmax-fusion`, §3.2): the unfused chain (dropout backward, then
//!   P = ∇y⊙y, s = ΣP, D = ∇y − s, ∇x = y⊙D) vs one fused kernel, kernel by kernel in bytes and
//!   modelled time ([`crate::cost`] on a [`crate::device`]), and a seeded numerical example.
//! - [`saved`] (`softmax-saved`, §3.3): what the forward must keep for this backward (y and the
//!   dropout mask, both B·h·L·L) and the three ways to keep less.
//!
//! Exercise 1 (§9) is [`backward_row`] on y = (0.5, 0.3, 0.2), ∇y = (1, 0, 0); see [`exercise1`].

use serde::Serialize;

use crate::Error;
use crate::params::ParamValues;
use crate::scene::Scene;

pub mod formula;
pub mod fusion;
pub mod input;
pub mod saved;
pub mod warp;

/// The scenes of this lab, in lecture order.
pub const SCENES: &[Scene] = &[formula::SCENE, warp::SCENE, fusion::SCENE, saved::SCENE];

/// Storage type of the score tensor (y, ∇y, ∇x): what a kernel reads and writes in DRAM.
/// Arithmetic is f32 in registers, as in HW4 (`(float)grad_reg[i] * (float)inp_reg[i]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Dtype {
    /// IEEE binary16, 2 bytes (`__half`), unit roundoff 2⁻¹¹.
    F16,
    /// IEEE binary32, 4 bytes (`float`), unit roundoff 2⁻²⁴.
    F32,
}

/// The dtype names a `dtype` parameter takes.
pub const DTYPES: &[&str] = &["f16", "f32"];

impl Dtype {
    /// Parses `f16` / `f32` for parameter `name`.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] (`name`) listing the choices.
    pub fn parse(name: &str, text: &str) -> Result<Self, Error> {
        match text {
            "f16" => Ok(Dtype::F16),
            "f32" => Ok(Dtype::F32),
            _ => Err(Error::invalid(
                name,
                text,
                crate::error::Expected::one_of(DTYPES),
            )),
        }
    }

    /// Bytes per element in DRAM (2 or 4).
    pub fn bytes(self) -> u32 {
        match self {
            Dtype::F16 => 2,
            Dtype::F32 => 4,
        }
    }

    /// Unit roundoff u (half an ulp at 1): 2⁻¹¹ for f16, 2⁻²⁴ for f32.
    pub fn unit_roundoff(self) -> f64 {
        match self {
            Dtype::F16 => 2f64.powi(-11),
            Dtype::F32 => 2f64.powi(-24),
        }
    }

    /// Smallest positive (subnormal) value: the absolute rounding floor near 0.
    pub fn min_positive(self) -> f64 {
        match self {
            Dtype::F16 => 2f64.powi(-24),
            Dtype::F32 => 2f64.powi(-149),
        }
    }

    /// `v` stored in this dtype and read back as f32 (round to nearest even).
    pub fn store(self, v: f32) -> f32 {
        match self {
            Dtype::F16 => half::f16::from_f32(v).to_f32(),
            Dtype::F32 => v,
        }
    }

    /// The name (`f16`, `f32`).
    pub fn name(self) -> &'static str {
        match self {
            Dtype::F16 => "f16",
            Dtype::F32 => "f32",
        }
    }
}

/// Reads integer parameter `name` and checks it lies in `lo..=hi` (for direct callers that
/// bypass the spec check as much as for the CLI).
pub(crate) fn int_in(v: &ParamValues, name: &str, lo: i64, hi: i64) -> Result<u64, Error> {
    let x = v.int(name)?;
    check_range(name, x, lo, hi)?;
    u64::try_from(x).map_err(|_| {
        Error::invalid(
            name,
            x,
            crate::error::Expected::Between { min: lo, max: hi },
        )
    })
}

/// [`Error::InvalidParam`] unless `lo ≤ x ≤ hi`.
pub(crate) fn check_range<T>(name: &str, x: T, lo: T, hi: T) -> Result<(), Error>
where
    T: PartialOrd + std::fmt::Display + Copy + TryInto<i64>,
{
    // The bounds are constants well inside `i64`; the fallbacks only keep this total.
    let bound = |v: T, fallback: i64| v.try_into().unwrap_or(fallback);
    if x < lo || x > hi {
        Err(Error::invalid(
            name,
            x,
            crate::error::Expected::IntRange {
                min: bound(lo, i64::MIN),
                max: bound(hi, i64::MAX),
            },
        ))
    } else {
        Ok(())
    }
}

/// Softmax backward of one row in f64 by the formula ∇xⱼ = yⱼ(∇yⱼ − Σᵢ ∇yᵢ yᵢ) (lecture §3.1).
///
/// `y`: the forward output (a probability row, length L); `dy`: ∇y, the upstream gradient
/// (length L). Returns ∇x (length L). Only y is needed, not x; one reduction (the dot
/// product s = Σ ∇y·y).
///
/// # Errors
/// [`Error::InvalidParam`] (`dy`) when the lengths differ, (`y`) when the row is empty or a
/// value is not finite.
pub fn backward_row(y: &[f64], dy: &[f64]) -> Result<Vec<f64>, Error> {
    if y.is_empty() {
        return Err(Error::invalid(
            "y",
            "[]",
            crate::error::Expected::AtLeastOne,
        ));
    }
    if dy.len() != y.len() {
        return Err(Error::invalid(
            "dy",
            format!("{} values", dy.len()),
            crate::error::Expected::SameLengthAs {
                param: "y".into(),
                len: y.len(),
            },
        ));
    }
    if let Some(bad) = y.iter().chain(dy).find(|v| !v.is_finite()) {
        return Err(Error::invalid(
            "y",
            bad,
            crate::error::Expected::FiniteValues,
        ));
    }
    let s: f64 = y.iter().zip(dy).map(|(a, b)| a * b).sum();
    Ok(y.iter().zip(dy).map(|(yj, gj)| yj * (gj - s)).collect())
}

/// Exercise 1 (§9) worked: inputs, the dot product, ∇x and its sum.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Exercise1 {
    /// The softmax output y = (0.5, 0.3, 0.2).
    pub y: Vec<f64>,
    /// The upstream gradient ∇y = (1, 0, 0).
    pub dy: Vec<f64>,
    /// s = Σ ∇y·y.
    pub s: f64,
    /// ∇x = y ⊙ (∇y − s).
    pub dx: Vec<f64>,
    /// Σ ∇x (0: softmax is invariant to adding a constant to every input).
    pub sum_dx: f64,
}

/// Exercise 1 of §9: y = (0.5, 0.3, 0.2), ∇y = (1, 0, 0) → ∇x = (0.25, −0.15, −0.10), Σ∇x = 0.
///
/// # Errors
/// None in practice (fixed inputs); the `Result` is [`backward_row`]'s.
pub fn exercise1() -> Result<Exercise1, Error> {
    let y = vec![0.5, 0.3, 0.2];
    let dy = vec![1.0, 0.0, 0.0];
    let dx = backward_row(&y, &dy)?;
    Ok(Exercise1 {
        s: y.iter().zip(&dy).map(|(a, b)| a * b).sum(),
        sum_dx: dx.iter().sum(),
        y,
        dy,
        dx,
    })
}

/// The forward softmax of one row in f64: yⱼ = exp(xⱼ − m) / Σₖ exp(xₖ − m) with m = maxₖ xₖ
/// (subtracting the maximum keeps exp from overflowing; the result is unchanged in exact
/// arithmetic). `x` must be non-empty with at least one finite entry: a row of all −∞ gives
/// −∞ − (−∞) = NaN — see [`input::masked_softmax_row`] for the masked convention.
pub fn softmax_f64(x: &[f64]) -> Vec<f64> {
    let m = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = x.iter().map(|v| (v - m).exp()).collect();
    let z: f64 = e.iter().sum();
    e.iter().map(|v| v / z).collect()
}

/// [`softmax_f64`] in f32 arithmetic (exp and the sum in f32, as a kernel does).
pub fn softmax_f32(x: &[f32]) -> Vec<f32> {
    let m = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let e: Vec<f32> = x.iter().map(|v| (v - m).exp()).collect();
    let z: f32 = e.iter().sum();
    e.iter().map(|v| v / z).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exercise1_by_hand() {
        // s = 1·0.5 = 0.5; ∇x = (0.5·0.5, 0.3·(−0.5), 0.2·(−0.5)).
        let e = exercise1().unwrap();
        assert_eq!(e.s, 0.5);
        for (got, want) in e.dx.iter().zip([0.25, -0.15, -0.10]) {
            assert!((got - want).abs() < 1e-15, "{got} vs {want}");
        }
        assert!(e.sum_dx.abs() < 1e-15);
    }

    #[test]
    fn backward_row_refuses_bad_rows() {
        assert!(matches!(
            backward_row(&[], &[]),
            Err(Error::InvalidParam { .. })
        ));
        assert!(backward_row(&[0.5, 0.5], &[1.0]).is_err());
        assert!(backward_row(&[f64::NAN], &[1.0]).is_err());
    }

    #[test]
    fn dtype_rounding() {
        assert_eq!(
            Dtype::F16.store(1.0 + 2f32.powi(-12)),
            1.0,
            "below half an ulp"
        );
        assert_eq!(Dtype::F16.store(1.0 + 2f32.powi(-10)), 1.0 + 2f32.powi(-10));
        assert_eq!(Dtype::F32.store(0.1), 0.1);
        assert!(Dtype::parse("dtype", "bf16").is_err());
        assert_eq!(Dtype::parse("dtype", "f16").unwrap().bytes(), 2);
    }
}
