//! The forward replay of one device's trace through the simulator ([`crate::caching`]) that the
//! replay ([`super::replay`]) and the what-if ([`super::whatif`]) both run.
//!
//! **Where it starts.** A device's trace *starts empty* when it created all the memory it used
//! and that the file still holds: every `alloc` lies in memory a `segment_alloc` or
//! `segment_map` of the trace created (and no `segment_free`/`segment_unmap` released since),
//! every `free_completed` frees an address an earlier `alloc` of the trace handed out, and every
//! segment of the device in the file lies in memory the trace created. Such a trace is replayed
//! from an empty allocator; any other from the state rebuilt at its first event
//! ([`super::History`], undoing the whole trace from the file's segments), seeded into the
//! simulator ([`crate::caching::CachingAllocator::seed`]).
//!
//! **Events.** `alloc` (by `size`) and `free_completed` (by `addr`, matched to the block that
//! `alloc` — or the rebuilt start — made there) as PyTorch served them; a recorded
//! `segment_free` releases the cached segment at its address, else one of its size
//! (`release_cached_blocks`, `empty_cache`), and under expandable segments the first release event of a run unmaps the
//! free pages of every expandable segment (`release_blocks` → `unmap_block`); under a memory
//! limit an `oom` asks for its `size` again (`malloc`), and a request that now succeeds is given
//! back at once (it never reached the program; without a limit nothing can fail and the request
//! is left out). An `alloc` that does not fit under the memory limit counts as out of memory and
//! is skipped, its later free with it. A rebuilt start that holds more than the limit first
//! releases what it has cached (`empty_cache`).
//!
//! **Recreating the file.** A trace that starts empty without expandable segments matches when
//! the segments left at the end are the file's, one for one in the order the trace created them;
//! any other when the sizes of the segments left are the file's segment sizes (as multisets:
//! the simulator places what it creates at addresses of its own).

use std::collections::BTreeMap;

use super::{Action, SnapSegment, Snapshot, TraceEvent, sat_sum};
use crate::Error;
use crate::caching::{
    AllocatorConfig, CachingAllocator, LARGE_BUFFER, Pool, SMALL_BUFFER, SeedBlock, SeedSegment,
};
use crate::text::Text;

/// What one device's replay found.
#[derive(Debug, Clone, Default)]
pub(super) struct Run {
    pub device: u32,
    pub starts_empty: bool,
    /// Segments of the rebuilt start (0 for a trace that starts empty).
    pub start_segments: usize,
    pub reserved_peak: u64,
    pub reserved_final: u64,
    pub allocated_peak: u64,
    pub needed_peak: u64,
    pub cached_free_final: u64,
    pub segments_created: u64,
    /// Sizes of the segments left at the end, in creation order (seeded ones first).
    pub segments: Vec<u64>,
    pub segments_match: bool,
    /// Why not, in both languages.
    pub mismatch: Vec<Text>,
    /// `alloc` events that did not fit.
    pub ooms: u64,
    /// `oom` events in the trace, and how many of them failed again.
    pub recorded_ooms: u64,
    pub reproduced_ooms: u64,
    /// Frees of addresses the trace never allocated.
    pub unmatched_frees: usize,
    /// `alloc` events served, and those served at the address PyTorch recorded.
    pub allocs: u64,
    pub allocs_at_address: u64,
}

/// Memory the trace created, as disjoint `start → end` ranges.
#[derive(Default)]
struct Created(BTreeMap<u64, u64>);

impl Created {
    fn add(&mut self, from: u64, len: u64) {
        let (mut lo, mut hi) = (from, from.saturating_add(len));
        let touching: Vec<(u64, u64)> = self
            .0
            .range(..=hi)
            .filter(|&(_, &e)| e >= lo)
            .map(|(&s, &e)| (s, e))
            .collect();
        for (s, e) in touching {
            self.0.remove(&s);
            (lo, hi) = (lo.min(s), hi.max(e));
        }
        self.0.insert(lo, hi);
    }

    fn remove(&mut self, from: u64, len: u64) {
        let to = from.saturating_add(len);
        let overlapping: Vec<(u64, u64)> = self
            .0
            .range(..to)
            .filter(|&(_, &e)| e > from)
            .map(|(&s, &e)| (s, e))
            .collect();
        for (s, e) in overlapping {
            self.0.remove(&s);
            if s < from {
                self.0.insert(s, from);
            }
            if e > to {
                self.0.insert(to, e);
            }
        }
    }

    fn covers(&self, from: u64, len: u64) -> bool {
        self.0
            .range(..=from)
            .next_back()
            .is_some_and(|(_, &e)| e >= from.saturating_add(len))
    }
}

/// Whether `trace` starts empty (see the module docs), and its frees of addresses it never
/// allocated.
pub(super) fn starts_empty(s: &Snapshot, device: u32, trace: &[TraceEvent]) -> (bool, usize) {
    let mut created = Created::default();
    let mut allocated: foldhash::HashSet<u64> = foldhash::HashSet::default();
    let (mut empty, mut unmatched) = (true, 0usize);
    for e in trace {
        let Some(addr) = e.addr else { continue };
        match e.action {
            Action::SegmentAlloc | Action::SegmentMap => created.add(addr, e.size),
            Action::SegmentFree | Action::SegmentUnmap => created.remove(addr, e.size),
            Action::Alloc => {
                empty &= created.covers(addr, 1);
                allocated.insert(addr);
            }
            Action::FreeCompleted if !allocated.remove(&addr) => {
                unmatched += 1;
                empty = false;
            }
            _ => {}
        }
    }
    empty &= device_segments(s, device).all(|g| created.covers(g.address, g.total_size));
    (empty, unmatched)
}

fn device_segments(s: &Snapshot, device: u32) -> impl Iterator<Item = &SnapSegment> {
    s.segments
        .iter()
        .filter(move |g| g.device == i64::from(device))
}

/// The size the device had for this process at its first `oom` event: reserved there (in the
/// file's own state) plus the `device_free` the event records — a limit under which PyTorch's
/// request failed (`malloc` reports `cudaMemGetInfo`'s free bytes after releasing the cache).
/// `None` without an `oom` event.
///
/// # Errors
/// [`Error::Cancelled`] when the current progress scope is cancelled.
pub(super) fn oom_device_bytes(s: &Snapshot, device: u32) -> Result<Option<u64>, Error> {
    let trace = s
        .device_traces
        .get(device as usize)
        .map_or(&[][..], Vec::as_slice);
    let Some(i) = trace.iter().position(|e| e.action == Action::Oom) else {
        return Ok(None);
    };
    let t = crate::torch::timeline::timeline(s, device as usize)?;
    let reserved = t.events.get(i).map_or(0, |e| e.reserved);
    let free = trace.get(i).and_then(|e| e.device_free).unwrap_or(0);
    Ok(Some(reserved.saturating_add(free)))
}

/// The rebuilt state before `device`'s first event, as segments to seed the simulator with.
fn start_state(
    s: &Snapshot,
    device: u32,
    config: &AllocatorConfig,
) -> Result<Vec<SeedSegment>, Error> {
    let t = crate::torch::timeline::timeline(s, device as usize)?;
    let h = super::History::build(s, &t, t.events.len().max(1))?;
    let file: BTreeMap<u64, &SnapSegment> =
        device_segments(s, device).map(|g| (g.address, g)).collect();
    // Streams of segments the file no longer holds, from the trace's own segment events.
    let trace = s.device_traces.get(device as usize);
    let stream_at: foldhash::HashMap<u64, u64> = trace
        .into_iter()
        .flatten()
        .filter(|e| matches!(e.action, Action::SegmentFree | Action::SegmentUnmap))
        .filter_map(|e| Some((e.addr?, e.stream)))
        .collect();
    Ok(h.before_first()
        .into_iter()
        .map(|g| {
            let holder = file
                .range(..=g.address)
                .next_back()
                .map(|(_, f)| *f)
                .filter(|f| g.address < f.address.saturating_add(f.total_size));
            let expandable = holder.map_or(config.expandable_segments, |f| f.is_expandable);
            let pool = match holder {
                Some(f) if f.segment_type == "small" => Pool::Small,
                Some(_) => Pool::Large,
                None if expandable => {
                    if g.total_size % LARGE_BUFFER == 0 {
                        Pool::Large
                    } else {
                        Pool::Small
                    }
                }
                None if g.total_size == SMALL_BUFFER => Pool::Small,
                None => Pool::Large,
            };
            let stream = match holder {
                // A CUDA-graph pool's blocks serve no request of the trace.
                Some(f) if f.private_pool => u64::MAX,
                Some(f) => f.stream,
                None => stream_at.get(&g.address).copied().unwrap_or(0),
            };
            SeedSegment {
                address: g.address,
                size: g.total_size,
                pool,
                stream,
                expandable,
                blocks: g
                    .blocks
                    .iter()
                    .map(|b| SeedBlock {
                        address: b.address,
                        size: b.size,
                        requested: b.requested_size,
                        allocated: b.state != super::BlockState::Inactive,
                    })
                    .collect(),
            }
        })
        .collect())
}

/// Replays `device`'s trace of `s` under `config` on a device of `capacity` bytes (see the
/// module docs); `progress` hears the events done every 4,096.
///
/// # Errors
/// What `progress` answers, and [`Error::Cancelled`] when the current progress scope is
/// cancelled while the start state is rebuilt.
pub(super) fn drive(
    s: &Snapshot,
    device: u32,
    config: AllocatorConfig,
    capacity: u64,
    progress: &mut dyn FnMut(usize) -> Result<(), Error>,
) -> Result<Run, Error> {
    let trace = s
        .device_traces
        .get(device as usize)
        .map_or(&[][..], Vec::as_slice);
    let (empty, unmatched) = starts_empty(s, device, trace);
    let mut a = CachingAllocator::with_config(capacity, config);
    let mut r = Run {
        device,
        starts_empty: empty,
        unmatched_frees: unmatched,
        ..Run::default()
    };
    let mut live: foldhash::HashMap<u64, usize> = foldhash::HashMap::default();
    if !empty {
        let seeds = start_state(s, device, &config)?;
        r.start_segments = seeds.len();
        live.extend(a.seed(&seeds));
        // A start that holds more than the device: what it had cached goes first.
        if a.reserved() > capacity {
            a.empty_cache();
        }
    }
    // Segments the trace created and has not freed: address → creation order.
    let mut trace_segs: BTreeMap<u64, usize> = BTreeMap::new();
    let mut releasing = false;
    for (i, e) in trace.iter().enumerate() {
        if i % 4096 == 0 {
            progress(i)?;
        }
        match e.action {
            Action::Alloc => {
                if let Some(addr) = e.addr {
                    match a.malloc(e.size, e.stream) {
                        Ok(x) => {
                            r.allocs += 1;
                            r.allocs_at_address += u64::from(x.address == addr);
                            if let Some(old) = live.insert(addr, x.block) {
                                a.free(old);
                            }
                        }
                        Err(_) => r.ooms += 1,
                    }
                }
            }
            Action::FreeCompleted => {
                if let Some(h) = e.addr.and_then(|addr| live.remove(&addr)) {
                    a.free(h);
                }
            }
            Action::SegmentAlloc => {
                if let Some(addr) = e.addr {
                    trace_segs.entry(addr).or_insert(i);
                }
            }
            Action::SegmentFree | Action::SegmentUnmap => {
                if let Some(addr) = e.addr {
                    trace_segs.remove(&addr);
                }
                if config.expandable_segments {
                    if !releasing {
                        a.unmap_cached_pages();
                    }
                } else if e.action == Action::SegmentFree {
                    let at = e
                        .addr
                        .is_some_and(|addr| a.release_segment_at(addr, e.size, e.stream));
                    if !at {
                        a.release_segment_of_size(e.size, e.stream);
                    }
                }
            }
            // Without a limit nothing can fail: the request that failed is left out.
            Action::Oom if capacity < u64::MAX => {
                r.recorded_ooms += 1;
                match a.malloc(e.size, e.stream) {
                    Ok(x) => {
                        a.free(x.block);
                    }
                    Err(_) => r.reproduced_ooms += 1,
                }
            }
            Action::Oom => r.recorded_ooms += 1,
            _ => {}
        }
        releasing = matches!(e.action, Action::SegmentFree | Action::SegmentUnmap);
        r.reserved_peak = r.reserved_peak.max(a.reserved());
        r.allocated_peak = r.allocated_peak.max(a.allocated());
        r.needed_peak = r.needed_peak.max(a.requested());
    }
    r.reserved_final = a.reserved();
    r.cached_free_final = a.cached_free();
    r.segments_created = a.segments_created;
    r.segments = a.segments().iter().map(|v| v.size).collect();
    compare(s, &mut r, &trace_segs, config.expandable_segments);
    Ok(r)
}

/// Whether the replay left the file's segments (see the module docs).
fn compare(s: &Snapshot, r: &mut Run, trace_segs: &BTreeMap<u64, usize>, expandable: bool) {
    let dev = r.device;
    let file: Vec<&SnapSegment> = device_segments(s, dev).collect();
    let (n_file, file_bytes) = (file.len(), sat_sum(file.iter().map(|g| g.total_size)));
    let (n_rep, rep_bytes) = (r.segments.len(), sat_sum(r.segments.iter().copied()));
    let differ = if r.starts_empty && !expandable {
        let mut ordered: Vec<(usize, u64)> = file
            .iter()
            .filter_map(|g| trace_segs.get(&g.address).map(|&o| (o, g.total_size)))
            .collect();
        ordered.sort_unstable();
        if ordered.len() != trace_segs.len() {
            let missing = trace_segs.len() - ordered.len().min(trace_segs.len());
            r.mismatch.push(Text::new(
                format!("device {dev}: {missing} segments the trace created are not in the file"),
                format!("设备 {dev}：轨迹创建的段中有 {missing} 个不在文件里"),
            ));
        }
        ordered
            .iter()
            .map(|&(_, size)| size)
            .ne(r.segments.iter().copied())
    } else {
        let mut want: Vec<u64> = file.iter().map(|g| g.total_size).collect();
        let mut got = r.segments.clone();
        want.sort_unstable();
        got.sort_unstable();
        want != got
    };
    if differ {
        r.mismatch.push(Text::new(
            format!("device {dev}: replayed {n_rep} segments ({rep_bytes} bytes), the file has {n_file} ({file_bytes} bytes)"),
            format!("设备 {dev}：回放得到 {n_rep} 个段（{rep_bytes} 字节），文件里有 {n_file} 个（{file_bytes} 字节）"),
        ));
    }
    r.segments_match = r.mismatch.is_empty();
}
