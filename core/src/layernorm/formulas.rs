//! Scene `layernorm-formulas` (lecture §2.1, script 01 part 1): the forward saving μ and
//! r = 1/σ; ∇x in the HW4 form and in the slides / paper form; ∇γ, ∇β; each compared with an
//! independent reference (reverse-mode differentiation of the 7-op decomposition in f64,
//! [`super::reference_row`]) in f64, f32, and f16 and bf16 storage with f32 arithmetic; on the
//! user's own rows through [`super::input`].
//!
//! Inputs (seeded ChaCha8): x, ∇y ~ N(0, 1); γ = 1 + 0.1·N(0, 1); β = 0.1·N(0, 1); shape
//! rows × cols. For f32 and f16 the inputs are first rounded to the storage type and the
//! reference is computed in f64 *on those rounded inputs*, so a difference measures the
//! arithmetic of the form, not the rounding of the data. f16 outputs are rounded to f16.
//!
//! Lecture figure (a check in the tests): both forms agree with autograd to ~4.4e-16 in f64.

use crate::text::Text;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use super::{Dtype, STORAGE_DTYPES, backward_row, check_elements, normals, reference_row};
use crate::Error;
use crate::params::{ParamSpec, ParamValues, check_int};
use crate::scene::{Chapter, Cost, Featured, Scene, SceneDef, erase};

const PARAMS: &[ParamSpec] = &[
    ParamSpec::int("rows", "rows (tokens)", "行数（token）", 1, 4096, 8).log(),
    ParamSpec::int(
        "cols",
        "columns m (hidden size)",
        "列数 m（隐藏维度）",
        2,
        8192,
        64,
    )
    .log(),
    ParamSpec::choice(
        "dtype",
        "precision (f16, bf16 = that storage, f32 arithmetic)",
        "精度（f16、bf16 = 该类型存储、f32 计算）",
        STORAGE_DTYPES,
        "f64",
    ),
    ParamSpec::choice(
        "accumulate",
        "arithmetic of the sums (your input; auto = PyTorch's: f64 for f64, else f32)",
        "求和的运算精度（你的输入；auto = PyTorch 的：f64 存储用 f64，其余 f32）",
        super::input::ACCUMULATE,
        "auto",
    ),
    ParamSpec::int("seed", "random seed", "随机种子", 0, 1 << 31, 1),
];

/// `layernorm-formulas`' result: the generated comparison, or the user's rows. Serialises as
/// the variant's own value (the report's `result` has no tag).
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum FormulasResult {
    /// Seeded rows, every precision.
    Generated(Box<FormulasOutput>),
    /// The user's input (`--input`).
    Input(super::input::LnInputOutput),
}

/// The scene's typed definition (`layernorm-formulas`).
pub struct FormulasScene;

impl SceneDef for FormulasScene {
    const ID: &'static str = "layernorm-formulas";
    type Output = FormulasResult;

    fn run(v: &ParamValues) -> Result<Self::Output, Error> {
        run(&FormulasParams::from_values(v)?).map(|o| FormulasResult::Generated(Box::new(o)))
    }

    fn run_input(v: &ParamValues, input: &serde_json::Value) -> Result<Self::Output, Error> {
        super::input::run(
            &super::input::LnInput::read(input)?,
            &super::input::Modes::from_values(v)?,
        )
        .map(FormulasResult::Input)
    }
}

/// The registry entry.
pub const SCENE: Scene = Scene {
    id: FormulasScene::ID,
    section: "§2.1",
    title: Text::new(
        "LayerNorm backward: HW4 form vs slides form vs autograd",
        "LayerNorm 反向：HW4 写法、slides 写法与自动求导",
    ),
    summary: Text::new(
        "Both closed forms of ∇x against reverse-mode differentiation, in f64, f32, f16 and bf16.",
        "两种闭式的 ∇x 与反向模式自动求导对比，分别用 f64、f32、f16 和 bf16。",
    ),
    params: PARAMS,
    run: erase::<FormulasScene>(),
    input: Some(&super::input::INPUT),
    chapter: &Chapter::LAYERNORM,
    featured: Featured::Nothing,
    cost: Cost::Light,
};

/// Validated parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FormulasParams {
    /// Rows (tokens), 1..=4096.
    pub rows: usize,
    /// Columns m (hidden size), 2..=8192; rows × cols ≤ [`super::MAX_ELEMENTS`].
    pub cols: usize,
    /// Precision of the headline differences.
    pub dtype: Dtype,
    /// Seed of the inputs.
    pub seed: u64,
}

impl FormulasParams {
    /// Reads and validates the values.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for a value out of range or rows × cols over the element limit.
    pub fn from_values(v: &ParamValues) -> Result<Self, Error> {
        let p = FormulasParams {
            rows: v.usize("rows")?,
            cols: v.usize("cols")?,
            dtype: Dtype::parse("dtype", v.text("dtype")?)?,
            seed: v.int("seed")? as u64,
        };
        p.validate()?;
        Ok(p)
    }

    /// Range and memory checks.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] naming the parameter and its valid range.
    pub fn validate(&self) -> Result<(), Error> {
        check_int(PARAMS, "rows", self.rows)?;
        check_int(PARAMS, "cols", self.cols)?;
        // ≈ 12 f64 arrays of rows × cols.
        check_elements(self.rows as u64, self.cols as u64, 96)
    }
}

/// Differences of one precision against the f64 reference.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DtypeDiffs {
    /// `f64`, `f32` or `f16`.
    pub dtype: Dtype,
    /// max |∇x_HW4 − ∇x_ref| over all elements.
    pub max_abs_diff_hw4: f64,
    /// max |∇x_slides − ∇x_ref| over all elements.
    pub max_abs_diff_slides: f64,
    /// max |∇γ − ∇γ_ref| over the columns.
    pub max_abs_diff_dgamma: f64,
    /// max |∇β − ∇β_ref| over the columns.
    pub max_abs_diff_dbeta: f64,
    /// max over rows of |Σᵢ ∇xᵢ| for the HW4 form (exercise 2: exactly 0 in exact arithmetic).
    pub max_abs_row_sum_hw4: f64,
    /// The same for the slides form.
    pub max_abs_row_sum_slides: f64,
}

/// The first row in full, for the views.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RowDetail {
    /// x (as stored).
    pub x: Vec<f64>,
    /// ∇y (as stored).
    pub dy: Vec<f64>,
    /// x̂ from the reference forward.
    pub x_hat: Vec<f64>,
    /// ∇x, HW4 form, in the chosen dtype.
    pub dx_hw4: Vec<f64>,
    /// ∇x, slides form, in the chosen dtype.
    pub dx_slides: Vec<f64>,
    /// ∇x, reference.
    pub dx_reference: Vec<f64>,
}

/// The scene's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FormulasOutput {
    /// The chosen precision.
    pub dtype: Dtype,
    /// max |∇x_HW4 − ∇x_ref| in the chosen precision (lecture, f64: ~4.4e-16).
    pub max_abs_diff_hw4: f64,
    /// max |∇x_slides − ∇x_ref| in the chosen precision.
    pub max_abs_diff_slides: f64,
    /// Every precision, f64, f32, f16, bf16.
    pub by_dtype: Vec<DtypeDiffs>,
    /// Per row, Σᵢ ∇xᵢ of the reference (exercise 2: 0 up to f64 rounding).
    pub row_sums_reference: Vec<f64>,
    /// Per row, Σᵢ ∇xᵢ of the HW4 form in the chosen precision.
    pub row_sums_hw4: Vec<f64>,
    /// Per row, the saved μ (chosen precision's arithmetic).
    pub mu: Vec<f64>,
    /// Per row, the saved r = 1/σ.
    pub r: Vec<f64>,
    /// ∇γ per column in the chosen precision (Σ_rows ∇y·x̂).
    pub dgamma: Vec<f64>,
    /// ∇β per column in the chosen precision (Σ_rows ∇y).
    pub dbeta: Vec<f64>,
    /// ∇γ per column, f64 reference.
    pub dgamma_reference: Vec<f64>,
    /// ∇β per column, f64 reference.
    pub dbeta_reference: Vec<f64>,
    /// Row 0 in full.
    pub first_row: RowDetail,
}

/// Seeded inputs: (x, ∇y, γ, β), x and ∇y row-major rows × cols.
pub fn inputs(rows: usize, cols: usize, seed: u64) -> (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x = normals(&mut rng, rows * cols);
    let dy = normals(&mut rng, rows * cols);
    let gamma = normals(&mut rng, cols)
        .iter()
        .map(|g| 1.0 + 0.1 * g)
        .collect();
    let beta = normals(&mut rng, cols).iter().map(|b| 0.1 * b).collect();
    (x, dy, gamma, beta)
}

struct Computed {
    diffs: DtypeDiffs,
    row_sums_reference: Vec<f64>,
    row_sums_hw4: Vec<f64>,
    mu: Vec<f64>,
    r: Vec<f64>,
    dgamma: Vec<f64>,
    dbeta: Vec<f64>,
    dgamma_ref: Vec<f64>,
    dbeta_ref: Vec<f64>,
    first_row: RowDetail,
}

fn compute(p: &FormulasParams, dtype: Dtype) -> Computed {
    let (rows, cols) = (p.rows, p.cols);
    let (x, dy, gamma, _beta) = inputs(rows, cols, p.seed);
    let st = |v: &[f64]| v.iter().map(|&a| dtype.store(a)).collect::<Vec<_>>();
    let (x, dy, gamma) = (st(&x), st(&dy), st(&gamma));
    let mut d = DtypeDiffs {
        dtype,
        max_abs_diff_hw4: 0.0,
        max_abs_diff_slides: 0.0,
        max_abs_diff_dgamma: 0.0,
        max_abs_diff_dbeta: 0.0,
        max_abs_row_sum_hw4: 0.0,
        max_abs_row_sum_slides: 0.0,
    };
    let (mut dgamma_ref, mut dbeta_ref) = (vec![0.0; cols], vec![0.0; cols]);
    // Column sums accumulate in the arithmetic type (f32 for f32 and f16).
    let (mut dgamma, mut dbeta) = (vec![0.0f64; cols], vec![0.0f64; cols]);
    let (mut row_sums_reference, mut row_sums_hw4) = (Vec::new(), Vec::new());
    let (mut mu, mut r) = (Vec::new(), Vec::new());
    let mut first_row = None;
    let arith = |v: f64| match dtype {
        Dtype::F64 => v,
        _ => f64::from(v as f32),
    };
    for i in 0..rows {
        let span = i * cols..(i + 1) * cols;
        let (xr, dyr) = (&x[span.clone()], &dy[span]);
        let (dx_ref, xh_ref) = reference_row(xr, dyr, &gamma, super::EPS);
        let (hw4, slides, s) = backward_row(dtype, xr, dyr, &gamma);
        for j in 0..cols {
            d.max_abs_diff_hw4 = d.max_abs_diff_hw4.max((hw4[j] - dx_ref[j]).abs());
            d.max_abs_diff_slides = d.max_abs_diff_slides.max((slides[j] - dx_ref[j]).abs());
            dgamma_ref[j] += dyr[j] * xh_ref[j];
            dbeta_ref[j] += dyr[j];
            let xh = arith(arith(xr[j] - s.mu) * s.r);
            dgamma[j] = arith(dgamma[j] + arith(dyr[j] * xh));
            dbeta[j] = arith(dbeta[j] + dyr[j]);
        }
        let sh: f64 = hw4.iter().sum();
        let ss: f64 = slides.iter().sum();
        d.max_abs_row_sum_hw4 = d.max_abs_row_sum_hw4.max(sh.abs());
        d.max_abs_row_sum_slides = d.max_abs_row_sum_slides.max(ss.abs());
        row_sums_reference.push(dx_ref.iter().sum());
        row_sums_hw4.push(sh);
        mu.push(s.mu);
        r.push(s.r);
        if i == 0 {
            first_row = Some(RowDetail {
                x: xr.to_vec(),
                dy: dyr.to_vec(),
                x_hat: xh_ref,
                dx_hw4: hw4,
                dx_slides: slides,
                dx_reference: dx_ref,
            });
        }
    }
    let dgamma: Vec<f64> = dgamma.iter().map(|&v| dtype.store(v)).collect();
    let dbeta: Vec<f64> = dbeta.iter().map(|&v| dtype.store(v)).collect();
    for j in 0..cols {
        d.max_abs_diff_dgamma = d.max_abs_diff_dgamma.max((dgamma[j] - dgamma_ref[j]).abs());
        d.max_abs_diff_dbeta = d.max_abs_diff_dbeta.max((dbeta[j] - dbeta_ref[j]).abs());
    }
    Computed {
        diffs: d,
        row_sums_reference,
        row_sums_hw4,
        mu,
        r,
        dgamma,
        dbeta,
        dgamma_ref,
        dbeta_ref,
        first_row: first_row.unwrap_or(RowDetail {
            x: vec![],
            dy: vec![],
            x_hat: vec![],
            dx_hw4: vec![],
            dx_slides: vec![],
            dx_reference: vec![],
        }),
    }
}

/// Runs the comparison in every precision; the chosen one fills the headline keys. Reports
/// progress ([`crate::progress`]) once per precision.
///
/// # Errors
/// [`Error::InvalidParam`] from [`FormulasParams::validate`]; [`Error::Cancelled`] when the
/// current progress scope is cancelled.
pub fn run(p: &FormulasParams) -> Result<FormulasOutput, Error> {
    p.validate()?;
    let mut by_dtype = Vec::with_capacity(4);
    let mut chosen = None;
    let all = [Dtype::F64, Dtype::F32, Dtype::F16, Dtype::Bf16];
    for (k, dt) in all.into_iter().enumerate() {
        crate::progress::report(k as u64, all.len() as u64)?;
        let c = compute(p, dt);
        by_dtype.push(c.diffs);
        if dt == p.dtype {
            chosen = Some(c);
        }
    }
    crate::progress::report(all.len() as u64, all.len() as u64)?;
    let c = chosen.ok_or_else(|| {
        Error::invalid(
            "dtype",
            p.dtype.name(),
            crate::error::Expected::either(&["f64", "f32", "f16", "bf16"]),
        )
    })?;
    Ok(FormulasOutput {
        dtype: p.dtype,
        max_abs_diff_hw4: c.diffs.max_abs_diff_hw4,
        max_abs_diff_slides: c.diffs.max_abs_diff_slides,
        by_dtype,
        row_sums_reference: c.row_sums_reference,
        row_sums_hw4: c.row_sums_hw4,
        mu: c.mu,
        r: c.r,
        dgamma: c.dgamma,
        dbeta: c.dbeta,
        dgamma_reference: c.dgamma_ref,
        dbeta_reference: c.dbeta_ref,
        first_row: c.first_row,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(dtype: Dtype) -> FormulasParams {
        FormulasParams {
            rows: 8,
            cols: 64,
            dtype,
            seed: 1,
        }
    }

    #[test]
    fn f64_forms_agree_with_reverse_mode_to_rounding() {
        // Lecture §2.1: ~4.4e-16 in f64; the bound is 1e-13.
        for seed in [1, 2, 3] {
            let o = run(&FormulasParams {
                seed,
                ..p(Dtype::F64)
            })
            .unwrap();
            assert!(o.max_abs_diff_hw4 < 1e-13, "{}", o.max_abs_diff_hw4);
            assert!(o.max_abs_diff_slides < 1e-13, "{}", o.max_abs_diff_slides);
            assert!(o.max_abs_diff_hw4 > 0.0 || o.max_abs_diff_slides > 0.0);
        }
    }

    #[test]
    fn lower_precisions_are_bounded_by_their_roundoff() {
        let o = run(&p(Dtype::F32)).unwrap();
        let f32d = o.by_dtype[1];
        // |∇x| is O(1) here; f32 roundoff 6e-8 times a few dozen operations.
        assert!(f32d.max_abs_diff_hw4 < 1e-5 && f32d.max_abs_diff_hw4 > 1e-9);
        assert!(f32d.max_abs_diff_slides < 1e-5);
        let f16d = o.by_dtype[2];
        // f16 output rounding alone is up to 2⁻¹¹ relative.
        assert!(f16d.max_abs_diff_hw4 < 1e-2 && f16d.max_abs_diff_hw4 > 1e-5);
        assert!(f16d.max_abs_diff_hw4 > f32d.max_abs_diff_hw4);
        // bf16 keeps 3 bits fewer than f16: its output rounding alone is up to 2⁻⁸ relative.
        let bf16d = o.by_dtype[3];
        assert!(bf16d.max_abs_diff_hw4 < 5e-2 && bf16d.max_abs_diff_hw4 > f16d.max_abs_diff_hw4);
    }

    #[test]
    fn row_sums_of_dx_vanish_exercise_2() {
        // Σᵢ∇xᵢ = r[Σg − (mΣg + Σx̂ᵢ Σgx̂)/m] = 0 because Σx̂ᵢ = 0.
        let o = run(&p(Dtype::F64)).unwrap();
        assert_eq!(o.row_sums_reference.len(), 8);
        for s in o.row_sums_reference.iter().chain(&o.row_sums_hw4) {
            assert!(s.abs() < 1e-12, "{s}");
        }
        assert!(o.by_dtype[0].max_abs_row_sum_slides < 1e-12);
        // Without the mean subtraction the sum would be Σg·r, far from 0: the check has teeth.
        let (x, dy, gamma, _) = inputs(1, 64, 1);
        let s = super::super::forward_row(&x[..64], super::super::EPS);
        let naive: f64 = dy[..64].iter().zip(&gamma).map(|(d, g)| d * g * s.r).sum();
        assert!(naive.abs() > 1e-3);
    }

    #[test]
    fn column_gradients_match_direct_sums() {
        let o = run(&p(Dtype::F64)).unwrap();
        let (x, dy, _, _) = inputs(8, 64, 1);
        // ∇β₀ = Σ_rows ∇y[r][0], computed here directly.
        let db0: f64 = (0..8).map(|r| dy[r * 64]).sum();
        assert!((o.dbeta[0] - db0).abs() < 1e-14);
        // ∇γ₀ = Σ_rows ∇y·x̂ with x̂ from a two-pass mean/variance written out here.
        let mut dg0 = 0.0;
        for r in 0..8 {
            let row = &x[r * 64..(r + 1) * 64];
            let mu = row.iter().sum::<f64>() / 64.0;
            let var = row.iter().map(|v| (v - mu).powi(2)).sum::<f64>() / 64.0;
            dg0 += dy[r * 64] * (row[0] - mu) / (var + 1e-5).sqrt();
        }
        assert!((o.dgamma[0] - dg0).abs() < 1e-12);
        assert!(o.by_dtype[0].max_abs_diff_dgamma < 1e-12);
    }

    #[test]
    fn too_large_is_refused_before_allocating() {
        let e = FormulasParams {
            rows: 4096,
            cols: 8192,
            dtype: Dtype::F64,
            seed: 0,
        }
        .validate()
        .unwrap_err();
        assert!(matches!(e, Error::InvalidParam { ref name, .. } if name == "rows"));
        assert!(e.to_string().contains("33554432 elements"), "{e}");
    }
}
