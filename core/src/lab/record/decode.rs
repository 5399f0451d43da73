//! Records → warp requests, per-line counters and a [`Trace`], by the simulator's own rules.
//!
//! Lanes are grouped into warp requests the way a SIMT machine issues them: the `k`-th time a
//! lane of subgroup `s` of workgroup `w` passes instrumented site `i` joins the `k`-th request
//! of `(w, s, i)`. A request's shared wavefronts come from the recorded byte addresses by
//! [`crate::simt::shared::BankConfig`], exactly as the simulator costs its own requests, and a
//! storage request's sectors by [`crate::simt::global::sectors`] (a buffer's offsets placed at
//! [`global_address`], 32-byte aligned as the simulator's buffers are, so the sectors agree).
//! A gather that names a lane becomes a [`EventKind::Shuffle`] whose lanes name their partner
//! as the hardware's rule gives it from the recorded lane argument.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use super::{Op, RECORD_WORDS, Site, Word};
use crate::Error;
use crate::lab::dispatch::Binding;
use crate::lab::output::{Counters, LineCounters};
use crate::simt::global;
use crate::simt::shared::BankConfig;
use crate::simt::shuffle::{ShuffleMode, Source};
use crate::simt::trace::{Lane, Metrics, Origin, WarpTrace};
use crate::simt::{Event, EventKind, Trace};
use crate::text::Text;

/// The address a storage buffer's byte `offset` is drawn at: each binding in its own 4 GiB
/// (`group · 256 + binding` above bit 32), so that two buffers never share a sector.
pub fn global_address(at: Binding, offset: u32) -> u64 {
    ((u64::from(at.group) << 8 | u64::from(at.binding)) << 32) | u64::from(offset)
}

/// The lane `lane` of a `size`-lane subgroup reads in a gather of `mode` with lane argument
/// `arg` (WGSL: an index past the subgroup leaves the result undefined; drawn as its own).
pub fn partner(mode: ShuffleMode, lane: u32, arg: u32, size: u32) -> Source {
    let src = match mode {
        ShuffleMode::Xor => Some(lane ^ arg),
        ShuffleMode::Idx => Some(arg),
        ShuffleMode::Down => lane.checked_add(arg),
        ShuffleMode::Up => lane.checked_sub(arg),
    };
    match src {
        Some(s) if s < size => Source::Lane(s),
        _ => Source::Own,
    }
}

/// The butterfly level of an xor shuffle with mask `arg` in a `size`-lane subgroup: level `k`
/// exchanges across `size >> k` lanes (a butterfly that halves its distance, as the lecture's
/// and CUDA's warp sums do), so the mask `size / 2` is level 1 and the mask 1 is level
/// `log2 size`. `None` for a mask that is not a power of two below `size`.
pub fn xor_level(arg: u32, size: u32) -> Option<u32> {
    (arg.is_power_of_two() && arg < size).then(|| size.ilog2() - arg.ilog2())
}

/// One record, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    /// Append order over the dispatch.
    pub ticket: u32,
    /// Linear workgroup id.
    pub workgroup: u32,
    /// `subgroup_id`.
    pub subgroup: u32,
    /// `subgroup_invocation_id`.
    pub lane: u32,
    /// `subgroup_size`.
    pub subgroup_size: u32,
    /// Index into the instrumented sites.
    pub site: u32,
    /// Workgroup byte address, storage byte offset or lane argument.
    pub address: u32,
    /// The value's bits (a 2-vector's first component).
    pub value: u32,
    /// A 2-vector's second component's bits.
    pub value2: u32,
}

/// What a recorded run gave, decoded.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    /// Records the counter handed out (written and dropped).
    pub records: u64,
    /// Records past the buffer's capacity, not written.
    pub dropped: u64,
    /// The subgroup size the records report (the largest seen; 0 when there are none).
    pub subgroup_size: u32,
    /// Per source line that recorded anything, the counters the recording determines
    /// (shared requests, wavefronts, ideal wavefronts, atomics, subgroup ops), in line order.
    pub lines: Vec<LineCounters>,
    /// Workgroup 0's recorded requests, warp by warp.
    pub trace: Trace,
}

/// Splits the record buffer's words (`words[0]` the counter, records from `words[1]`) into
/// records; `Err` names a record whose site is not one of `sites`.
///
/// # Errors
/// [`Error::BadInput`]: a record naming a site the pass did not make (a corrupted buffer).
pub fn records(words: &[u32], sites: &[Site]) -> Result<(Vec<Record>, u64, u64), Error> {
    let counter = u64::from(words.first().copied().unwrap_or(0));
    let body = words.get(1..).unwrap_or(&[]);
    let capacity = (body.len() / RECORD_WORDS as usize) as u64;
    let written = counter.min(capacity) as usize;
    let mut out = Vec::with_capacity(written);
    for r in body.chunks_exact(RECORD_WORDS as usize).take(written) {
        let w = |f: Word| r.get(f as usize).copied().unwrap_or(0);
        let rec = Record {
            ticket: w(Word::Ticket),
            workgroup: w(Word::Workgroup),
            subgroup: w(Word::Subgroup),
            lane: w(Word::Lane),
            subgroup_size: w(Word::SubgroupSize),
            site: w(Word::Site),
            address: w(Word::Address),
            value: w(Word::Value),
            value2: w(Word::Value2),
        };
        if sites.get(rec.site as usize).is_none() {
            return Err(Error::BadInput(format!(
                "record {} names site {} of {}",
                rec.ticket,
                rec.site,
                sites.len()
            )));
        }
        out.push(rec);
    }
    Ok((out, counter, counter.saturating_sub(capacity)))
}

/// One warp request assembled from records.
struct Request {
    first_ticket: u32,
    workgroup: u32,
    subgroup: u32,
    site: u32,
    lanes: BTreeMap<u32, (u32, u32)>,
}

/// Decodes the record buffer's `words` for a kernel instrumented at `sites`, whose workgroups
/// have `block_threads` invocations; `source` labels the trace's events with their lines.
///
/// # Errors
/// As [`records`]; [`Error::InvalidParam`] for a recorded address the bank rule refuses
/// (misaligned for its width).
pub fn decode(
    words: &[u32],
    sites: &[Site],
    kernel: &str,
    adapter: &str,
    block_threads: u32,
    source: &str,
) -> Result<Decoded, Error> {
    let (recs, counter, dropped) = records(words, sites)?;
    decode_records(
        recs,
        counter,
        dropped,
        sites,
        kernel,
        adapter,
        block_threads,
        source,
    )
}

/// [`decode`] of records already split by [`records`] (`counter` handed out, `dropped` of
/// them not written).
///
/// # Errors
/// As [`decode`].
#[allow(clippy::too_many_arguments)] // the record buffer's parts and the trace's labels
pub fn decode_records(
    mut recs: Vec<Record>,
    counter: u64,
    dropped: u64,
    sites: &[Site],
    kernel: &str,
    adapter: &str,
    block_threads: u32,
    source: &str,
) -> Result<Decoded, Error> {
    recs.sort_unstable_by_key(|r| r.ticket);
    let subgroup_size = recs.iter().map(|r| r.subgroup_size).max().unwrap_or(0);
    // (workgroup, subgroup, site, lane) → passes so far; (workgroup, subgroup, site, k) → request.
    let mut passes: HashMap<(u32, u32, u32, u32), u32> = HashMap::new();
    let mut index: HashMap<(u32, u32, u32, u32), usize> = HashMap::new();
    let mut reqs: Vec<Request> = Vec::new();
    for r in &recs {
        let k = passes
            .entry((r.workgroup, r.subgroup, r.site, r.lane))
            .or_insert(0);
        let key = (r.workgroup, r.subgroup, r.site, *k);
        *k += 1;
        let i = *index.entry(key).or_insert_with(|| {
            reqs.push(Request {
                first_ticket: r.ticket,
                workgroup: r.workgroup,
                subgroup: r.subgroup,
                site: r.site,
                lanes: BTreeMap::new(),
            });
            reqs.len() - 1
        });
        if let Some(q) = reqs.get_mut(i) {
            q.lanes.insert(r.lane, (r.address, r.value));
        }
    }
    reqs.sort_by_key(|q| q.first_ticket);
    let sg = subgroup_size.max(1) as usize;
    let bank = BankConfig::default();
    let mut lines: BTreeMap<u32, Counters> = BTreeMap::new();
    let mut warps: BTreeMap<u32, Vec<Event>> = BTreeMap::new();
    let mut barriers: HashMap<u32, u32> = HashMap::new();
    let lines_of: Vec<&str> = source.lines().collect();
    for (seq, q) in reqs.iter().enumerate() {
        let Some(site) = sites.get(q.site as usize) else {
            continue;
        };
        let place = |a: u32| site.binding.map_or(u64::from(a), |b| global_address(b, a));
        let mut addrs: Vec<Option<u64>> = vec![None; sg];
        for (&l, &(a, _)) in &q.lanes {
            if let Some(s) = addrs.get_mut(l as usize) {
                *s = Some(place(a));
            }
        }
        // The lane argument of a gather (uniform in the lecture's shaders; the first lane's).
        let arg = q.lanes.values().next().map_or(0, |&(a, _)| a);
        let mut level = None;
        let at = lines.entry(site.line).or_default();
        let mut metrics = Metrics::default();
        let kind = match site.op {
            Op::SharedLoad | Op::SharedStore | Op::SharedAtomic => {
                let c = bank.request(&addrs, site.width)?;
                at.shared_requests += 1;
                at.shared_wavefronts += u64::from(c.wavefronts);
                at.shared_ideal_wavefronts += u64::from(c.ideal_wavefronts);
                metrics.wavefronts = Some(c.wavefronts);
                metrics.ideal_wavefronts = Some(c.ideal_wavefronts);
                metrics.conflict_degree = Some(c.conflict_degree);
                match site.op {
                    Op::SharedLoad => EventKind::SharedLoad { width: site.width },
                    Op::SharedStore => EventKind::SharedStore { width: site.width },
                    _ => {
                        at.atomics += 1;
                        EventKind::Atomic { width: site.width }
                    }
                }
            }
            Op::Barrier => {
                let n = barriers.entry(q.subgroup).or_insert(0);
                if q.workgroup == 0 {
                    *n += 1;
                }
                EventKind::Barrier { index: *n }
            }
            Op::GlobalLoad | Op::GlobalStore | Op::GlobalAtomic => {
                let c = global::sectors(&addrs, site.width);
                at.global_requests += 1;
                at.global_sectors += u64::from(c.sectors);
                at.global_ideal_sectors += u64::from(c.ideal_sectors);
                metrics.sectors = Some(c.sectors);
                metrics.ideal_sectors = Some(c.ideal_sectors);
                match site.op {
                    Op::GlobalLoad => EventKind::GlobalLoad { width: site.width },
                    Op::GlobalStore => EventKind::GlobalStore { width: site.width },
                    _ => {
                        at.atomics += 1;
                        EventKind::Atomic { width: site.width }
                    }
                }
            }
            Op::SubgroupGather if site.gather.is_some() => {
                at.subgroup_ops += 1;
                let mode = site.gather.unwrap_or(ShuffleMode::Idx);
                if mode == ShuffleMode::Xor {
                    level = xor_level(arg, subgroup_size);
                }
                EventKind::Shuffle { mode, arg }
            }
            Op::SubgroupCollective | Op::SubgroupGather => {
                at.subgroup_ops += 1;
                EventKind::Compute
            }
        };
        if q.workgroup != 0 {
            continue;
        }
        let lanes = (0..sg as u32)
            .map(|l| {
                let got = q.lanes.get(&l);
                Lane {
                    active: got.is_some(),
                    address: got.filter(|_| site.width > 0).map(|&(a, _)| place(a)),
                    value: got.map(|&(_, v)| f64::from(f32::from_bits(v))),
                    source: match (got, site.gather) {
                        (Some(&(a, _)), Some(mode)) => Some(partner(mode, l, a, subgroup_size)),
                        _ => None,
                    },
                }
            })
            .collect();
        let text: String = lines_of
            .get(site.line.saturating_sub(1) as usize)
            .map_or("", |s| s.trim())
            .chars()
            .take(72)
            .collect();
        warps.entry(q.subgroup).or_default().push(Event {
            seq: seq as u64,
            kind,
            label: Text::same_owned(format!("{}: {text}", site.line)),
            level,
            lanes,
            metrics,
            line: Some(site.line),
        });
    }
    let trace = Trace {
        kernel: Text::same_owned(kernel),
        origin: Origin::Recorded {
            adapter: adapter.to_owned(),
        },
        warp_size: subgroup_size,
        block_threads,
        warps: warps
            .into_iter()
            .map(|(warp, events)| WarpTrace { warp, events })
            .collect(),
    };
    Ok(Decoded {
        records: counter,
        dropped,
        subgroup_size,
        lines: lines
            .into_iter()
            .map(|(line, counters)| LineCounters { line, counters })
            .collect(),
        trace,
    })
}

/// One line's recorded counters beside the simulation's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LineComparison {
    /// 1-based source line.
    pub line: u32,
    /// Whether shared requests, wavefronts, ideal wavefronts, atomics and subgroup ops agree.
    pub equal: bool,
    /// Shared wavefronts recorded.
    pub recorded_wavefronts: u64,
    /// Shared wavefronts simulated.
    pub simulated_wavefronts: u64,
    /// Shared requests recorded.
    pub recorded_requests: u64,
    /// Shared requests simulated.
    pub simulated_requests: u64,
}

/// One access in the order of workgroup 0: a warp's workgroup-memory load or store, or barrier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct OrderedAccess {
    /// The warp (subgroup) within the workgroup.
    pub warp: u32,
    /// The source line (1-based).
    pub line: u32,
    /// `ld.shared`, `st.shared` or `bar.sync`.
    pub op: &'static str,
}

impl OrderedAccess {
    /// `warp W line L op`, in both languages; `None` (past a timeline's end) reads "none".
    pub fn text(access: Option<&OrderedAccess>) -> Text {
        match access {
            Some(a) => Text::new(
                format!("warp {} line {} {}", a.warp, a.line, a.op),
                format!("线程束 {} 第 {} 行 {}", a.warp, a.line, a.op),
            ),
            None => Text::new("none".to_owned(), "无".to_owned()),
        }
    }
}

/// Where the recorded and simulated orders of workgroup 0 first part.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OrderDifference {
    /// Position in either timeline (shared accesses and barriers only).
    pub position: usize,
    /// The recorded access there, `None` past the recording's end.
    pub recorded: Option<OrderedAccess>,
    /// The simulated access there, `None` past the simulation's end.
    pub simulated: Option<OrderedAccess>,
    /// What a difference means.
    pub note: Text<&'static str>,
}

/// Recorded against simulated.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Comparison {
    /// Per line that either run counted, in line order.
    pub lines: Vec<LineComparison>,
    /// Whether every line is equal.
    pub all_equal: bool,
    /// The first place the two orders differ, `None` when they agree.
    pub first_order_difference: Option<OrderDifference>,
}

fn shared_part(c: &Counters) -> [u64; 5] {
    [
        c.shared_requests,
        c.shared_wavefronts,
        c.shared_ideal_wavefronts,
        c.atomics,
        c.subgroup_ops,
    ]
}

fn order(t: &Trace) -> Vec<OrderedAccess> {
    t.timeline()
        .into_iter()
        .filter_map(|(w, i)| {
            let wt = t.warps.get(w)?;
            let e = wt.events.get(i)?;
            let op = match e.kind {
                EventKind::SharedLoad { .. } => "ld.shared",
                EventKind::SharedStore { .. } => "st.shared",
                EventKind::Barrier { .. } => "bar.sync",
                _ => return None,
            };
            Some(OrderedAccess {
                warp: wt.warp,
                line: e.line.unwrap_or(0),
                op,
            })
        })
        .collect()
}

/// Compares recorded per-line counters and order with a simulation's (at the same subgroup
/// size). The counters the recording does not determine (instructions, global sectors,
/// divergence) are left out.
pub fn compare(recorded: &Decoded, simulated: &[LineCounters], sim_trace: &Trace) -> Comparison {
    let mut by_line: BTreeMap<u32, (Counters, Counters)> = BTreeMap::new();
    for l in &recorded.lines {
        by_line.entry(l.line).or_default().0 = l.counters;
    }
    for l in simulated {
        let p = shared_part(&l.counters);
        if p.iter().any(|&x| x > 0) {
            by_line.entry(l.line).or_default().1 = l.counters;
        }
    }
    let lines: Vec<LineComparison> = by_line
        .into_iter()
        .map(|(line, (r, s))| LineComparison {
            line,
            equal: shared_part(&r) == shared_part(&s),
            recorded_wavefronts: r.shared_wavefronts,
            simulated_wavefronts: s.shared_wavefronts,
            recorded_requests: r.shared_requests,
            simulated_requests: s.shared_requests,
        })
        .collect();
    let (ro, so) = (order(&recorded.trace), order(sim_trace));
    let first_order_difference = (0..ro.len().max(so.len()))
        .find(|&i| ro.get(i) != so.get(i))
        .map(|i| OrderDifference {
            position: i,
            recorded: ro.get(i).copied(),
            simulated: so.get(i).copied(),
            note: Text::new(
                "the hardware may interleave warps differently from the simulator's order; a different order is not an error",
                "硬件交替执行线程束的顺序可以与模拟不同；顺序不同不是错误",
            ),
        });
    Comparison {
        all_equal: lines.iter().all(|l| l.equal),
        lines,
        first_order_difference,
    }
}
