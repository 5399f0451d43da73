//! `adam` (§4.2): one Adam step, one dispatch per parameter tensor vs one over the linked
//! workspace ([`crate::adam`]), in f32 and — when the adapter has `SHADER_F16` — with FP16
//! storage of p and g, verified against core's `adam_f32` / `adam_f16`.

use warpscope_core::params::ParamSpec;
use warpscope_core::trainer::adam::AdamConfig;

use super::{Kernel, KernelInfo, Prepared, SEED, Values, value};
use crate::data::Seeded;
use crate::run::{Comparison, F16Storage, KernelRun, VariantRun, finish, gbps};
use crate::runner::{KernelError, Tolerance, Verification};
use crate::{DeviceContext, adam};

/// Most Adam parameters: 2²⁵ (4 buffers of 128 MiB per layout).
pub const MAX_ADAM_ELEMENTS: u64 = 1 << 25;

/// The `adam` kernel.
#[derive(Debug, Clone, Copy)]
pub struct AdamKernel;

static INFO: KernelInfo = KernelInfo {
    name: "adam",
    section: "§4.2",
    summary: "Adam step: one dispatch per parameter tensor vs one over the linked workspace",
    scene: "trainer",
    params: &[
        ParamSpec::int("layers", "transformer layers", "Transformer 层数", 1, 48, 2),
        ParamSpec::int("hidden", "hidden size", "隐藏维", 8, 2048, 128),
        ParamSpec::int("vocab", "vocabulary size", "词表大小", 1, 65536, 1000),
        ParamSpec::int(
            "step",
            "Adam step t (bias corrections)",
            "Adam 步数 t（偏差校正）",
            1,
            1_000_000,
            10,
        ),
        ParamSpec::float("lr", "learning rate", "学习率", 1e-6, 1.0, 1e-3),
        SEED,
    ],
};

impl Kernel for AdamKernel {
    fn info(&self) -> &'static KernelInfo {
        &INFO
    }

    fn run(
        &self,
        ctx: &DeviceContext,
        values: Values,
        runs: u32,
    ) -> Result<KernelRun, KernelError> {
        let v = |k: &str| value(&values, k);
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
        let prepared = Prepared {
            outputs: out,
            reference_name: "warpscope_core::trainer::adam::adam_f32 (p ‖ m ‖ v after the step)",
            reference,
            core_f32: vec![None, None],
            tensor_bytes: largest.max(n as u64) * 4,
            reduction: None,
            tolerance: Tolerance::F32,
        };
        let mut run = finish(ctx, &INFO, values, runs, prepared)?;
        let f16 = adam_f16_storage(ctx, &p, runs, &run)?;
        run.verified &= f16.verified;
        run.notes.push(f16.note.clone());
        run.f16_storage = Some(f16);
        Ok(run)
    }
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
    let mut rng = Seeded::new(seed);
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
