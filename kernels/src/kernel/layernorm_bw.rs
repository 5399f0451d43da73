//! `layernorm-bw` (§2.2): LayerNorm backward ∇x, fused vs the autograd-style chain
//! ([`crate::layernorm`]), verified against core's f64 reference and compared with core's own
//! f32 HW4 form.

use warpscope_core::layernorm::{Dtype, backward_row, formulas};
use warpscope_core::params::ParamSpec;

use super::{Kernel, KernelInfo, Prepared, SEED, Values, value};
use crate::run::{KernelRun, finish};
use crate::runner::{KernelError, Tolerance};
use crate::{DeviceContext, layernorm};

/// Most elements of a LayerNorm problem (rows × cols): 2²² (16 MiB per f32 tensor; the chain
/// holds about a dozen).
pub const MAX_LAYERNORM_ELEMENTS: u64 = 1 << 22;

/// The `layernorm-bw` kernel.
#[derive(Debug, Clone, Copy)]
pub struct LayerNormBw;

static INFO: KernelInfo = KernelInfo {
    name: "layernorm-bw",
    section: "§2.2",
    summary: "LayerNorm backward ∇x: fused (Σg, Σg·x̂ in one reduction, one barrier) vs the \
              autograd-style chain of 7 kernels",
    scene: "layernorm-bytes",
    params: &[
        ParamSpec::int(
            "rows",
            "rows (tokens N)",
            "行数（词元数 N）",
            1,
            65536,
            1024,
        ),
        ParamSpec::int(
            "cols",
            "columns (hidden size m)",
            "列数（隐藏维 m）",
            1,
            16384,
            1024,
        ),
        SEED,
    ],
};

/// The LayerNorm problem `values` describe: core's seeded inputs at `rows` × `cols`, in f32.
///
/// # Errors
/// [`KernelError::InvalidOption`] naming `rows` when rows × cols exceeds
/// [`MAX_LAYERNORM_ELEMENTS`].
pub(crate) fn problem(values: &Values) -> Result<layernorm::Problem, KernelError> {
    let (rows, cols) = (value(values, "rows") as u64, value(values, "cols") as u64);
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
    let (x, dy, gamma, _) =
        formulas::inputs(rows as usize, cols as usize, value(values, "seed") as u64);
    let f = |a: Vec<f64>| a.into_iter().map(|x| x as f32).collect::<Vec<f32>>();
    Ok(layernorm::Problem {
        rows: rows as usize,
        cols: cols as usize,
        x: f(x),
        dy: f(dy),
        gamma: f(gamma),
    })
}

impl Kernel for LayerNormBw {
    fn info(&self) -> &'static KernelInfo {
        &INFO
    }

    fn run(
        &self,
        ctx: &DeviceContext,
        values: Values,
        runs: u32,
    ) -> Result<KernelRun, KernelError> {
        let p = problem(&values)?;
        let reference = p.reference();
        // core's f32 HW4 form on the same inputs (for both variants: same formula family).
        let w = |v: &[f32]| v.iter().map(|a| f64::from(*a)).collect::<Vec<f64>>();
        let g64 = w(&p.gamma);
        let mut core32 = Vec::with_capacity(p.x.len());
        for (x, dy) in p.x.chunks(p.cols).zip(p.dy.chunks(p.cols)) {
            let (hw4, _, _) = backward_row(Dtype::F32, &w(x), &w(dy), &g64);
            core32.extend(hw4.into_iter().map(|v| v as f32));
        }
        let out = layernorm::compute(ctx, &p, runs)?;
        let tensor_bytes = (p.rows * p.cols * 4) as u64;
        let prepared = Prepared {
            outputs: out,
            reference_name: "warpscope_core::layernorm::reference_row (f64 reverse-mode of the \
                             7-op decomposition)",
            reference,
            core_f32: vec![Some(core32), None],
            tensor_bytes,
            reduction: Some(layernorm::reduction(ctx)),
            tolerance: Tolerance::F32,
        };
        finish(ctx, &INFO, values, runs, prepared)
    }
}
