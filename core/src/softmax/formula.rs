//! Scene `softmax-formula` (lecture §3.1, script 02 part 1): ∇x = y ⊙ (∇y − Σ∇y·y) against the
//! explicit L × L Jacobian product, in f64 and in f32, on seeded rows.
//!
//! The Jacobian of one row is `J[i][j] = ∂yᵢ/∂xⱼ = yᵢ(δᵢⱼ − yⱼ)` (L × L, built explicitly here,
//! one row at a time) and `∇xⱼ = Σᵢ ∇yᵢ J[i][j]` (2L² FLOPs). The formula needs one dot
//! product s = Σ ∇y·y and then yⱼ(∇yⱼ − s) (4L FLOPs). Every ∇x row sums to 0: softmax is
//! invariant to adding a constant to all its inputs (Σⱼ yⱼ(∇yⱼ − s) = s − s·Σy = 0). The
//! lecture's 2.8e-17 compares both against PyTorch; here the two are compared with each other.

use crate::text::Text;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;
use serde::Serialize;

use super::{backward_row, check_range, int_in, softmax_f32, softmax_f64};
use crate::Error;
use crate::params::{ParamSpec, ParamValues};
use crate::scene::{Chapter, Cost, Featured, Scene, SceneDef, erase};

/// Longest row: one explicit Jacobian is 8·L² bytes in f64 plus 4·L² in f32 (48 MiB at 2048).
pub const MAX_LEN: u64 = 2048;
/// Most rows.
pub const MAX_ROWS: u64 = 1024;
/// Largest rows·L² (Jacobian entries built and multiplied) a run may do: 2²⁶ ≈ 67 M.
pub const MAX_WORK: u64 = 1 << 26;

const PARAMS: &[ParamSpec] = &[
    ParamSpec::int("rows", "rows", "行数", 1, MAX_ROWS as i64, 8).log(),
    ParamSpec::int("len", "row length L", "行长 L", 1, MAX_LEN as i64, 64).log(),
    ParamSpec::int("seed", "random seed", "随机种子", 0, 1 << 31, 0),
];

/// `softmax-formula`'s result: the seeded comparison, or the user's rows. Serialises as the
/// variant's own value (the report's `result` has no tag).
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum FormulaResult {
    /// Seeded rows.
    Generated(Box<FormulaOutput>),
    /// The user's input (`--input`).
    Input(super::input::SoftmaxInputOutput),
}

/// The scene's typed definition (`softmax-formula`).
pub struct FormulaScene;

impl SceneDef for FormulaScene {
    const ID: &'static str = "softmax-formula";
    type Output = FormulaResult;

    fn run(v: &ParamValues) -> Result<Self::Output, Error> {
        run(&FormulaParams::from_values(v)?).map(|o| FormulaResult::Generated(Box::new(o)))
    }

    fn run_input(v: &ParamValues, input: &serde_json::Value) -> Result<Self::Output, Error> {
        let _ = v;
        super::input::run(&super::input::SoftmaxInput::read(input)?).map(FormulaResult::Input)
    }
}

/// The registry entry.
pub const SCENE: Scene = Scene {
    id: FormulaScene::ID,
    section: "§3.1",
    title: Text::new(
        "Softmax backward: one dot product instead of an L × L Jacobian",
        "softmax 反向：一次点积代替 L × L 雅可比",
    ),
    summary: Text::new(
        "∇x = y ⊙ (∇y − Σ∇y·y) equals the explicit Jacobian product; only y is needed and every row of ∇x sums to 0.",
        "∇x = y ⊙ (∇y − Σ∇y·y) 与显式的雅可比乘积相等；只需要 y，∇x 的每一行之和为 0。",
    ),
    params: PARAMS,
    run: erase::<FormulaScene>(),
    input: Some(&super::input::INPUT),
    chapter: &Chapter::SOFTMAX,
    featured: Featured::Nothing,
    cost: Cost::Light,
};

/// Validated parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FormulaParams {
    /// Rows (1..=1024).
    pub rows: u64,
    /// Row length L (1..=2048).
    pub len: u64,
    /// Seed: x and ∇y are standard normal (ChaCha8).
    pub seed: u64,
}

impl FormulaParams {
    /// Reads and validates the values.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] naming the parameter and its valid range.
    pub fn from_values(v: &ParamValues) -> Result<Self, Error> {
        let p = FormulaParams {
            rows: int_in(v, "rows", 1, MAX_ROWS as i64)?,
            len: int_in(v, "len", 1, MAX_LEN as i64)?,
            seed: int_in(v, "seed", 0, 1 << 31)?,
        };
        p.validate()?;
        Ok(p)
    }

    /// Checks ranges and the work budget (rows · L² ≤ 2²⁶).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] naming the parameter and its valid range.
    pub fn validate(&self) -> Result<(), Error> {
        check_range("rows", self.rows, 1, MAX_ROWS)?;
        check_range("len", self.len, 1, MAX_LEN)?;
        let work = self.rows * self.len * self.len;
        if work > MAX_WORK {
            let most = (MAX_WORK / (self.len * self.len)).max(1);
            return Err(Error::invalid(
                "rows",
                self.rows,
                crate::error::Expected::custom(
                    format!(
                        "rows · len² = {work} Jacobian entries exceeds the budget of \
                         {MAX_WORK}; at len = {} use at most {most} rows",
                        self.len
                    ),
                    format!(
                        "rows · len² = {work} 个雅可比矩阵元素超出了 {MAX_WORK} 的预算；\
                         len = {} 时至多用 {most} 行",
                        self.len
                    ),
                ),
            ));
        }
        Ok(())
    }
}

/// The first row in full, for the view.
#[derive(Debug, Clone, Serialize)]
pub struct FormulaRow {
    /// Softmax output y (f64), length L.
    pub y: Vec<f64>,
    /// Upstream gradient ∇y, length L.
    pub dy: Vec<f64>,
    /// s = Σ ∇y·y.
    pub s: f64,
    /// ∇x by the formula (f64).
    pub dx_formula: Vec<f64>,
    /// ∇x by the explicit Jacobian (f64).
    pub dx_jacobian: Vec<f64>,
}

/// What the scene computes.
#[derive(Debug, Clone, Serialize)]
pub struct FormulaOutput {
    /// max |formula − Jacobian product| over all elements, f64 (lecture: both within 2.8e-17
    /// of PyTorch).
    pub max_abs_diff_jacobian: f64,
    /// The same in f32 (both methods in f32 arithmetic on the same f32 inputs).
    pub max_abs_diff_jacobian_f32: f64,
    /// max |f32 formula − f64 formula on the same (widened) f32 inputs|: f32 arithmetic error.
    pub max_abs_error_f32_formula: f64,
    /// max |f32 Jacobian product − the same f64 reference|.
    pub max_abs_error_f32_jacobian: f64,
    /// max |∇x| over all elements (the scale the differences compare with).
    pub max_abs_dx: f64,
    /// Σⱼ ∇xⱼ per row, f64 formula (0 up to rounding).
    pub row_sums_f64: Vec<f64>,
    /// Σⱼ ∇xⱼ per row, f32 formula (summed in f64).
    pub row_sums_f32: Vec<f64>,
    /// max |Σⱼ ∇xⱼ| over rows, f64.
    pub max_abs_row_sum_f64: f64,
    /// max |Σⱼ ∇xⱼ| over rows, f32.
    pub max_abs_row_sum_f32: f64,
    /// Reductions per row the formula needs (1: the dot product Σ∇y·y).
    pub reductions_per_row: u32,
    /// FLOPs per row, formula: 2L (dot product) + 2L (subtract, multiply).
    pub flops_formula_per_row: u64,
    /// FLOPs per row, Jacobian product: 2L² (building J costs another 2L²).
    pub flops_jacobian_per_row: u64,
    /// Bytes of one explicit f64 Jacobian, 8·L².
    pub jacobian_bytes_f64: u64,
    /// Bytes the formula needs besides ∇y: y itself, 8·L in f64.
    pub formula_bytes_f64: u64,
    /// The per-row costs at L = 1, 2, 4, … up to [`MAX_LEN`], and the chosen L.
    pub cost_by_len: Vec<FormulaCost>,
    /// Row 0 in full.
    pub first_row: FormulaRow,
}

/// One row's backward at one length, both ways: FLOPs and f64 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FormulaCost {
    /// Row length L.
    pub len: u64,
    /// FLOPs of the formula: 2L (the dot product) + 2L (subtract, multiply).
    pub flops_formula: u64,
    /// FLOPs of the Jacobian product ∇y·J: 2L² (building J costs another 2L²).
    pub flops_jacobian: u64,
    /// Bytes the formula needs besides ∇y: y, 8·L.
    pub bytes_formula: u64,
    /// Bytes of the explicit Jacobian J, 8·L².
    pub bytes_jacobian: u64,
}

/// The per-row costs at length `len` (f64 bytes).
pub fn cost(len: u64) -> FormulaCost {
    FormulaCost {
        len,
        flops_formula: 4 * len,
        flops_jacobian: 2 * len * len,
        bytes_formula: 8 * len,
        bytes_jacobian: 8 * len * len,
    }
}

/// ∇x = ∇y·J with J built explicitly (f64).
pub(crate) fn jacobian_product_f64(y: &[f64], dy: &[f64]) -> Vec<f64> {
    let l = y.len();
    let mut jac = vec![0.0f64; l * l];
    for i in 0..l {
        for j in 0..l {
            let delta = if i == j { 1.0 } else { 0.0 };
            jac[i * l + j] = y[i] * (delta - y[j]);
        }
    }
    (0..l)
        .map(|j| (0..l).map(|i| dy[i] * jac[i * l + j]).sum())
        .collect()
}

/// ∇x = ∇y·J with J built explicitly (f32 arithmetic).
fn jacobian_product_f32(y: &[f32], dy: &[f32]) -> Vec<f32> {
    let l = y.len();
    let mut jac = vec![0.0f32; l * l];
    for i in 0..l {
        for j in 0..l {
            let delta = if i == j { 1.0 } else { 0.0 };
            jac[i * l + j] = y[i] * (delta - y[j]);
        }
    }
    (0..l)
        .map(|j| (0..l).map(|i| dy[i] * jac[i * l + j]).sum())
        .collect()
}

/// The formula in f32 arithmetic (sum accumulated in f32, as a kernel does).
fn formula_f32(y: &[f32], dy: &[f32]) -> Vec<f32> {
    let s: f32 = y.iter().zip(dy).map(|(a, b)| a * b).sum();
    y.iter().zip(dy).map(|(yj, gj)| yj * (gj - s)).collect()
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

fn widen(v: &[f32]) -> Vec<f64> {
    v.iter().map(|x| f64::from(*x)).collect()
}

/// Runs both methods on every row. Reports progress ([`crate::progress`]) once per row.
///
/// # Errors
/// [`Error::InvalidParam`] from [`FormulaParams::validate`]; [`Error::Cancelled`] when the
/// current progress scope is cancelled.
pub fn run(p: &FormulaParams) -> Result<FormulaOutput, Error> {
    p.validate()?;
    let l = p.len as usize;
    let mut rng = ChaCha8Rng::seed_from_u64(p.seed);
    let mut out = FormulaOutput {
        max_abs_diff_jacobian: 0.0,
        max_abs_diff_jacobian_f32: 0.0,
        max_abs_error_f32_formula: 0.0,
        max_abs_error_f32_jacobian: 0.0,
        max_abs_dx: 0.0,
        row_sums_f64: Vec::with_capacity(p.rows as usize),
        row_sums_f32: Vec::with_capacity(p.rows as usize),
        max_abs_row_sum_f64: 0.0,
        max_abs_row_sum_f32: 0.0,
        reductions_per_row: 1,
        flops_formula_per_row: cost(p.len).flops_formula,
        flops_jacobian_per_row: cost(p.len).flops_jacobian,
        jacobian_bytes_f64: cost(p.len).bytes_jacobian,
        formula_bytes_f64: cost(p.len).bytes_formula,
        cost_by_len: {
            let mut lens: Vec<u64> = std::iter::successors(Some(1u64), |l| Some(l * 2))
                .take_while(|l| *l <= MAX_LEN)
                .collect();
            if !lens.contains(&p.len) {
                lens.push(p.len);
                lens.sort_unstable();
            }
            lens.into_iter().map(cost).collect()
        },
        first_row: FormulaRow {
            y: Vec::new(),
            dy: Vec::new(),
            s: 0.0,
            dx_formula: Vec::new(),
            dx_jacobian: Vec::new(),
        },
    };
    for r in 0..p.rows {
        crate::progress::report(r, p.rows)?;
        let x: Vec<f64> = (0..l).map(|_| rng.sample(StandardNormal)).collect();
        let dy: Vec<f64> = (0..l).map(|_| rng.sample(StandardNormal)).collect();
        // f64.
        let y = softmax_f64(&x);
        let dx = backward_row(&y, &dy)?;
        let dx_jac = jacobian_product_f64(&y, &dy);
        out.max_abs_diff_jacobian = out.max_abs_diff_jacobian.max(max_diff(&dx, &dx_jac));
        out.max_abs_dx = dx.iter().fold(out.max_abs_dx, |m, v| m.max(v.abs()));
        let sum: f64 = dx.iter().sum();
        out.row_sums_f64.push(sum);
        out.max_abs_row_sum_f64 = out.max_abs_row_sum_f64.max(sum.abs());
        // f32, against the f64 formula on the same f32 inputs.
        let x32: Vec<f32> = x.iter().map(|v| *v as f32).collect();
        let dy32: Vec<f32> = dy.iter().map(|v| *v as f32).collect();
        let y32 = softmax_f32(&x32);
        let dx32 = widen(&formula_f32(&y32, &dy32));
        let dxj32 = widen(&jacobian_product_f32(&y32, &dy32));
        let reference = backward_row(&widen(&y32), &widen(&dy32))?;
        out.max_abs_diff_jacobian_f32 = out.max_abs_diff_jacobian_f32.max(max_diff(&dx32, &dxj32));
        out.max_abs_error_f32_formula = out
            .max_abs_error_f32_formula
            .max(max_diff(&dx32, &reference));
        out.max_abs_error_f32_jacobian = out
            .max_abs_error_f32_jacobian
            .max(max_diff(&dxj32, &reference));
        let sum32: f64 = dx32.iter().sum();
        out.row_sums_f32.push(sum32);
        out.max_abs_row_sum_f32 = out.max_abs_row_sum_f32.max(sum32.abs());
        if r == 0 {
            out.first_row = FormulaRow {
                s: y.iter().zip(&dy).map(|(a, b)| a * b).sum(),
                y,
                dy,
                dx_formula: dx,
                dx_jacobian: dx_jac,
            };
        }
    }
    crate::progress::report(p.rows, p.rows)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(rows: u64, len: u64) -> FormulaParams {
        FormulaParams { rows, len, seed: 3 }
    }

    #[test]
    fn jacobian_by_hand_for_exercise_1() {
        // J for y = (0.5, 0.3, 0.2): diag y(1−y) = (0.25, 0.21, 0.16), off-diagonal −yᵢyⱼ.
        // ∇y = (1, 0, 0) picks J's first row: (0.25, −0.15, −0.10).
        let dx = jacobian_product_f64(&[0.5, 0.3, 0.2], &[1.0, 0.0, 0.0]);
        for (got, want) in dx.iter().zip([0.25, -0.15, -0.10]) {
            assert!((got - want).abs() < 1e-15);
        }
        // ∇y = (0, 1, 0): J's second row (−0.15, 0.21, −0.06).
        let dx = jacobian_product_f64(&[0.5, 0.3, 0.2], &[0.0, 1.0, 0.0]);
        for (got, want) in dx.iter().zip([-0.15, 0.21, -0.06]) {
            assert!((got - want).abs() < 1e-15);
        }
    }

    #[test]
    fn f64_methods_agree_to_rounding_and_rows_sum_to_zero() {
        let o = run(&params(8, 64)).unwrap();
        assert!(
            o.max_abs_diff_jacobian < 1e-15,
            "{}",
            o.max_abs_diff_jacobian
        );
        assert!(o.max_abs_row_sum_f64 < 1e-15);
        assert_eq!(o.row_sums_f64.len(), 8);
        // f32: a sum of L products with relative error ~ L·2⁻²⁴ · max|∇y·y| terms.
        assert!(o.max_abs_diff_jacobian_f32 < 64.0 * 6e-8 * 4.0);
        assert!(o.max_abs_error_f32_formula < 64.0 * 6e-8 * 4.0);
        assert!(o.max_abs_row_sum_f32 < 1e-5);
        assert!(o.max_abs_diff_jacobian_f32 > o.max_abs_diff_jacobian);
        assert_eq!(o.first_row.dx_formula.len(), 64);
    }

    #[test]
    fn costs_by_hand() {
        // L = 3: the formula 2·3 + 2·3 = 12 FLOPs and y's 3 × 8 = 24 bytes; the Jacobian
        // product 2·9 = 18 FLOPs and J's 9 × 8 = 72 bytes.
        let c = cost(3);
        assert_eq!(
            (
                c.flops_formula,
                c.flops_jacobian,
                c.bytes_formula,
                c.bytes_jacobian
            ),
            (12, 18, 24, 72)
        );
        // The sweep: 1, 2, 4, …, 2048 (12 lengths) and L = 48 between 32 and 64.
        let o = run(&FormulaParams {
            rows: 1,
            len: 48,
            seed: 0,
        })
        .unwrap();
        let lens: Vec<u64> = o.cost_by_len.iter().map(|c| c.len).collect();
        assert_eq!(lens.len(), 13);
        assert_eq!(&lens[5..8], &[32, 48, 64]);
        assert_eq!(o.formula_bytes_f64, 48 * 8);
        assert_eq!(o.jacobian_bytes_f64, 48 * 48 * 8);
    }

    #[test]
    fn uniform_gradient_gives_zero() {
        // ∇y = c·1: s = c·Σy = c, so ∇x = y(c − c) = 0 — the constant-shift invariance.
        let y = softmax_f64(&[0.3, -1.0, 2.0, 0.0]);
        let dx = jacobian_product_f64(&y, &[2.5; 4]);
        assert!(dx.iter().all(|v| v.abs() < 1e-15));
    }

    #[test]
    fn refuses_too_much_work_with_the_number() {
        let e = params(1024, 2048).validate().unwrap_err();
        assert!(e.to_string().contains("4294967296"), "{e}");
        assert!(params(16, 2048).validate().is_ok());
        assert!(params(0, 8).validate().is_err());
        assert!(params(1, 2049).validate().is_err());
    }
}
