//! Softmax backward with dropout backward (lecture §3.1–3.2; HW4 `ker_attn_softmax_bw`), as
//! WGSL on the device, fused and unfused.
//!
//! Forward: P = dropout(y) = y ⊙ M / keep. Backward from ∇P, per row of L elements:
//! g′ = ∇P ⊙ M · (1/keep), s = Σⱼ g′ⱼ yⱼ, ∇x = y ⊙ (g′ − s) — the convention of
//! [`warpscope_core::softmax::fusion`] (the scale is `(1/keep) as f32`).
//!
//! - **fused** (1 launch): g′ in registers, one reduction, ∇x written once. With
//!   `SUBGROUP` one row per subgroup and a shuffle-xor butterfly (`shaders/softmax_sg.wgsl`),
//!   else one row per workgroup with a shared-memory tree (`shaders/softmax_wg.wgsl`).
//! - **unfused** (5 launches, `shaders/softmax_ew.wgsl` + the row sum): g′ = ∇P⊙M/keep;
//!   P = g′⊙y; s = ΣP per row; D = g′ − s; ∇x = y⊙D, each through device memory.
//!
//! Storage: y, ∇P, ∇x and the temporaries f32 (4 B); the mask one byte per element (packed
//! four per u32); s f32 per row.

use crate::DeviceContext;
use crate::runner::{Dispatch, KernelError, Runner, VariantOutput, bytes_moved, groups_for};

const SG: &str = crate::shaders::SOFTMAX_SG;
const WG: &str = crate::shaders::SOFTMAX_WG;
const EW: &str = crate::shaders::SOFTMAX_EW;
/// Workgroup size of the row kernels (`WG` in the shaders).
const ROW_WG: u64 = 128;
/// Workgroup size of the element-wise kernels.
const EW_WG: u64 = 256;

/// One softmax-backward problem: `rows` rows of `cols` elements, row-major.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    /// Rows.
    pub rows: usize,
    /// Row length L.
    pub cols: usize,
    /// Softmax output y (rows·cols).
    pub y: Vec<f32>,
    /// Upstream gradient ∇P of the dropout output (rows·cols).
    pub dp: Vec<f32>,
    /// Dropout mask M, 0 or 1 (rows·cols).
    pub mask: Vec<u8>,
    /// keep = 1 − dropout ratio, in (0, 1].
    pub keep: f64,
}

impl Problem {
    /// The f32 scale the kernels multiply by: `(1/keep) as f32`.
    pub fn scale(&self) -> f32 {
        (1.0 / self.keep) as f32
    }

    /// The f64 reference ∇x: g′ = ∇P·M/keep in f64, then
    /// [`warpscope_core::softmax::backward_row`] per row.
    ///
    /// # Errors
    /// [`KernelError::Core`] when core refuses a row (non-finite values).
    pub fn reference(&self) -> Result<Vec<f64>, KernelError> {
        let mut out = Vec::with_capacity(self.rows * self.cols);
        for r in 0..self.rows {
            let row = r * self.cols..(r + 1) * self.cols;
            let y: Vec<f64> = self.y[row.clone()].iter().map(|v| f64::from(*v)).collect();
            let g: Vec<f64> = self.dp[row.clone()]
                .iter()
                .zip(&self.mask[row])
                .map(|(d, m)| f64::from(*d) * f64::from(*m) / self.keep)
                .collect();
            let dx =
                warpscope_core::softmax::backward_row(&y, &g).map_err(|e| KernelError::Core {
                    kernel: "softmax-bw".into(),
                    message: e.to_string(),
                })?;
            out.extend(dx);
        }
        Ok(out)
    }
}

/// Which reduction the row kernels use on this device.
pub fn reduction(ctx: &DeviceContext) -> String {
    if ctx.report.subgroups {
        format!(
            "one row per subgroup ({}–{} lanes), shuffle-xor butterfly",
            ctx.report.subgroup_min_size, ctx.report.subgroup_max_size
        )
    } else {
        "one row per workgroup (128 invocations), shared-memory tree".to_owned()
    }
}

/// Runs the fused kernel and the unfused chain on `p`: one untimed run each (whose output is
/// returned) and `runs` timed runs.
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
    if p.rows == 0 || p.cols == 0 || p.y.len() != n || p.dp.len() != n || p.mask.len() != n {
        return Err(KernelError::InvalidOption {
            name: "problem".into(),
            value: format!("{}×{}", p.rows, p.cols),
            expected: "non-empty rows × cols with y, ∇P and mask of rows·cols elements".into(),
        });
    }
    if !(p.keep > 0.0 && p.keep <= 1.0) {
        return Err(KernelError::InvalidOption {
            name: "keep".into(),
            value: p.keep.to_string(),
            expected: "a number in (0, 1]".into(),
        });
    }
    let r = Runner::new(ctx, "softmax-bw");
    let (rows, cols) = (p.rows as u32, p.cols as u32);
    let params = r.uniform("params", &[rows, cols, p.scale().to_bits(), 0]);
    let mut mask_bytes = p.mask.clone();
    mask_bytes.resize(n.next_multiple_of(4), 0);
    let dp = r.storage("∇P", &p.dp)?;
    let mask = r.storage_bytes("mask", &mask_bytes)?;
    let y = r.storage("y", &p.y)?;
    let dx = r.zeros("∇x fused", n)?;
    let g = r.zeros("g′", n)?;
    let prod = r.zeros("P", n)?;
    let sums = r.zeros("s", p.rows)?;
    let d = r.zeros("D", n)?;
    let dx_u = r.zeros("∇x unfused", n)?;

    let (row_src, rows_per_group) = if ctx.report.subgroups {
        let sg = u64::from(ctx.report.subgroup_max_size.max(1));
        (SG, (ROW_WG / sg).max(1))
    } else {
        (WG, 1)
    };
    let row_groups = [groups_for(p.rows as u64, rows_per_group), 1, 1];
    let ew_groups = [groups_for(n as u64, EW_WG), 1, 1];
    let (n64, rows64) = (n as u64, p.rows as u64);

    let fused_pipe = r.pipeline(row_src, "fused", &[])?;
    let fused = vec![Dispatch {
        name: "fused: g′ = ∇P⊙M/keep in registers; ∇x = y⊙(g′ − Σg′·y)".into(),
        bind_group: r.bind(
            &fused_pipe,
            &[(0, &params), (1, &dp), (2, &mask), (3, &y), (4, &dx)],
        ),
        pipeline: fused_pipe,
        groups: row_groups,
        bytes_read: 4 * n64 + n64 + 4 * n64,
        bytes_written: 4 * n64,
    }];

    let drop_pipe = r.pipeline(EW, "dropout_bw", &[])?;
    let mul_pipe = r.pipeline(EW, "mul", &[])?;
    let sub_pipe = r.pipeline(EW, "sub_row", &[])?;
    let sum_pipe = r.pipeline(row_src, "row_sum", &[])?;
    let unfused = vec![
        Dispatch {
            name: "1 dropout backward: g′ = ∇P⊙M/keep".into(),
            bind_group: r.bind(&drop_pipe, &[(0, &params), (1, &dp), (3, &mask), (5, &g)]),
            pipeline: drop_pipe,
            groups: ew_groups,
            bytes_read: 4 * n64 + n64,
            bytes_written: 4 * n64,
        },
        Dispatch {
            name: "2 P = g′⊙y".into(),
            bind_group: r.bind(&mul_pipe, &[(0, &params), (1, &g), (2, &y), (5, &prod)]),
            pipeline: mul_pipe.clone(),
            groups: ew_groups,
            bytes_read: 8 * n64,
            bytes_written: 4 * n64,
        },
        Dispatch {
            name: "3 s = Σⱼ P (per row)".into(),
            bind_group: r.bind(&sum_pipe, &[(0, &params), (5, &prod), (6, &sums)]),
            pipeline: sum_pipe,
            groups: row_groups,
            bytes_read: 4 * n64,
            bytes_written: 4 * rows64,
        },
        Dispatch {
            name: "4 D = g′ − s".into(),
            bind_group: r.bind(&sub_pipe, &[(0, &params), (1, &g), (4, &sums), (5, &d)]),
            pipeline: sub_pipe,
            groups: ew_groups,
            bytes_read: 4 * n64 + 4 * rows64,
            bytes_written: 4 * n64,
        },
        Dispatch {
            name: "5 ∇x = y⊙D".into(),
            bind_group: r.bind(&mul_pipe, &[(0, &params), (1, &y), (2, &d), (5, &dx_u)]),
            pipeline: mul_pipe,
            groups: ew_groups,
            bytes_read: 8 * n64,
            bytes_written: 4 * n64,
        },
    ];

    let mut out = Vec::with_capacity(2);
    for (name, chain, result) in [("fused", &fused, &dx), ("unfused", &unfused, &dx_u)] {
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
