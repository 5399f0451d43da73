//! The kernel registry and [`run_kernel`]: what `warpscope run KERNEL [--set key=value]…
//! --json` calls. Each kernel runs two variants at the same shape in one run (fused vs
//! unfused / autograd-style / per-tensor), verifies both against `warpscope-core` (or an f64
//! reference built from core's row functions), times both, measures the device's copy
//! bandwidth in the same run, and reports the time ratio.

use std::collections::BTreeMap;

use serde::Serialize;
use warpscope_core::error::{fmt_real, shorten};
use warpscope_core::softmax::Dtype as SoftmaxDtype;
use warpscope_core::softmax::fusion::{self, FusionParams};
use warpscope_core::trainer::adam::AdamConfig;

use crate::data::SplitMix64;
use crate::runner::{KernelError, Runner, Timing, Tolerance, VariantOutput, Verification};
use crate::{AdapterReport, DeviceContext, adam, dgamma, layernorm, softmax};

/// One tunable of a kernel run (`--set name=value`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct KernelParam {
    /// Key.
    pub name: &'static str,
    /// What it is.
    pub help: &'static str,
    /// Default value.
    pub default: f64,
    /// Smallest accepted value.
    pub min: f64,
    /// Largest accepted value.
    pub max: f64,
    /// Whether it must be an integer.
    pub integer: bool,
}

const fn int(
    name: &'static str,
    help: &'static str,
    default: f64,
    min: f64,
    max: f64,
) -> KernelParam {
    KernelParam {
        name,
        help,
        default,
        min,
        max,
        integer: true,
    }
}

const fn float(
    name: &'static str,
    help: &'static str,
    default: f64,
    min: f64,
    max: f64,
) -> KernelParam {
    KernelParam {
        name,
        help,
        default,
        min,
        max,
        integer: false,
    }
}

/// A kernel `warpscope run` knows.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct KernelInfo {
    /// Name on the command line.
    pub name: &'static str,
    /// Lecture section.
    pub section: &'static str,
    /// One line.
    pub summary: &'static str,
    /// The core scene it belongs beside.
    pub scene: &'static str,
    /// Its tunables (besides `runs`).
    pub params: &'static [KernelParam],
}

/// Most timed runs per variant.
pub const MAX_RUNS: u32 = 1000;
/// Default timed runs per variant.
pub const DEFAULT_RUNS: u32 = 10;
/// Most elements of a LayerNorm problem (rows × cols): 2²² (16 MiB per f32 tensor; the chain
/// holds about a dozen).
pub const MAX_LAYERNORM_ELEMENTS: u64 = 1 << 22;
/// Most Adam parameters: 2²⁵ (4 buffers of 128 MiB per layout).
pub const MAX_ADAM_ELEMENTS: u64 = 1 << 25;

/// Every kernel, in lecture order.
pub const KERNELS: &[KernelInfo] = &[
    KernelInfo {
        name: "layernorm-bw",
        section: "§2.2",
        summary: "LayerNorm backward ∇x: fused (Σg, Σg·x̂ in one reduction, one barrier) vs the \
                  autograd-style chain of 7 kernels",
        scene: "layernorm-bytes",
        params: &[
            int("rows", "rows (tokens N)", 1024.0, 1.0, 65536.0),
            int("cols", "columns (hidden size m)", 1024.0, 1.0, 16384.0),
            int("seed", "input seed", 0.0, 0.0, 2147483648.0),
        ],
    },
    KernelInfo {
        name: "layernorm-dgamma",
        section: "§2.4",
        summary: "LayerNorm ∇γ/∇β: the 32 × 32 tile, shared buffer padded (stride 33) vs \
                  unpadded (stride 32), a pipeline-overridable constant",
        scene: "layernorm-dgamma",
        params: &[
            int("rows", "rows (tokens N)", 4096.0, 1.0, 65536.0),
            int("cols", "columns (hidden size d)", 1024.0, 1.0, 16384.0),
            int("seed", "input seed", 0.0, 0.0, 2147483648.0),
        ],
    },
    KernelInfo {
        name: "softmax-bw",
        section: "§3.2",
        summary: "softmax backward with dropout backward: fused (one row per subgroup, g′ in \
                  registers) vs the unfused chain of 5 kernels",
        scene: "softmax-fusion",
        params: &[
            int("rows", "rows (B·h·L in attention)", 1024.0, 1.0, 4096.0),
            int("len", "row length L", 256.0, 1.0, 4096.0),
            float("dropout", "dropout ratio (keep = 1 − ratio)", 0.1, 0.0, 0.9),
            int("seed", "input seed", 0.0, 0.0, 2147483648.0),
        ],
    },
    KernelInfo {
        name: "adam",
        section: "§4.2",
        summary: "Adam step: one dispatch per parameter tensor vs one over the linked workspace",
        scene: "trainer",
        params: &[
            int("layers", "transformer layers", 2.0, 1.0, 48.0),
            int("hidden", "hidden size", 128.0, 8.0, 2048.0),
            int("vocab", "vocabulary size", 1000.0, 1.0, 65536.0),
            int("step", "Adam step t (bias corrections)", 10.0, 1.0, 1e6),
            float("lr", "learning rate", 1e-3, 1e-6, 1.0),
            int("seed", "input seed", 0.0, 0.0, 2147483648.0),
        ],
    },
];

/// The kernel names, in lecture order.
pub fn kernel_names() -> Vec<&'static str> {
    KERNELS.iter().map(|k| k.name).collect()
}

/// The registry entry for `name`.
///
/// # Errors
/// [`KernelError::UnknownKernel`] listing the names.
pub fn kernel_info(name: &str) -> Result<&'static KernelInfo, KernelError> {
    KERNELS
        .iter()
        .find(|k| k.name == name)
        .ok_or_else(|| KernelError::UnknownKernel {
            name: name.to_owned(),
            known: kernel_names().join(", "),
        })
}

/// Options of a run: `--set key=value` overrides and the number of timed runs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunOptions {
    /// Overrides by key (checked against the kernel's [`KernelParam`]s when it runs).
    pub values: BTreeMap<String, f64>,
    /// Timed runs per variant (1..=[`MAX_RUNS`]); `None` → [`DEFAULT_RUNS`].
    pub runs: Option<u32>,
    /// Each override as the user wrote it, for messages (`1e308`, not 309 digits).
    written: BTreeMap<String, String>,
}

impl RunOptions {
    /// Parses one `key=value` (`runs=N` sets [`RunOptions::runs`]).
    ///
    /// # Errors
    /// [`KernelError::InvalidOption`] naming the key when it is not `key=number`, or `runs` is
    /// not an integer in 1..=[`MAX_RUNS`].
    pub fn set(&mut self, assignment: &str) -> Result<(), KernelError> {
        let Some((key, value)) = assignment.split_once('=') else {
            return Err(KernelError::InvalidOption {
                name: shorten(assignment.trim()),
                value: String::new(),
                expected: "expected key=value, e.g. --set rows=512".into(),
            });
        };
        let (key, value) = (key.trim(), value.trim());
        let bad = |expected: String| KernelError::InvalidOption {
            name: shorten(key),
            value: shorten(value),
            expected,
        };
        let runs_expected =
            || format!("expected an integer in 1..={MAX_RUNS} (timed runs of each variant)");
        let x: f64 = value.parse().map_err(|_| {
            bad(if key == "runs" {
                runs_expected()
            } else {
                "expected a number".to_owned()
            })
        })?;
        if key == "runs" {
            if !(x.fract() == 0.0 && (1.0..=f64::from(MAX_RUNS)).contains(&x)) {
                return Err(bad(runs_expected()));
            }
            self.runs = Some(x as u32);
        } else {
            self.values.insert(key.to_owned(), x);
            self.written.insert(key.to_owned(), value.to_owned());
        }
        Ok(())
    }

    /// Resolved values for `info`: defaults overridden, every override checked.
    ///
    /// # Errors
    /// [`KernelError::InvalidOption`] for an unknown key, a non-integer where one is needed,
    /// or a value out of range.
    pub fn resolve(&self, info: &KernelInfo) -> Result<BTreeMap<String, f64>, KernelError> {
        let mut out: BTreeMap<String, f64> = info
            .params
            .iter()
            .map(|p| (p.name.to_owned(), p.default))
            .collect();
        for (k, &v) in &self.values {
            let shown = self
                .written
                .get(k)
                .map_or_else(|| fmt_real(v), |w| shorten(w));
            let p = info.params.iter().find(|p| p.name == k).ok_or_else(|| {
                KernelError::InvalidOption {
                    name: shorten(k),
                    value: shown.clone(),
                    expected: format!(
                        "a parameter of {}: {}, runs",
                        info.name,
                        info.params
                            .iter()
                            .map(|p| p.name)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                }
            })?;
            if !v.is_finite() || v < p.min || v > p.max || (p.integer && v.fract() != 0.0) {
                return Err(KernelError::InvalidOption {
                    name: k.clone(),
                    value: shown,
                    expected: format!(
                        "expected {} in {}..={} ({})",
                        if p.integer { "an integer" } else { "a number" },
                        fmt_real(p.min),
                        fmt_real(p.max),
                        p.help
                    ),
                });
            }
            out.insert(k.clone(), v);
        }
        Ok(out)
    }
}

/// The device's copy bandwidth, measured in the same run with the same timing method.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CopyBandwidth {
    /// Bytes read + written per copy.
    pub bytes: u64,
    /// Its timing.
    pub timing: Timing,
    /// bytes / median time, GB/s (10⁹ bytes per second).
    pub gbps: f64,
}

/// One variant of a kernel run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VariantRun {
    /// `fused`, `unfused`, `autograd`, `per-tensor`, `linked`.
    pub name: String,
    /// Dispatches per run.
    pub launches: usize,
    /// The dispatches, in order.
    pub kernels: Vec<String>,
    /// Device result vs the reference.
    pub verification: Verification,
    /// max |device − core's own f32 computation of the same variant|, where core has one.
    pub core_f32_max_abs_diff: Option<f64>,
    /// Median timing.
    pub timing: Timing,
    /// Bytes read + written by the variant's kernels (each tensor once per kernel).
    pub bytes_moved: u64,
    /// bytes_moved / median time, GB/s.
    pub achieved_gbps: f64,
    /// achieved_gbps / the copy bandwidth measured in this run.
    pub fraction_of_copy_bandwidth: f64,
}

/// Slower-over-faster comparison of the two variants.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// The many-kernel variant (`unfused`, `autograd`, `per-tensor`).
    pub baseline: String,
    /// The one-kernel variant (`fused`, `linked`).
    pub optimised: String,
    /// baseline median time / optimised median time.
    pub time_ratio: f64,
    /// baseline bytes / optimised bytes.
    pub bytes_ratio: f64,
    /// baseline launches / optimised launches.
    pub launch_ratio: f64,
}

/// Everything one `warpscope run KERNEL` measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelRun {
    /// Kernel name.
    pub kernel: String,
    /// Lecture section.
    pub section: String,
    /// One line.
    pub summary: String,
    /// The adapter it ran on.
    pub adapter: AdapterReport,
    /// Resolved parameters (shape, seed, …).
    pub parameters: BTreeMap<String, f64>,
    /// Storage dtype (`f32`).
    pub dtype: String,
    /// How the row reductions ran on this adapter, where it matters.
    pub reduction: Option<String>,
    /// The variants, baseline last.
    pub variants: Vec<VariantRun>,
    /// Baseline vs optimised.
    pub comparison: Comparison,
    /// Copy bandwidth measured in the same run.
    pub copy_bandwidth: CopyBandwidth,
    /// Every variant passed verification.
    pub verified: bool,
    /// Caveats (software rasteriser, host timing, …).
    pub notes: Vec<String>,
    /// `adam` only: the same two layouts with FP16 storage of p and g (`None` for other
    /// kernels).
    pub f16_storage: Option<F16Storage>,
}

/// Adam with FP16 p and g, f32 m and v (the trainer's 22 B/param workspace), run when the
/// adapter has `SHADER_F16`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct F16Storage {
    /// Whether the adapter has `SHADER_F16` (otherwise nothing ran and `note` says so).
    pub available: bool,
    /// What ran, or why not ("f16 storage not available on this adapter …").
    pub note: String,
    /// Bytes moved per parameter per step (22).
    pub bytes_per_param: u64,
    /// `linked-f16`, `per-tensor-f16`: p verified within [`Tolerance::F16`] of
    /// `warpscope_core::trainer::adam::adam_f16`, m and v within [`Tolerance::F32`].
    pub variants: Vec<VariantRun>,
    /// per-tensor-f16 vs linked-f16.
    pub comparison: Option<Comparison>,
    /// linked-f16 median time / f32 linked median time (the f32 run of the same command).
    pub time_vs_f32: Option<f64>,
    /// Both FP16 variants verified (true when not available: nothing failed).
    pub verified: bool,
}

const COPY: &str = include_str!("shaders/copy.wgsl");

/// Measures copy bandwidth: `bytes` (rounded to 16, at least 4 MiB) copied buffer to buffer
/// by a compute shader, timed like the kernels.
///
/// # Errors
/// Shader, device, size and readback errors.
pub fn copy_bandwidth(
    ctx: &DeviceContext,
    bytes: u64,
    runs: u32,
) -> Result<CopyBandwidth, KernelError> {
    let r = Runner::new(ctx, "copy");
    let size = bytes.max(4 << 20).next_multiple_of(16);
    let n_vec4 = size / 16;
    let src = r.zeros("copy src", (size / 4) as usize)?;
    let dst = r.zeros("copy dst", (size / 4) as usize)?;
    let params = r.uniform(
        "params",
        &[u32::try_from(n_vec4).unwrap_or(u32::MAX), 0, 0, 0],
    );
    let pipe = r.pipeline(COPY, "copy", &[])?;
    let d = vec![crate::runner::Dispatch {
        name: "copy".into(),
        bind_group: r.bind(&pipe, &[(0, &params), (1, &src), (2, &dst)]),
        pipeline: pipe,
        groups: [crate::runner::groups_for(n_vec4, 256), 1, 1],
        bytes_read: size,
        bytes_written: size,
    }];
    r.run_once(&d)?;
    let timing = r.time(&d, runs)?;
    Ok(CopyBandwidth {
        bytes: 2 * size,
        gbps: gbps(2 * size, timing.median_us),
        timing,
    })
}

/// A kernel's device outputs with what they are checked against: (outputs, reference
/// description, reference values, core's own f32 result per variant, largest tensor bytes,
/// reduction description).
type Prepared = (
    Vec<VariantOutput>,
    &'static str,
    Vec<f64>,
    Vec<Option<Vec<f32>>>,
    u64,
    Option<String>,
);

fn gbps(bytes: u64, us: f64) -> f64 {
    if us > 0.0 {
        bytes as f64 / (us * 1e3)
    } else {
        0.0
    }
}

fn max_abs_diff(a: &[f32], b: &[f32]) -> f64 {
    if a.len() != b.len() {
        return f64::INFINITY;
    }
    a.iter()
        .zip(b)
        .map(|(x, y)| (f64::from(*x) - f64::from(*y)).abs())
        .fold(0.0, f64::max)
}

/// [`run_kernel_with`] at the kernel's default parameters.
///
/// # Errors
/// As [`run_kernel_with`].
pub fn run_kernel(name: &str, ctx: &DeviceContext) -> Result<KernelRun, KernelError> {
    run_kernel_with(name, ctx, &RunOptions::default())
}

/// Runs kernel `name` (one of [`kernel_names`]) on `ctx` with `opts`: both variants verified,
/// timed (median of `runs`), bytes and GB/s, the copy bandwidth and the time ratio.
/// A verification failure is reported in the result (`verified: false`), not as an error.
///
/// # Errors
/// [`KernelError::UnknownKernel`], [`KernelError::InvalidOption`] (bad `--set`, or a shape
/// core or the size limits refuse), shader / device / readback errors.
pub fn run_kernel_with(
    name: &str,
    ctx: &DeviceContext,
    opts: &RunOptions,
) -> Result<KernelRun, KernelError> {
    let info = kernel_info(name)?;
    let values = opts.resolve(info)?;
    let runs = opts.runs.unwrap_or(DEFAULT_RUNS).clamp(1, MAX_RUNS);
    let v = |k: &str| values.get(k).copied().unwrap_or(0.0);
    let core_err = |e: warpscope_core::Error| KernelError::Core {
        kernel: name.to_owned(),
        message: e.to_string(),
    };
    let mut adam_problem_f16: Option<adam::Problem> = None;
    let (outputs, reference_name, reference, core_f32, tensor_bytes, reduction): Prepared =
        match info.name {
            "softmax-bw" => {
                let (rows, len) = (v("rows") as u64, v("len") as u64);
                let fp = FusionParams {
                    batch: 1,
                    heads: 1,
                    len,
                    dtype: SoftmaxDtype::F32,
                    device: "a100".to_owned(),
                    dropout: v("dropout"),
                    seed: v("seed") as u64,
                    example_rows: rows,
                    example_len: len,
                };
                // The core example's size limit, said in this kernel's own parameters.
                let e = match fusion::run(&fp) {
                    Err(warpscope_core::Error::InvalidParam { name, expected, .. })
                        if name.starts_with("example_") =>
                    {
                        return Err(KernelError::InvalidOption {
                            name: "len".into(),
                            value: len.to_string(),
                            expected: format!(
                                "rows × len within the reference's limit ({}); use fewer rows \
                                 or a shorter row",
                                expected
                                    .to_string()
                                    .replace("example_rows × example_len", "rows × len")
                            ),
                        });
                    }
                    r => r.map_err(core_err)?.example,
                };
                let p = softmax::Problem {
                    rows: rows as usize,
                    cols: len as usize,
                    y: e.y,
                    dp: e.dp,
                    mask: e.mask,
                    keep: e.keep,
                };
                let reference = p.reference()?;
                let out = softmax::compute(ctx, &p, runs)?;
                (
                    out,
                    "warpscope_core::softmax::backward_row (f64) on g′ = ∇P·M/keep",
                    reference,
                    vec![Some(e.dx_fused), Some(e.dx_unfused)],
                    rows * len * 4,
                    Some(softmax::reduction(ctx)),
                )
            }
            "layernorm-bw" | "layernorm-dgamma" => {
                let (rows, cols) = (v("rows") as u64, v("cols") as u64);
                if rows * cols > MAX_LAYERNORM_ELEMENTS {
                    return Err(KernelError::InvalidOption {
                        name: "rows".into(),
                        value: rows.to_string(),
                        expected: format!(
                            "rows × cols = {} elements ({} MB per f32 tensor) exceeds \
                         {MAX_LAYERNORM_ELEMENTS}; use fewer rows or columns",
                            rows * cols,
                            rows * cols * 4 / 1_000_000
                        ),
                    });
                }
                let (x, dy, gamma, _) = warpscope_core::layernorm::formulas::inputs(
                    rows as usize,
                    cols as usize,
                    v("seed") as u64,
                );
                let f = |a: Vec<f64>| a.into_iter().map(|x| x as f32).collect::<Vec<f32>>();
                let p = layernorm::Problem {
                    rows: rows as usize,
                    cols: cols as usize,
                    x: f(x),
                    dy: f(dy),
                    gamma: f(gamma),
                };
                if info.name == "layernorm-dgamma" {
                    let reference = dgamma::reference(&p);
                    let out = dgamma::compute(ctx, &p, runs)?;
                    return finish(
                        ctx,
                        info,
                        values,
                        runs,
                        (
                            out,
                            "f64 column sums of ∇y·x̂ and ∇y (x̂ from the saved f32 μ, r)",
                            reference,
                            vec![None, None],
                            rows * cols * 4,
                            Some(
                                "32 × 32 workgroup per 32 columns; transposed shared read; \
                                 tree over the 32 partials"
                                    .to_owned(),
                            ),
                        ),
                    );
                }
                let reference = p.reference();
                // core's f32 HW4 form on the same inputs (for both variants: same formula family).
                let w = |v: &[f32]| v.iter().map(|a| f64::from(*a)).collect::<Vec<f64>>();
                let g64 = w(&p.gamma);
                let mut core32 = Vec::with_capacity(p.x.len());
                for (x, dy) in p.x.chunks(p.cols).zip(p.dy.chunks(p.cols)) {
                    let (hw4, _, _) = warpscope_core::layernorm::backward_row(
                        warpscope_core::layernorm::Dtype::F32,
                        &w(x),
                        &w(dy),
                        &g64,
                    );
                    core32.extend(hw4.into_iter().map(|v| v as f32));
                }
                let out = layernorm::compute(ctx, &p, runs)?;
                (
                    out,
                    "warpscope_core::layernorm::reference_row (f64 reverse-mode of the 7-op \
                 decomposition)",
                    reference,
                    vec![Some(core32), None],
                    rows * cols * 4,
                    Some(layernorm::reduction(ctx)),
                )
            }
            "adam" => {
                let sizes = adam::transformer_sizes(
                    v("layers") as usize,
                    v("hidden") as usize,
                    v("vocab") as usize,
                    512,
                );
                let n: usize = sizes.iter().sum();
                if n as u64 > MAX_ADAM_ELEMENTS {
                    return Err(KernelError::InvalidOption {
                        name: "hidden".into(),
                        value: v("hidden").to_string(),
                        expected: format!(
                            "{n} parameters exceed {MAX_ADAM_ELEMENTS}; use fewer layers, a smaller \
                         hidden size or vocabulary"
                        ),
                    });
                }
                let p = adam_problem(sizes, v("lr") as f32, v("step") as u32, v("seed") as u64);
                let reference = p.core_reference();
                let out = adam::compute(ctx, &p, runs)?;
                let largest = p.sizes.iter().copied().max().unwrap_or(0) as u64;
                adam_problem_f16 = Some(p);
                (
                    out,
                    "warpscope_core::trainer::adam::adam_f32 (p ‖ m ‖ v after the step)",
                    reference,
                    vec![None, None],
                    largest.max(n as u64) * 4,
                    None,
                )
            }
            _ => {
                return Err(KernelError::UnknownKernel {
                    name: name.to_owned(),
                    known: kernel_names().join(", "),
                });
            }
        };

    let mut run = finish(
        ctx,
        info,
        values,
        runs,
        (
            outputs,
            reference_name,
            reference,
            core_f32,
            tensor_bytes,
            reduction,
        ),
    )?;
    if let Some(p) = adam_problem_f16 {
        let f16 = adam_f16_storage(ctx, &p, runs, &run)?;
        run.verified &= f16.verified;
        run.notes.push(f16.note.clone());
        run.f16_storage = Some(f16);
    }
    Ok(run)
}

/// Verifies, measures copy bandwidth, compares and assembles the [`KernelRun`].
fn finish(
    ctx: &DeviceContext,
    info: &KernelInfo,
    values: BTreeMap<String, f64>,
    runs: u32,
    prepared: Prepared,
) -> Result<KernelRun, KernelError> {
    let (outputs, reference_name, reference, core_f32, tensor_bytes, reduction) = prepared;
    // ∇γ/∇β sum over rows: their error grows with the row count (see `Tolerance::f32_sum`).
    let tol = match values.get("rows") {
        Some(rows) if info.name == "layernorm-dgamma" => Tolerance::f32_sum(*rows),
        _ => Tolerance::F32,
    };
    let copy = copy_bandwidth(ctx, tensor_bytes, runs)?;
    let variants: Vec<VariantRun> = outputs
        .iter()
        .zip(core_f32)
        .map(|(o, core)| {
            let achieved = gbps(o.bytes_moved, o.timing.median_us);
            VariantRun {
                name: o.name.to_owned(),
                launches: o.kernels.len(),
                kernels: o.kernels.clone(),
                verification: Verification::compare(reference_name, &o.output, &reference, tol),
                core_f32_max_abs_diff: core.map(|c| max_abs_diff(&o.output, &c)),
                timing: o.timing.clone(),
                bytes_moved: o.bytes_moved,
                achieved_gbps: achieved,
                fraction_of_copy_bandwidth: if copy.gbps > 0.0 {
                    achieved / copy.gbps
                } else {
                    0.0
                },
            }
        })
        .collect();
    let (opt, base) = (&variants[0], &variants[variants.len() - 1]);
    let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
    let comparison = Comparison {
        baseline: base.name.clone(),
        optimised: opt.name.clone(),
        time_ratio: ratio(base.timing.median_us, opt.timing.median_us),
        bytes_ratio: ratio(base.bytes_moved as f64, opt.bytes_moved as f64),
        launch_ratio: ratio(base.launches as f64, opt.launches as f64),
    };
    let mut notes = Vec::new();
    if ctx.report.device_type == "Cpu" {
        notes.push(format!(
            "{} is a software (CPU) implementation: timings are good for correctness and \
             relative comparisons, not GPU performance claims",
            ctx.report.name
        ));
    }
    if let Some(c) = &opt.timing.caveat {
        notes.push(c.clone());
    }
    if ctx.report.subgroups && ctx.report.subgroup_max_size != 32 {
        notes.push(format!(
            "subgroups are {}–{} lanes here, not CUDA's 32-lane warps",
            ctx.report.subgroup_min_size, ctx.report.subgroup_max_size
        ));
    }
    Ok(KernelRun {
        kernel: info.name.to_owned(),
        section: info.section.to_owned(),
        summary: info.summary.to_owned(),
        adapter: ctx.report.clone(),
        parameters: values,
        dtype: "f32".to_owned(),
        reduction,
        verified: variants.iter().all(|v| v.verification.passed),
        variants,
        comparison,
        copy_bandwidth: copy,
        notes,
        f16_storage: None,
    })
}

/// The FP16-storage Adam of `p` on `ctx` (or why not), beside the f32 run `f32_run`.
///
/// # Errors
/// Shader, device and readback errors of the FP16 run.
pub fn adam_f16_storage(
    ctx: &DeviceContext,
    p: &adam::Problem,
    runs: u32,
    f32_run: &KernelRun,
) -> Result<F16Storage, KernelError> {
    if !ctx.report.shader_f16 {
        return Ok(F16Storage {
            available: false,
            note: format!(
                "f16 storage not available on this adapter: {} has no SHADER_F16",
                ctx.report.name
            ),
            bytes_per_param: adam::BYTES_PER_ELEMENT_F16,
            variants: Vec::new(),
            comparison: None,
            time_vs_f32: None,
            verified: true,
        });
    }
    let n: usize = p.sizes.iter().sum();
    let reference = p.core_reference_f16();
    let out = adam::compute_with(ctx, p, runs, adam::Storage::F16)?;
    let copy = f32_run.copy_bandwidth.gbps;
    let variants: Vec<VariantRun> = out
        .iter()
        .map(|o| {
            let (gp, gmv) = o.output.split_at(n.min(o.output.len()));
            let (wp, wmv) = reference.split_at(n.min(reference.len()));
            let vp = Verification::compare(
                "warpscope_core::trainer::adam::adam_f16 (p in FP16)",
                gp,
                wp,
                Tolerance::F16,
            );
            let vmv = Verification::compare("m, v (f32)", gmv, wmv, Tolerance::F32);
            let worst_is_p = vp.max_abs_error >= vmv.max_abs_error;
            let verification = Verification {
                reference: "warpscope_core::trainer::adam::adam_f16 (p ‖ m ‖ v; p within the \
                            FP16 tolerance, m and v within f32's)"
                    .to_owned(),
                elements: vp.elements + vmv.elements,
                max_abs_error: vp.max_abs_error.max(vmv.max_abs_error),
                max_rel_error: vp.max_rel_error.max(vmv.max_rel_error),
                tolerance: Tolerance::F16,
                passed: vp.passed && vmv.passed,
                worst_index: if worst_is_p {
                    vp.worst_index
                } else {
                    n + vmv.worst_index
                },
            };
            let achieved = gbps(o.bytes_moved, o.timing.median_us);
            VariantRun {
                name: o.name.to_owned(),
                launches: o.kernels.len(),
                kernels: o.kernels.clone(),
                verification,
                core_f32_max_abs_diff: None,
                timing: o.timing.clone(),
                bytes_moved: o.bytes_moved,
                achieved_gbps: achieved,
                fraction_of_copy_bandwidth: if copy > 0.0 { achieved / copy } else { 0.0 },
            }
        })
        .collect();
    let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
    let comparison = match (variants.first(), variants.last()) {
        (Some(opt), Some(base)) => Some(Comparison {
            baseline: base.name.clone(),
            optimised: opt.name.clone(),
            time_ratio: ratio(base.timing.median_us, opt.timing.median_us),
            bytes_ratio: ratio(base.bytes_moved as f64, opt.bytes_moved as f64),
            launch_ratio: ratio(base.launches as f64, opt.launches as f64),
        }),
        _ => None,
    };
    let time_vs_f32 = match (variants.first(), f32_run.variants.first()) {
        (Some(h), Some(f)) => Some(ratio(h.timing.median_us, f.timing.median_us)),
        _ => None,
    };
    Ok(F16Storage {
        available: true,
        note: format!(
            "p and g stored FP16, m and v f32 ({} B/param per step vs {} in f32), on {}",
            adam::BYTES_PER_ELEMENT_F16,
            adam::BYTES_PER_ELEMENT,
            ctx.report.name
        ),
        bytes_per_param: adam::BYTES_PER_ELEMENT_F16,
        verified: variants.iter().all(|v| v.verification.passed),
        variants,
        comparison,
        time_vs_f32,
    })
}

/// A seeded Adam problem on tensors of `sizes`: p, g standard normal; m = 0.1·normal;
/// v = (0.1·normal)² (a mid-training state, so the bias corrections and √v matter).
pub fn adam_problem(sizes: Vec<usize>, lr: f32, step: u32, seed: u64) -> adam::Problem {
    let n: usize = sizes.iter().sum();
    let mut rng = SplitMix64::new(seed);
    let p = rng.normals_f32(n);
    let g = rng.normals_f32(n);
    let m = rng.normals_f32(n).into_iter().map(|x| 0.1 * x).collect();
    let v = rng
        .normals_f32(n)
        .into_iter()
        .map(|x| (0.1 * x) * (0.1 * x))
        .collect();
    adam::Problem {
        sizes,
        p,
        g,
        m,
        v,
        config: AdamConfig::with_lr(lr),
        step,
    }
}

#[cfg(test)]
#[path = "run_tests.rs"]
mod tests;
