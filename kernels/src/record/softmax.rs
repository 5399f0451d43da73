//! The `softmax-warp` recorder: `ker_attn_softmax_bw` on one row of the scene's seeded input,
//! instrumented (`shaders/softmax_record.wgsl`), decoded and compared with the scene's
//! simulation, with the device's ∇x checked against the simulation's.

use warpscope_core::simt::EventKind;
use warpscope_core::simt::shuffle::ShuffleMode;
use warpscope_core::softmax::warp::{WarpOutput, WarpParams};

use super::compare::{TraceComparison, ValueCheck};
use super::decode::{Op, Record, build_trace, parse};
use super::{
    REC_WORDS, Recording, SECOND_TENSOR, THIRD_TENSOR, dropped_error, explain_butterfly, finish,
    need_subgroups, params_map, read_u32, size_range,
};
use crate::DeviceContext;
use crate::runner::{KernelError, Runner, u32_bytes};

const SOFTMAX: &str = crate::shaders::SOFTMAX_RECORD;
/// Workgroup size of the softmax recorder (one subgroup of it does the row).
const SOFTMAX_WG: u32 = 128;

/// Records `ker_attn_softmax_bw` on one row of the `softmax-warp` scene (same seeded row, as
/// stored in T, uploaded as f32) on `ctx`, and compares it with the scene's simulation.
///
/// # Errors
/// [`KernelError::Core`] when core refuses the parameters; [`KernelError::InvalidOption`]
/// without subgroups; shader, device and readback errors.
pub fn softmax_warp(ctx: &DeviceContext, p: &WarpParams) -> Result<Recording, KernelError> {
    let kernel = "softmax-warp (recorded)";
    need_subgroups(ctx, kernel)?;
    let sim: WarpOutput = warpscope_core::softmax::warp::run(p).map_err(|e| KernelError::Core {
        kernel: kernel.into(),
        message: e.to_string(),
    })?;
    let cols = sim.len;
    let (lo, hi) = size_range(ctx);
    let iters = cols.div_ceil(lo);
    let max_steps = 5 * iters + 2 * (hi.max(2).ilog2() + 1);
    let r = Runner::new(ctx, "softmax-warp (recorded)");
    let slots = SOFTMAX_WG as usize * max_steps as usize;
    let params = r.uniform("params", &[cols, max_steps, SECOND_TENSOR, THIRD_TENSOR]);
    let grad = r.storage("∇y", &sim.dy)?;
    let inp = r.storage("y", &sim.y)?;
    let dx = r.zeros("∇x", cols as usize)?;
    let rec = r.zeros("records", slots * REC_WORDS)?;
    let counters = r.storage_bytes("counters", &u32_bytes(&[0; 4]))?;
    let pipe = r.pipeline(SOFTMAX, "record_row", &[])?;
    let d = vec![crate::runner::Dispatch {
        name: "record_row".into(),
        bind_group: r.bind(
            &pipe,
            &[
                (0, &params),
                (1, &grad),
                (2, &inp),
                (3, &dx),
                (4, &rec),
                (5, &counters),
            ],
        ),
        pipeline: pipe,
        groups: [1, 1, 1],
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
    let describe = |rc: &Record, n: u32| -> (EventKind, String) {
        let i = rc.arg;
        match (rc.op, rc.tag) {
            (Op::GlobalLoad, 0) => (
                EventKind::GlobalLoad { width: 4 },
                format!("grad_reg[{i}] = grad[{i}·{n}]"),
            ),
            (Op::GlobalLoad, _) => (
                EventKind::GlobalLoad { width: 4 },
                format!("inp_reg[{i}] = inp[{i}·{n}]"),
            ),
            (Op::ShuffleXor, _) => (
                EventKind::Shuffle {
                    mode: ShuffleMode::Xor,
                    arg: i,
                },
                format!("Σ∇y·y: partner lane ^ {i}"),
            ),
            (Op::Compute, 2) if rc.level == Some(0) => (
                EventKind::Compute,
                format!("sum += grad_reg[{i}] · inp_reg[{i}]"),
            ),
            (Op::Compute, 2) => (EventKind::Compute, "Σ∇y·y: add partner's value".into()),
            (Op::Compute, _) => (
                EventKind::Compute,
                format!("∇x = inp_reg[{i}] · (grad_reg[{i}] − sum)"),
            ),
            _ => (
                EventKind::GlobalStore { width: 4 },
                format!("dx[{i}·{n}] = ∇x"),
            ),
        }
    };
    let size = records.first().map_or(0, |r| r.subgroup_size);
    let trace = build_trace(
        &records,
        0,
        &format!("ker_attn_softmax_bw (instrumented WGSL, one row per subgroup of {size})"),
        &ctx.report.name,
        size,
        &describe,
    )?;
    // The reduced value every lane holds after the last level, as the device wrote it.
    let finals: Vec<f32> = trace
        .warps
        .iter()
        .flat_map(|w| &w.events)
        .rfind(|e| e.kind == EventKind::Compute && e.level.is_some_and(|l| l > 0))
        .map(|e| {
            e.lanes
                .iter()
                .filter_map(|l| l.value)
                .map(|v| v as f32)
                .collect()
        })
        .unwrap_or_default();
    let mut checks = Vec::new();
    let recorded = finals.first().copied().map_or(f64::NAN, f64::from);
    if finals.iter().any(|v| f64::from(*v) != recorded) {
        checks.push("lanes disagree on the butterfly's result".to_owned());
    }
    let abs_sum: f64 = sim
        .dy
        .iter()
        .zip(&sim.y)
        .map(|(a, b)| (f64::from(*a) * f64::from(*b)).abs())
        .sum();
    let values = vec![ValueCheck::new(
        "Σ∇y·y",
        f64::from(sim.dot),
        recorded,
        sim.dot_reference,
        cols as usize,
        abs_sum,
    )];
    let dxv = r.read_f32(&dx, cols as usize)?;
    let dx_diff = dxv
        .iter()
        .zip(&sim.dx)
        .map(|(a, b)| (f64::from(*a) - f64::from(*b)).abs())
        .fold(0.0, f64::max);
    checks.push(format!(
        "∇x written by the device vs the simulation's (stored as {}): max |difference| {dx_diff:.1e}",
        p.dtype.name()
    ));
    let explanation = explain_butterfly(size, &ctx.report.name, Some(cols));
    let comparison = TraceComparison::of(&sim.trace, &trace, values, explanation);
    finish(
        "softmax-warp",
        params_map(&[
            ("len", p.len.to_string()),
            ("dtype", p.dtype.name().to_owned()),
            ("device", p.device.clone()),
            ("seed", p.seed.to_string()),
        ]),
        ctx,
        records.len(),
        trace,
        comparison,
        checks,
    )
}
