//! LayerNorm ∇γ, ∇β (lecture §2.4; HW4 `ker_ln_bw_dgamma_dbetta`) on the device: the 32 × 32
//! tile with its shared buffer unpadded (row stride 32 words: the transposed read hits one
//! bank 32 times) or padded (stride 33), chosen by the pipeline-overridable constant `PAD`
//! (`shaders/dgamma.wgsl`). Core simulates the same tile warp by warp in
//! [`warpscope_core::layernorm::dgamma`].
//!
//! ∇γⱼ = Σ_rows ∇y·x̂, ∇βⱼ = Σ_rows ∇y, x̂ = (x − μ)·r with the forward's saved μ, r (f32).
//! Output: ∇γ ‖ ∇β (2·cols f32). Needs 1024 invocations per workgroup.

use crate::DeviceContext;
use crate::layernorm::Problem;
use crate::runner::{Dispatch, KernelError, Runner, VariantOutput, bytes_moved, groups_for};

const DGAMMA: &str = crate::shaders::DGAMMA;

/// The f64 reference ∇γ ‖ ∇β: column sums in f64 of ∇y·x̂ and ∇y, x̂ from the same f32 saved
/// statistics the kernel reads ([`Problem::saved`]).
pub fn reference(p: &Problem) -> Vec<f64> {
    let s = p.saved();
    let mut dg = vec![0.0f64; p.cols];
    let mut db = vec![0.0f64; p.cols];
    for r in 0..p.rows {
        for j in 0..p.cols {
            let i = r * p.cols + j;
            let d = f64::from(p.dy[i]);
            let xh = (f64::from(p.x[i]) - f64::from(s.mu[r])) * f64::from(s.r[r]);
            dg[j] += d * xh;
            db[j] += d;
        }
    }
    dg.extend(db);
    dg
}

/// Runs the tile padded (`PAD` = 1) and unpadded (`PAD` = 0): one untimed run each (whose
/// ∇γ ‖ ∇β is returned) and `runs` timed runs. Returned padded first.
///
/// # Errors
/// [`KernelError::InvalidOption`] for an inconsistent problem or an adapter allowing fewer
/// than 1024 invocations per workgroup; shader, device and readback errors.
pub fn compute(
    ctx: &DeviceContext,
    p: &Problem,
    runs: u32,
) -> Result<Vec<VariantOutput>, KernelError> {
    let n = p.rows * p.cols;
    if p.rows == 0 || p.cols == 0 || p.x.len() != n || p.dy.len() != n {
        return Err(KernelError::InvalidOption {
            name: "problem".into(),
            value: format!("{}×{}", p.rows, p.cols),
            expected: "non-empty rows × cols with x, ∇y of rows·cols elements".into(),
        });
    }
    let limit = ctx.device.limits().max_compute_invocations_per_workgroup;
    if limit < 1024 {
        return Err(KernelError::InvalidOption {
            name: "kernel".into(),
            value: "layernorm-dgamma".into(),
            expected: format!(
                "an adapter allowing 1024 invocations per workgroup for the 32 × 32 tile; {} \
                 allows {limit}",
                ctx.report.name
            ),
        });
    }
    let s = p.saved();
    let r = Runner::new(ctx, "layernorm-dgamma");
    let params = r.uniform("params", &[p.rows as u32, p.cols as u32, 0, 0]);
    let x = r.storage("x", &p.x)?;
    let dy = r.storage("∇y", &p.dy)?;
    let mu = r.storage("μ", &s.mu)?;
    let rstd = r.storage("r", &s.r)?;
    let (n64, rows, cols) = (n as u64, p.rows as u64, p.cols as u64);
    let mut out = Vec::with_capacity(2);
    for (name, pad) in [("padded", 1.0), ("unpadded", 0.0)] {
        let dg = r.zeros("∇γ", p.cols)?;
        let db = r.zeros("∇β", p.cols)?;
        let pipe = r.pipeline(DGAMMA, "tile", &[("PAD", pad)])?;
        let chain = vec![Dispatch {
            name: format!("32 × 32 tile, shared row stride {} words", 32.0 + pad),
            bind_group: r.bind(
                &pipe,
                &[
                    (0, &params),
                    (1, &x),
                    (2, &dy),
                    (3, &mu),
                    (4, &rstd),
                    (5, &dg),
                    (6, &db),
                ],
            ),
            pipeline: pipe,
            groups: [groups_for(cols, 32), 1, 1],
            bytes_read: 8 * n64 + 8 * rows,
            bytes_written: 8 * cols,
        }];
        r.run_once(&chain)?;
        let mut output = r.read_f32(&dg, p.cols)?;
        output.extend(r.read_f32(&db, p.cols)?);
        out.push(VariantOutput {
            name,
            kernels: chain.iter().map(|d| d.name.clone()).collect(),
            output,
            timing: r.time(&chain, runs)?,
            bytes_moved: bytes_moved(&chain),
        });
    }
    Ok(out)
}
