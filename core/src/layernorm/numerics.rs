//! Scene `layernorm-error` (lecture §2.3, script 01 part 3): the numerical cost of the rewrite.
//!
//! Rows x ~ N(mean, 1) of m = `cols` elements, ∇y ~ N(0, 1), γ = 1 + 0.1·N(0, 1), seeded. In the
//! chosen precision (f32, or f16 storage with f32 arithmetic) each row's ∇x is computed in the
//! HW4 form and the slides form; the reference is the f64 reverse-mode gradient
//! ([`super::reference_row`]) of the *same stored inputs*.
//!
//! **Relative error** of a form on a row = max_i |∇xᵢ − ∇xᵢ_ref| / max_i |∇xᵢ_ref| (normwise,
//! so entries near zero do not blow it up); the scene reports the maximum over the rows.
//!
//! Beside it, the forward: var by E\[x²\] − E\[x\]² (one pass, the lecture-10 rewrite) and by the
//! two-pass Σ(x − μ)²/m, both in the chosen arithmetic, relative error vs the f64 two-pass
//! variance, max over rows. Its error grows like u·μ²/σ², the backward rewrite's like
//! u·μ/(σ√m) (lecture §2.3).
//!
//! Lecture (checks in the tests): the slides form is 1.9–3.2× worse than HW4 in its range.

use crate::text::Text;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use super::{Dtype, EPS, backward_row, check_elements, normals, reference_row};
use crate::Error;
use crate::error::{Expected, fmt_real};
use crate::params::{ParamSpec, ParamValues, check_int};
use crate::scene::{Chapter, Cost, Featured, Scene, SceneDef, erase};

/// The means swept by default: 1 … 10⁴, half-decade steps.
pub const DEFAULT_MEANS: &str = "1,3,10,30,100,300,1000,3000,10000";

/// Largest mean accepted with f16 storage (f16's largest finite value is 65504; rows reach
/// mean + 6σ).
pub const F16_MAX_MEAN: f64 = 60000.0;

/// Largest number of means in one sweep.
pub const MAX_MEANS: usize = 64;

const PARAMS: &[ParamSpec] = &[
    ParamSpec::int("cols", "row length m", "行长 m", 2, 8192, 256).log(),
    ParamSpec::int("rows", "rows per mean", "每个均值的行数", 1, 1024, 64).log(),
    ParamSpec::choice(
        "dtype",
        "precision (f16 = f16 storage, f32 arithmetic)",
        "精度（f16 = f16 存储、f32 计算）",
        &["f32", "f16"],
        "f32",
    ),
    ParamSpec::text(
        "means",
        "row means, comma-separated (0 ≤ mean ≤ 1e6)",
        "行均值，逗号分隔（0 ≤ 均值 ≤ 1e6）",
        DEFAULT_MEANS,
    ),
    ParamSpec::int("seed", "random seed", "随机种子", 0, 1 << 31, 1),
];

/// The scene's typed definition (`layernorm-error`).
pub struct ErrorScene;

impl SceneDef for ErrorScene {
    const ID: &'static str = "layernorm-error";
    type Output = ErrorOutput;

    fn run(v: &ParamValues) -> Result<Self::Output, Error> {
        run(&ErrorParams::from_values(v)?)
    }
}

/// The registry entry.
pub const SCENE: Scene = Scene {
    id: ErrorScene::ID,
    section: "§2.3",
    title: Text::new("The numerical cost of the rewrite", "重排的数值代价"),
    summary: Text::new(
        "f32 error of the HW4 and slides forms of ∇x as the row mean grows, and the forward E[x²]−E[x]² failure.",
        "随行均值增大，HW4 写法和 slides 写法的 ∇x 的 f32 误差，以及前向 E[x²]−E[x]² 的失效。",
    ),
    params: PARAMS,
    run: erase::<ErrorScene>(),
    input: None,
    chapter: &Chapter::LAYERNORM,
    featured: Featured::Nothing,
    cost: Cost::Moderate,
};

/// Validated parameters.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ErrorParams {
    /// Row length m, 2..=8192.
    pub cols: usize,
    /// Rows per mean, 1..=1024.
    pub rows: usize,
    /// f32 or f16 storage.
    pub dtype: Dtype,
    /// The means, each finite in (0, 1e6], 1..=64 of them.
    pub means: Vec<f64>,
    /// Seed of the inputs.
    pub seed: u64,
}

/// Parses a comma-separated list of means.
///
/// Every item must be a number in (0, 1e6]: an empty item (`1,,2`, `1,`) is refused, not
/// dropped, and so is 0 — the view plots the error against the mean on a logarithmic axis,
/// where 0 has no place (it would silently vanish from the plot).
///
/// # Errors
/// [`Error::InvalidParam`] (`means`) for an empty list or item, more than [`MAX_MEANS`]
/// entries, or an entry that is not a number in (0, 1e6].
pub fn parse_means(text: &str) -> Result<Vec<f64>, Error> {
    let list = || {
        Expected::custom(
            format!(
                "expected 1 to {MAX_MEANS} comma-separated numbers in (0, 1e6], e.g. \
                 1,10,100,1000"
            ),
            format!("应为 1 到 {MAX_MEANS} 个以逗号分隔、在 (0, 1e6] 之间的数，例如 1,10,100,1000"),
        )
    };
    if text.trim().is_empty() {
        return Err(Error::invalid("means", text, list()));
    }
    let items: Vec<&str> = text.split(',').map(str::trim).collect();
    if items.len() > MAX_MEANS {
        return Err(Error::invalid(
            "means",
            format!("{} values", items.len()),
            list(),
        ));
    }
    items
        .iter()
        .enumerate()
        .map(|(i, s)| {
            if s.is_empty() {
                return Err(Error::invalid(
                    "means",
                    text.trim(),
                    Expected::NonEmptyItems {
                        item: i + 1,
                        expected: Box::new(list()),
                    },
                ));
            }
            match s.parse::<f64>() {
                // 0 and -0.
                Ok(0.0) => Err(Error::invalid(
                    "means",
                    s,
                    Expected::custom(
                        "expected a mean above 0: the view plots the error against the mean on a \
                         logarithmic axis, where 0 has no place (a small mean such as 0.1 shows \
                         the same regime)",
                        "均值应大于 0：视图在对数轴上按均值画出误差，0 在对数轴上没有位置\
                         （0.1 这样的小均值表现出同样的情形）",
                    ),
                )),
                Ok(v) if v.is_finite() && v > 0.0 && v <= 1e6 => Ok(v),
                _ => Err(Error::invalid(
                    "means",
                    s,
                    Expected::RealRange {
                        min: 0.0,
                        max: 1e6,
                        min_open: true,
                        max_open: false,
                    },
                )),
            }
        })
        .collect()
}

impl ErrorParams {
    /// Reads and validates the values.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] naming the parameter and its valid range.
    pub fn from_values(v: &ParamValues) -> Result<Self, Error> {
        let dtype = Dtype::parse("dtype", v.text("dtype")?)?;
        let p = ErrorParams {
            cols: v.usize("cols")?,
            rows: v.usize("rows")?,
            dtype,
            means: parse_means(v.text("means")?)?,
            seed: v.int("seed")? as u64,
        };
        p.validate()?;
        Ok(p)
    }

    /// Range checks.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] naming the parameter and its valid range.
    pub fn validate(&self) -> Result<(), Error> {
        check_int(PARAMS, "cols", self.cols)?;
        check_int(PARAMS, "rows", self.rows)?;
        if self.dtype == Dtype::F64 {
            return Err(Error::invalid(
                "dtype",
                "f64",
                crate::error::Expected::either(&["f32", "f16"]),
            ));
        }
        if self.means.is_empty() || self.means.len() > MAX_MEANS {
            return Err(Error::invalid(
                "means",
                self.means.len(),
                Expected::custom("expected 1..=64 means", "应有 1..=64 个均值"),
            ));
        }
        if let Some(m) = self
            .means
            .iter()
            .find(|m| !(m.is_finite() && **m > 0.0 && **m <= 1e6))
        {
            // The same rule as the text: parse it again for the message.
            parse_means(&fmt_real(*m))?;
        }
        if let Some(m) = self
            .means
            .iter()
            .find(|m| self.dtype == Dtype::F16 && **m > F16_MAX_MEAN)
        {
            return Err(Error::invalid(
                "means",
                m,
                Expected::custom(
                    format!(
                        "with dtype=f16 every mean must be ≤ {F16_MAX_MEAN} (f16 overflows at \
                         65504); expected (0, {F16_MAX_MEAN}]"
                    ),
                    format!(
                        "dtype=f16 时每个均值都须 ≤ {F16_MAX_MEAN}（f16 在 65504 处溢出）；\
                         应在 (0, {F16_MAX_MEAN}] 之间"
                    ),
                ),
            ));
        }
        // Rows are generated one at a time; this bounds the work (rows × cols per mean).
        check_elements(self.rows as u64, self.cols as u64, 8)
    }
}

/// The scene's result (one entry per mean, in the given order).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ErrorOutput {
    /// The means swept.
    pub means: Vec<f64>,
    /// Max relative error of ∇x, HW4 form.
    pub rel_error_hw4: Vec<f64>,
    /// Max relative error of ∇x, slides form.
    pub rel_error_slides: Vec<f64>,
    /// rel_error_slides / rel_error_hw4 (lecture: 1.9–3.2 in its range).
    pub ratio_slides_over_hw4: Vec<f64>,
    /// Forward variance by E\[x²\] − E\[x\]²: max relative error.
    pub rel_error_var_one_pass: Vec<f64>,
    /// Forward variance by two passes: max relative error.
    pub rel_error_var_two_pass: Vec<f64>,
    /// Rows whose one-pass variance came out ≤ 0 (σ then rests on ε alone).
    pub nonpositive_var_rows: Vec<usize>,
    /// The precision's unit roundoff (2⁻²⁴ for f32), for the plot's reference lines.
    pub unit_roundoff: f64,
    /// Definition of the relative error, for the view.
    pub error_definition: &'static str,
}

fn one_pass_var<F: super::Real>(x: &[F]) -> F {
    let m = F::of(x.len() as f64);
    let sq: Vec<F> = x.iter().map(|&v| v * v).collect();
    let mu = super::pairwise_sum(x) / m;
    super::pairwise_sum(&sq) / m - mu * mu
}

/// Sweeps the means. Reports progress ([`crate::progress`]) once per row.
///
/// # Errors
/// [`Error::InvalidParam`] from [`ErrorParams::validate`]; [`Error::Cancelled`] when the current
/// progress scope is cancelled.
pub fn run(p: &ErrorParams) -> Result<ErrorOutput, Error> {
    p.validate()?;
    let m = p.cols;
    let mut out = ErrorOutput {
        means: p.means.clone(),
        rel_error_hw4: vec![],
        rel_error_slides: vec![],
        ratio_slides_over_hw4: vec![],
        rel_error_var_one_pass: vec![],
        rel_error_var_two_pass: vec![],
        nonpositive_var_rows: vec![],
        unit_roundoff: match p.dtype {
            Dtype::F16 => 2f64.powi(-11),
            _ => 2f64.powi(-24),
        },
        error_definition: "per row max|∇x − ∇x_ref| / max|∇x_ref| (f64 reference on the same \
                           stored inputs), then the maximum over the rows",
    };
    for (k, &mean) in p.means.iter().enumerate() {
        // One stream per mean, so adding a mean to the list does not change the others.
        let mut rng = ChaCha8Rng::seed_from_u64(p.seed);
        rng.set_stream(k as u64);
        let gamma: Vec<f64> = normals(&mut rng, m)
            .iter()
            .map(|g| p.dtype.store(1.0 + 0.1 * g))
            .collect();
        let (mut eh, mut es, mut ev1, mut ev2, mut bad) = (0.0f64, 0.0f64, 0.0f64, 0.0f64, 0);
        for r in 0..p.rows {
            crate::progress::report((k * p.rows + r) as u64, (p.means.len() * p.rows) as u64)?;
            let x: Vec<f64> = normals(&mut rng, m)
                .iter()
                .map(|v| p.dtype.store(mean + v))
                .collect();
            let dy: Vec<f64> = normals(&mut rng, m)
                .iter()
                .map(|v| p.dtype.store(*v))
                .collect();
            let (dref, _) = reference_row(&x, &dy, &gamma, EPS);
            let (hw4, slides, _) = backward_row(p.dtype, &x, &dy, &gamma);
            let scale = dref.iter().fold(0.0f64, |a, v| a.max(v.abs()));
            let rel = |d: &[f64]| {
                let e = d
                    .iter()
                    .zip(&dref)
                    .fold(0.0f64, |a, (u, v)| a.max((u - v).abs()));
                if scale > 0.0 { e / scale } else { e }
            };
            eh = eh.max(rel(&hw4));
            es = es.max(rel(&slides));
            // Forward variance, f64 two-pass reference.
            let mf = m as f64;
            let mu = x.iter().sum::<f64>() / mf;
            let var_ref = x.iter().map(|v| (v - mu).powi(2)).sum::<f64>() / mf;
            let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
            let v1 = f64::from(one_pass_var(&x32));
            let s2 = super::forward_row(&x32, 0.0f32);
            let v2 = f64::from(s2.sigma) * f64::from(s2.sigma);
            if v1 <= 0.0 {
                bad += 1;
            }
            let relv = |v: f64| {
                if var_ref > 0.0 {
                    (v - var_ref).abs() / var_ref
                } else {
                    (v - var_ref).abs()
                }
            };
            ev1 = ev1.max(relv(v1));
            ev2 = ev2.max(relv(v2));
        }
        out.rel_error_hw4.push(eh);
        out.rel_error_slides.push(es);
        out.ratio_slides_over_hw4
            .push(es / eh.max(f64::MIN_POSITIVE));
        out.rel_error_var_one_pass.push(ev1);
        out.rel_error_var_two_pass.push(ev2);
        out.nonpositive_var_rows.push(bad);
    }
    let rows = (p.means.len() * p.rows) as u64;
    crate::progress::report(rows, rows)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> ErrorParams {
        ErrorParams {
            cols: 256,
            rows: 64,
            dtype: Dtype::F32,
            means: parse_means(DEFAULT_MEANS).unwrap(),
            seed: 1,
        }
    }

    #[test]
    fn slides_form_is_worse_at_large_means() {
        let o = run(&p()).unwrap();
        for (i, &mean) in o.means.iter().enumerate() {
            if mean >= 100.0 {
                assert!(
                    o.rel_error_slides[i] > o.rel_error_hw4[i],
                    "mean {mean}: slides {} vs hw4 {}",
                    o.rel_error_slides[i],
                    o.rel_error_hw4[i]
                );
            }
        }
        // Lecture: 1.9–3.2× in its range; we ask for a clear factor, not the exact band.
        let big: Vec<f64> = o
            .means
            .iter()
            .zip(&o.ratio_slides_over_hw4)
            .filter(|(m, _)| **m >= 100.0)
            .map(|(_, r)| *r)
            .collect();
        let avg = big.iter().sum::<f64>() / big.len() as f64;
        assert!(avg > 1.9 && avg < 5.0, "{big:?}");
    }

    #[test]
    fn slides_worse_for_other_seeds_too() {
        for seed in 2..6 {
            let o = run(&ErrorParams { seed, ..p() }).unwrap();
            for (i, &mean) in o.means.iter().enumerate() {
                if mean >= 100.0 {
                    assert!(
                        o.ratio_slides_over_hw4[i] > 1.2,
                        "seed {seed} mean {mean}: {:?}",
                        o.ratio_slides_over_hw4
                    );
                }
            }
        }
    }

    #[test]
    fn errors_grow_with_the_mean_and_stay_bounded() {
        let o = run(&p()).unwrap();
        let last = o.means.len() - 1;
        assert!(o.rel_error_hw4[last] > 10.0 * o.rel_error_hw4[0]);
        // Backward error ∝ u·μ/(σ√m): at μ = 1e4, m = 256, u = 6e-8 → ≈ 4e-5; allow 100×.
        assert!(
            o.rel_error_slides[last] < 4e-3,
            "{}",
            o.rel_error_slides[last]
        );
        // At μ = 1 both are a few ulps.
        assert!(o.rel_error_hw4[0] < 1e-5);
    }

    #[test]
    fn forward_one_pass_variance_fails_far_worse() {
        let o = run(&p()).unwrap();
        let last = o.means.len() - 1;
        // μ = 1e4 in f32: x² ≈ 1e8 has ulp 8, E\[x²\] − E\[x\]² loses everything (u·μ²/σ² ≈ 6).
        assert!(
            o.rel_error_var_one_pass[last] > 0.5,
            "{}",
            o.rel_error_var_one_pass[last]
        );
        assert!(o.rel_error_var_two_pass[last] < 1e-2);
        assert!(o.rel_error_var_one_pass[last] > 100.0 * o.rel_error_slides[last]);
    }

    #[test]
    fn means_parsing() {
        assert_eq!(parse_means(" 1, 10 ,100").unwrap(), vec![1.0, 10.0, 100.0]);
        for bad in [
            "", "a", "1,-2", "1e7", "nan", "inf", "1,,2", "1,", ",1", " , ", "0", "1,0", "-0",
        ] {
            let e = parse_means(bad).unwrap_err();
            assert!(
                matches!(e, Error::InvalidParam { ref name, .. } if name == "means"),
                "{bad}"
            );
        }
        // Empty items are refused (not dropped), naming the item; 0 is refused with the reason.
        match parse_means("1,,2").unwrap_err() {
            Error::InvalidParam {
                expected: Expected::NonEmptyItems { item, .. },
                ..
            } => assert_eq!(item, 2),
            e => panic!("{e}"),
        }
        match parse_means("1,").unwrap_err() {
            Error::InvalidParam {
                expected: Expected::NonEmptyItems { item, .. },
                ..
            } => assert_eq!(item, 2),
            e => panic!("{e}"),
        }
        let e = parse_means("0,1").unwrap_err().to_string();
        assert!(e.contains("logarithmic"), "{e}");
        // The typed parameters follow the same rule.
        let zero = ErrorParams {
            means: vec![0.0, 1.0],
            ..p()
        };
        assert!(zero.validate().is_err());
        let f16 = ErrorParams {
            dtype: Dtype::F16,
            means: vec![1e5],
            ..p()
        };
        assert!(f16.validate().is_err());
        let o = run(&ErrorParams {
            dtype: Dtype::F16,
            rows: 8,
            ..p()
        })
        .unwrap();
        assert!(o.rel_error_hw4.iter().all(|e| e.is_finite()));
        let many = vec!["1"; 65].join(",");
        assert!(parse_means(&many).is_err());
    }

    #[test]
    fn deterministic_per_seed() {
        let a = run(&p()).unwrap();
        let b = run(&p()).unwrap();
        assert_eq!(a, b);
        let c = run(&ErrorParams { seed: 2, ..p() }).unwrap();
        assert_ne!(a.rel_error_hw4, c.rel_error_hw4);
    }
}
