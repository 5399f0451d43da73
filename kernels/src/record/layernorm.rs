//! The `layernorm-syncs` recorder: the rewrite's block reduction of (Σg, Σg·x̂) in one
//! workgroup (`shaders/layernorm_record.wgsl`), every row's sums verified, row 0's workgroup
//! decoded and compared with the scene's simulation, and the butterfly checked against the
//! production kernel's `subgroupAdd`.

use warpscope_core::layernorm::syncs::{SyncsOutput, SyncsParams};
use warpscope_core::layernorm::{EPS, forward_row};
use warpscope_core::simt::EventKind;
use warpscope_core::simt::shuffle::ShuffleMode;

use super::compare::{TraceComparison, ValueCheck};
use super::decode::{Op, Record, build_trace, parse};
use super::{
    REC_WORDS, Recording, SECOND_TENSOR, dropped_error, explain_butterfly, finish, need_subgroups,
    params_map, read_u32, size_range,
};
use crate::DeviceContext;
use crate::runner::{KernelError, Runner, u32_bytes};

const LAYERNORM: &str = crate::shaders::LAYERNORM_RECORD;
/// Most partials the layernorm recorder's shared array holds (`partial` in the shader).
const MAX_PARTIALS: u32 = 256;

/// Records the `layernorm-syncs` rewrite's block reduction (Σg, Σg·x̂ together) on `ctx`:
/// every row's sums verified, row 0's workgroup recorded, compared with the scene's simulation.
///
/// # Errors
/// [`KernelError::Core`] when core refuses the parameters; [`KernelError::InvalidOption`]
/// without subgroups or for a block with more subgroups than the shader's 256 partials;
/// shader, device and readback errors.
pub fn layernorm_syncs(ctx: &DeviceContext, p: &SyncsParams) -> Result<Recording, KernelError> {
    let kernel = "layernorm-syncs (recorded)";
    need_subgroups(ctx, kernel)?;
    let core_err = |e: warpscope_core::Error| KernelError::Core {
        kernel: kernel.into(),
        message: e.to_string(),
    };
    let sim: SyncsOutput = warpscope_core::layernorm::syncs::run(p).map_err(core_err)?;
    let (lo, _hi) = size_range(ctx);
    let wg = p.block;
    if wg.div_ceil(lo) > MAX_PARTIALS {
        return Err(KernelError::InvalidOption {
            name: "block".into(),
            value: wg.to_string(),
            expected: format!(
                "at most {MAX_PARTIALS} subgroups per workgroup (subgroups of {lo} lanes here)"
            ),
        });
    }
    let (rows, cols) = (p.rows, p.cols);
    let (x, dy, gamma, _) = warpscope_core::layernorm::formulas::inputs(rows, cols, p.seed);
    let f = |v: &[f64]| v.iter().map(|&a| a as f32).collect::<Vec<f32>>();
    let (x, dy, gamma) = (f(&x), f(&dy), f(&gamma));
    let (mut mu, mut rstd) = (Vec::with_capacity(rows), Vec::with_capacity(rows));
    for row in x.chunks(cols) {
        let s = forward_row::<f32>(row, EPS as f32);
        mu.push(s.mu);
        rstd.push(s.r);
    }
    let iters = (cols as u32).div_ceil(wg);
    let (lo, hi) = size_range(ctx);
    // loads, 2 partials, 2 checks, 4 per butterfly level, store, barrier, partials, 2 totals.
    let max_steps = 2 * iters + 4 + 4 * (hi.max(2).ilog2() + 1) + 2 + wg.div_ceil(lo) + 2;
    let slots = wg as usize * max_steps as usize;
    let r = Runner::new(ctx, "layernorm-syncs (recorded)");
    let params = r.uniform(
        "params",
        &[rows as u32, cols as u32, max_steps, SECOND_TENSOR],
    );
    let xb = r.storage("x", &x)?;
    let dyb = r.storage("∇y", &dy)?;
    let gb = r.storage("γ", &gamma)?;
    let mub = r.storage("μ", &mu)?;
    let rb = r.storage("r", &rstd)?;
    let sums = r.zeros("sums", 2 * rows)?;
    let rec = r.zeros("records", slots * REC_WORDS)?;
    let counters = r.storage_bytes("counters", &u32_bytes(&[0; 4]))?;
    let pipe = r.pipeline(LAYERNORM, "record_rows", &[("WG", f64::from(wg))])?;
    let d = vec![crate::runner::Dispatch {
        name: "record_rows".into(),
        bind_group: r.bind(
            &pipe,
            &[
                (0, &params),
                (1, &xb),
                (2, &dyb),
                (3, &gb),
                (4, &mub),
                (5, &rb),
                (6, &sums),
                (7, &rec),
                (8, &counters),
            ],
        ),
        pipeline: pipe,
        groups: [rows as u32, 1, 1],
        bytes_read: 0,
        bytes_written: 0,
    }];
    r.run_once(&d)?;
    let words = read_u32(&r, &rec, slots * REC_WORDS)?;
    let count = read_u32(&r, &counters, 4)?;
    if count[1] > 0 {
        return Err(dropped_error(kernel, count[1]));
    }
    let records = parse(&words, kernel)?;
    let describe = |rc: &Record, _n: u32| -> (EventKind, String) {
        let i = rc.arg;
        let v = if rc.tag == 3 || rc.tag == 5 { 1 } else { 0 };
        match rc.op {
            Op::GlobalLoad => (
                EventKind::GlobalLoad { width: 4 },
                format!(
                    "load {}, columns of iteration {i}",
                    if rc.tag == 0 { "x" } else { "∇y" }
                ),
            ),
            Op::ShuffleXor => (
                EventKind::Shuffle {
                    mode: ShuffleMode::Xor,
                    arg: i,
                },
                format!("v{v}: partner lane ^ {i}"),
            ),
            Op::Compute if rc.level == Some(0) => (
                EventKind::Compute,
                format!(
                    "v{v}: thread partial of {}",
                    if v == 0 { "Σg" } else { "Σg·x̂" }
                ),
            ),
            Op::Compute if rc.level.is_some() => {
                (EventKind::Compute, format!("v{v}: add partner's value"))
            }
            Op::Compute => (
                EventKind::Compute,
                format!("v{v} block: Σ of the {i} subgroup partials"),
            ),
            Op::SharedStore => (
                EventKind::SharedStore { width: 8 },
                format!("v0, v1: lane 0 → partial[{i}] (vec2)"),
            ),
            Op::SharedLoad => (
                EventKind::SharedLoad { width: 8 },
                format!("v0, v1 block: every lane reads partial[{i}] (vec2)"),
            ),
            Op::Barrier => (
                EventKind::Barrier { index: i },
                "workgroupBarrier: partials visible to every invocation".into(),
            ),
            _ => (EventKind::GlobalStore { width: 4 }, "store".into()),
        }
    };
    let trace = build_trace(
        &records,
        0,
        "ker_ln_bw_dinp reduction (instrumented WGSL: butterfly per subgroup, one barrier)",
        &ctx.report.name,
        wg,
        &describe,
    )?;
    let got = r.read_f32(&sums, 2 * rows)?;
    let mut values = Vec::new();
    let wide = |v: &[f32]| v.iter().map(|&a| f64::from(a)).collect::<Vec<f64>>();
    let g64: Vec<f64> = wide(&gamma);
    for row in 0..rows {
        let span = row * cols..(row + 1) * cols;
        let (xr, dyr) = (wide(&x[span.clone()]), wide(&dy[span]));
        let (_, xh) = warpscope_core::layernorm::reference_row(&xr, &dyr, &g64, EPS);
        let g: Vec<f64> = dyr.iter().zip(&g64).map(|(d, c)| d * c).collect();
        let sum_abs_g: f64 = g.iter().map(|v| v.abs()).sum();
        let sum_abs_gx: f64 = g.iter().zip(&xh).map(|(a, b)| (a * b).abs()).sum();
        let reference = sim.fused_sums_reference[row];
        let simulated = sim.fused_sums[row];
        values.push(ValueCheck::new(
            &format!("Σg (row {row})"),
            f64::from(simulated[0]),
            f64::from(got[2 * row]),
            reference[0],
            cols,
            sum_abs_g,
        ));
        values.push(ValueCheck::new(
            &format!("Σg·x̂ (row {row})"),
            f64::from(simulated[1]),
            f64::from(got[2 * row + 1]),
            reference[1],
            cols,
            sum_abs_gx,
        ));
    }
    // The butterfly vs the production kernel's subgroupAdd, per subgroup of row 0.
    let mut checks = Vec::new();
    let mut worst = 0.0f64;
    for c in records
        .iter()
        .filter(|r| r.op == Op::Check && r.workgroup == 0)
    {
        let tag = c.tag;
        let level_max = records
            .iter()
            .filter(|r| {
                r.workgroup == 0
                    && r.op == Op::Compute
                    && r.tag == tag
                    && r.subgroup == c.subgroup
                    && r.lane == c.lane
                    && r.level.is_some_and(|l| l > 0)
            })
            .max_by_key(|r| r.level);
        if let Some(b) = level_max {
            worst = worst.max((f64::from(b.value) - f64::from(c.value)).abs());
        }
    }
    checks.push(format!(
        "butterfly result vs subgroupAdd (the production kernel's op), every lane of row 0: \
         max |difference| {worst:.1e}"
    ));
    let size = trace.warp_size;
    let n_sg = wg.div_ceil(size);
    let explanation = format!(
        "{}; the block of {wg} threads is {n_sg} subgroup(s) whose partials meet in shared \
         memory after one barrier (every invocation adds them), where the simulated LightSeq \
         blockReduce uses 2 barriers (warp 0 reduces the partials, then broadcasts)",
        explain_butterfly(size, &ctx.report.name, None)
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
        records.len(),
        trace,
        comparison,
        checks,
    )
}
