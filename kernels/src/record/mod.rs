//! Recording the scenes' reductions: the lecture's own shaders, instrumented by the kernel
//! lab's record pass ([`crate::lab::record::record_raw`] over
//! [`warpscope_core::lab::record::instrument_with`], storage loads and stores included), run on
//! the adapter with the scene's data, and their records decoded into a
//! [`warpscope_core::simt::Trace`] so the views can replay "recorded on <adapter>" beside
//! "simulated (32-lane warps)". One mechanism records everything: no shader here is written
//! for recording.
//!
//! - `softmax-warp` ([`softmax_warp`]): `shaders/softmax_sg.wgsl`'s `fused` on one row of the
//!   scene's seeded input (no dropout: every mask byte 1, scale 1): one subgroup loads the row
//!   (∇y, the mask word, y), sums Σ∇y·y with a shuffle-xor butterfly, and stores ∇x;
//! - `layernorm-syncs` ([`layernorm_syncs`]): `shaders/layernorm_fused_sg.wgsl` with its `WG`
//!   set to the scene's block, one row per workgroup: one `subgroupAdd` of (Σg, Σg·x̂) per
//!   subgroup, one partial per subgroup in shared memory, one barrier, partials added.
//!
//! The trace's warp width is the `subgroup_size` the device reported in the records; its costs
//! (global sectors, shared wavefronts) are derived from the recorded addresses by core's rules
//! — the same rules the simulation uses — not measured. The reduced values are read from the
//! records (the butterfly's last level, the `subgroupAdd` results) and checked against f64
//! sums ([`TraceComparison`]).

mod compare;
mod layernorm;
mod softmax;

use std::collections::BTreeMap;

use serde::Serialize;
use warpscope_core::layernorm::syncs::SyncsParams;
use warpscope_core::simt::Trace;
use warpscope_core::simt::trace::TraceSummary;
use warpscope_core::softmax::warp::WarpParams;

use warpscope_core::lab::dispatch::{
    Binding, BufferData, BufferInit, Dispatch, ElementType, ScalarType,
};
use warpscope_core::lab::record::Scope;

use crate::lab::LabError;
use crate::lab::record::{Raw, RecordOptions, record_raw};
use crate::runner::KernelError;
use crate::{AdapterReport, DeviceContext};

pub use compare::{TraceComparison, ValueCheck};
pub use layernorm::layernorm_syncs;
pub use softmax::softmax_warp;

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
    /// Records the instrumented kernel appended (all workgroups).
    pub records: u64,
    /// Records dropped for want of room (0, or the recording is refused).
    pub dropped: u64,
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

/// A buffer of `ty` elements holding `values` (components element after element).
pub(super) fn values(scalar: ScalarType, values: Vec<f64>) -> BufferInit {
    BufferInit {
        ty: ElementType {
            scalar,
            components: 1,
        },
        data: BufferData::Values(values),
    }
}

/// `len` zeros of f32 (an output buffer).
pub(super) fn zeros(len: u64) -> BufferInit {
    BufferInit {
        ty: ElementType {
            scalar: ScalarType::F32,
            components: 1,
        },
        data: BufferData::Fill {
            len,
            fill: warpscope_core::lab::dispatch::Fill::Value(0.0),
        },
    }
}

/// Group 0's binding `b`.
pub(super) fn at(binding: u32) -> Binding {
    Binding { group: 0, binding }
}

/// Records `entry` of the lecture's shader `source` over `dispatch` with storage loads and
/// stores; a recording that dropped records or whose buffers differ from the plain run's is
/// refused.
pub(super) fn record_lecture(
    ctx: &DeviceContext,
    kernel: &str,
    source: &str,
    entry: Option<&str>,
    dispatch: &Dispatch,
) -> Result<Raw, KernelError> {
    let raw = record_raw(
        source,
        entry,
        dispatch,
        ctx,
        &RecordOptions::default(),
        Scope { global: true },
    )
    .map_err(|e| match e {
        LabError::Kernel(k) => k,
        LabError::Input(message) => KernelError::Core {
            kernel: kernel.to_owned(),
            message,
        },
        e @ LabError::Unsupported { .. } => KernelError::InvalidOption {
            name: "record".into(),
            value: kernel.to_owned(),
            expected: e.to_string(),
        },
    })?;
    let readback = |message: String| KernelError::Readback {
        kernel: kernel.to_owned(),
        message,
    };
    if raw.decoded.dropped > 0 {
        return Err(readback(format!(
            "{} of {} records did not fit the record buffer; the recording is incomplete",
            raw.decoded.dropped, raw.decoded.records
        )));
    }
    if !raw.buffers_equal {
        return Err(readback(
            "the instrumented kernel's buffers differ from the plain run's".to_owned(),
        ));
    }
    if raw.decoded.trace.warps.is_empty() {
        return Err(readback("workgroup 0 wrote no records".to_owned()));
    }
    Ok(raw)
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
    records: u64,
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
