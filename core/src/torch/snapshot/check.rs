//! What a decodable file can still get wrong: checks of a [`Snapshot`]'s segments and blocks
//! against the allocator's own invariants, reported as warnings (English and Chinese) instead of
//! being drawn as if fine.
//!
//! The invariants are those of `c10/cuda/CUDACachingAllocator.cpp`: a segment's blocks tile it
//! (`Block::prev`/`next` run from the segment's base to its end: every block inside its segment,
//! none overlapping, their sizes summing to `total_size`); segments of one device never overlap
//! (each is one `cudaMalloc` or one expandable reservation); a segment's `allocated_size` is the
//! sum of its `active_allocated` blocks (`snapshot()` adds `block->size` where `block->allocated`).
//! Sums that exceed 2⁶⁴ − 1 bytes are reported too (the figures saturate there). Each problem
//! is a typed [`Warning`], worded in both languages by [`Warning::text`].

use super::warning::{Kind, Warning};
use super::{Action, BlockState, Snapshot};

/// Problems of one kind listed before the rest are only counted.
const LISTED: usize = 5;

/// Warnings, at most [`LISTED`] of each [`Kind`] plus one [`Warning::More`] with the count of
/// the rest.
#[derive(Debug, Default)]
pub(super) struct Warnings {
    kinds: Vec<(Kind, usize)>,
    listed: Vec<Warning>,
}

impl Warnings {
    /// Adds one problem; it is kept only while its kind is still listed.
    pub fn push(&mut self, w: Warning) {
        let kind = w.kind();
        let count = match self.kinds.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, c)) => {
                *c += 1;
                *c
            }
            None => {
                self.kinds.push((kind, 1));
                1
            }
        };
        if count <= LISTED {
            self.listed.push(w);
        }
    }

    /// The warnings, with one [`Warning::More`] per kind that had more than [`LISTED`].
    pub fn finish(mut self) -> Vec<Warning> {
        for &(of, count) in &self.kinds {
            if count > LISTED {
                self.listed.push(Warning::More {
                    of,
                    count: count - LISTED,
                });
            }
        }
        self.listed
    }
}

/// Checks `s` (see the module docs) into `w`.
pub(super) fn check(s: &Snapshot, w: &mut Warnings) {
    for warning in super::whatif::file_settings_warnings(s) {
        w.push(warning);
    }
    let mut reserved = Some(0u64);
    let mut allocated = Some(0u64);
    for (i, sg) in s.segments.iter().enumerate() {
        reserved = reserved.and_then(|r| r.checked_add(sg.total_size));
        allocated = allocated.and_then(|a| a.checked_add(sg.allocated_size));
        let Some(seg_end) = sg.address.checked_add(sg.total_size) else {
            w.push(Warning::SegmentEndOverflows {
                segment: i,
                address: sg.address,
                total_size: sg.total_size,
            });
            continue;
        };
        let mut covered = Some(0u64);
        let mut prev_end: Option<u64> = None;
        let mut active_allocated = 0u64;
        for (j, b) in sg.blocks.iter().enumerate() {
            covered = covered.and_then(|c| c.checked_add(b.size));
            if b.state == BlockState::ActiveAllocated {
                active_allocated = active_allocated.saturating_add(b.size);
            }
            if b.state == BlockState::ActiveAllocated && b.requested_size > b.size {
                w.push(Warning::RequestedMoreThanBlock {
                    segment: i,
                    address: sg.address,
                    block: j,
                    requested_size: b.requested_size,
                    size: b.size,
                });
            }
            if b.size > sg.total_size {
                w.push(Warning::BlockLargerThanSegment {
                    segment: i,
                    address: sg.address,
                    block: j,
                    size: b.size,
                    total_size: sg.total_size,
                });
            }
            let end = b.address.checked_add(b.size);
            if b.address < sg.address || end.is_none_or(|e| e > seg_end) {
                w.push(Warning::BlockOutsideSegment {
                    segment: i,
                    address: sg.address,
                    block: j,
                    block_address: b.address,
                    size: b.size,
                    end: seg_end,
                });
            }
            if let Some(p) = prev_end
                && b.address < p
            {
                w.push(Warning::OverlappingBlocks {
                    segment: i,
                    address: sg.address,
                    block: j,
                    block_address: b.address,
                    previous_end: p,
                });
            }
            prev_end = Some(end.unwrap_or(u64::MAX));
        }
        match covered {
            None => w.push(Warning::BlockSumOverflows {
                segment: i,
                address: sg.address,
            }),
            Some(c) if !sg.blocks.is_empty() && c != sg.total_size => {
                w.push(Warning::BlocksDoNotTile {
                    segment: i,
                    address: sg.address,
                    blocks_total: c,
                    total_size: sg.total_size,
                });
            }
            _ => {}
        }
        if !sg.blocks.is_empty() && sg.allocated_size != active_allocated {
            w.push(Warning::AllocatedSizeDiffers {
                segment: i,
                address: sg.address,
                allocated_size: sg.allocated_size,
                active_allocated,
            });
        }
    }
    if reserved.is_none() {
        w.push(Warning::ReservedOverflows);
    }
    if allocated.is_none() {
        w.push(Warning::AllocatedOverflows);
    }
    check_events(s, w);
    // Segments of one device never overlap.
    let mut order: Vec<(i64, u64, u64, usize)> = s
        .segments
        .iter()
        .enumerate()
        .map(|(i, g)| {
            (
                g.device,
                g.address,
                g.address.saturating_add(g.total_size),
                i,
            )
        })
        .collect();
    order.sort_unstable();
    for pair in order.windows(2) {
        if let [(d1, _, end1, i1), (d2, a2, _, i2)] = pair
            && d1 == d2
            && a2 < end1
        {
            w.push(Warning::OverlappingSegments {
                device: *d1,
                first: *i1,
                second: *i2,
                second_address: *a2,
                first_end: *end1,
            });
        }
    }
}

/// The trace's own consistency: an action this reader does not know (not replayed), an `alloc`
/// or free without a byte count (counted as 0 B), and a free whose size differs from the
/// `alloc` at its address (the live bytes after it would be wrong by the difference).
fn check_events(s: &Snapshot, w: &mut Warnings) {
    for (d, trace) in s.device_traces.iter().enumerate() {
        let mut live: std::collections::HashMap<u64, (usize, u64)> = Default::default();
        for (k, e) in trace.iter().enumerate() {
            let sized = matches!(
                e.action,
                Action::Alloc | Action::FreeRequested | Action::FreeCompleted
            );
            match &e.action {
                Action::Other(_) => w.push(Warning::UnknownAction {
                    trace: d,
                    event: k,
                    action: e.action.clone(),
                }),
                _ if sized && e.size == 0 => w.push(Warning::NoByteCount {
                    trace: d,
                    event: k,
                    action: e.action.clone(),
                }),
                _ => {}
            }
            let Some(addr) = e.addr else { continue };
            match e.action {
                Action::Alloc => {
                    live.insert(addr, (k, e.size));
                }
                Action::FreeRequested | Action::FreeCompleted => {
                    let at = if e.action == Action::FreeCompleted {
                        live.remove(&addr)
                    } else {
                        live.get(&addr).copied()
                    };
                    if let Some((j, size)) = at
                        && size != e.size
                    {
                        w.push(Warning::FreeDiffersFromAlloc {
                            trace: d,
                            event: k,
                            action: e.action.clone(),
                            addr,
                            size: e.size,
                            alloc_event: j,
                            alloc_size: size,
                        });
                    }
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod event_tests {
    use super::super::tests::ev;
    use super::*;

    #[test]
    fn a_free_of_another_size_a_missing_size_and_an_unknown_action_are_flagged() {
        const M: u64 = 1 << 20;
        let snap = Snapshot {
            layout: "dict",
            protocol: 4,
            blocks_have_addresses: true,
            segments: Vec::new(),
            device_traces: vec![vec![
                ev("segment_alloc", 100 * M, 20 * M),
                ev("alloc", 100 * M, 4 * M),
                ev("free_completed", 100 * M, M),
                ev("alloc", 104 * M, 0),
                ev("rewind", 0, 0),
                ev("alloc", 108 * M, 2 * M),
                ev("free_requested", 108 * M, 2 * M),
                ev("free_completed", 108 * M, 2 * M),
            ]],
            allocator_settings: std::collections::BTreeMap::new(),
            frames: Default::default(),
        };
        let mut w = Warnings::default();
        check_events(&snap, &mut w);
        let texts: Vec<_> = w.finish().iter().map(Warning::text).collect();
        let en: Vec<&str> = texts.iter().map(|t| t.en.as_str()).collect();
        assert_eq!(
            en,
            vec![
                "trace 0 event 2 (free_completed) at 0x6400000: 1048576 B, but the alloc at event 1 was 4194304 B",
                "trace 0 event 3 (alloc): size is 0 or missing, counted as 0 B",
                "trace 0 event 4: unknown action \"rewind\"; it is not replayed",
            ]
        );
        assert_eq!(texts.len(), 3);
    }
}
