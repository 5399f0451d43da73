//! Recording: instrumented variants of two reductions whose invocations write what they
//! executed to a storage buffer, decoded into [`warpscope_core::simt::Trace`] so the views can
//! replay "recorded on <adapter>" beside "simulated (32-lane warps)".
//!
//! - `softmax-warp` ([`softmax_warp`], `shaders/softmax_record.wgsl`): one row, one subgroup,
//!   `ker_attn_softmax_bw`'s loads, partial sums, shuffle-xor butterfly and ∇x stores;
//! - `layernorm-syncs` ([`layernorm_syncs`], `shaders/layernorm_record.wgsl`): the rewrite's
//!   reduction of (Σg, Σg·x̂) in one workgroup of the scene's block size: a butterfly per
//!   subgroup, one partial per subgroup in shared memory, one barrier, partials added.
//!
//! ## Record layout
//! Each invocation owns `max_steps` slots of [`REC_WORDS`] little-endian `u32` words (36 bytes),
//! slot `local_invocation_index · max_steps + step`; a slot never written stays zero:
//!
//! | word | content |
//! |---|---|
//! | 0 | ticket + 1: an `atomicAdd` on a device counter, i.e. the order the records were made (0 = empty slot) |
//! | 1 | step: the kernel's program-order step, the same in every lane of a subgroup |
//! | 2 | op (bits 0–7, [`Op`]) · level (bits 8–15; 255 = none) · tag (bits 16–31: which value) |
//! | 3 | arg: slot index, xor mask, barrier index, partial index |
//! | 4 | `workgroup_id.x` |
//! | 5 | `subgroup_id` (bits 0–15) · `subgroup_size` (bits 16–31) |
//! | 6 | `subgroup_invocation_id` (lane, bits 0–15) · `local_invocation_index` (bits 16–31) |
//! | 7 | byte address touched (global or shared); for shuffles the partner lane as the device computed it (`subgroupShuffleXor(lane, mask)`); `u32::MAX` = none |
//! | 8 | the value (f32 bits): loaded, received from the partner, partial after the level, stored |
//!
//! A second buffer holds the ticket counter and the number of records dropped (a step past
//! `max_steps`; the decoder refuses a trace with drops).
//!
//! ## Decoding
//! Records of workgroup 0 are grouped by (subgroup, step): one group is one warp-wide
//! [`Event`](warpscope_core::simt::Event); a lane with no record at that step was inactive. The event's kind, width and
//! label come from the op and tag; its `seq` is the rank of its smallest ticket, so the
//! timeline is the order the device made the records (subgroups interleave as they ran). The
//! trace's warp width is the `subgroup_size` the device reported in the records. Costs (global
//! sectors, shared wavefronts) are derived from the recorded addresses by core's rules — the
//! same rules the simulation uses — not measured.
//!
//! Layout: `decode` parses the record buffer and builds the trace ([`parse`],
//! [`build_trace`]); `compare` sets it beside the simulation ([`TraceComparison`]); `softmax`
//! and `layernorm` are the two recorders; this module holds what they share and
//! [`record_scene`].

mod compare;
mod decode;
mod layernorm;
mod softmax;

use std::collections::BTreeMap;

use serde::Serialize;
use warpscope_core::layernorm::syncs::SyncsParams;
use warpscope_core::simt::Trace;
use warpscope_core::simt::trace::TraceSummary;
use warpscope_core::softmax::warp::WarpParams;

use crate::runner::{KernelError, Runner};
use crate::{AdapterReport, DeviceContext};

pub use compare::{TraceComparison, ValueCheck};
pub use decode::{Op, Record, build_trace, parse};
pub use layernorm::layernorm_syncs;
pub use softmax::softmax_warp;

/// 32-bit words per record (36 bytes).
pub const REC_WORDS: usize = 9;
/// Byte offset the recorded addresses give the second input tensor (y, ∇y), so the two
/// tensors' addresses do not overlap in the trace (as the simulation places them).
const SECOND_TENSOR: u32 = 1 << 24;
/// Byte offset of the softmax output tensor ∇x.
const THIRD_TENSOR: u32 = 2 << 24;

/// A recording of one scene's reduction on the adapter, decoded and compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Recording {
    /// The scene (`softmax-warp`, `layernorm-syncs`).
    pub scene: String,
    /// The scene's parameters it was recorded with (`key → value`).
    pub parameters: BTreeMap<String, String>,
    /// The adapter.
    pub adapter: AdapterReport,
    /// Lanes per subgroup the device ran (from the records).
    pub subgroup_size: u32,
    /// Raw records decoded (all workgroups, checks included).
    pub records: usize,
    /// Records dropped for want of slots (0, or the trace is refused).
    pub dropped: u32,
    /// Totals of the recorded trace.
    pub summary: TraceSummary,
    /// Recorded vs simulated.
    pub comparison: TraceComparison,
    /// Extra checks (e.g. the butterfly vs the production kernel's `subgroupAdd`), one line each.
    pub checks: Vec<String>,
    /// Every reduced value within tolerance of the f64 reference.
    pub verified: bool,
    /// The recorded trace.
    #[serde(skip)]
    pub trace: Trace,
}

pub(super) fn need_subgroups(ctx: &DeviceContext, kernel: &str) -> Result<(), KernelError> {
    if ctx.report.subgroups {
        Ok(())
    } else {
        Err(KernelError::InvalidOption {
            name: "record".into(),
            value: kernel.to_owned(),
            expected: format!(
                "an adapter with subgroup operations: {} ({}) has none, so there are no \
                 subgroups to record",
                ctx.report.name, ctx.report.backend
            ),
        })
    }
}

pub(super) fn read_u32(r: &Runner, buf: &wgpu::Buffer, n: usize) -> Result<Vec<u32>, KernelError> {
    Ok(r.read_f32(buf, n)?.into_iter().map(f32::to_bits).collect())
}

/// The subgroup sizes to provision slots for: (smallest, largest), at least 1.
pub(super) fn size_range(ctx: &DeviceContext) -> (u32, u32) {
    let lo = ctx.report.subgroup_min_size.max(1);
    (lo, ctx.report.subgroup_max_size.max(lo))
}

pub(super) fn dropped_error(kernel: &str, dropped: u32) -> KernelError {
    KernelError::Readback {
        kernel: kernel.to_owned(),
        message: format!(
            "{dropped} records did not fit the slots provisioned for the adapter's reported \
             subgroup sizes; the recording is incomplete"
        ),
    }
}

/// Why the butterflies differ; `row_len` = Some(L) when one subgroup reduces a row of L
/// (each lane first sums ⌈L/size⌉ elements).
pub(super) fn explain_butterfly(size: u32, adapter: &str, row_len: Option<u32>) -> String {
    if size == 32 {
        return format!(
            "{adapter} runs 32-lane subgroups like CUDA warps: the same log2 32 = 5 butterfly \
             levels; values differ only by summation order"
        );
    }
    let levels = size.max(1).ilog2();
    match row_len {
        Some(l) => format!(
            "{adapter} runs subgroups of {size} lanes, not 32: each lane first sums {} elements \
             (a 32-lane warp's lane, {}), then a butterfly of log2 {size} = {levels} levels \
             instead of 5",
            l.div_ceil(size.max(1)),
            l.div_ceil(32)
        ),
        None => format!(
            "{adapter} runs subgroups of {size} lanes, not 32: each butterfly has log2 {size} = \
             {levels} levels instead of 5"
        ),
    }
}

pub(super) fn params_map(kv: &[(&str, String)]) -> BTreeMap<String, String> {
    kv.iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect()
}

pub(super) fn finish(
    scene: &str,
    parameters: BTreeMap<String, String>,
    ctx: &DeviceContext,
    records: usize,
    trace: Trace,
    comparison: TraceComparison,
    checks: Vec<String>,
) -> Result<Recording, KernelError> {
    Ok(Recording {
        scene: scene.to_owned(),
        parameters,
        adapter: ctx.report.clone(),
        subgroup_size: trace.warp_size,
        records,
        dropped: 0,
        summary: trace.summary(),
        verified: comparison.values.iter().all(|v| v.recorded_ok),
        comparison,
        checks,
        trace,
    })
}

/// Records scene `scene` (`softmax-warp` or `layernorm-syncs`) at `values`.
///
/// # Errors
/// [`KernelError::InvalidOption`] for a scene without a recorded variant; the recorders'
/// errors; [`KernelError::Core`] for parameters core refuses.
pub fn record_scene(
    ctx: &DeviceContext,
    scene: &str,
    values: &warpscope_core::params::ParamValues,
) -> Result<Recording, KernelError> {
    let core_err = |e: warpscope_core::Error| KernelError::Core {
        kernel: scene.to_owned(),
        message: e.to_string(),
    };
    match scene {
        "softmax-warp" => softmax_warp(ctx, &WarpParams::from_values(values).map_err(core_err)?),
        "layernorm-syncs" => {
            layernorm_syncs(ctx, &SyncsParams::from_values(values).map_err(core_err)?)
        }
        _ => Err(KernelError::InvalidOption {
            name: "scene".into(),
            value: scene.to_owned(),
            expected: format!(
                "a scene with a recorded variant: {}",
                RECORDED_SCENES.join(", ")
            ),
        }),
    }
}

/// Scenes with a recorded variant.
pub const RECORDED_SCENES: &[&str] = &["softmax-warp", "layernorm-syncs"];

/// The recorded scene beside kernel `kernel` (`softmax-bw` → `softmax-warp`, `layernorm-bw` →
/// `layernorm-syncs`).
pub fn scene_for_kernel(kernel: &str) -> Option<&'static str> {
    match kernel {
        "softmax-bw" => Some("softmax-warp"),
        "layernorm-bw" => Some("layernorm-syncs"),
        _ => None,
    }
}
