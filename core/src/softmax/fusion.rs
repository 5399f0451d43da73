//! Scene `softmax-fusion` (lecture §3.2, script 02 part 2): attention's dropout backward and
//! softmax backward, unfused (five kernels) vs fused (one), byte by byte.
//!
//! In attention the softmax output y goes through dropout, P = dropout(y) = y ⊙ M / keep
//! (M the 0/1 mask, keep = 1 − ratio). Backward, from ∇P:
//!
//! | kernel | reads | writes |
//! |---|---|---|
//! | unfused 1: dropout backward g′ = ∇P ⊙ M / keep | ∇P (T), M (1 B) | g′ (T) |
//! | unfused 2: P = g′ ⊙ y | g′, y (T) | P (T) |
//! | unfused 3: s = Σⱼ P (per row) | P (T) | s (f32, one per row) |
//! | unfused 4: D = g′ − s | g′ (T), s (f32, once per row) | D (T) |
//! | unfused 5: ∇x = y ⊙ D | y, D (T) | ∇x (T) |
//! | fused: g′ in registers, then softmax backward | ∇P (T), M (1 B), y (T) | ∇x (T) |
//!
//! Every byte is derived from the tensor sizes: score-sized tensors have B·h·L·L elements,
//! the row sums B·h·L; T is `dtype` (2 bytes for f16); the mask is one byte per element (uint8,
//! as HW4/LightSeq2 store it, §3.3); s is f32 (the kernels reduce in f32). Each tensor is read
//! or written once per kernel that touches it (a row's s is read once, not per element).
//! Time is [`crate::cost`]'s: bytes / bandwidth + launches × launch overhead on the chosen
//! [`crate::device`].
//!
//! `*_bytes_per_element` is traffic in multiples of the score tensor (bytes moved ÷ bytes of
//! one score-sized tensor in T), the lecture's "× the score tensor" (lecture: 12.38 → 4).
//! `*_raw_bytes_per_element` is the same traffic in bytes per score element.
//!
//! A seeded `example_rows × example_len` case (lecture: 64 × 64) runs both data flows
//! numerically with the storage roundings a GPU would do (every temporary stored in T, s in
//! f32, arithmetic in f32) and checks they agree within a rounding bound derived below.

use crate::text::Text;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;
use serde::Serialize;

use super::{DTYPES, Dtype, check_range, int_in};
use crate::Error;
use crate::cost::{self, KernelCost};
use crate::device::{self, DEVICE_IDS};
use crate::params::{ParamSpec, ParamValues};
use crate::scene::{Chapter, Cost, Featured, Scene, SceneDef, erase};

/// Bytes per dropout-mask element (uint8).
pub const MASK_BYTES: u32 = 1;
/// Bytes per row sum s (f32).
pub const ROW_SUM_BYTES: u32 = 4;
/// Largest example (rows × len elements) the scene computes numerically: 2²⁰, about 30 MB of
/// working arrays.
pub const MAX_EXAMPLE_ELEMENTS: u64 = 1 << 20;
/// Bytes of working memory per example element: seven f32 arrays (y, ∇P, g′, P, D, ∇x twice)
/// and the u8 mask.
const EXAMPLE_BYTES_PER_ELEMENT: u64 = 7 * 4 + 1;

const PARAMS: &[ParamSpec] = &[
    ParamSpec::int("batch", "batch B", "批大小 B", 1, 1024, 8).log(),
    ParamSpec::int("heads", "heads h", "头数 h", 1, 256, 16).log(),
    ParamSpec::int("len", "sequence length L", "序列长度 L", 1, 65536, 512).log(),
    ParamSpec::choice("dtype", "score dtype T", "分数类型 T", DTYPES, "f16"),
    ParamSpec::choice("device", "device", "设备", DEVICE_IDS, "a100"),
    ParamSpec::float("dropout", "dropout ratio", "dropout 比例", 0.0, 0.9, 0.1),
    ParamSpec::int(
        "seed",
        "random seed (example)",
        "随机种子（示例）",
        0,
        1 << 31,
        0,
    ),
    ParamSpec::int("example_rows", "example rows", "示例行数", 1, 4096, 64).log(),
    ParamSpec::int("example_len", "example row length", "示例行长", 1, 4096, 64).log(),
];

/// The scene's typed definition (`softmax-fusion`).
pub struct FusionScene;

impl SceneDef for FusionScene {
    const ID: &'static str = "softmax-fusion";
    type Output = FusionOutput;

    fn run(v: &ParamValues) -> Result<Self::Output, Error> {
        run(&FusionParams::from_values(v)?)
    }
}

/// The registry entry.
pub const SCENE: Scene = Scene {
    id: FusionScene::ID,
    section: "§3.2",
    title: Text::new(
        "Fusing dropout backward into softmax backward",
        "把 dropout 反向融合进 softmax 反向",
    ),
    summary: Text::new(
        "Five kernels and three score-sized temporaries become one kernel reading ∇P, M and y once and writing ∇x once.",
        "五个内核和三个与分数矩阵一样大的临时张量，变成一个内核：∇P、M、y 各读一次，∇x 写一次。",
    ),
    params: PARAMS,
    run: erase::<FusionScene>(),
    input: None,
    chapter: &Chapter::SOFTMAX,
    featured: Featured::Nothing,
    cost: Cost::Moderate,
};

/// Validated parameters.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FusionParams {
    /// Batch B (1..=1024).
    pub batch: u64,
    /// Attention heads h (1..=256).
    pub heads: u64,
    /// Sequence length L (1..=65536): scores are L × L per head.
    pub len: u64,
    /// Storage type of ∇P, y, ∇x and the temporaries.
    pub dtype: Dtype,
    /// Device id for the modelled time.
    pub device: String,
    /// Dropout ratio (0..=0.9); keep = 1 − ratio.
    pub dropout: f64,
    /// Seed of the numerical example (ChaCha8).
    pub seed: u64,
    /// Rows of the numerical example (1..=4096).
    pub example_rows: u64,
    /// Row length of the numerical example (1..=4096); rows × len ≤ 2²⁰.
    pub example_len: u64,
}

impl FusionParams {
    /// Reads and validates the values.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] naming the parameter and its valid range.
    pub fn from_values(v: &ParamValues) -> Result<Self, Error> {
        let p = FusionParams {
            batch: int_in(v, "batch", 1, 1024)?,
            heads: int_in(v, "heads", 1, 256)?,
            len: int_in(v, "len", 1, 65536)?,
            dtype: Dtype::parse("dtype", v.text("dtype")?)?,
            device: v.text("device")?.to_owned(),
            dropout: v.float("dropout")?,
            seed: int_in(v, "seed", 0, 1 << 31)?,
            example_rows: int_in(v, "example_rows", 1, 4096)?,
            example_len: int_in(v, "example_len", 1, 4096)?,
        };
        p.validate()?;
        Ok(p)
    }

    /// Checks every range and the example's memory.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] naming the parameter and its valid range.
    pub fn validate(&self) -> Result<(), Error> {
        check_range("batch", self.batch, 1, 1024)?;
        check_range("heads", self.heads, 1, 256)?;
        check_range("len", self.len, 1, 65536)?;
        device::device(&self.device)?;
        if !(self.dropout.is_finite() && (0.0..=0.9).contains(&self.dropout)) {
            return Err(Error::invalid(
                "dropout",
                self.dropout,
                crate::error::Expected::real(0.0, 0.9),
            ));
        }
        check_range("seed", self.seed, 0, 1 << 31)?;
        check_range("example_rows", self.example_rows, 1, 4096)?;
        check_range("example_len", self.example_len, 1, 4096)?;
        let n = self.example_rows * self.example_len;
        if n > MAX_EXAMPLE_ELEMENTS {
            let need = (n * EXAMPLE_BYTES_PER_ELEMENT) as f64 / 1e6;
            let most = (MAX_EXAMPLE_ELEMENTS * EXAMPLE_BYTES_PER_ELEMENT) as f64 / 1e6;
            return Err(Error::invalid(
                "example_rows",
                self.example_rows,
                crate::error::Expected::custom(
                    format!(
                        "example_rows × example_len = {n} elements would need {need:.1} MB of \
                         working memory; expected at most {MAX_EXAMPLE_ELEMENTS} elements \
                         ({most:.1} MB)"
                    ),
                    format!(
                        "example_rows × example_len = {n} 个元素需要 {need:.1} MB 工作内存；\
                         应不多于 {MAX_EXAMPLE_ELEMENTS} 个元素（{most:.1} MB）"
                    ),
                ),
            ));
        }
        Ok(())
    }
}

/// One tensor a kernel reads or writes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Access {
    /// The tensor (`∇P`, `M`, `g′`, `y`, `P`, `s`, `D`, `∇x`).
    pub tensor: &'static str,
    /// `score` (B·h·L·L elements) or `row` (B·h·L elements).
    pub extent: &'static str,
    /// Elements accessed.
    pub elements: f64,
    /// Bytes per element.
    pub bytes_per_element: u32,
    /// elements × bytes_per_element.
    pub bytes: f64,
}

/// One kernel of a data flow, every byte itemised.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelAudit {
    /// What it computes, in both languages (its formula the same in both).
    pub name: Text<&'static str>,
    /// Tensors read.
    pub reads: Vec<Access>,
    /// Tensors written.
    pub writes: Vec<Access>,
    /// Σ read bytes.
    pub bytes_read: f64,
    /// Σ written bytes.
    pub bytes_written: f64,
    /// Traffic in multiples of the score tensor (bytes ÷ (B·h·L·L · bytes(T))).
    pub score_tensors: f64,
    /// Launches (1).
    pub launches: u64,
    /// Modelled time on the device, µs (bytes / bandwidth + 1 launch).
    pub time_us: f64,
}

/// The shape of a ledger.
#[derive(Debug, Clone, Copy)]
struct Shape {
    rows: f64,
    len: f64,
    dtype: Dtype,
}

impl Shape {
    fn score_elements(&self) -> f64 {
        self.rows * self.len
    }
    fn score(&self, tensor: &'static str) -> Access {
        let e = self.dtype.bytes();
        let n = self.score_elements();
        Access {
            tensor,
            extent: "score",
            elements: n,
            bytes_per_element: e,
            bytes: n * f64::from(e),
        }
    }
    fn mask(&self) -> Access {
        let n = self.score_elements();
        Access {
            tensor: "M",
            extent: "score",
            elements: n,
            bytes_per_element: MASK_BYTES,
            bytes: n * f64::from(MASK_BYTES),
        }
    }
    fn row_sums(&self) -> Access {
        Access {
            tensor: "s",
            extent: "row",
            elements: self.rows,
            bytes_per_element: ROW_SUM_BYTES,
            bytes: self.rows * f64::from(ROW_SUM_BYTES),
        }
    }
    fn kernel(
        &self,
        name: Text<&'static str>,
        reads: Vec<Access>,
        writes: Vec<Access>,
    ) -> KernelAudit {
        let bytes_read: f64 = reads.iter().map(|a| a.bytes).sum();
        let bytes_written: f64 = writes.iter().map(|a| a.bytes).sum();
        KernelAudit {
            name,
            score_tensors: (bytes_read + bytes_written)
                / (self.score_elements() * f64::from(self.dtype.bytes())),
            reads,
            writes,
            bytes_read,
            bytes_written,
            launches: 1,
            time_us: 0.0,
        }
    }

    /// The unfused chain: dropout backward, then the four softmax-backward kernels.
    fn unfused(&self) -> Vec<KernelAudit> {
        vec![
            self.kernel(
                Text::new(
                    "dropout backward: g′ = ∇P ⊙ M / keep",
                    "dropout 反向: g′ = ∇P ⊙ M / keep",
                ),
                vec![self.score("∇P"), self.mask()],
                vec![self.score("g′")],
            ),
            self.kernel(
                Text::same("P = g′ ⊙ y"),
                vec![self.score("g′"), self.score("y")],
                vec![self.score("P")],
            ),
            self.kernel(
                Text::new("s = Σⱼ P (row sums)", "s = Σⱼ P （行和）"),
                vec![self.score("P")],
                vec![self.row_sums()],
            ),
            self.kernel(
                Text::same("D = g′ − s"),
                vec![self.score("g′"), self.row_sums()],
                vec![self.score("D")],
            ),
            self.kernel(
                Text::same("∇x = y ⊙ D"),
                vec![self.score("y"), self.score("D")],
                vec![self.score("∇x")],
            ),
        ]
    }

    /// The fused kernel: g′ in registers, one warp-sum, ∇x written once.
    fn fused(&self) -> Vec<KernelAudit> {
        vec![self.kernel(
            Text::new(
                "fused: g′ = ∇P ⊙ M / keep in registers; ∇x = y ⊙ (g′ − Σ g′·y)",
                "融合： g′ = ∇P ⊙ M / keep 在寄存器里; ∇x = y ⊙ (g′ − Σ g′·y)",
            ),
            vec![self.score("∇P"), self.mask(), self.score("y")],
            vec![self.score("∇x")],
        )]
    }
}

/// Totals of one data flow.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlowTotals {
    /// Kernels launched.
    pub launches: u64,
    /// DRAM bytes moved.
    pub bytes: f64,
    /// The same in MB (10⁶ bytes).
    pub mb: f64,
    /// Modelled time, µs.
    pub us: f64,
    /// Of which launch overhead, µs.
    pub launch_us: f64,
    /// Score-sized temporaries written and read back (g′, P, D for the unfused chain).
    pub score_temporaries: u32,
    /// Row-sized temporaries (s).
    pub row_temporaries: u32,
    /// Bytes of those temporaries.
    pub temporary_bytes: f64,
}

fn totals(
    kernels: &mut [KernelAudit],
    dev: &device::Device,
    score_temporaries: u32,
    row_temporaries: u32,
    temporary_bytes: f64,
) -> FlowTotals {
    let costs: Vec<KernelCost> = kernels
        .iter()
        .map(|k| KernelCost {
            launches: k.launches,
            ..KernelCost::memory(k.name.en, k.bytes_read, k.bytes_written)
        })
        .collect();
    for (k, c) in kernels.iter_mut().zip(&costs) {
        k.time_us = c.seconds(dev, 1.0) * 1e6;
    }
    let t = cost::totals(&costs, dev, 1.0);
    FlowTotals {
        launches: t.launches,
        bytes: t.bytes,
        mb: t.bytes / 1e6,
        us: t.seconds * 1e6,
        launch_us: t.launch_s * 1e6,
        score_temporaries,
        row_temporaries,
        temporary_bytes,
    }
}

/// The numerical example's results.
#[derive(Debug, Clone, Serialize)]
pub struct Example {
    /// Rows × row length.
    pub rows: u64,
    /// Row length.
    pub len: u64,
    /// keep = 1 − dropout.
    pub keep: f64,
    /// Mask elements that are 1 (kept).
    pub kept: u64,
    /// max |fused ∇x − unfused ∇x|.
    pub max_abs_diff_fused_unfused: f64,
    /// max |fused ∇x − f64 reference on the same stored inputs|.
    pub max_abs_error_fused: f64,
    /// max |unfused ∇x − the same reference|.
    pub max_abs_error_unfused: f64,
    /// Largest per-element rounding bound (see [`run`]).
    pub max_tolerance: f64,
    /// Whether every element's |fused − unfused| is within its bound.
    pub agree: bool,
    /// max |Σⱼ ∇x| over rows, fused (0 up to rounding).
    pub max_abs_row_sum_fused: f64,
    /// The data flow at the example's shape (one batch, one head), unfused.
    pub unfused_kernels: Vec<KernelAudit>,
    /// The same, fused.
    pub fused_kernels: Vec<KernelAudit>,
    /// Row 0 of ∇x, fused.
    pub first_row_fused: Vec<f32>,
    /// Row 0 of ∇x, unfused.
    pub first_row_unfused: Vec<f32>,
    /// y as stored, rows × len row-major.
    #[serde(skip)]
    pub y: Vec<f32>,
    /// ∇P as stored.
    #[serde(skip)]
    pub dp: Vec<f32>,
    /// The mask (0/1).
    #[serde(skip)]
    pub mask: Vec<u8>,
    /// ∇x fused.
    #[serde(skip)]
    pub dx_fused: Vec<f32>,
    /// ∇x unfused.
    #[serde(skip)]
    pub dx_unfused: Vec<f32>,
}

/// What the scene computes.
#[derive(Debug, Clone, Serialize)]
pub struct FusionOutput {
    /// Score elements, B·h·L·L.
    pub score_elements: f64,
    /// Bytes of one score-sized tensor in T.
    pub score_tensor_bytes: f64,
    /// Unfused traffic in multiples of the score tensor (lecture: 12.38).
    pub unfused_bytes_per_element: f64,
    /// Fused traffic in multiples of the score tensor (lecture: 4).
    pub fused_bytes_per_element: f64,
    /// Unfused traffic in bytes per score element.
    pub unfused_raw_bytes_per_element: f64,
    /// Fused traffic in bytes per score element.
    pub fused_raw_bytes_per_element: f64,
    /// Unfused kernel launches (5).
    pub unfused_launches: u64,
    /// Fused kernel launches (1).
    pub fused_launches: u64,
    /// Unfused modelled time, µs.
    pub unfused_us: f64,
    /// Fused modelled time, µs.
    pub fused_us: f64,
    /// unfused_us / fused_us (lecture: 3.1–3.2× at 8 × 16 × 512 × 512 fp16).
    pub modelled_speedup: f64,
    /// Bytes ratio alone (no launch overhead).
    pub bytes_ratio: f64,
    /// The device modelled.
    pub device: String,
    /// Unfused totals.
    pub unfused: FlowTotals,
    /// Fused totals.
    pub fused: FlowTotals,
    /// Every unfused kernel, every byte.
    pub unfused_kernels: Vec<KernelAudit>,
    /// The fused kernel, every byte.
    pub fused_kernels: Vec<KernelAudit>,
    /// The seeded numerical example.
    pub example: Example,
}

/// The seeded example: both data flows with GPU storage rounding, and an f64 reference.
///
/// Rounding bound per element (u = T's unit roundoff, S = Σₖ |g′ₖ yₖ| over the row):
/// the unfused chain rounds g′, P, D and ∇x to T, so its error is at most about
/// y·u·(3|g′| + 4S) plus f32 summation (≈ L·2⁻²⁴·y·S) plus T's subnormal floor for each of
/// the L stored P and the ∇x store; the fused kernel rounds only ∇x. The tolerance for
/// |fused − unfused| is y·(|g′| + S)·(8u + 2L·2⁻²⁴) + (L + 4)·min_positive(T).
fn example(p: &FusionParams, dev: &device::Device) -> Example {
    let (rows, len) = (p.example_rows as usize, p.example_len as usize);
    let t = p.dtype;
    let keep = 1.0 - p.dropout;
    let scale = (1.0 / keep) as f32;
    let mut rng = ChaCha8Rng::seed_from_u64(p.seed);
    let n = rows * len;
    let mut y = Vec::with_capacity(n);
    for _ in 0..rows {
        let x: Vec<f32> = (0..len)
            .map(|_| rng.sample::<f32, _>(StandardNormal))
            .collect();
        y.extend(super::softmax_f32(&x).into_iter().map(|v| t.store(v)));
    }
    let dp: Vec<f32> = (0..n)
        .map(|_| t.store(rng.sample::<f32, _>(StandardNormal)))
        .collect();
    let mask: Vec<u8> = (0..n)
        .map(|_| u8::from(rng.random::<f64>() < keep))
        .collect();

    // Unfused: five kernels, each temporary stored in T (s in f32).
    let g: Vec<f32> = dp
        .iter()
        .zip(&mask)
        .map(|(d, m)| t.store(d * f32::from(*m) * scale))
        .collect();
    let prod: Vec<f32> = g.iter().zip(&y).map(|(a, b)| t.store(a * b)).collect();
    let s: Vec<f32> = prod.chunks(len).map(|r| r.iter().sum()).collect();
    let d: Vec<f32> = g
        .iter()
        .enumerate()
        .map(|(i, v)| t.store(v - s[i / len]))
        .collect();
    let dx_unfused: Vec<f32> = y.iter().zip(&d).map(|(a, b)| t.store(a * b)).collect();

    // Fused: g′ in f32 registers, one f32 dot product per row, one store.
    let mut dx_fused = Vec::with_capacity(n);
    for r in 0..rows {
        let row = r * len..(r + 1) * len;
        let gr: Vec<f32> = dp[row.clone()]
            .iter()
            .zip(&mask[row.clone()])
            .map(|(d, m)| d * f32::from(*m) * scale)
            .collect();
        let sum: f32 = gr.iter().zip(&y[row.clone()]).map(|(a, b)| a * b).sum();
        dx_fused.extend(
            gr.iter()
                .zip(&y[row])
                .map(|(gv, yv)| t.store(yv * (gv - sum))),
        );
    }

    // f64 reference and per-element bounds.
    let u = t.unit_roundoff();
    let f32_sum = 2.0 * len as f64 * 2f64.powi(-24);
    let floor = (len as f64 + 4.0) * t.min_positive();
    let mut out = Example {
        rows: p.example_rows,
        len: p.example_len,
        keep,
        kept: mask.iter().map(|m| u64::from(*m)).sum(),
        max_abs_diff_fused_unfused: 0.0,
        max_abs_error_fused: 0.0,
        max_abs_error_unfused: 0.0,
        max_tolerance: 0.0,
        agree: true,
        max_abs_row_sum_fused: 0.0,
        unfused_kernels: Vec::new(),
        fused_kernels: Vec::new(),
        first_row_fused: dx_fused.iter().take(len).copied().collect(),
        first_row_unfused: dx_unfused.iter().take(len).copied().collect(),
        y: Vec::new(),
        dp: Vec::new(),
        mask: Vec::new(),
        dx_fused: Vec::new(),
        dx_unfused: Vec::new(),
    };
    for r in 0..rows {
        let row = r * len..(r + 1) * len;
        let g64: Vec<f64> = dp[row.clone()]
            .iter()
            .zip(&mask[row.clone()])
            .map(|(d, m)| f64::from(*d) * f64::from(*m) / keep)
            .collect();
        let y64: Vec<f64> = y[row.clone()].iter().map(|v| f64::from(*v)).collect();
        let s64: f64 = g64.iter().zip(&y64).map(|(a, b)| a * b).sum();
        let abs_s: f64 = g64.iter().zip(&y64).map(|(a, b)| (a * b).abs()).sum();
        let mut row_sum = 0.0;
        for (k, i) in row.enumerate() {
            let reference = y64[k] * (g64[k] - s64);
            let (f, uf) = (f64::from(dx_fused[i]), f64::from(dx_unfused[i]));
            let tol = y64[k] * (g64[k].abs() + abs_s) * (8.0 * u + f32_sum) + floor;
            out.max_abs_diff_fused_unfused = out.max_abs_diff_fused_unfused.max((f - uf).abs());
            out.max_abs_error_fused = out.max_abs_error_fused.max((f - reference).abs());
            out.max_abs_error_unfused = out.max_abs_error_unfused.max((uf - reference).abs());
            out.max_tolerance = out.max_tolerance.max(tol);
            out.agree &= (f - uf).abs() <= tol;
            row_sum += f;
        }
        out.max_abs_row_sum_fused = out.max_abs_row_sum_fused.max(row_sum.abs());
    }
    let shape = Shape {
        rows: rows as f64,
        len: len as f64,
        dtype: t,
    };
    let mut uk = shape.unfused();
    let mut fk = shape.fused();
    totals(&mut uk, dev, 3, 1, 0.0);
    totals(&mut fk, dev, 0, 0, 0.0);
    out.unfused_kernels = uk;
    out.fused_kernels = fk;
    out.y = y;
    out.dp = dp;
    out.mask = mask;
    out.dx_fused = dx_fused;
    out.dx_unfused = dx_unfused;
    out
}

/// Builds both ledgers at the attention shape and runs the numerical example.
///
/// # Errors
/// [`Error::InvalidParam`] from [`FusionParams::validate`].
pub fn run(p: &FusionParams) -> Result<FusionOutput, Error> {
    p.validate()?;
    let dev = device::device(&p.device)?;
    let shape = Shape {
        rows: (p.batch * p.heads * p.len) as f64,
        len: p.len as f64,
        dtype: p.dtype,
    };
    let n = shape.score_elements();
    let score_bytes = n * f64::from(p.dtype.bytes());
    let mut unfused_kernels = shape.unfused();
    let mut fused_kernels = shape.fused();
    let temp = 3.0 * score_bytes + shape.rows * f64::from(ROW_SUM_BYTES);
    let unfused = totals(&mut unfused_kernels, dev, 3, 1, temp);
    let fused = totals(&mut fused_kernels, dev, 0, 0, 0.0);
    Ok(FusionOutput {
        score_elements: n,
        score_tensor_bytes: score_bytes,
        unfused_bytes_per_element: unfused.bytes / score_bytes,
        fused_bytes_per_element: fused.bytes / score_bytes,
        unfused_raw_bytes_per_element: unfused.bytes / n,
        fused_raw_bytes_per_element: fused.bytes / n,
        unfused_launches: unfused.launches,
        fused_launches: fused.launches,
        modelled_speedup: unfused.us / fused.us,
        bytes_ratio: unfused.bytes / fused.bytes,
        unfused_us: unfused.us,
        fused_us: fused.us,
        device: dev.id.to_owned(),
        unfused,
        fused,
        unfused_kernels,
        fused_kernels,
        example: example(p, dev),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lecture() -> FusionParams {
        FusionParams::from_values(&ParamValues::defaults(PARAMS)).unwrap()
    }

    #[test]
    fn bytes_by_hand_at_f16() {
        // Per score element, f16 (2 B), mask 1 B, s f32 once per row of L = 512:
        // dropout bw 2+1+2, P 2+2+2, sums 2 (+4/L), D 2+2 (+4/L), ∇x 2+2+2 → 23 + 8/L bytes.
        // Fused: 2 + 1 + 2 + 2 = 7 bytes.
        let o = run(&lecture()).unwrap();
        let l = 512.0;
        assert!((o.unfused_raw_bytes_per_element - (23.0 + 8.0 / l)).abs() < 1e-12);
        assert!((o.fused_raw_bytes_per_element - 7.0).abs() < 1e-12);
        assert!((o.unfused_bytes_per_element - (23.0 + 8.0 / l) / 2.0).abs() < 1e-12);
        assert!((o.fused_bytes_per_element - 3.5).abs() < 1e-12);
        assert_eq!(o.score_elements, 8.0 * 16.0 * 512.0 * 512.0);
    }

    #[test]
    fn lecture_checks() {
        let o = run(&lecture()).unwrap();
        assert_eq!(o.fused_launches, 1);
        assert_eq!(o.unfused_launches, 5);
        // Lecture: 12.38 → 4 score tensors; 3.1–3.2× modelled.
        assert!(o.fused_bytes_per_element <= 4.5);
        assert!(o.unfused_bytes_per_element >= 10.0);
        assert!(
            (2.5..4.0).contains(&o.modelled_speedup),
            "{}",
            o.modelled_speedup
        );
        // Time by hand on the A100 (1.555 TB/s, 4 µs/launch): fused 7 B × 8·16·512² / 1.555e12
        // + 4 µs.
        let n = 8.0 * 16.0 * 512.0 * 512.0;
        assert!((o.fused_us - (7.0 * n / 1.555e12 * 1e6 + 4.0)).abs() < 1e-6);
        let unfused = (23.0 + 8.0 / 512.0) * n / 1.555e12 * 1e6 + 5.0 * 4.0;
        assert!((o.unfused_us - unfused).abs() < 1e-6);
        // Per-kernel bytes add up to the totals.
        let sum: f64 = o
            .unfused_kernels
            .iter()
            .map(|k| k.bytes_read + k.bytes_written)
            .sum();
        assert!((sum - o.unfused.bytes).abs() < 1.0);
        assert_eq!(o.unfused.score_temporaries, 3);
    }

    #[test]
    fn the_example_agrees() {
        let o = run(&lecture()).unwrap();
        let e = &o.example;
        assert_eq!((e.rows, e.len), (64, 64));
        assert!(
            e.agree,
            "{} > bound {}",
            e.max_abs_diff_fused_unfused, e.max_tolerance
        );
        // f16: |∇x| ≲ a few × 1/64; errors a few f16 ulps of that, far below 1e-2.
        assert!(e.max_abs_error_fused < 1e-3);
        assert!(e.max_abs_error_fused <= e.max_abs_error_unfused);
        assert!(e.max_abs_row_sum_fused < 1e-2);
        // About 90 % of 4096 kept.
        assert!((3500..=3900).contains(&e.kept), "{}", e.kept);
        let mut p = lecture();
        p.dtype = Dtype::F32;
        let e = run(&p).unwrap().example;
        assert!(e.agree && e.max_abs_diff_fused_unfused < 1e-5);
        // No dropout: M = 1 everywhere.
        p.dropout = 0.0;
        assert_eq!(run(&p).unwrap().example.kept, 4096);
    }

    #[test]
    fn refusals() {
        let mut p = lecture();
        p.example_rows = 4096;
        p.example_len = 4096;
        let e = p.validate().unwrap_err();
        assert!(e.to_string().contains("16777216"), "{e}");
        let mut p = lecture();
        p.dropout = 1.0;
        assert!(p.validate().is_err());
        p.dropout = f64::NAN;
        assert!(p.validate().is_err());
        let mut p = lecture();
        p.device = "tpu".into();
        assert!(run(&p).is_err());
    }
}
