//! Decoding a record buffer: the record layout's words into [`Record`]s (empty slots skipped,
//! unknown op codes refused), then the records of one workgroup into a
//! [`warpscope_core::simt::Trace`] — one event per (subgroup, step), ordered by ticket, costs
//! derived from the recorded addresses by core's rules.

use std::collections::BTreeMap;

use serde::Serialize;
use warpscope_core::simt::shared::BankConfig;
use warpscope_core::simt::shuffle::Source;
use warpscope_core::simt::trace::{Lane, Metrics, Origin, WarpTrace};
use warpscope_core::simt::{Event, EventKind, Trace, global};

use super::REC_WORDS;
use crate::runner::KernelError;

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
            // The recorder's labels mirror the simulation's code and formulas; they are
            // shown beside a GPU recording only, worded once.
            label: warpscope_core::text::Text::same_owned(label),
            level: first.level,
            lanes,
            metrics,
            line: None,
        });
    }
    Ok(Trace {
        kernel: warpscope_core::text::Text::same_owned(kernel),
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
