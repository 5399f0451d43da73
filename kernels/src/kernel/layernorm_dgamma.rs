//! `layernorm-dgamma` (§2.4): the ∇γ/∇β 32 × 32 tile, shared buffer padded vs unpadded
//! ([`crate::dgamma`]), verified against f64 column sums.

use warpscope_core::params::ParamSpec;

use super::{Kernel, KernelInfo, Prepared, SEED, Values, layernorm_bw, value};
use crate::run::{KernelRun, finish};
use crate::runner::{KernelError, Tolerance};
use crate::{DeviceContext, dgamma};

/// The `layernorm-dgamma` kernel.
#[derive(Debug, Clone, Copy)]
pub struct LayerNormDgamma;

static INFO: KernelInfo = KernelInfo {
    name: "layernorm-dgamma",
    section: "§2.4",
    summary: "LayerNorm ∇γ/∇β: the 32 × 32 tile, shared buffer padded (stride 33) vs \
              unpadded (stride 32), a pipeline-overridable constant",
    scene: "layernorm-dgamma",
    params: &[
        ParamSpec::int(
            "rows",
            "rows (tokens N)",
            "行数（词元数 N）",
            1,
            65536,
            4096,
        ),
        ParamSpec::int(
            "cols",
            "columns (hidden size d)",
            "列数（隐藏维 d）",
            1,
            16384,
            1024,
        ),
        SEED,
    ],
};

impl Kernel for LayerNormDgamma {
    fn info(&self) -> &'static KernelInfo {
        &INFO
    }

    fn run(
        &self,
        ctx: &DeviceContext,
        values: Values,
        runs: u32,
    ) -> Result<KernelRun, KernelError> {
        let p = layernorm_bw::problem(&values)?;
        let reference = dgamma::reference(&p);
        let out = dgamma::compute(ctx, &p, runs)?;
        let prepared = Prepared {
            outputs: out,
            reference_name: "f64 column sums of ∇y·x̂ and ∇y (x̂ from the saved f32 μ, r)",
            reference,
            core_f32: vec![None, None],
            tensor_bytes: (p.rows * p.cols * 4) as u64,
            reduction: Some(
                "32 × 32 workgroup per 32 columns; transposed shared read; tree over the 32 \
                 partials"
                    .to_owned(),
            ),
            // ∇γ/∇β sum over rows: their error grows with the row count.
            tolerance: Tolerance::f32_sum(value(&values, "rows")),
        };
        finish(ctx, &INFO, values, runs, prepared)
    }
}
