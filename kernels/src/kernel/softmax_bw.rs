//! `softmax-bw` (§3.2): softmax backward with dropout backward, fused vs the unfused chain
//! ([`crate::softmax`]), on core's seeded example ([`warpscope_core::softmax::fusion`]).

use warpscope_core::params::ParamSpec;
use warpscope_core::softmax::Dtype;
use warpscope_core::softmax::fusion::{self, FusionParams};

use super::{Kernel, KernelInfo, Prepared, SEED, Values, value};
use crate::run::{KernelRun, finish};
use crate::runner::{KernelError, Tolerance};
use crate::{DeviceContext, softmax};

/// The `softmax-bw` kernel.
#[derive(Debug, Clone, Copy)]
pub struct SoftmaxBw;

static INFO: KernelInfo = KernelInfo {
    name: "softmax-bw",
    section: "§3.2",
    summary: "softmax backward with dropout backward: fused (one row per subgroup, g′ in \
              registers) vs the unfused chain of 5 kernels",
    scene: "softmax-fusion",
    params: &[
        ParamSpec::int(
            "rows",
            "rows (B·h·L in attention)",
            "行数（注意力中的 B·h·L）",
            1,
            4096,
            1024,
        ),
        ParamSpec::int("len", "row length L", "行长 L", 1, 4096, 256),
        ParamSpec::float(
            "dropout",
            "dropout ratio (keep = 1 − ratio)",
            "dropout 比例（保留 = 1 − 比例）",
            0.0,
            0.9,
            0.1,
        ),
        SEED,
    ],
};

impl Kernel for SoftmaxBw {
    fn info(&self) -> &'static KernelInfo {
        &INFO
    }

    fn run(
        &self,
        ctx: &DeviceContext,
        values: Values,
        runs: u32,
    ) -> Result<KernelRun, KernelError> {
        let (rows, len) = (value(&values, "rows") as u64, value(&values, "len") as u64);
        let fp = FusionParams {
            batch: 1,
            heads: 1,
            len,
            dtype: Dtype::F32,
            device: "a100".to_owned(),
            dropout: value(&values, "dropout"),
            seed: value(&values, "seed") as u64,
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
            r => {
                r.map_err(|e| KernelError::Core {
                    kernel: INFO.name.to_owned(),
                    message: e.to_string(),
                })?
                .example
            }
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
        let prepared = Prepared {
            outputs: out,
            reference_name: "warpscope_core::softmax::backward_row (f64) on g′ = ∇P·M/keep",
            reference,
            core_f32: vec![Some(e.dx_fused), Some(e.dx_unfused)],
            tensor_bytes: rows * len * 4,
            reduction: Some(softmax::reduction(ctx)),
            tolerance: Tolerance::F32,
        };
        finish(ctx, &INFO, values, runs, prepared)
    }
}
