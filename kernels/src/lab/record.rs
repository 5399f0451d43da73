//! Recording a lab kernel on the adapter: the kernel instrumented by
//! [`warpscope_core::lab::record::instrument`], run with the dispatch's buffers plus the record
//! buffer, decoded into a trace and per-line counters, and compared with the plain run's
//! buffers and with a simulation at the adapter's subgroup size.
//!
//! The record buffer is bounded before the recording dispatch: a counting dispatch (the
//! instrumented kernel with room for no record) learns how many records the kernel appends;
//! past [`RecordOptions::max_records`] the recording is refused with the numbers. Should a
//! later run append more than it counted, the shader's guard drops the surplus and
//! [`Recorded::dropped`] says how many.

use std::collections::BTreeMap;

use serde::Serialize;
use warpscope_core::lab::dispatch::{
    Binding, BufferData, BufferInit, Dispatch, ElementType, ScalarType,
};
use warpscope_core::lab::output::{BufferOut, LineCounters};
use warpscope_core::lab::record::decode::{self, Comparison, Decoded, Record};
use warpscope_core::lab::record::{Instrumented, RECORD_WORDS, Scope, instrument_with};
use warpscope_core::simt::Trace;

use super::{GpuRun, LabError, RunOptions, run};
use crate::DeviceContext;

/// Records one recording may hold by default (44 bytes each: 176 MiB).
pub const MAX_RECORDS: u64 = 1 << 22;

/// How [`record`] records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordOptions {
    /// The most records the record buffer may hold; a kernel needing more is refused.
    pub max_records: u64,
}

impl Default for RecordOptions {
    fn default() -> Self {
        RecordOptions {
            max_records: MAX_RECORDS,
        }
    }
}

/// `result.recorded` of `run kernel-lab --record`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Recorded {
    /// The adapter's name.
    pub adapter: String,
    /// The subgroup size the records report (`subgroup_size` builtin).
    pub subgroup_size: u32,
    /// Records the kernel appended.
    pub records: u64,
    /// Records past the buffer's capacity, not written.
    pub dropped: u64,
    /// Workgroup-memory accesses the pass could not instrument.
    pub unrecorded: u32,
    /// Whether every writable buffer of the instrumented run equals the plain run's, bit for
    /// bit.
    pub buffers_equal: bool,
    /// Per line, the counters computed from the recorded addresses (shared requests,
    /// wavefronts, ideal wavefronts, atomics, subgroup ops).
    pub lines: Vec<LineCounters>,
    /// Against the simulation at [`Recorded::subgroup_size`].
    pub comparison: Comparison,
    /// Workgroup 0's recorded events.
    #[serde(skip)]
    pub trace: Trace,
}

fn record_buffer(words: u64) -> BufferInit {
    BufferInit {
        ty: ElementType {
            scalar: ScalarType::U32,
            components: 1,
        },
        data: BufferData::Fill {
            len: words,
            fill: warpscope_core::lab::dispatch::Fill::Value(0.0),
        },
    }
}

fn words_of(run: &GpuRun, at: Binding) -> Vec<u32> {
    run.buffers
        .get(&at)
        .map(|b| {
            b.values
                .iter()
                .map(|e| e.0.first().copied().unwrap_or(0.0) as u32)
                .collect()
        })
        .unwrap_or_default()
}

/// A recording before any simulation: what [`record`] compares, and what the scenes' recorded
/// views ([`crate::record`]) read their values from.
#[derive(Debug, Clone, PartialEq)]
pub struct Raw {
    /// The instrumented module (its sites name what each record is).
    pub inst: Instrumented,
    /// Every record written, in buffer order (all workgroups).
    pub records: Vec<Record>,
    /// The records decoded: counters per line, workgroup 0's trace.
    pub decoded: Decoded,
    /// The recording run's writable buffers (the record buffer left out).
    pub buffers: BTreeMap<Binding, BufferOut>,
    /// Whether they equal the plain run's, bit for bit.
    pub buffers_equal: bool,
}

/// Records `source`'s entry point `entry` over `dispatch` on `ctx`: a plain run, a counting
/// run, the recording run, and a simulation at the recorded subgroup size.
///
/// # Errors
/// As [`record_raw`]; [`LabError::Input`] when the simulation at the adapter's subgroup size
/// fails (its message).
pub fn record(
    source: &str,
    entry: Option<&str>,
    dispatch: &Dispatch,
    ctx: &DeviceContext,
    opts: &RecordOptions,
) -> Result<Recorded, LabError> {
    let raw = record_raw(source, entry, dispatch, ctx, opts, Scope::default())?;
    let decoded = raw.decoded;
    let sg = if decoded.subgroup_size > 0 {
        decoded.subgroup_size
    } else {
        ctx.report.subgroup_max_size
    };
    let options = warpscope_core::lab::Options {
        overrides: dispatch.overrides.clone(),
        ..Default::default()
    };
    let sim = warpscope_core::lab::simulate_with(source, entry, sg, dispatch, &options)
        .map_err(|e| LabError::Input(format!("the simulation at subgroup size {sg}: {e}")))?;
    let comparison = decode::compare(&decoded, &sim.lines, &sim.trace);
    Ok(Recorded {
        adapter: ctx.report.name.clone(),
        subgroup_size: sg,
        records: decoded.records,
        dropped: decoded.dropped,
        unrecorded: raw.inst.unrecorded,
        buffers_equal: raw.buffers_equal,
        lines: decoded.lines,
        comparison,
        trace: decoded.trace,
    })
}

/// The plain run, the counting run and the recording run of `source`'s entry point `entry`
/// instrumented for `scope`, decoded; no simulation.
///
/// # Errors
/// As [`run`]; [`LabError::Input`] when the kernel cannot be instrumented, or when its records
/// would pass `opts.max_records` (the records it needs, their bytes and the limit), refused
/// before the recording dispatch.
pub fn record_raw(
    source: &str,
    entry: Option<&str>,
    dispatch: &Dispatch,
    ctx: &DeviceContext,
    opts: &RecordOptions,
    scope: Scope,
) -> Result<Raw, LabError> {
    let inst = instrument_with(source, entry, scope).map_err(|e| LabError::Input(e.to_string()))?;
    let once = RunOptions { runs: 1 };
    let plain = run(source, entry, dispatch, ctx, once)?;
    let mut counting = dispatch.clone();
    counting.buffers.insert(inst.binding, record_buffer(1));
    let counted = run(&inst.source, Some(&inst.entry), &counting, ctx, once)?;
    let needed = u64::from(
        words_of(&counted, inst.binding)
            .first()
            .copied()
            .unwrap_or(0),
    );
    if needed > opts.max_records {
        return Err(LabError::Input(format!(
            "recording needs {needed} records ({} bytes); the limit is {} records",
            needed * u64::from(RECORD_WORDS) * 4,
            opts.max_records
        )));
    }
    let mut recording = dispatch.clone();
    recording.buffers.insert(
        inst.binding,
        record_buffer(1 + needed * u64::from(RECORD_WORDS)),
    );
    let mut rec = run(&inst.source, Some(&inst.entry), &recording, ctx, once)?;
    let words = words_of(&rec, inst.binding);
    rec.buffers.remove(&inst.binding);
    let buffers_equal = rec.buffers == plain.buffers;
    let threads = inst.workgroup_size.iter().product();
    let adapter = ctx.report.name.clone();
    let bad = |e: warpscope_core::Error| LabError::Input(e.to_string());
    let (records, counter, dropped) = decode::records(&words, &inst.sites).map_err(bad)?;
    let decoded = decode::decode_records(
        records.clone(),
        counter,
        dropped,
        &inst.sites,
        &inst.entry,
        &adapter,
        threads,
        source,
    )
    .map_err(bad)?;
    Ok(Raw {
        inst,
        records,
        decoded,
        buffers: rec.buffers,
        buffers_equal,
    })
}
