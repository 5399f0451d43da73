//! The kernel registry and [`run_kernel`]: what `warpscope run KERNEL [--set key=value]…
//! --json` calls. Each kernel runs two variants at the same shape in one run (fused vs
//! unfused / autograd-style / per-tensor), verifies both against `warpscope-core` (or an f64
//! reference built from core's row functions), times both, measures the device's copy
//! bandwidth in the same run, and reports the time ratio.

use std::collections::BTreeMap;

use serde::Serialize;
use warpscope_core::error::{fmt_real, shorten};
use warpscope_core::params::{ParamSpec, ParamValue};

use crate::kernel::{Kernel, KernelInfo, Prepared, Values, adam, layernorm_bw};
use crate::kernel::{layernorm_dgamma, softmax_bw};
use crate::runner::{KernelError, Runner, Timing, Verification};
use crate::{AdapterReport, DeviceContext};

/// Most timed runs per variant.
pub const MAX_RUNS: u32 = 1000;
/// Default timed runs per variant.
pub const DEFAULT_RUNS: u32 = 10;

/// Every kernel, in lecture order: the registry `warpscope run`, the window's GPU panel and
/// the tests read.
pub const KERNELS: &[&dyn Kernel] = &[
    &layernorm_bw::LayerNormBw,
    &layernorm_dgamma::LayerNormDgamma,
    &softmax_bw::SoftmaxBw,
    &adam::AdamKernel,
];

/// The kernel names, in lecture order.
pub fn kernel_names() -> Vec<&'static str> {
    KERNELS.iter().map(|k| k.info().name).collect()
}

/// The registry entry for `name`.
///
/// # Errors
/// [`KernelError::UnknownKernel`] listing the names.
pub fn kernel_info(name: &str) -> Result<&'static KernelInfo, KernelError> {
    find_kernel(name).map(|k| k.info())
}

/// The registry's kernel named `name`.
///
/// # Errors
/// [`KernelError::UnknownKernel`] listing the names.
pub fn find_kernel(name: &str) -> Result<&'static dyn Kernel, KernelError> {
    KERNELS
        .iter()
        .copied()
        .find(|k| k.info().name == name)
        .ok_or_else(|| KernelError::UnknownKernel {
            name: name.to_owned(),
            known: kernel_names().join(", "),
        })
}

/// Options of a run: `--set key=value` overrides and the number of timed runs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunOptions {
    /// Overrides by key (checked against the kernel's [`KernelInfo::params`] when it runs).
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
    pub fn resolve(&self, info: &KernelInfo) -> Result<Values, KernelError> {
        let mut out: Values = info
            .params
            .iter()
            .map(|p| (p.name.to_owned(), default_of(p)))
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
            // The spec decides (range, integer or real); the refusal keeps this command's
            // wording: the range and the parameter's help.
            p.check(&ParamValue::Float(v))
                .map_err(|_| KernelError::InvalidOption {
                    name: k.clone(),
                    value: shown,
                    expected: format!("{} ({})", p.expected(), p.label.en),
                })?;
            out.insert(k.clone(), v);
        }
        Ok(out)
    }
}

/// A kernel parameter's default as the number a run reports (kernels declare integers and
/// reals only).
fn default_of(p: &ParamSpec) -> f64 {
    match p.default_value() {
        ParamValue::Int(i) => i as f64,
        ParamValue::Float(f) => f,
        ParamValue::Text(_) => 0.0,
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
    /// `linked-f16`, `per-tensor-f16`: p verified within [`crate::runner::Tolerance::F16`] of
    /// `warpscope_core::trainer::adam::adam_f16`, m and v within [`crate::runner::Tolerance::F32`].
    pub variants: Vec<VariantRun>,
    /// per-tensor-f16 vs linked-f16.
    pub comparison: Option<Comparison>,
    /// linked-f16 median time / f32 linked median time (the f32 run of the same command).
    pub time_vs_f32: Option<f64>,
    /// Both FP16 variants verified (true when not available: nothing failed).
    pub verified: bool,
}

const COPY: &str = crate::shaders::COPY;

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

/// bytes / `us` µs in GB/s (10⁹ bytes per second); 0 for no time.
pub(crate) fn gbps(bytes: u64, us: f64) -> f64 {
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
    let k = find_kernel(name)?;
    let values = opts.resolve(k.info())?;
    let runs = opts.runs.unwrap_or(DEFAULT_RUNS).clamp(1, MAX_RUNS);
    k.run(ctx, values, runs)
}

/// Verifies, measures copy bandwidth, compares and assembles the [`KernelRun`].
///
/// # Errors
/// Shader, device and readback errors of the copy-bandwidth measurement.
pub(crate) fn finish(
    ctx: &DeviceContext,
    info: &KernelInfo,
    values: Values,
    runs: u32,
    prepared: Prepared,
) -> Result<KernelRun, KernelError> {
    let Prepared {
        outputs,
        reference_name,
        reference,
        core_f32,
        tensor_bytes,
        reduction,
        tolerance: tol,
    } = prepared;
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

#[cfg(test)]
#[path = "run_tests.rs"]
mod tests;
