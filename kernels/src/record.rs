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
//! [`Event`]; a lane with no record at that step was inactive. The event's kind, width and
//! label come from the op and tag; its `seq` is the rank of its smallest ticket, so the
//! timeline is the order the device made the records (subgroups interleave as they ran). The
//! trace's warp width is the `subgroup_size` the device reported in the records. Costs (global
//! sectors, shared wavefronts) are derived from the recorded addresses by core's rules — the
//! same rules the simulation uses — not measured.

use std::collections::BTreeMap;

use serde::Serialize;
use warpscope_core::layernorm::syncs::{SyncsOutput, SyncsParams};
use warpscope_core::layernorm::{EPS, forward_row};
use warpscope_core::simt::shared::BankConfig;
use warpscope_core::simt::shuffle::{ShuffleMode, Source};
use warpscope_core::simt::trace::{Lane, Metrics, Origin, TraceSummary, WarpTrace};
use warpscope_core::simt::{Event, EventKind, Trace, global};
use warpscope_core::softmax::warp::{WarpOutput, WarpParams};

use crate::runner::{KernelError, Runner, u32_bytes};
use crate::{AdapterReport, DeviceContext};

const SOFTMAX: &str = include_str!("shaders/softmax_record.wgsl");
const LAYERNORM: &str = include_str!("shaders/layernorm_record.wgsl");

/// 32-bit words per record (36 bytes).
pub const REC_WORDS: usize = 9;
/// Workgroup size of the softmax recorder (one subgroup of it does the row).
const SOFTMAX_WG: u32 = 128;
/// Byte offset the recorded addresses give the second input tensor (y, ∇y), so the two
/// tensors' addresses do not overlap in the trace (as the simulation places them).
const SECOND_TENSOR: u32 = 1 << 24;
/// Byte offset of the softmax output tensor ∇x.
const THIRD_TENSOR: u32 = 2 << 24;
/// Most partials the layernorm recorder's shared array holds (`partial` in the shader).
const MAX_PARTIALS: u32 = 256;

/// What a record says the invocation did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// Load from a storage buffer (global memory), 4 bytes.
    GlobalLoad,
    /// Store to a storage buffer, 4 bytes.
    GlobalStore,
    /// Load from workgroup (shared) memory.
    SharedLoad,
    /// Store to workgroup memory.
    SharedStore,
    /// `subgroupShuffleXor`.
    ShuffleXor,
    /// Register arithmetic; the value is the result.
    Compute,
    /// Arrival at `workgroupBarrier()`.
    Barrier,
    /// A check value (the production kernel's `subgroupAdd`), not an event.
    Check,
}

impl Op {
    fn from_code(c: u32) -> Option<Op> {
        Some(match c {
            1 => Op::GlobalLoad,
            2 => Op::GlobalStore,
            3 => Op::SharedLoad,
            4 => Op::SharedStore,
            5 => Op::ShuffleXor,
            6 => Op::Compute,
            7 => Op::Barrier,
            8 => Op::Check,
            _ => return None,
        })
    }
}

/// One decoded record.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Record {
    /// Order the device made it in (0 = first).
    pub ticket: u32,
    /// Program-order step (the same for every lane of one warp-wide instruction).
    pub step: u32,
    /// What was done.
    pub op: Op,
    /// Reduction level (0 = the thread's own partial, 1… = butterfly levels).
    pub level: Option<u32>,
    /// Which value (kernel-specific tag).
    pub tag: u32,
    /// Slot, xor mask, barrier or partial index.
    pub arg: u32,
    /// `workgroup_id.x`.
    pub workgroup: u32,
    /// `subgroup_id` within the workgroup.
    pub subgroup: u32,
    /// `subgroup_size` (lanes) as the invocation saw it.
    pub subgroup_size: u32,
    /// `subgroup_invocation_id`.
    pub lane: u32,
    /// `local_invocation_index`.
    pub local_index: u32,
    /// Byte address (memory ops) or partner lane (shuffles).
    pub address: Option<u32>,
    /// The value (f32).
    pub value: f32,
}

/// Parses a record buffer (`REC_WORDS` words per slot); empty slots are skipped.
///
/// # Errors
/// [`KernelError::Readback`] for an unknown op code (a corrupt buffer).
pub fn parse(words: &[u32], kernel: &str) -> Result<Vec<Record>, KernelError> {
    let mut out = Vec::new();
    for w in words.chunks_exact(REC_WORDS) {
        if w[0] == 0 {
            continue;
        }
        let op = Op::from_code(w[2] & 0xff).ok_or_else(|| KernelError::Readback {
            kernel: kernel.to_owned(),
            message: format!("record with unknown op code {}", w[2] & 0xff),
        })?;
        let level = (w[2] >> 8) & 0xff;
        out.push(Record {
            ticket: w[0] - 1,
            step: w[1],
            op,
            level: (level != 255).then_some(level),
            tag: w[2] >> 16,
            arg: w[3],
            workgroup: w[4],
            subgroup: w[5] & 0xffff,
            subgroup_size: w[5] >> 16,
            lane: w[6] & 0xffff,
            local_index: w[6] >> 16,
            address: (w[7] != u32::MAX).then_some(w[7]),
            value: f32::from_bits(w[8]),
        });
    }
    Ok(out)
}

/// How a kernel names its records: (event kind, label) for a record of a group.
type Describe<'a> = &'a dyn Fn(&Record, u32) -> (EventKind, String);

/// Builds a [`Trace`] from the records of `workgroup`: one warp per subgroup, one event per
/// (subgroup, step), lanes without a record inactive, `seq` = rank of the event's first ticket.
///
/// # Errors
/// [`KernelError::Readback`] when there are no records, or lanes disagree on the subgroup size.
pub fn build_trace(
    records: &[Record],
    workgroup: u32,
    kernel: &str,
    adapter: &str,
    block_threads: u32,
    describe: Describe,
) -> Result<Trace, KernelError> {
    let bad = |message: String| KernelError::Readback {
        kernel: kernel.to_owned(),
        message,
    };
    let mine: Vec<&Record> = records
        .iter()
        .filter(|r| r.workgroup == workgroup && r.op != Op::Check)
        .collect();
    let size = mine
        .first()
        .map(|r| r.subgroup_size)
        .ok_or_else(|| bad(format!("workgroup {workgroup} wrote no records")))?;
    if size == 0 || mine.iter().any(|r| r.subgroup_size != size) {
        return Err(bad(format!(
            "records disagree on the subgroup size (first {size}); a varying subgroup size \
             cannot be drawn as one warp width"
        )));
    }
    let mut groups: BTreeMap<(u32, u32), Vec<&Record>> = BTreeMap::new();
    for r in &mine {
        groups.entry((r.subgroup, r.step)).or_default().push(r);
    }
    // Order events by their first ticket.
    let mut order: Vec<(u32, (u32, u32))> = groups
        .iter()
        .map(|(k, rs)| (rs.iter().map(|r| r.ticket).min().unwrap_or(0), *k))
        .collect();
    order.sort_unstable();
    let seq_of: BTreeMap<(u32, u32), u64> = order
        .iter()
        .enumerate()
        .map(|(i, (_, k))| (*k, i as u64))
        .collect();
    let mut warps: BTreeMap<u32, Vec<Event>> = BTreeMap::new();
    for ((sg, step), rs) in &groups {
        let first = rs[0];
        let (kind, label) = describe(first, size);
        let mut lanes = vec![
            Lane {
                active: false,
                address: None,
                value: None,
                source: None,
            };
            size as usize
        ];
        for r in rs {
            let Some(l) = lanes.get_mut(r.lane as usize) else {
                return Err(bad(format!("lane {} ≥ subgroup size {size}", r.lane)));
            };
            l.active = true;
            match r.op {
                Op::ShuffleXor => {
                    l.source = Some(r.address.map_or(Source::Own, Source::Lane));
                    l.value = Some(f64::from(r.value));
                }
                Op::Barrier => {}
                Op::GlobalLoad | Op::GlobalStore | Op::SharedLoad | Op::SharedStore => {
                    l.address = r.address.map(u64::from);
                    l.value = Some(f64::from(r.value));
                }
                _ => l.value = Some(f64::from(r.value)),
            }
        }
        let addrs: Vec<Option<u64>> = lanes.iter().map(|l| l.address).collect();
        let metrics = match kind {
            EventKind::GlobalLoad { width } | EventKind::GlobalStore { width } => {
                let c = global::sectors(&addrs, width);
                Metrics {
                    sectors: Some(c.sectors),
                    ideal_sectors: Some(c.ideal_sectors),
                    ..Metrics::default()
                }
            }
            EventKind::SharedLoad { width } | EventKind::SharedStore { width } => {
                match BankConfig::default().request(&addrs, width) {
                    Ok(c) => Metrics {
                        wavefronts: Some(c.wavefronts),
                        ideal_wavefronts: Some(c.ideal_wavefronts),
                        conflict_degree: Some(c.conflict_degree),
                        ..Metrics::default()
                    },
                    Err(_) => Metrics::default(),
                }
            }
            _ => Metrics::default(),
        };
        warps.entry(*sg).or_default().push(Event {
            seq: seq_of.get(&(*sg, *step)).copied().unwrap_or(0),
            kind,
            label,
            level: first.level,
            lanes,
            metrics,
        });
    }
    Ok(Trace {
        kernel: kernel.to_owned(),
        origin: Origin::Recorded {
            adapter: adapter.to_owned(),
        },
        warp_size: size,
        block_threads,
        warps: warps
            .into_iter()
            .map(|(w, events)| WarpTrace { warp: w, events })
            .collect(),
    })
}

/// One reduced value: simulated, recorded and the f64 reference.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ValueCheck {
    /// What it is (`Σ∇y·y`, `Σg (row 0)`).
    pub name: String,
    /// The simulation's f32 result.
    pub simulated: f64,
    /// What the device computed (read back from the records / output).
    pub recorded: f64,
    /// f64 sum of the same f32 inputs.
    pub reference: f64,
    /// Allowed |value − reference|: max(1e-5, n·2⁻²⁴·Σ|terms|) + 1e-4·|reference| (f32
    /// recursive summation of n terms, either order).
    pub tolerance: f64,
    /// |recorded − reference| ≤ tolerance.
    pub recorded_ok: bool,
    /// |simulated − reference| ≤ tolerance.
    pub simulated_ok: bool,
    /// |recorded − simulated| (0 when the device summed in the simulation's order).
    pub recorded_minus_simulated: f64,
}

impl ValueCheck {
    fn new(
        name: &str,
        simulated: f64,
        recorded: f64,
        reference: f64,
        n: usize,
        abs_sum: f64,
    ) -> Self {
        let tolerance = 1e-5f64.max(n as f64 * 2f64.powi(-24) * abs_sum) + 1e-4 * reference.abs();
        ValueCheck {
            name: name.to_owned(),
            simulated,
            recorded,
            reference,
            tolerance,
            recorded_ok: (recorded - reference).abs() <= tolerance,
            simulated_ok: (simulated - reference).abs() <= tolerance,
            recorded_minus_simulated: recorded - simulated,
        }
    }
}

/// Recorded vs simulated, side by side: each figure counted on its trace.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceComparison {
    /// Lanes per warp in the simulation (32).
    pub simulated_warp_size: u32,
    /// Lanes per subgroup on the device (from the records).
    pub recorded_subgroup_size: u32,
    /// Warps of the simulated block.
    pub simulated_warps: usize,
    /// Subgroups that recorded.
    pub recorded_subgroups: usize,
    /// Butterfly levels per warp reduction in the simulation (largest shuffle level).
    pub simulated_levels: u32,
    /// Butterfly levels per subgroup reduction on the device.
    pub recorded_levels: u32,
    /// Shuffle instructions (warp-wide), simulation.
    pub simulated_shuffles: usize,
    /// Shuffle instructions (subgroup-wide), device.
    pub recorded_shuffles: usize,
    /// Block barriers, simulation.
    pub simulated_barriers: u32,
    /// Workgroup barriers, device.
    pub recorded_barriers: u32,
    /// Events (warp-wide instructions), simulation.
    pub simulated_events: usize,
    /// Events, device.
    pub recorded_events: usize,
    /// The reduced values.
    pub values: Vec<ValueCheck>,
    /// One line: why they differ.
    pub explanation: String,
}

fn max_shuffle_level(t: &Trace) -> u32 {
    t.warps
        .iter()
        .flat_map(|w| &w.events)
        .filter(|e| matches!(e.kind, EventKind::Shuffle { .. }))
        .filter_map(|e| e.level)
        .max()
        .unwrap_or(0)
}

impl TraceComparison {
    fn of(sim: &Trace, rec: &Trace, values: Vec<ValueCheck>, explanation: String) -> Self {
        let (ss, rs) = (sim.summary(), rec.summary());
        TraceComparison {
            simulated_warp_size: sim.warp_size,
            recorded_subgroup_size: rec.warp_size,
            simulated_warps: sim.warps.len(),
            recorded_subgroups: rec.warps.len(),
            simulated_levels: max_shuffle_level(sim),
            recorded_levels: max_shuffle_level(rec),
            simulated_shuffles: ss.shuffles,
            recorded_shuffles: rs.shuffles,
            simulated_barriers: ss.barriers,
            recorded_barriers: rs.barriers,
            simulated_events: ss.events,
            recorded_events: rs.events,
            values,
            explanation,
        }
    }

    /// Whether a figure differs (warp width, subgroups, levels, shuffles, barriers) or a value
    /// is out of tolerance.
    pub fn differs(&self) -> bool {
        self.simulated_warp_size != self.recorded_subgroup_size
            || self.simulated_warps != self.recorded_subgroups
            || self.simulated_levels != self.recorded_levels
            || self.simulated_shuffles != self.recorded_shuffles
            || self.simulated_barriers != self.recorded_barriers
            || self.values.iter().any(|v| !v.recorded_ok)
    }
}

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

fn need_subgroups(ctx: &DeviceContext, kernel: &str) -> Result<(), KernelError> {
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

fn read_u32(r: &Runner, buf: &wgpu::Buffer, n: usize) -> Result<Vec<u32>, KernelError> {
    Ok(r.read_f32(buf, n)?.into_iter().map(f32::to_bits).collect())
}

/// The subgroup sizes to provision slots for: (smallest, largest), at least 1.
fn size_range(ctx: &DeviceContext) -> (u32, u32) {
    let lo = ctx.report.subgroup_min_size.max(1);
    (lo, ctx.report.subgroup_max_size.max(lo))
}

fn dropped_error(kernel: &str, dropped: u32) -> KernelError {
    KernelError::Readback {
        kernel: kernel.to_owned(),
        message: format!(
            "{dropped} records did not fit the slots provisioned for the adapter's reported \
             subgroup sizes; the recording is incomplete"
        ),
    }
}

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

/// Why the butterflies differ; `row_len` = Some(L) when one subgroup reduces a row of L
/// (each lane first sums ⌈L/size⌉ elements).
fn explain_butterfly(size: u32, adapter: &str, row_len: Option<u32>) -> String {
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

fn params_map(kv: &[(&str, String)]) -> BTreeMap<String, String> {
    kv.iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect()
}

fn finish(
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
