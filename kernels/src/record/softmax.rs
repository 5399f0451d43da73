//! The `softmax-warp` recorder: the lecture's `ker_attn_softmax_bw` (`shaders/softmax_sg.wgsl`,
//! entry `fused`) on one row of the scene's seeded input, instrumented by the record pass,
//! compared with the scene's simulation, with the device's ∇x checked against the simulation's.

use warpscope_core::lab::dispatch::{Dispatch, ScalarType};
use warpscope_core::simt::EventKind;
use warpscope_core::simt::shuffle::Source;
use warpscope_core::softmax::warp::{WarpOutput, WarpParams};

use super::compare::{TraceComparison, ValueCheck};
use super::{
    Recording, at, explain_butterfly, finish, need_subgroups, params_map, record_lecture, values,
    zeros,
};
use crate::DeviceContext;
use crate::runner::KernelError;

/// Every mask byte 1 (kept), four to a word: the scene has no dropout.
const KEEP_ALL: u32 = 0x0101_0101;

/// The butterfly's result in every lane, from the last level's records: lane `l` received
/// `r_l`, its partner's sum before the level, and its partner received lane `l`'s, so lane
/// `l` ends with `r_partner + r_l` — f32 addition commutes, so this is the device's sum bit
/// for bit. `None` when the trace has no shuffle.
fn butterfly_result(trace: &warpscope_core::simt::Trace) -> Option<Vec<f32>> {
    let last = trace
        .warps
        .first()?
        .events
        .iter()
        .rfind(|e| matches!(e.kind, EventKind::Shuffle { .. }))?;
    let got = |l: usize| last.lanes.get(l).and_then(|x| x.value).map(|v| v as f32);
    Some(
        last.lanes
            .iter()
            .enumerate()
            .filter(|(_, x)| x.active)
            .filter_map(|(l, x)| match x.source {
                Some(Source::Lane(p)) => Some(got(p as usize)? + got(l)?),
                _ => None,
            })
            .collect(),
    )
}

/// Records `ker_attn_softmax_bw` on one row of the `softmax-warp` scene (same seeded row, as
/// stored in T, uploaded as f32) on `ctx`, and compares it with the scene's simulation.
///
/// # Errors
/// [`KernelError::Core`] when core refuses the parameters or the pass the shader;
/// [`KernelError::InvalidOption`] without subgroups; shader, device and readback errors, and
/// [`KernelError::Readback`] for a recording that dropped records or changed the results.
pub fn softmax_warp(ctx: &DeviceContext, p: &WarpParams) -> Result<Recording, KernelError> {
    let kernel = "softmax-warp (recorded)";
    need_subgroups(ctx, kernel)?;
    let sim: WarpOutput = warpscope_core::softmax::warp::run(p).map_err(|e| KernelError::Core {
        kernel: kernel.into(),
        message: e.to_string(),
    })?;
    let cols = sim.len;
    let wide = |v: &[f32]| v.iter().map(|&a| f64::from(a)).collect::<Vec<f64>>();
    let mut dispatch = Dispatch {
        workgroups: [1, 1, 1],
        buffers: Default::default(),
        seed: 0,
        overrides: Default::default(),
    };
    let b = &mut dispatch.buffers;
    // Params: rows, cols, scale (f32 bits of 1), padding.
    let params = [1, cols, 1.0f32.to_bits(), 0].map(f64::from).to_vec();
    b.insert(at(0), values(ScalarType::U32, params));
    b.insert(at(1), values(ScalarType::F32, wide(&sim.dy)));
    let mask = vec![f64::from(KEEP_ALL); cols.div_ceil(4) as usize];
    b.insert(at(2), values(ScalarType::U32, mask));
    b.insert(at(3), values(ScalarType::F32, wide(&sim.y)));
    b.insert(at(4), zeros(u64::from(cols)));
    let source = crate::shaders::SOFTMAX_SG;
    let raw = record_lecture(ctx, kernel, source, Some("fused"), &dispatch)?;
    let mut trace = raw.decoded.trace;
    let size = trace.warp_size;
    trace.kernel = warpscope_core::text::Text::new(
        format!(
            "ker_attn_softmax_bw (softmax_sg.wgsl `fused`, instrumented; one row per subgroup of {size})"
        ),
        format!(
            "ker_attn_softmax_bw（softmax_sg.wgsl `fused`，已插桩；每个 {size} lane 的子组处理一行）"
        ),
    );
    let finals = butterfly_result(&trace).unwrap_or_default();
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
    let dx: Vec<f64> = raw
        .buffers
        .get(&at(4))
        .map(|o| {
            o.values
                .iter()
                .map(|e| e.0.first().copied().unwrap_or(f64::NAN))
                .collect()
        })
        .unwrap_or_default();
    let dx_diff = dx
        .iter()
        .zip(&sim.dx)
        .map(|(a, b)| (a - f64::from(*b)).abs())
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
        raw.decoded.records,
        trace,
        comparison,
        checks,
    )
}
