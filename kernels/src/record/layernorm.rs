//! The `layernorm-syncs` recorder: the lecture's fused LayerNorm backward
//! (`shaders/layernorm_fused_sg.wgsl`, `ker_ln_bw_dinp`) with its `WG` set to the scene's
//! block, one row per workgroup, instrumented by the record pass: every row's (Σg, Σg·x̂) read
//! from the recorded `subgroupAdd` results and checked, row 0's workgroup compared with the
//! scene's simulation.

use std::collections::BTreeMap;

use warpscope_core::lab::dispatch::{Dispatch, ScalarType};
use warpscope_core::lab::record::Op;
use warpscope_core::layernorm::syncs::{SyncsOutput, SyncsParams};
use warpscope_core::layernorm::{EPS, forward_row};

use super::compare::{TraceComparison, ValueCheck};
use super::{Recording, at, finish, need_subgroups, params_map, record_lecture, values, zeros};
use crate::DeviceContext;
use crate::runner::KernelError;

/// The shader's workgroup size declaration, which the recorder sets to the scene's block.
const WG_LINE: &str = "const WG: u32 = 128u;";

/// Per workgroup (row), the block's (Σg, Σg·x̂) as every invocation adds it: the subgroups'
/// `subgroupAdd` results (lane 0's record of each) in subgroup order, in f32 — the order
/// `tot += partial[…k]` adds them. Also whether every lane of each subgroup recorded the same
/// result.
fn row_sums(raw: &crate::lab::record::Raw) -> (BTreeMap<u32, [f32; 2]>, bool) {
    let mut parts: BTreeMap<u32, BTreeMap<u32, [u32; 2]>> = BTreeMap::new();
    let mut uniform = true;
    for r in &raw.records {
        let is_add = raw
            .inst
            .sites
            .get(r.site as usize)
            .is_some_and(|s| s.op == Op::SubgroupCollective);
        if !is_add {
            continue;
        }
        let slot = parts.entry(r.workgroup).or_default();
        let bits = [r.value, r.value2];
        if *slot.entry(r.subgroup).or_insert(bits) != bits {
            uniform = false;
        }
    }
    let sums = parts
        .into_iter()
        .map(|(wg, by_sg)| {
            let mut tot = [0.0f32; 2];
            for p in by_sg.values() {
                tot[0] += f32::from_bits(p[0]);
                tot[1] += f32::from_bits(p[1]);
            }
            (wg, tot)
        })
        .collect();
    (sums, uniform)
}

/// Records the `layernorm-syncs` rewrite's block reduction (Σg, Σg·x̂ together) on `ctx`:
/// every row's sums verified, row 0's workgroup recorded, compared with the scene's simulation.
///
/// # Errors
/// [`KernelError::Core`] when core refuses the parameters; [`KernelError::InvalidOption`]
/// without subgroups; shader, device and readback errors, and [`KernelError::Readback`] for a
/// recording that dropped records or changed the results.
pub fn layernorm_syncs(ctx: &DeviceContext, p: &SyncsParams) -> Result<Recording, KernelError> {
    let kernel = "layernorm-syncs (recorded)";
    need_subgroups(ctx, kernel)?;
    let core_err = |message: String| KernelError::Core {
        kernel: kernel.into(),
        message,
    };
    let sim: SyncsOutput =
        warpscope_core::layernorm::syncs::run(p).map_err(|e| core_err(e.to_string()))?;
    let (rows, cols, wg) = (p.rows, p.cols, p.block);
    let (x, dy, gamma, _) = warpscope_core::layernorm::formulas::inputs(rows, cols, p.seed);
    let f = |v: &[f64]| v.iter().map(|&a| a as f32).collect::<Vec<f32>>();
    let (x, dy, gamma) = (f(&x), f(&dy), f(&gamma));
    let (mut mu, mut rstd) = (Vec::with_capacity(rows), Vec::with_capacity(rows));
    for row in x.chunks(cols) {
        let s = forward_row::<f32>(row, EPS as f32);
        mu.push(s.mu);
        rstd.push(s.r);
    }
    let wide = |v: &[f32]| v.iter().map(|&a| f64::from(a)).collect::<Vec<f64>>();
    let mut dispatch = Dispatch {
        workgroups: [rows as u32, 1, 1],
        buffers: Default::default(),
        seed: 0,
        overrides: Default::default(),
    };
    let b = &mut dispatch.buffers;
    let params = [rows as u32, cols as u32, 0, 0].map(f64::from).to_vec();
    b.insert(at(0), values(ScalarType::U32, params));
    b.insert(at(1), values(ScalarType::F32, wide(&x)));
    b.insert(at(2), values(ScalarType::F32, wide(&dy)));
    b.insert(at(3), values(ScalarType::F32, wide(&gamma)));
    b.insert(at(4), values(ScalarType::F32, wide(&mu)));
    b.insert(at(5), values(ScalarType::F32, wide(&rstd)));
    b.insert(at(6), zeros((rows * cols) as u64));
    let shader = crate::shaders::LAYERNORM_FUSED_SG;
    if !shader.contains(WG_LINE) {
        return Err(core_err(format!(
            "layernorm_fused_sg.wgsl no longer declares `{WG_LINE}`"
        )));
    }
    let source = shader.replacen(WG_LINE, &format!("const WG: u32 = {wg}u;"), 1);
    let raw = record_lecture(ctx, kernel, &source, None, &dispatch)?;
    let (sums, uniform) = row_sums(&raw);
    let mut trace = raw.decoded.trace.clone();
    trace.kernel = warpscope_core::text::Text::new(
        "ker_ln_bw_dinp (layernorm_fused_sg.wgsl, instrumented: subgroupAdd per subgroup, one barrier)"
            .to_owned(),
        "ker_ln_bw_dinp（layernorm_fused_sg.wgsl，已插桩：每个子组一次 subgroupAdd，一个屏障）"
            .to_owned(),
    );
    let mut values = Vec::new();
    let wide64 = |v: &[f32]| v.iter().map(|&a| f64::from(a)).collect::<Vec<f64>>();
    let g64: Vec<f64> = wide64(&gamma);
    for row in 0..rows {
        let span = row * cols..(row + 1) * cols;
        let (xr, dyr) = (wide64(&x[span.clone()]), wide64(&dy[span]));
        let (_, xh) = warpscope_core::layernorm::reference_row(&xr, &dyr, &g64, EPS);
        let g: Vec<f64> = dyr.iter().zip(&g64).map(|(d, c)| d * c).collect();
        let sum_abs_g: f64 = g.iter().map(|v| v.abs()).sum();
        let sum_abs_gx: f64 = g.iter().zip(&xh).map(|(a, b)| (a * b).abs()).sum();
        let (Some(reference), Some(simulated)) =
            (sim.fused_sums_reference.get(row), sim.fused_sums.get(row))
        else {
            continue;
        };
        let got = sums.get(&(row as u32)).copied().unwrap_or([f32::NAN; 2]);
        values.push(ValueCheck::new(
            &format!("Σg (row {row})"),
            f64::from(simulated[0]),
            f64::from(got[0]),
            reference[0],
            cols,
            sum_abs_g,
        ));
        values.push(ValueCheck::new(
            &format!("Σg·x̂ (row {row})"),
            f64::from(simulated[1]),
            f64::from(got[1]),
            reference[1],
            cols,
            sum_abs_gx,
        ));
    }
    let checks = vec![if uniform {
        "every lane of each subgroup recorded the same subgroupAdd result".to_owned()
    } else {
        "lanes of a subgroup recorded different subgroupAdd results".to_owned()
    }];
    let size = trace.warp_size;
    let n_sg = wg.div_ceil(size.max(1));
    let explanation = format!(
        "{} runs subgroups of {size} lanes; the lecture's shader reduces each with one \
         subgroupAdd (the hardware's own reduction: no shuffle levels to record), and the block \
         of {wg} threads is {n_sg} subgroup(s) whose partials meet in shared memory after one \
         barrier (every invocation adds them), where the simulated LightSeq blockReduce uses 2 \
         barriers (warp 0 reduces the partials, then broadcasts)",
        ctx.report.name
    );
    let comparison = TraceComparison::of(&sim.trace_fused, &trace, values, explanation);
    finish(
        "layernorm-syncs",
        params_map(&[
            ("rows", p.rows.to_string()),
            ("cols", p.cols.to_string()),
            ("block", p.block.to_string()),
            ("seed", p.seed.to_string()),
        ]),
        ctx,
        raw.decoded.records,
        trace,
        comparison,
        checks,
    )
}
