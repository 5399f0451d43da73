//! The *Active Memory Timeline* of PyTorch's memory_viz (`torch/utils/viz/MemoryViz.js`): the
//! live allocations of a trace as intervals of events — from the `alloc` that made one to the
//! `free_completed` that ended it — of which the largest few are drawn individually and the
//! rest as one band.
//!
//! An allocation freed in the trace but allocated before it starts at event 0; one still live
//! at the end ends at the trace's length. Sizes are the trace's requested bytes (`alloc`'s
//! `size`, as [`crate::torch::timeline`] counts live bytes), so at any event the largest
//! intervals live there plus [`Active::rest`] make up the timeline's live requested bytes.

#![deny(clippy::indexing_slicing)]

use serde::Serialize;

use super::timeline::Timeline;

/// Largest allocations kept individually.
pub const LARGEST: usize = 32;

/// One allocation's lifetime.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Interval {
    /// Address.
    pub addr: u64,
    /// Requested bytes.
    pub size: u64,
    /// The `alloc` event (0 for an allocation made before the trace).
    pub start: usize,
    /// The `free_completed` event, or the trace's length when still live at its end: live
    /// right after events `start..end`.
    pub end: usize,
    /// Allocated before the trace began (its `alloc` is not in it).
    pub before_trace: bool,
    /// Its stack: a frame-list id in the snapshot's `frames` (the `alloc`'s, or the free's
    /// for one allocated before the trace).
    pub frames: u32,
}

impl Interval {
    /// Whether the allocation is live right after event `k`.
    pub fn live_at(&self, k: usize) -> bool {
        self.start <= k && k < self.end
    }
}

/// The largest allocations of one device's trace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Active {
    /// The [`LARGEST`] largest, ordered by `start` (then address): the order they stack in.
    pub largest: Vec<Interval>,
    /// Allocations in the trace in all.
    pub count: usize,
}

/// The allocation intervals of timeline `t` and its largest [`LARGEST`].
pub fn active(t: &Timeline) -> Active {
    let n = t.events.len();
    let mut open: foldhash::HashMap<u64, (usize, u64, u32)> = foldhash::HashMap::default();
    let mut all: Vec<Interval> = Vec::new();
    for (i, e) in t.events.iter().enumerate() {
        match e.action {
            "alloc" => {
                if let Some((start, size, frames)) = open.insert(e.addr, (i, e.size, e.frames)) {
                    // Allocated twice without a free (as the timeline, the first one ends here).
                    all.push(Interval {
                        addr: e.addr,
                        size,
                        start,
                        end: i,
                        before_trace: false,
                        frames,
                    });
                }
            }
            "free_completed" => {
                let (start, size, frames, before_trace) = match open.remove(&e.addr) {
                    Some((s, size, f)) => (s, size, f, false),
                    None => (0, e.size, e.frames, true),
                };
                all.push(Interval {
                    addr: e.addr,
                    size,
                    start,
                    end: i,
                    before_trace,
                    frames,
                });
            }
            _ => {}
        }
    }
    for (addr, (start, size, frames)) in open {
        all.push(Interval {
            addr,
            size,
            start,
            end: n,
            before_trace: false,
            frames,
        });
    }
    let count = all.len();
    let by_size = |a: &Interval, b: &Interval| {
        b.size
            .cmp(&a.size)
            .then(a.start.cmp(&b.start))
            .then(a.addr.cmp(&b.addr))
    };
    if all.len() > LARGEST {
        all.select_nth_unstable_by(LARGEST - 1, by_size);
        all.truncate(LARGEST);
    }
    all.sort_by(|a, b| a.start.cmp(&b.start).then(a.addr.cmp(&b.addr)));
    Active {
        largest: all,
        count,
    }
}

impl Active {
    /// Live requested bytes right after event `k` that are not in [`Active::largest`]
    /// (`allocated` is the timeline's figure there).
    pub fn rest(&self, k: usize, allocated: u64) -> u64 {
        let mine = self
            .largest
            .iter()
            .filter(|iv| iv.live_at(k))
            .fold(0u64, |a, iv| a.saturating_add(iv.size));
        allocated.saturating_sub(mine)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::torch::snapshot::{analyse, read_file};

    #[test]
    fn intervals_of_a_real_trace_add_up_to_its_live_bytes() {
        let path = format!(
            "{}/tests/data/snapshots/torch2.11-cs336-a2.pickle",
            env!("CARGO_MANIFEST_DIR")
        );
        let s = read_file(&path).unwrap();
        let a = analyse("cs336", &s, -1).unwrap();
        let t = &a.timelines[0];
        let act = active(t);
        // 1,721 allocs and 1,721 frees, two of them of blocks from before the trace (as the
        // replay counts them): 1,721 + 2 intervals, less those of addresses allocated twice.
        assert!(act.count >= 1_721 && act.count <= 1_723, "{}", act.count);
        assert_eq!(act.largest.len(), LARGEST);
        // The largest are the largest: no interval left out is larger than the smallest kept,
        // recomputed here from the trace's own alloc sizes.
        let smallest = act.largest.iter().map(|i| i.size).min().unwrap();
        let mut sizes: Vec<u64> = t
            .events
            .iter()
            .filter(|e| e.action == "alloc")
            .map(|e| e.size)
            .collect();
        sizes.sort_unstable_by(|a, b| b.cmp(a));
        // Every alloc is an interval, so the 32nd largest kept is at least the 32nd largest alloc.
        assert!(smallest >= sizes[LARGEST - 1]);
        assert!(act.largest.windows(2).all(|w| w[0].start <= w[1].start));
        // At every event the kept intervals never exceed the live bytes: the rest is what is
        // left, and the kept ones live there plus the rest are the live bytes.
        for (k, e) in t.events.iter().enumerate() {
            let mine: u64 = act
                .largest
                .iter()
                .filter(|i| i.live_at(k))
                .map(|i| i.size)
                .sum();
            assert!(mine <= e.allocated, "event {k}");
            assert_eq!(mine + act.rest(k, e.allocated), e.allocated);
        }
    }
}
