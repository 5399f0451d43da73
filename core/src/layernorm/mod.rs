//! Lab A: LayerNorm backward (lecture §2, script 01; LightSeq2 / HW4 kernels
//! `ker_ln_bw_dinp` and `ker_ln_bw_dgamma_dbetta`).
//!
//! Forward, per row of m elements (lecture §2.1): μ = Σx/m, var = Σ(x−μ)²/m, σ = √(var + ε),
//! r = 1/σ, x̂ = (x − μ)·r, y = γ ⊙ x̂ + β; the forward saves μ and r per row.
//! Backward with g = γ ⊙ ∇y:
//!
//! - HW4 form: ∇xᵢ = r [gᵢ − (Σg + x̂ᵢ Σg·x̂)/m];
//! - slides / paper form: ∇xᵢ = gᵢ/σ + αᵢ Σg + βᵢ Σg·x, αᵢ = ((xᵢ−μ)μ − σ²)/(mσ³),
//!   βᵢ = (μ − xᵢ)/(mσ³);
//! - ∇γⱼ = Σ_rows ∇y·x̂, ∇βⱼ = Σ_rows ∇y (column sums, §2.4).
//!
//! Five scenes, in lecture order:
//!
//! - [`formulas`] (`layernorm-formulas`, §2.1): both forms against an independent reference
//!   (reverse-mode differentiation of the 7-op decomposition, f64), in f64, f32 and f16 storage.
//! - [`syncs`] (`layernorm-syncs`, §2.2): the dependency graphs, barrier counts, and the block
//!   reduction simulated on [`crate::simt::Block`] with [`crate::reduction`]'s kernel pieces.
//! - [`bytes`] (`layernorm-bytes`, §2.2): kernel-by-kernel DRAM ledger of the autograd-style
//!   chain vs the fused kernel, timed by [`crate::cost`] on a [`crate::device`].
//! - [`numerics`] (`layernorm-error`, §2.3): f32 error of each form as the row mean grows, and
//!   the forward E\[x²\] − E\[x\]² failure.
//! - [`dgamma`] (`layernorm-dgamma`, §2.4, exercise 7): ∇γ, ∇β by one thread per column,
//!   atomics, the 32 × 32 tile (bank conflicts, padding) and the two-stage variant.
//!
//! The row functions below ([`forward_row`], [`backward_hw4`], [`backward_slides`],
//! [`reference_row`]) are the one implementation every scene uses. Row sums are pairwise
//! ([`pairwise_sum`]) in the arithmetic type — a fixed tree, like a block reduction — so
//! results are reproducible.

use std::ops::{Add, Div, Mul, Neg, Sub};

use rand::Rng;
use rand_distr::StandardNormal;
use serde::Serialize;

use crate::Error;
use crate::scene::Scene;

pub mod bytes;
pub mod dgamma;
pub mod formulas;
pub mod input;
pub mod numerics;
pub mod syncs;

/// The scenes of this lab, in lecture order.
pub const SCENES: &[Scene] = &[
    formulas::SCENE,
    syncs::SCENE,
    bytes::SCENE,
    numerics::SCENE,
    dgamma::SCENE,
];

/// ε inside σ = √(var + ε) (PyTorch's `LayerNorm` default, 1e-5).
pub const EPS: f64 = 1e-5;

/// Largest number of row elements (rows × columns) a numerical scene of this lab materialises:
/// 2²⁰ elements; with about a dozen f64 arrays per element that is ≈ 100 MB at most.
pub const MAX_ELEMENTS: u64 = 1 << 20;

/// How the numbers are stored and computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Dtype {
    /// Everything in IEEE binary64.
    F64,
    /// Everything in IEEE binary32.
    F32,
    /// Inputs (x, ∇y, γ, β) and outputs (∇x, ∇γ, ∇β) stored as IEEE binary16; arithmetic and
    /// the saved μ, r in f32 — what a `__half` kernel does (`(float)inp[i]`).
    F16,
    /// As [`Dtype::F16`] with bfloat16 storage (8 significand bits, f32's exponent range:
    /// `__nv_bfloat16`).
    Bf16,
}

/// The names a `dtype` parameter takes, in [`Dtype`] order (bf16 only where a scene offers it:
/// [`STORAGE_DTYPES`]).
pub const DTYPES: &[&str] = &["f64", "f32", "f16"];

/// The storage types of `layernorm-formulas`: [`DTYPES`] and bf16.
pub const STORAGE_DTYPES: &[&str] = &["f64", "f32", "f16", "bf16"];

impl Dtype {
    /// Parses `f64` / `f32` / `f16` / `bf16` for parameter `name` (a scene's own choice list
    /// keeps out what it does not offer).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] naming `name` and listing the choices.
    pub fn parse(name: &str, text: &str) -> Result<Self, Error> {
        match text {
            "f64" => Ok(Dtype::F64),
            "f32" => Ok(Dtype::F32),
            "f16" => Ok(Dtype::F16),
            "bf16" => Ok(Dtype::Bf16),
            _ => Err(Error::invalid(
                name,
                text,
                crate::error::Expected::one_of(STORAGE_DTYPES),
            )),
        }
    }

    /// The name (`f64`, `f32`, `f16`).
    pub fn name(self) -> &'static str {
        match self {
            Dtype::F64 => "f64",
            Dtype::F32 => "f32",
            Dtype::F16 => "f16",
            Dtype::Bf16 => "bf16",
        }
    }

    /// Unit roundoff u of the storage type (half an ulp at 1): 2⁻⁵³ for f64, 2⁻²⁴ for f32, 2⁻¹¹
    /// for f16, 2⁻⁸ for bf16 — the relative error of storing one number.
    pub fn unit_roundoff(self) -> f64 {
        match self {
            Dtype::F64 => 2f64.powi(-53),
            Dtype::F32 => 2f64.powi(-24),
            Dtype::F16 => 2f64.powi(-11),
            Dtype::Bf16 => 2f64.powi(-8),
        }
    }

    /// Rounds `v` to this type's *storage* precision (f16 for [`Dtype::F16`], bf16 for
    /// [`Dtype::Bf16`]; round to nearest even, overflow to ±∞ — IEEE 754 §4.3).
    pub fn store(self, v: f64) -> f64 {
        match self {
            Dtype::F64 => v,
            Dtype::F32 => f64::from(v as f32),
            Dtype::F16 => f64::from(half::f16::from_f64(v)),
            Dtype::Bf16 => f64::from(half::bf16::from_f64(v)),
        }
    }
}

/// The arithmetic a row function runs in: `f32` or `f64`.
pub trait Real:
    Copy
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
    /// 0.
    const ZERO: Self;
    /// Nearest value of this type.
    fn of(v: f64) -> Self;
    /// Exact widening to f64.
    fn wide(self) -> f64;
    /// Correctly rounded square root.
    fn sqrt(self) -> Self;
}

impl Real for f64 {
    const ZERO: Self = 0.0;
    fn of(v: f64) -> Self {
        v
    }
    fn wide(self) -> f64 {
        self
    }
    fn sqrt(self) -> Self {
        f64::sqrt(self)
    }
}

impl Real for f32 {
    const ZERO: Self = 0.0;
    fn of(v: f64) -> Self {
        v as f32
    }
    fn wide(self) -> f64 {
        f64::from(self)
    }
    fn sqrt(self) -> Self {
        f32::sqrt(self)
    }
}

/// What the forward saves for one row (lecture §2.1): μ, σ and r = 1/σ.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RowStats<F> {
    /// Mean μ = Σx/m.
    pub mu: F,
    /// σ = √(var + ε), var = Σ(x − μ)²/m (two passes).
    pub sigma: F,
    /// r = 1/σ.
    pub r: F,
}

/// Sum in `F` by pairwise (tree) summation: halves summed recursively, runs of ≤ 8 left to
/// right — the shape of a GPU block reduction and of NumPy's `sum`, with error growing like
/// log₂ m rather than m.
pub fn pairwise_sum<F: Real>(v: &[F]) -> F {
    if v.len() <= 8 {
        v.iter().fold(F::ZERO, |a, &b| a + b)
    } else {
        let (l, r) = v.split_at(v.len() / 2);
        pairwise_sum(l) + pairwise_sum(r)
    }
}

fn sum<F: Real>(it: impl Iterator<Item = F>) -> F {
    let v: Vec<F> = it.collect();
    pairwise_sum(&v)
}

/// Forward statistics of one row `x` (m = `x.len()` ≥ 1 elements), two-pass variance, in `F`.
pub fn forward_row<F: Real>(x: &[F], eps: F) -> RowStats<F> {
    let m = F::of(x.len() as f64);
    let mu = sum(x.iter().copied()) / m;
    let var = sum(x.iter().map(|&v| (v - mu) * (v - mu))) / m;
    let sigma = (var + eps).sqrt();
    RowStats {
        mu,
        sigma,
        r: F::of(1.0) / sigma,
    }
}

/// ∇x of one row in the HW4 form, r [g − (Σg + x̂ Σg·x̂)/m] with g = γ ⊙ ∇y and
/// x̂ = (x − μ)·r recomputed from the saved μ, r (as `ker_ln_bw_dinp` does). All slices have
/// the row's length m.
pub fn backward_hw4<F: Real>(x: &[F], dy: &[F], gamma: &[F], s: RowStats<F>) -> Vec<F> {
    let m = F::of(x.len() as f64);
    let g: Vec<F> = dy.iter().zip(gamma).map(|(&d, &c)| c * d).collect();
    let xh: Vec<F> = x.iter().map(|&v| (v - s.mu) * s.r).collect();
    let sg = sum(g.iter().copied());
    let sgx = sum(g.iter().zip(&xh).map(|(&a, &b)| a * b));
    g.iter()
        .zip(&xh)
        .map(|(&gi, &xi)| s.r * (gi - (sg + xi * sgx) / m))
        .collect()
}

/// ∇x of one row in the slides / paper form (slides p. 22, LightSeq2 §IV-B):
/// gᵢ/σ + αᵢ Σg + βᵢ Σg·x with αᵢ = ((xᵢ−μ)μ − σ²)/(mσ³), βᵢ = (μ − xᵢ)/(mσ³).
pub fn backward_slides<F: Real>(x: &[F], dy: &[F], gamma: &[F], s: RowStats<F>) -> Vec<F> {
    let m = F::of(x.len() as f64);
    let g: Vec<F> = dy.iter().zip(gamma).map(|(&d, &c)| c * d).collect();
    let sg = sum(g.iter().copied());
    let sgx = sum(g.iter().zip(x).map(|(&a, &b)| a * b));
    let ms3 = m * s.sigma * s.sigma * s.sigma;
    g.iter()
        .zip(x)
        .map(|(&gi, &xi)| {
            let alpha = ((xi - s.mu) * s.mu - s.sigma * s.sigma) / ms3;
            let beta = (s.mu - xi) / ms3;
            gi / s.sigma + alpha * sg + beta * sgx
        })
        .collect()
}

/// The reference: plain reverse-mode differentiation, in f64, of the 7-op decomposition
/// (1) μ = mean(x), (2) xc = x − μ, (3) s = xc², (4) v = mean(s), (5) σ = √(v + ε),
/// (6) x̂ = xc/σ, (7) y = γ ⊙ x̂ + β — each op's vector–Jacobian product applied in reverse
/// order, gradients of values used twice (xc, x) accumulated. Uses neither closed form.
/// Returns (∇x, x̂) for the row.
pub fn reference_row(x: &[f64], dy: &[f64], gamma: &[f64], eps: f64) -> (Vec<f64>, Vec<f64>) {
    let m = x.len() as f64;
    // Forward, keeping what each op's backward needs.
    let mu = x.iter().sum::<f64>() / m; // (1)
    let xc: Vec<f64> = x.iter().map(|v| v - mu).collect(); // (2)
    let s: Vec<f64> = xc.iter().map(|v| v * v).collect(); // (3)
    let v = s.iter().sum::<f64>() / m; // (4)
    let sigma = (v + eps).sqrt(); // (5)
    let xh: Vec<f64> = xc.iter().map(|c| c / sigma).collect(); // (6)
    // (7) y = γ x̂ + β: ∇x̂ = γ ∇y.
    let d_xh: Vec<f64> = dy.iter().zip(gamma).map(|(d, g)| d * g).collect();
    // (6) x̂ = xc/σ: ∇xc = ∇x̂/σ, ∇σ = −Σ ∇x̂·xc/σ².
    let mut d_xc: Vec<f64> = d_xh.iter().map(|d| d / sigma).collect();
    let d_sigma = -d_xh.iter().zip(&xc).map(|(d, c)| d * c).sum::<f64>() / (sigma * sigma);
    // (5) σ = √(v + ε): ∇v = ∇σ / (2σ).
    let d_v = d_sigma / (2.0 * sigma);
    // (4) v = mean(s): ∇sᵢ = ∇v/m.
    let d_s = d_v / m;
    // (3) s = xc²: ∇xc += 2 xc ∇s.
    for (d, c) in d_xc.iter_mut().zip(&xc) {
        *d += 2.0 * c * d_s;
    }
    // (2) xc = x − μ: ∇x += ∇xc, ∇μ = −Σ ∇xc.
    let d_mu = -d_xc.iter().sum::<f64>();
    // (1) μ = mean(x): ∇x += ∇μ/m.
    let dx = d_xc.iter().map(|d| d + d_mu / m).collect();
    (dx, xh)
}

/// Runs `f` on the row in the arithmetic of `dtype` (inputs already rounded to its storage)
/// and returns the result widened to f64, rounded to the storage type.
fn in_dtype(
    dtype: Dtype,
    x: &[f64],
    dy: &[f64],
    gamma: &[f64],
    form: Form,
) -> (Vec<f64>, RowStats<f64>) {
    fn go<F: Real>(x: &[f64], dy: &[f64], gamma: &[f64], form: Form) -> (Vec<f64>, RowStats<f64>) {
        let c = |v: &[f64]| v.iter().map(|&a| F::of(a)).collect::<Vec<F>>();
        let (x, dy, gamma) = (c(x), c(dy), c(gamma));
        let s = forward_row(&x, F::of(EPS));
        let dx = match form {
            Form::Hw4 => backward_hw4(&x, &dy, &gamma, s),
            Form::Slides => backward_slides(&x, &dy, &gamma, s),
        };
        (
            dx.into_iter().map(Real::wide).collect(),
            RowStats {
                mu: s.mu.wide(),
                sigma: s.sigma.wide(),
                r: s.r.wide(),
            },
        )
    }
    let (dx, s) = match dtype {
        Dtype::F64 => go::<f64>(x, dy, gamma, form),
        Dtype::F32 | Dtype::F16 | Dtype::Bf16 => go::<f32>(x, dy, gamma, form),
    };
    (dx.into_iter().map(|v| dtype.store(v)).collect(), s)
}

/// Which closed form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    Hw4,
    Slides,
}

/// Both forms of ∇x for one row in `dtype` (inputs must already be stored in `dtype`):
/// (HW4 ∇x, slides ∇x, the saved statistics), all widened to f64.
pub fn backward_row(
    dtype: Dtype,
    x: &[f64],
    dy: &[f64],
    gamma: &[f64],
) -> (Vec<f64>, Vec<f64>, RowStats<f64>) {
    let (hw4, s) = in_dtype(dtype, x, dy, gamma, Form::Hw4);
    let (slides, _) = in_dtype(dtype, x, dy, gamma, Form::Slides);
    (hw4, slides, s)
}

/// `n` standard-normal samples as f64.
pub(crate) fn normals(rng: &mut impl Rng, n: usize) -> Vec<f64> {
    (0..n)
        .map(|_| rng.sample::<f64, _>(StandardNormal))
        .collect()
}

/// Checks `rows × cols ≤ MAX_ELEMENTS` before anything is allocated.
///
/// # Errors
/// [`Error::InvalidParam`] naming `rows` with the element count and bytes it would need.
pub(crate) fn check_elements(rows: u64, cols: u64, bytes_per_element: u64) -> Result<(), Error> {
    let n = rows.saturating_mul(cols);
    if n > MAX_ELEMENTS {
        return Err(Error::invalid(
            "rows",
            rows,
            crate::error::Expected::custom(
                format!(
                    "rows × cols = {n} elements would need about {} bytes; at most \
                     {MAX_ELEMENTS} elements (rows × cols) — fewer rows or columns",
                    n.saturating_mul(bytes_per_element)
                ),
                format!(
                    "rows × cols = {n} 个元素约需 {} 字节；至多 {MAX_ELEMENTS} 个元素\
                     （rows × cols）——请减少行数或列数",
                    n.saturating_mul(bytes_per_element)
                ),
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_roundoff_is_half_the_gap_above_one() {
        // The next number after 1 is 1 + 2u: storing 1 + u rounds (to even) back to 1, storing
        // 1 + 2u keeps it.
        for d in [Dtype::F64, Dtype::F32, Dtype::F16, Dtype::Bf16] {
            let u = d.unit_roundoff();
            assert_eq!(d.store(1.0 + u), 1.0, "{}", d.name());
            assert_eq!(d.store(1.0 + 2.0 * u), 1.0 + 2.0 * u, "{}", d.name());
        }
    }

    #[test]
    fn hand_computed_two_element_row() {
        // x = (1, 3), ε = 0: μ = 2, var = 1, σ = 1, x̂ = (−1, 1). With γ = 1, ∇y = (1, 0):
        // g = (1, 0), Σg = 1, Σg·x̂ = −1, ∇x = (1 − (1 + (−1)(−1))/2, 0 − (1 + 1·(−1))/2)
        // = (0, 0): for m = 2, x̂ = ±1 whatever x is, so the gradient vanishes.
        let x = [1.0, 3.0];
        let s = forward_row(&x, 0.0);
        assert_eq!((s.mu, s.sigma, s.r), (2.0, 1.0, 1.0));
        let dx = backward_hw4(&x, &[1.0, 0.0], &[1.0, 1.0], s);
        assert_eq!(dx, vec![0.0, 0.0]);
        // m = 3, x = (0, 0, 3): μ = 1, var = (1 + 1 + 4)/3 = 2, σ = √2, x̂ = (−1, −1, 2)/√2.
        // ∇y = (1, 0, 0), γ = 1: Σg = 1, Σg·x̂ = −1/√2,
        // ∇x₀ = (1/√2)[1 − (1 + (−1/√2)(−1/√2))/3] = (1/√2)(1 − 1/2) = 1/(2√2).
        let x = [0.0, 0.0, 3.0];
        let s = forward_row(&x, 0.0);
        let dx = backward_hw4(&x, &[1.0, 0.0, 0.0], &[1.0; 3], s);
        assert!((dx[0] - 1.0 / (2.0 * 2f64.sqrt())).abs() < 1e-15);
        let sl = backward_slides(&x, &[1.0, 0.0, 0.0], &[1.0; 3], s);
        assert!((sl[0] - dx[0]).abs() < 1e-15);
        let (r, _) = reference_row(&x, &[1.0, 0.0, 0.0], &[1.0; 3], 0.0);
        assert!((r[0] - dx[0]).abs() < 1e-15);
    }

    #[test]
    fn reference_matches_central_finite_differences() {
        // An independent check of the reference: L(x) = Σ ∇yᵢ yᵢ(x), dL/dxⱼ by central
        // differences in f64.
        let x = [0.3, -1.2, 2.5, 0.7, -0.4];
        let dy = [1.0, -0.5, 0.25, 2.0, -1.5];
        let gamma = [1.1, 0.9, 1.0, 1.3, 0.7];
        let loss = |x: &[f64]| {
            let s = forward_row(x, EPS);
            x.iter()
                .zip(&dy)
                .zip(&gamma)
                .map(|((v, d), g)| d * g * (v - s.mu) * s.r)
                .sum::<f64>()
        };
        let (r, _) = reference_row(&x, &dy, &gamma, EPS);
        for j in 0..x.len() {
            let h = 1e-6;
            let (mut a, mut b) = (x, x);
            a[j] += h;
            b[j] -= h;
            let fd = (loss(&a) - loss(&b)) / (2.0 * h);
            assert!((fd - r[j]).abs() < 1e-8, "{j}: {fd} vs {}", r[j]);
        }
    }

    #[test]
    fn storage_rounding() {
        assert_eq!(Dtype::F16.store(1.0 + 2f64.powi(-12)), 1.0);
        assert_eq!(Dtype::F32.store(0.1), f64::from(0.1f32));
        assert_eq!(Dtype::F64.store(0.1), 0.1);
        assert!(Dtype::parse("dtype", "f8").is_err());
        // bf16 keeps 8 significand bits: 1 + 2⁻⁸ is a tie that rounds to even (1), and 257
        // rounds to 256.
        assert_eq!(Dtype::Bf16.store(1.0 + 2f64.powi(-8)), 1.0);
        assert_eq!(Dtype::Bf16.store(257.0), 256.0);
        // bf16 has f32's exponent range: 1e30 stays finite where f16 overflows past 65504.
        assert!(Dtype::Bf16.store(1e30).is_finite());
        assert!(Dtype::F16.store(65536.0).is_infinite());
        assert!(check_elements(1 << 10, 1 << 10, 8).is_ok());
        let e = check_elements(1 << 11, 1 << 10, 8).unwrap_err().to_string();
        assert!(e.contains("16777216 bytes"), "{e}");
    }
}
#[cfg(test)]
mod contract_tests {
    /// The CLI contract: each scene's result carries these keys.
    #[test]
    fn every_scene_answers_with_the_contract_keys() {
        let want: &[(&str, &[&str])] = &[
            (
                "layernorm-formulas",
                &["max_abs_diff_hw4", "max_abs_diff_slides"],
            ),
            ("layernorm-syncs", &["autograd_barriers", "fused_barriers"]),
            (
                "layernorm-bytes",
                &[
                    "autograd_mb",
                    "autograd_us",
                    "autograd_launches",
                    "fused_mb",
                    "fused_us",
                    "fused_launches",
                ],
            ),
            (
                "layernorm-error",
                &["means", "rel_error_hw4", "rel_error_slides"],
            ),
            (
                "layernorm-dgamma",
                &[
                    "threads",
                    "shared_requests",
                    "shared_wavefronts",
                    "transposed_conflict_degree",
                    "avg_wavefronts_per_request",
                ],
            ),
        ];
        assert_eq!(super::SCENES.len(), want.len());
        for (s, (id, keys)) in super::SCENES.iter().zip(want) {
            assert_eq!(s.id, *id);
            let r = s.report(s.defaults()).unwrap();
            for k in *keys {
                assert!(r.result.get(*k).is_some(), "{id}: missing {k}");
            }
        }
    }

    #[test]
    fn invalid_values_name_the_parameter() {
        let s = crate::scene::find("layernorm-error").unwrap();
        let mut v = s.defaults();
        v.set(s.params, "means", "1,x").unwrap();
        let e = s.report(v).unwrap_err();
        assert!(matches!(e, crate::Error::InvalidParam { ref name, .. } if name == "means"));
        let s = crate::scene::find("layernorm-syncs").unwrap();
        let mut v = s.defaults();
        v.set(s.params, "block", "48").unwrap();
        let e = s.report(v).unwrap_err().to_string();
        assert!(e.contains("block") && e.contains("multiple of 32"), "{e}");
    }
}
