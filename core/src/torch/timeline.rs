//! The trace of a PyTorch memory snapshot as a timeline: reserved and allocated bytes after
//! every event, for scrubbing event by event and for drawing 250,000 events in a few hundred
//! pixel columns.
//!
//! *Reserved* is walked backwards from the file's own total: a snapshot is taken after its trace
//! (`torch.cuda.memory._snapshot()` returns the segments as they are at that moment and the ring
//! buffer of events that led there), so reserved after the last event is Σ segment `total_size`
//! of that device, and undoing `segment_alloc`/`segment_map` (+size) and
//! `segment_free`/`segment_unmap` (−size) gives the absolute figure after every earlier event —
//! also for a trace that starts mid-run.
//!
//! *Live requested bytes* are walked forwards: `alloc` adds its `size` (PyTorch records the
//! requested size, `orig_size`, in `TraceEntry`; `c10/cuda/CUDACachingAllocator.cpp`), and
//! `free_completed` removes what that address's `alloc` added. The curve is then anchored at its
//! start: before the first event it holds at least what the trace frees without having allocated
//! it (blocks from before the trace), and — when the file's active blocks (`active_allocated` and
//! `active_pending_free`, their `requested_size`) say more is live at the end than the trace
//! accounts for — those bytes too (blocks live through the whole trace). A trace that starts from
//! an empty allocator and agrees with its file therefore starts at 0, and a consistent trace ends
//! at the file's own live requested bytes; a file whose blocks hold less than the trace leaves
//! live is reported ([`Timeline::file_requested`] differs from the last event's figure).
//! `free_requested`, `snapshot` and `oom` change neither figure.

#![deny(clippy::indexing_slicing)]

use serde::Serialize;

use super::snapshot::{BlockState, Snapshot};
use crate::Error;

/// One trace event as the timeline keeps it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TimelineEvent {
    /// The action, as PyTorch spells it (`alloc`, `free_completed`, … or `other`).
    pub action: &'static str,
    /// Device (index into the snapshot's `device_traces`).
    pub device: u32,
    /// `addr` (0 when absent, as for `oom`).
    pub addr: u64,
    /// `size` (bytes).
    pub size: u64,
    /// Reserved bytes on this event's device after the event.
    pub reserved: u64,
    /// Live requested bytes on this event's device after the event (see the module docs).
    pub allocated: u64,
    /// Its stack frames: a list id in the snapshot's [`Snapshot::frames`].
    #[serde(skip)]
    pub frames: u32,
}

/// The trace of one device, event by event.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Timeline {
    /// The device whose trace this is.
    pub device: u32,
    /// Events in trace order with the totals after each.
    pub events: Vec<TimelineEvent>,
    /// Reserved and allocated before the first event (bytes): where the trace starts from.
    pub start_reserved: u64,
    /// See [`Timeline::start_reserved`].
    pub start_allocated: u64,
    /// Segment events that would take reserved below zero walking backwards: the trace and the
    /// segments disagree (a truncated or edited file). Reserved is clamped at zero there.
    pub inconsistent: usize,
    /// `free_completed` events of addresses the trace never allocated (the trace began mid-run).
    pub unmatched_frees: usize,
    /// Live requested bytes the file's own blocks of this device hold: Σ `requested_size` (or
    /// `size` where the file records none) of its `active_allocated` and `active_pending_free`
    /// blocks. Equals the last event's [`TimelineEvent::allocated`] when trace and file agree.
    pub file_requested: u64,
}

/// Min and max of a total over one column of events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Column {
    /// First event of the column (index into [`Timeline::events`]).
    pub first: usize,
    /// Events in the column (≥ 1).
    pub count: usize,
    /// Smallest and largest reserved bytes after any event of the column.
    pub reserved: (u64, u64),
    /// Smallest and largest live requested bytes after any event of the column.
    pub allocated: (u64, u64),
}

/// The timeline of `device`'s trace in `s`.
///
/// # Errors
/// [`Error::BadInput`] when the snapshot has no trace for `device`.
pub fn timeline(s: &Snapshot, device: usize) -> Result<Timeline, Error> {
    let trace = s.device_traces.get(device).ok_or_else(|| {
        Error::BadInput(format!(
            "the snapshot has traces for {} device(s); device {device} has none",
            s.device_traces.len()
        ))
    })?;
    let dev = device as u32;
    let n = trace.len() as u64;
    let mut events = Vec::with_capacity(trace.len());
    let mut relative_live = Vec::with_capacity(trace.len());
    // Forwards: live requested bytes, relative to the start until the unmatched frees are known.
    let mut live: foldhash::HashMap<u64, u64> = foldhash::HashMap::default();
    let (mut relative, mut before_start, mut unmatched_frees) = (0i128, 0u64, 0usize);
    for (i, e) in trace.iter().enumerate() {
        if i % 4096 == 0 {
            crate::progress::report(i as u64, 2 * n)?;
        }
        let action = e.action.known_name();
        let addr = e.addr.unwrap_or(0);
        match action {
            "alloc" => {
                if let Some(old) = live.insert(addr, e.size) {
                    // An address allocated twice without a free: the first block's free is
                    // missing from the trace; drop it rather than count it forever.
                    relative -= i128::from(old);
                }
                relative += i128::from(e.size);
            }
            "free_completed" => match live.remove(&addr) {
                Some(size) => relative -= i128::from(size),
                None => {
                    unmatched_frees += 1;
                    before_start = before_start.saturating_add(e.size);
                    relative -= i128::from(e.size);
                }
            },
            _ => {}
        }
        relative_live.push(relative);
        events.push(TimelineEvent {
            action,
            device: dev,
            addr,
            size: e.size,
            reserved: 0,
            allocated: 0,
            frames: e.frames,
        });
    }
    // The anchor (see the module docs): at least the frees of earlier blocks, and what the file
    // says is live at the end beyond what the trace adds.
    let file_requested = s
        .segments
        .iter()
        .filter(|g| g.device == device as i64)
        .flat_map(|g| &g.blocks)
        .filter(|b| {
            matches!(
                b.state,
                BlockState::ActiveAllocated | BlockState::ActivePendingFree
            )
        })
        .map(|b| {
            if b.requested_size > 0 {
                b.requested_size
            } else {
                b.size
            }
        })
        .fold(0u64, u64::saturating_add);
    let base = (i128::from(file_requested) - relative).max(i128::from(before_start));
    for (e, rel) in events.iter_mut().zip(relative_live) {
        e.allocated = u64::try_from((base + rel).max(0)).unwrap_or(u64::MAX);
    }
    let start_allocated = u64::try_from(base.max(0)).unwrap_or(u64::MAX);
    // Backwards: reserved from the snapshot's own total.
    let mut reserved = s
        .segments
        .iter()
        .filter(|g| g.device == device as i64)
        .fold(0u64, |r, g| r.saturating_add(g.total_size));
    let mut inconsistent = 0;
    for (i, e) in events.iter_mut().enumerate().rev() {
        if i % 4096 == 0 {
            crate::progress::report(2 * n - i as u64, 2 * n)?;
        }
        e.reserved = reserved;
        match e.action {
            "segment_alloc" | "segment_map" => match reserved.checked_sub(e.size) {
                Some(r) => reserved = r,
                None => {
                    inconsistent += 1;
                    reserved = 0;
                }
            },
            "segment_free" | "segment_unmap" => reserved = reserved.saturating_add(e.size),
            _ => {}
        }
    }
    Ok(Timeline {
        device: dev,
        events,
        start_reserved: reserved,
        start_allocated,
        inconsistent,
        unmatched_frees,
        file_requested,
    })
}

impl Timeline {
    /// `events[range]` in `columns` columns of (nearly) equal event counts, each with the min
    /// and max of both totals — what a plot of `columns` pixels can show of the range without
    /// losing a peak. Fewer columns than asked when the range has fewer events (one event per
    /// column then: nothing is aggregated). An empty or out-of-bounds range gives no columns.
    pub fn columns(&self, range: std::ops::Range<usize>, columns: usize) -> Vec<Column> {
        let end = range.end.min(self.events.len());
        let start = range.start.min(end);
        let n = end - start;
        let k = columns.min(n);
        (0..k)
            .map(|c| {
                let first = start + c * n / k;
                let last = start + (c + 1) * n / k;
                let slice = self.events.get(first..last).unwrap_or_default();
                let mut col = Column {
                    first,
                    count: last - first,
                    reserved: (u64::MAX, 0),
                    allocated: (u64::MAX, 0),
                };
                for e in slice {
                    col.reserved = (
                        col.reserved.0.min(e.reserved),
                        col.reserved.1.max(e.reserved),
                    );
                    col.allocated = (
                        col.allocated.0.min(e.allocated),
                        col.allocated.1.max(e.allocated),
                    );
                }
                col
            })
            .collect()
    }

    /// Largest reserved bytes over the trace (the start included).
    pub fn peak_reserved(&self) -> u64 {
        self.events
            .iter()
            .map(|e| e.reserved)
            .fold(self.start_reserved, u64::max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::torch::snapshot;

    #[test]
    fn the_mini_fixture_starts_empty_and_reaches_its_hand_counted_totals() {
        // Counted from the fixture's 50 events (`core/tests/data/snapshots/torch2.11-mini-fixture.pickle`): 14 segment_alloc events sum to
        // the file's reserved 421,527,552 B, so reserved starts at 0; live requested bytes peak at
        // 402,752,512 B and end at 402,719,744 B (28 allocs, 4 matched frees).
        let s = snapshot::parse(snapshot::BUILTIN_FIXTURE).expect("fixture parses");
        let t = timeline(&s, 0).expect("device 0 has a trace");
        assert_eq!(t.events.len(), 50);
        assert_eq!((t.start_reserved, t.start_allocated), (0, 0));
        assert_eq!((t.inconsistent, t.unmatched_frees), (0, 0));
        let last = t.events.last().expect("events");
        assert_eq!((last.reserved, last.allocated), (421_527_552, 402_719_744));
        assert_eq!(t.peak_reserved(), 421_527_552);
        assert_eq!(
            t.events.iter().map(|e| e.allocated).max(),
            Some(402_752_512)
        );
        // The first two events: a 24 MiB segment, then a 24 MiB block in it.
        assert_eq!(
            (t.events[0].reserved, t.events[0].allocated),
            (25_165_824, 0)
        );
        assert_eq!(
            (t.events[1].reserved, t.events[1].allocated),
            (25_165_824, 25_165_824)
        );
    }

    #[test]
    fn a_trace_that_starts_mid_run_counts_earlier_blocks_from_the_start() {
        // cs336's trace starts mid-run (snapshots README): frees of blocks allocated before
        // it must not take live bytes below zero, and reserved must end at the file's total.
        let bytes = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/snapshots/torch2.11-cs336-a2.pickle"
        ))
        .expect("fixture present");
        let s = snapshot::parse(&bytes).expect("parses");
        let t = timeline(&s, 0).expect("trace");
        assert_eq!(t.events.len(), 5_163);
        assert!(t.unmatched_frees > 0);
        assert!(t.start_allocated > 0);
        let last = t.events.last().expect("events");
        assert_eq!(last.reserved, 14_180_941_824);
    }

    #[test]
    fn columns_keep_every_peak_and_cover_the_range_once() {
        let s = snapshot::parse(snapshot::BUILTIN_FIXTURE).expect("fixture parses");
        let t = timeline(&s, 0).expect("trace");
        let n = t.events.len();
        for k in [1, 3, 7, n, n + 10] {
            let cols = t.columns(0..n, k);
            assert_eq!(cols.len(), k.min(n));
            assert_eq!(cols.iter().map(|c| c.count).sum::<usize>(), n);
            let max_r = cols.iter().map(|c| c.reserved.1).max();
            assert_eq!(max_r, t.events.iter().map(|e| e.reserved).max());
            let min_a = cols.iter().map(|c| c.allocated.0).min();
            assert_eq!(min_a, t.events.iter().map(|e| e.allocated).min());
        }
        #[allow(clippy::reversed_empty_ranges)] // a reversed range is the case under test
        let reversed = 5..2;
        assert!(t.columns(reversed, 10).is_empty());
        assert!(t.columns(n + 1..n + 5, 10).is_empty());
    }

    #[test]
    fn a_missing_device_is_an_error() {
        let s = snapshot::parse(snapshot::BUILTIN_FIXTURE).expect("fixture parses");
        assert!(matches!(timeline(&s, 7), Err(Error::BadInput(_))));
    }
}
