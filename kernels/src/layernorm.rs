//! LayerNorm backward ∇x (lecture §2.2; HW4 `ker_ln_bw_dinp`) on the device: the fused
//! one-row-per-workgroup kernel vs the autograd-style chain of seven kernels.
//!
//! With g = γ ⊙ ∇y and x̂ = (x − μ)·r (μ, r = 1/σ saved by the forward, per row of m):
//! ∇xᵢ = r [gᵢ − (Σg + x̂ᵢ Σg·x̂)/m] ([`warpscope_core::layernorm::backward_hw4`]).
//!
//! - **fused** (1 launch): Σg and Σg·x̂ reduced together as one `vec2` in one workgroup
//!   reduction. With `SUBGROUP`: `subgroupAdd` per subgroup, one partial per subgroup in shared
//!   memory, **one** `workgroupBarrier` (`shaders/layernorm_fused_sg.wgsl`); without: a
//!   shared-memory tree (`shaders/layernorm_fused_wg.wgsl`).
//! - **autograd** (7 launches, `shaders/layernorm_chain.wgsl`): the backward of the 7-op
//!   decomposition op by op through device memory — kernels 3–9 of
//!   [`warpscope_core::layernorm::bytes`] (kernels 1–2 compute ∇β, ∇γ, not ∇x). The forward
//!   saved xc = x − μ (tensor) and σ (per row).
//!
//! All storage and arithmetic f32 (4 B); ε = [`warpscope_core::layernorm::EPS`].

use warpscope_core::layernorm::{EPS, forward_row, reference_row};

use crate::DeviceContext;
use crate::runner::{Dispatch, KernelError, Runner, VariantOutput, bytes_moved, groups_for};

const FUSED_SG: &str = crate::shaders::LAYERNORM_FUSED_SG;
const FUSED_WG: &str = crate::shaders::LAYERNORM_FUSED_WG;
const CHAIN: &str = crate::shaders::LAYERNORM_CHAIN;
const EW_WG: u64 = 256;

/// One LayerNorm-backward problem: `rows` rows of `cols` (= m) elements, row-major, f32.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    /// Rows (tokens N).
    pub rows: usize,
    /// Columns (hidden size m).
    pub cols: usize,
    /// Forward input x (rows·cols).
    pub x: Vec<f32>,
    /// Upstream gradient ∇y (rows·cols).
    pub dy: Vec<f32>,
    /// Scale γ (cols).
    pub gamma: Vec<f32>,
}

/// What the forward saves, per row, computed on the host in f32 by
/// [`warpscope_core::layernorm::forward_row`] (pairwise sums, two-pass variance).
#[derive(Debug, Clone, PartialEq)]
pub struct Saved {
    /// μ per row.
    pub mu: Vec<f32>,
    /// σ = √(var + ε) per row.
    pub sigma: Vec<f32>,
    /// r = 1/σ per row.
    pub r: Vec<f32>,
    /// xc = x − μ (rows·cols), what autograd's subtraction saves.
    pub xc: Vec<f32>,
}

impl Problem {
    /// The forward's saved statistics (f32).
    pub fn saved(&self) -> Saved {
        let mut s = Saved {
            mu: Vec::with_capacity(self.rows),
            sigma: Vec::with_capacity(self.rows),
            r: Vec::with_capacity(self.rows),
            xc: Vec::with_capacity(self.x.len()),
        };
        for row in self.x.chunks(self.cols.max(1)) {
            let st = forward_row::<f32>(row, EPS as f32);
            s.mu.push(st.mu);
            s.sigma.push(st.sigma);
            s.r.push(st.r);
            s.xc.extend(row.iter().map(|v| v - st.mu));
        }
        s
    }

    /// The f64 reference ∇x: [`warpscope_core::layernorm::reference_row`] (reverse-mode
    /// differentiation of the 7-op decomposition in f64, independent of both closed forms)
    /// on the f32 inputs widened.
    pub fn reference(&self) -> Vec<f64> {
        let w = |v: &[f32]| v.iter().map(|a| f64::from(*a)).collect::<Vec<f64>>();
        let gamma = w(&self.gamma);
        let mut out = Vec::with_capacity(self.x.len());
        for (x, dy) in self
            .x
            .chunks(self.cols.max(1))
            .zip(self.dy.chunks(self.cols.max(1)))
        {
            out.extend(reference_row(&w(x), &w(dy), &gamma, EPS).0);
        }
        out
    }
}

/// How the fused kernel reduces on this device.
pub fn reduction(ctx: &DeviceContext) -> String {
    if ctx.report.subgroups {
        format!(
            "one row per workgroup (128 invocations): subgroupAdd of (Σg, Σg·x̂) per subgroup \
             ({}–{} lanes), partials in shared memory, one barrier",
            ctx.report.subgroup_min_size, ctx.report.subgroup_max_size
        )
    } else {
        "one row per workgroup (128 invocations): (Σg, Σg·x̂) in one shared-memory tree \
         (7 barriers: no subgroups)"
            .to_owned()
    }
}

/// Runs the fused kernel and the autograd-style chain on `p`: one untimed run each (whose ∇x
/// is returned) and `runs` timed runs.
///
/// # Errors
/// [`KernelError::InvalidOption`] for an inconsistent problem; shader, device and readback
/// errors from [`Runner`].
pub fn compute(
    ctx: &DeviceContext,
    p: &Problem,
    runs: u32,
) -> Result<Vec<VariantOutput>, KernelError> {
    let n = p.rows * p.cols;
    if p.rows == 0 || p.cols == 0 || p.x.len() != n || p.dy.len() != n || p.gamma.len() != p.cols {
        return Err(KernelError::InvalidOption {
            name: "problem".into(),
            value: format!("{}×{}", p.rows, p.cols),
            expected: "non-empty rows × cols with x, ∇y of rows·cols and γ of cols elements".into(),
        });
    }
    let s = p.saved();
    let r = Runner::new(ctx, "layernorm-bw");
    let params = r.uniform("params", &[p.rows as u32, p.cols as u32, 0, 0]);
    let x = r.storage("x", &p.x)?;
    let dy = r.storage("∇y", &p.dy)?;
    let gamma = r.storage("γ", &p.gamma)?;
    let mu = r.storage("μ", &s.mu)?;
    let rstd = r.storage("r", &s.r)?;
    let sigma = r.storage("σ", &s.sigma)?;
    let xc = r.storage("xc", &s.xc)?;
    let dx = r.zeros("∇x fused", n)?;
    let dxh = r.zeros("∇x̂", n)?;
    let dxc1 = r.zeros("∇xc₁", n)?;
    let dsigma = r.zeros("∇σ", p.rows)?;
    let ds = r.zeros("∇s", p.rows)?;
    let dxc2 = r.zeros("∇xc₂", n)?;
    let dxc = r.zeros("∇xc", n)?;
    let dmu = r.zeros("∇μ", p.rows)?;
    let dx_chain = r.zeros("∇x autograd", n)?;

    let (n64, rows, cols) = (n as u64, p.rows as u64, p.cols as u64);
    let row_groups = [groups_for(rows, 1), 1, 1];
    let ew_groups = [groups_for(n64, EW_WG), 1, 1];

    let src = if ctx.report.subgroups {
        FUSED_SG
    } else {
        FUSED_WG
    };
    let fused_pipe = r.pipeline(src, "fused", &[])?;
    let fused = vec![Dispatch {
        name: "fused: g = γ⊙∇y, x̂ recomputed; (Σg, Σg·x̂) in one reduction; ∇x".into(),
        bind_group: r.bind(
            &fused_pipe,
            &[
                (0, &params),
                (1, &x),
                (2, &dy),
                (3, &gamma),
                (4, &mu),
                (5, &rstd),
                (6, &dx),
            ],
        ),
        pipeline: fused_pipe,
        groups: row_groups,
        bytes_read: 8 * n64 + 4 * cols + 8 * rows,
        bytes_written: 4 * n64,
    }];

    let pipe = |entry: &str| r.pipeline(CHAIN, entry, &[]);
    let (affine, div, sqrt_mean, square, acc, sub, mean) = (
        pipe("affine_bw")?,
        pipe("div_bw")?,
        pipe("sqrt_mean_bw")?,
        pipe("square_bw")?,
        pipe("accumulate")?,
        pipe("sub_bw")?,
        pipe("mean_bw")?,
    );
    let chain = vec![
        Dispatch {
            name: "3 affine backward: ∇x̂ = γ⊙∇y".into(),
            bind_group: r.bind(&affine, &[(0, &params), (1, &dy), (2, &gamma), (3, &dxh)]),
            pipeline: affine,
            groups: ew_groups,
            bytes_read: 4 * n64 + 4 * cols,
            bytes_written: 4 * n64,
        },
        Dispatch {
            name: "4 div backward: ∇xc₁ = ∇x̂/σ, ∇σ = −Σ∇x̂·xc/σ²".into(),
            bind_group: r.bind(
                &div,
                &[
                    (0, &params),
                    (3, &dxh),
                    (4, &xc),
                    (5, &sigma),
                    (6, &dxc1),
                    (7, &dsigma),
                ],
            ),
            pipeline: div,
            groups: row_groups,
            bytes_read: 8 * n64 + 4 * rows,
            bytes_written: 4 * n64 + 4 * rows,
        },
        Dispatch {
            name: "5 sqrt + mean backward: ∇s = ∇σ/(2σ)/m".into(),
            bind_group: r.bind(
                &sqrt_mean,
                &[(0, &params), (5, &sigma), (7, &dsigma), (8, &ds)],
            ),
            pipeline: sqrt_mean,
            groups: [groups_for(rows, EW_WG), 1, 1],
            bytes_read: 8 * rows,
            bytes_written: 4 * rows,
        },
        Dispatch {
            name: "6 square backward: ∇xc₂ = 2·xc⊙∇s".into(),
            bind_group: r.bind(&square, &[(0, &params), (4, &xc), (8, &ds), (9, &dxc2)]),
            pipeline: square,
            groups: ew_groups,
            bytes_read: 4 * n64 + 4 * rows,
            bytes_written: 4 * n64,
        },
        Dispatch {
            name: "7 accumulate: ∇xc = ∇xc₁ + ∇xc₂".into(),
            bind_group: r.bind(&acc, &[(0, &params), (6, &dxc1), (9, &dxc2), (10, &dxc)]),
            pipeline: acc,
            groups: ew_groups,
            bytes_read: 8 * n64,
            bytes_written: 4 * n64,
        },
        Dispatch {
            name: "8 sub backward: ∇μ = −Σ∇xc".into(),
            bind_group: r.bind(&sub, &[(0, &params), (10, &dxc), (11, &dmu)]),
            pipeline: sub,
            groups: row_groups,
            bytes_read: 4 * n64,
            bytes_written: 4 * rows,
        },
        Dispatch {
            name: "9 mean backward: ∇x = ∇xc + ∇μ/m".into(),
            bind_group: r.bind(
                &mean,
                &[(0, &params), (10, &dxc), (11, &dmu), (12, &dx_chain)],
            ),
            pipeline: mean,
            groups: ew_groups,
            bytes_read: 4 * n64 + 4 * rows,
            bytes_written: 4 * n64,
        },
    ];

    let mut out = Vec::with_capacity(2);
    for (name, chain, result) in [("fused", &fused, &dx), ("autograd", &chain, &dx_chain)] {
        r.run_once(chain)?;
        let output = r.read_f32(result, n)?;
        let timing = r.time(chain, runs)?;
        out.push(VariantOutput {
            name,
            kernels: chain.iter().map(|d| d.name.clone()).collect(),
            output,
            timing,
            bytes_moved: bytes_moved(chain),
        });
    }
    Ok(out)
}
