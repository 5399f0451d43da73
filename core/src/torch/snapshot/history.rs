//! The allocator's state at any trace event — what PyTorch's `torch/cuda/_memory_viz.py` page
//! calls *Allocator State History*: every segment and block of one device as they were right
//! after a chosen event.
//!
//! A snapshot holds the allocator's segments as they are when `_snapshot()` ran, and the ring
//! buffer of the trace events that led there (`TraceEntry` of
//! `c10/cuda/CUDACachingAllocator.h`). So the state at an earlier event is rebuilt **backwards**
//! from the file's own segments, undoing the events from the last one down to the chosen one —
//! as `MemoryViz.js` does — which works as well for a trace that starts mid-run as for one that
//! starts from an empty allocator. Undoing, with PyTorch's action names:
//!
//! | event | undone |
//! |---|---|
//! | `alloc` | its block becomes free again (`inactive`), merged with free neighbours |
//! | `free_requested` | its block, waiting for its stream events (`active_pending_free`), is `active_allocated` again |
//! | `free_completed` | a block is cut out of the free space at `addr` again, `active_pending_free` |
//! | `segment_alloc` | the segment is removed |
//! | `segment_free` | the segment is added back, one free block |
//! | `segment_map` | the mapped range leaves its (expandable) segment, which shrinks or splits |
//! | `segment_unmap` | the range is mapped again, joining an adjacent expandable segment |
//! | `snapshot`, `oom`, others | nothing |
//!
//! Free blocks merge with free neighbours as in `free_block`/`try_merge_blocks`. The trace records
//! *requested* sizes (`alloc`: `orig_size`; frees: the block's `requested_size`), not block sizes:
//! a block the later state does not hold any more (undoing a `free_completed`) gets PyTorch's
//! rounded size (`round_size`: a multiple of 512 B), or the whole rest of its free run where the
//! allocator would not have split that rest off (`should_split`: under 512 B in the small pool and
//! in expandable segments, ≤ 1 MiB in the large pool) — an estimate, marked
//! [`StateBlock::estimated`]. Every event that cannot be undone against the state (an `alloc`
//! whose block is not active later, a `segment_alloc` whose segment still holds active blocks …)
//! is counted in [`History::inconsistent`] and described in [`History::examples`]: the file's
//! segments and its trace disagree (a trimmed or edited file).
//!
//! Scrubbing must not undo the whole trace per frame: the one backward pass that builds a
//! [`History`] keeps the state every few hundred events (at most [`MAX_CHECKPOINTS`]); the state
//! at any event is the nearest later checkpoint with fewer than that many events undone.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use serde::Serialize;

use super::warning::{Warning, Why};
use super::{Action, BlockState, SnapSegment, Snapshot};
use crate::Error;
use crate::caching::{Pool, pool_of, round_size, should_split};
use crate::torch::timeline::Timeline;

/// Most checkpoints one history keeps.
pub const MAX_CHECKPOINTS: usize = 64;
/// Fewest events between two checkpoints.
const MIN_INTERVAL: usize = 256;
/// Most blocks all checkpoints of one history hold together (bounds its memory).
const MAX_CHECKPOINT_BLOCKS: usize = 4 << 20;
/// Inconsistent events described in [`History::examples`].
const EXAMPLES: usize = 5;

/// A block of the state at an event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StateBlock {
    /// Address.
    pub address: u64,
    /// Size (bytes).
    pub size: u64,
    /// State, as PyTorch names it (`active_allocated`, `active_pending_free`, `inactive`).
    pub state: BlockState,
    /// Bytes asked for (bytes; 0 when unknown or free).
    pub requested_size: u64,
    /// The size is estimated from the trace's requested size (see the module docs), not read
    /// from the file. Omitted from the JSON when false.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub estimated: bool,
    /// Its stack frames: a list id in [`Snapshot::frames`] — for a block in use, those of the
    /// trace's `alloc` that made it where the trace has one ([`History::at`]), else the file's
    /// block's or the event's that put it back; [`crate::torch::frames::NO_FRAMES`] for a free
    /// block.
    #[serde(skip)]
    pub frames: u32,
}

/// A segment of the state at an event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StateSegment {
    /// Address.
    pub address: u64,
    /// Size (bytes).
    pub total_size: u64,
    /// Blocks in address order.
    pub blocks: Vec<StateBlock>,
}

/// The allocator's state right after one trace event (one device).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StateAt {
    /// The device.
    pub device: u32,
    /// The event (index into the device's trace).
    pub index: usize,
    /// Its action, as PyTorch spells it (`other` for one this reader does not know; `none` for
    /// the state of a file without a trace).
    pub action: &'static str,
    /// Its `addr` (absent for `oom`).
    pub addr: Option<u64>,
    /// Its `size` (bytes).
    pub size: u64,
    /// Its stack frames, innermost first (filled from [`Snapshot::frames`] by
    /// [`History::at_with_frames`]; empty from [`History::at`]).
    pub frames: Vec<crate::torch::frames::Frame>,
    /// Its frame-list id in [`Snapshot::frames`].
    #[serde(skip)]
    pub frames_list: u32,
    /// Σ segment sizes (bytes).
    pub reserved_bytes: u64,
    /// Σ `active_allocated` block sizes (bytes) — what a segment's `allocated_size` counts
    /// (`block->allocated`, which `free()` clears before the block's stream events complete).
    pub allocated_bytes: u64,
    /// Live requested bytes after the event: `alloc` minus `free_completed` sizes as the trace
    /// records them, anchored as [`crate::torch::timeline`] describes (bytes).
    pub requested_bytes: u64,
    /// Segments in address order.
    pub segments: Vec<StateSegment>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Alloc,
    FreeRequested,
    FreeCompleted,
    SegmentAlloc,
    SegmentFree,
    SegmentMap,
    SegmentUnmap,
    Snapshot,
    Oom,
    Other,
}

impl Op {
    fn of(action: &Action) -> Op {
        match action {
            Action::Alloc => Op::Alloc,
            Action::FreeRequested => Op::FreeRequested,
            Action::FreeCompleted => Op::FreeCompleted,
            Action::SegmentAlloc => Op::SegmentAlloc,
            Action::SegmentFree => Op::SegmentFree,
            Action::SegmentMap => Op::SegmentMap,
            Action::SegmentUnmap => Op::SegmentUnmap,
            Action::Snapshot => Op::Snapshot,
            Action::Oom => Op::Oom,
            Action::Other(_) => Op::Other,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Op::Alloc => "alloc",
            Op::FreeRequested => "free_requested",
            Op::FreeCompleted => "free_completed",
            Op::SegmentAlloc => "segment_alloc",
            Op::SegmentFree => "segment_free",
            Op::SegmentMap => "segment_map",
            Op::SegmentUnmap => "segment_unmap",
            Op::Snapshot => "snapshot",
            Op::Oom => "oom",
            Op::Other => "other",
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Ev {
    op: Op,
    addr: Option<u64>,
    size: u64,
    frames: u32,
}

/// Address, then a counter that keeps two entries at one address (a malformed file) apart.
type Key = (u64, u32);

#[derive(Debug, Clone)]
struct Blk {
    size: u64,
    requested: u64,
    state: BlockState,
    estimated: bool,
    frames: u32,
}

#[derive(Debug, Clone)]
struct Seg {
    size: u64,
    expandable: bool,
    blocks: BTreeMap<Key, Blk>,
}

/// Segments are shared between the state being undone and its checkpoints, and copied only
/// when an event changes one (`Arc::make_mut`): a checkpoint then costs a pointer per segment,
/// not a copy of every block.
#[derive(Debug, Clone, Default)]
struct DevState {
    segs: BTreeMap<Key, Arc<Seg>>,
}

fn free_block(size: u64) -> Blk {
    Blk {
        size,
        requested: 0,
        state: BlockState::Inactive,
        estimated: false,
        frames: crate::torch::frames::NO_FRAMES,
    }
}

/// The first unused key at `addr`.
fn key_at<V>(m: &BTreeMap<Key, V>, addr: u64) -> Key {
    let n = m
        .range((addr, 0)..=(addr, u32::MAX))
        .next_back()
        .map_or(0, |(&(_, k), _)| k.saturating_add(1));
    (addr, n)
}

impl DevState {
    fn from_segments<'a>(segs: impl Iterator<Item = &'a SnapSegment>) -> Self {
        let mut out: BTreeMap<Key, Arc<Seg>> = BTreeMap::new();
        for sg in segs {
            let mut blocks = BTreeMap::new();
            for b in &sg.blocks {
                let k = key_at(&blocks, b.address);
                blocks.insert(
                    k,
                    Blk {
                        size: b.size,
                        requested: b.requested_size,
                        state: b.state.clone(),
                        estimated: false,
                        frames: b.frames,
                    },
                );
            }
            let k = key_at(&out, sg.address);
            out.insert(
                k,
                Arc::new(Seg {
                    size: sg.total_size,
                    expandable: sg.is_expandable,
                    blocks,
                }),
            );
        }
        DevState { segs: out }
    }

    fn block_count(&self) -> usize {
        self.segs.values().map(|s| s.blocks.len()).sum()
    }

    /// The segment whose range holds `addr`.
    fn seg_containing(&self, addr: u64) -> Option<Key> {
        self.segs
            .range(..=(addr, u32::MAX))
            .next_back()
            .filter(|&(&(a, _), s)| addr < a.saturating_add(s.size))
            .map(|(&k, _)| k)
    }

    /// Whether any segment overlaps `lo..hi`.
    fn overlaps(&self, lo: u64, hi: u64) -> bool {
        self.segs
            .range(..(hi, 0))
            .next_back()
            .is_some_and(|(&(a, _), s)| a.saturating_add(s.size) > lo)
    }

    fn undo(&mut self, e: Ev) -> Result<(), Why> {
        let need = |a: Option<u64>| a.ok_or(Why::NoAddress);
        match e.op {
            Op::Alloc => self.undo_alloc(need(e.addr)?),
            Op::FreeRequested => self.undo_free_requested(need(e.addr)?),
            Op::FreeCompleted => self.undo_free_completed(need(e.addr)?, e.size, e.frames),
            Op::SegmentAlloc => self.undo_segment_alloc(need(e.addr)?, e.size),
            Op::SegmentFree => self.undo_segment_free(need(e.addr)?, e.size, false),
            Op::SegmentMap => self.undo_segment_map(need(e.addr)?, e.size),
            Op::SegmentUnmap => self.undo_segment_unmap(need(e.addr)?, e.size),
            Op::Snapshot | Op::Oom | Op::Other => Ok(()),
        }
    }

    fn undo_alloc(&mut self, addr: u64) -> Result<(), Why> {
        let sk = self.seg_containing(addr).ok_or(Why::NoActiveBlock)?;
        let seg = self
            .segs
            .get_mut(&sk)
            .map(Arc::make_mut)
            .ok_or(Why::NoActiveBlock)?;
        let found = seg
            .blocks
            .range((addr, 0)..=(addr, u32::MAX))
            .find(|(_, b)| b.state != BlockState::Inactive)
            .map(|(&k, b)| (k, b.state == BlockState::ActiveAllocated));
        let (bk, allocated) = found.ok_or(Why::NoActiveBlock)?;
        release(seg, bk);
        if allocated {
            Ok(())
        } else {
            // Pending free with no `free_requested` after the `alloc`: the file and trace disagree.
            Err(Why::NoActiveBlock)
        }
    }

    fn undo_free_requested(&mut self, addr: u64) -> Result<(), Why> {
        let sk = self.seg_containing(addr).ok_or(Why::NotPending)?;
        let seg = self
            .segs
            .get_mut(&sk)
            .map(Arc::make_mut)
            .ok_or(Why::NotPending)?;
        let b = seg
            .blocks
            .range_mut((addr, 0)..=(addr, u32::MAX))
            .map(|(_, b)| b)
            .find(|b| b.state == BlockState::ActivePendingFree)
            .ok_or(Why::NotPending)?;
        b.state = BlockState::ActiveAllocated;
        Ok(())
    }

    fn undo_free_completed(&mut self, addr: u64, requested: u64, frames: u32) -> Result<(), Why> {
        let sk = self.seg_containing(addr).ok_or(Why::NoFreeSpace)?;
        let seg = self
            .segs
            .get_mut(&sk)
            .map(Arc::make_mut)
            .ok_or(Why::NoFreeSpace)?;
        let seg_end = sk.0.saturating_add(seg.size);
        let rounded = round_size(requested);
        // The free run holding `addr`: an inactive block, or a gap no block covers.
        let before = seg
            .blocks
            .range(..=(addr, u32::MAX))
            .next_back()
            .map(|(&k, b)| {
                (
                    k,
                    k.0.saturating_add(b.size),
                    b.state == BlockState::Inactive,
                )
            });
        let (run_end, split_from) = match before {
            Some((k, end, true)) if addr < end => (end, Some(k)),
            Some((_, end, _)) if addr < end => return Err(Why::NoFreeSpace),
            _ => {
                let next = seg
                    .blocks
                    .range((addr, 0)..)
                    .next()
                    .map_or(seg_end, |(&(a, _), _)| a);
                if next <= addr {
                    return Err(Why::NoFreeSpace);
                }
                (next, None)
            }
        };
        let avail = run_end - addr;
        let pool = if seg.expandable {
            Pool::Small
        } else {
            pool_of(rounded)
        };
        let size = if rounded >= avail || !should_split(avail, rounded, pool) {
            avail
        } else {
            rounded
        };
        if let Some(k) = split_from {
            if k.0 < addr {
                if let Some(left) = seg.blocks.get_mut(&k) {
                    left.size = addr - k.0;
                }
            } else {
                seg.blocks.remove(&k);
            }
        }
        let k = key_at(&seg.blocks, addr);
        seg.blocks.insert(
            k,
            Blk {
                size,
                requested,
                state: BlockState::ActivePendingFree,
                estimated: true,
                frames,
            },
        );
        if split_from.is_some() && addr + size < run_end {
            let k = key_at(&seg.blocks, addr + size);
            seg.blocks.insert(k, free_block(run_end - addr - size));
        }
        if rounded > avail {
            Err(Why::TooLittleFreeSpace)
        } else {
            Ok(())
        }
    }

    fn undo_segment_alloc(&mut self, addr: u64, size: u64) -> Result<(), Why> {
        let k = self
            .segs
            .range((addr, 0)..=(addr, u32::MAX))
            .next()
            .map(|(&k, _)| k)
            .ok_or(Why::NoSegment)?;
        let seg = self.segs.remove(&k).ok_or(Why::NoSegment)?;
        if seg.blocks.values().any(|b| b.state != BlockState::Inactive) {
            Err(Why::SegmentInUse)
        } else if seg.size != size {
            Err(Why::SegmentSize)
        } else {
            Ok(())
        }
    }

    fn undo_segment_free(&mut self, addr: u64, size: u64, expandable: bool) -> Result<(), Why> {
        let hi = addr.checked_add(size).ok_or(Why::Overlap)?;
        if size == 0 || self.overlaps(addr, hi) {
            return Err(Why::Overlap);
        }
        let mut blocks = BTreeMap::new();
        blocks.insert((addr, 0), free_block(size));
        let k = key_at(&self.segs, addr);
        self.segs.insert(
            k,
            Arc::new(Seg {
                size,
                expandable,
                blocks,
            }),
        );
        Ok(())
    }

    /// Undoes mapping `addr..addr + size` into an expandable segment: the range leaves it.
    fn undo_segment_map(&mut self, addr: u64, size: u64) -> Result<(), Why> {
        let hi = addr.checked_add(size).ok_or(Why::NoSegment)?;
        let sk = self.seg_containing(addr).ok_or(Why::NoSegment)?;
        let end = self
            .segs
            .get(&sk)
            .map_or(0, |s| sk.0.saturating_add(s.size));
        if hi > end {
            return Err(Why::NoSegment);
        }
        let seg = Arc::unwrap_or_clone(self.segs.remove(&sk).ok_or(Why::NoSegment)?);
        let (mut left, mut right) = (BTreeMap::new(), BTreeMap::new());
        let mut in_use = false;
        for ((ba, n), b) in seg.blocks {
            let be = ba.saturating_add(b.size);
            if ba < hi && be > addr && b.state != BlockState::Inactive {
                in_use = true;
            }
            if ba < addr {
                left.insert(
                    (ba, n),
                    Blk {
                        size: be.min(addr) - ba,
                        ..b.clone()
                    },
                );
            }
            if be > hi {
                let from = ba.max(hi);
                right.insert(
                    (from, n),
                    Blk {
                        size: be - from,
                        ..b
                    },
                );
            }
        }
        if addr > sk.0 {
            self.segs.insert(
                sk,
                Arc::new(Seg {
                    size: addr - sk.0,
                    expandable: seg.expandable,
                    blocks: left,
                }),
            );
        }
        if end > hi {
            let k = key_at(&self.segs, hi);
            self.segs.insert(
                k,
                Arc::new(Seg {
                    size: end - hi,
                    expandable: seg.expandable,
                    blocks: right,
                }),
            );
        }
        if in_use {
            Err(Why::SegmentInUse)
        } else {
            Ok(())
        }
    }

    /// Undoes unmapping `addr..addr + size`: mapped again, joined to adjacent expandable segments
    /// (`MemoryViz.js` merges them the same way).
    fn undo_segment_unmap(&mut self, addr: u64, size: u64) -> Result<(), Why> {
        self.undo_segment_free(addr, size, true)?;
        let hi = addr + size;
        let prev = self
            .segs
            .range(..(addr, 0))
            .next_back()
            .filter(|&(&(a, _), s)| s.expandable && a.saturating_add(s.size) == addr)
            .map(|(&k, _)| k);
        let mut at = (addr, 0);
        if let Some(p) = prev {
            join(&mut self.segs, p, at);
            at = p;
        }
        let next = self
            .segs
            .range((hi, 0)..=(hi, u32::MAX))
            .find(|(_, s)| s.expandable)
            .map(|(&k, _)| k);
        if let Some(n) = next {
            join(&mut self.segs, at, n);
        }
        Ok(())
    }

    fn to_segments(&self) -> Vec<StateSegment> {
        self.segs
            .iter()
            .map(|(&(address, _), s)| StateSegment {
                address,
                total_size: s.size,
                blocks: s
                    .blocks
                    .iter()
                    .map(|(&(address, _), b)| StateBlock {
                        address,
                        size: b.size,
                        state: b.state.clone(),
                        requested_size: b.requested,
                        estimated: b.estimated,
                        frames: b.frames,
                    })
                    .collect(),
            })
            .collect()
    }
}

/// Frees block `k` of `seg` and merges it with free neighbours that touch it.
fn release(seg: &mut Seg, k: Key) {
    let Some(b) = seg.blocks.get_mut(&k) else {
        return;
    };
    *b = free_block(b.size);
    let mut size = b.size;
    let end = k.0.saturating_add(size);
    let next = seg
        .blocks
        .range((Bound::Excluded(k), Bound::Unbounded))
        .next()
        .filter(|&(&(a, _), n)| a == end && n.state == BlockState::Inactive)
        .map(|(&nk, n)| (nk, n.size));
    if let Some((nk, ns)) = next {
        seg.blocks.remove(&nk);
        size = size.saturating_add(ns);
        if let Some(b) = seg.blocks.get_mut(&k) {
            b.size = size;
        }
    }
    let prev = seg
        .blocks
        .range(..k)
        .next_back()
        .filter(|&(&(a, _), p)| p.state == BlockState::Inactive && a.saturating_add(p.size) == k.0)
        .map(|(&pk, _)| pk);
    if let Some(pk) = prev {
        seg.blocks.remove(&k);
        if let Some(p) = seg.blocks.get_mut(&pk) {
            p.size = p.size.saturating_add(size);
        }
    }
}

/// Joins segment `b` onto the end of segment `a` (adjacent), merging the free blocks that meet.
fn join(segs: &mut BTreeMap<Key, Arc<Seg>>, a: Key, b: Key) {
    let Some(tail) = segs.remove(&b) else {
        return;
    };
    let Some(head) = segs.get_mut(&a).map(Arc::make_mut) else {
        segs.insert(b, tail);
        return;
    };
    let tail = Arc::unwrap_or_clone(tail);
    head.size = head.size.saturating_add(tail.size);
    let meet = b.0;
    for (k, blk) in tail.blocks {
        let k = key_at(&head.blocks, k.0);
        head.blocks.insert(k, blk);
    }
    // The free block that starts where `a` ended merges into the one before it.
    let first = head
        .blocks
        .range((meet, 0)..=(meet, u32::MAX))
        .next()
        .filter(|(_, blk)| blk.state == BlockState::Inactive)
        .map(|(&k, _)| k);
    if let Some(k) = first {
        release(head, k);
    }
}

/// The state of one device's allocator at any event of its trace (see the module docs).
#[derive(Debug, Clone)]
pub struct History {
    /// The device.
    pub device: u32,
    events: Vec<Ev>,
    /// Live requested bytes after each event (the timeline's).
    requested: Vec<u64>,
    /// `(applied, state)`: the state after the first `applied` events, `applied` descending.
    checkpoints: Vec<(usize, DevState)>,
    interval: usize,
    /// Events that could not be undone against the later state (file and trace disagree).
    pub inconsistent: usize,
    /// The first few of them ([`Warning::CannotUndo`]).
    pub examples: Vec<Warning>,
    /// Per address, the `alloc` events there that carry a stack: `(event, frame list)`, in
    /// trace order ([`History::at`] gives an active block the stack of the latest one up to
    /// the event: the allocation that made it).
    alloc_frames: foldhash::HashMap<u64, Vec<(usize, u32)>>,
}

/// The `alloc` events of `events` that carry a stack, by address ([`History::alloc_frames`]).
fn alloc_frames(events: &[Ev]) -> foldhash::HashMap<u64, Vec<(usize, u32)>> {
    let mut by_addr: foldhash::HashMap<u64, Vec<(usize, u32)>> = foldhash::HashMap::default();
    for (i, e) in events.iter().enumerate() {
        if let (Op::Alloc, Some(addr)) = (e.op, e.addr)
            && e.frames != crate::torch::frames::NO_FRAMES
        {
            by_addr.entry(addr).or_default().push((i, e.frames));
        }
    }
    by_addr
}

impl History {
    /// Builds the history of `timeline`'s device in `s` with one backward pass over its trace
    /// (the timeline supplies the live requested bytes). Reports progress ([`crate::progress`]).
    ///
    /// # Errors
    /// [`Error::Cancelled`] when the current progress scope is cancelled.
    pub fn new(s: &Snapshot, timeline: &Timeline) -> Result<History, Error> {
        Self::build(s, timeline, MIN_INTERVAL)
    }

    /// The history of a device whose trace is empty: only the file's own state.
    pub fn file_state(s: &Snapshot, device: u32) -> History {
        let state =
            DevState::from_segments(s.segments.iter().filter(|g| g.device == i64::from(device)));
        History {
            device,
            events: Vec::new(),
            requested: Vec::new(),
            checkpoints: vec![(0, state)],
            interval: MIN_INTERVAL,
            inconsistent: 0,
            examples: Vec::new(),
            alloc_frames: foldhash::HashMap::default(),
        }
    }

    /// [`History::new`] with at least `min_interval` events between checkpoints.
    pub(super) fn build(
        s: &Snapshot,
        timeline: &Timeline,
        min_interval: usize,
    ) -> Result<History, Error> {
        let device = timeline.device;
        let requested: Vec<u64> = timeline.events.iter().map(|e| e.allocated).collect();
        let trace = s
            .device_traces
            .get(device as usize)
            .map_or(&[][..], Vec::as_slice);
        let events: Vec<Ev> = trace
            .iter()
            .map(|e| Ev {
                op: Op::of(&e.action),
                addr: e.addr,
                size: e.size,
                frames: e.frames,
            })
            .collect();
        let n = events.len();
        let mut state =
            DevState::from_segments(s.segments.iter().filter(|g| g.device == i64::from(device)));
        let per_state = state.block_count().max(1);
        let most = (MAX_CHECKPOINT_BLOCKS / per_state).clamp(1, MAX_CHECKPOINTS);
        let interval = n.div_ceil(most).max(min_interval).max(1);
        let mut checkpoints = vec![(n, state.clone())];
        let (mut inconsistent, mut examples) = (0usize, Vec::new());
        for (i, e) in events.iter().enumerate().rev() {
            if i % 4096 == 0 {
                crate::progress::report((n - i) as u64, n as u64)?;
            }
            if let Err(why) = state.undo(*e) {
                inconsistent += 1;
                if examples.len() < EXAMPLES {
                    examples.push(Warning::CannotUndo {
                        device,
                        event: i,
                        action: e.op.name(),
                        addr: e.addr,
                        size: e.size,
                        why,
                    });
                }
            }
            if i % interval == 0 {
                checkpoints.push((i, state.clone()));
            }
        }
        Ok(History {
            device,
            alloc_frames: alloc_frames(&events),
            events,
            requested,
            checkpoints,
            interval,
            inconsistent,
            examples,
        })
    }

    /// The state before the first event (the whole trace undone from the file's segments).
    pub fn before_first(&self) -> Vec<StateSegment> {
        self.checkpoints
            .last()
            .map_or_else(Vec::new, |(_, st)| st.to_segments())
    }

    /// Events in the trace.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether the trace is empty (the history holds only the file's state).
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// The state right after event `event` (clamped to the last; for an empty trace, the file's
    /// state with action `none`). At the last event it is the file's own segments.
    pub fn at(&self, event: usize) -> StateAt {
        let n = self.events.len();
        let index = event.min(n.saturating_sub(1));
        let applied = if n == 0 { 0 } else { index + 1 };
        // The nearest checkpoint at or after `applied`: checkpoints are descending.
        let start = self
            .checkpoints
            .iter()
            .rev()
            .find(|(c, _)| *c >= applied)
            .or_else(|| self.checkpoints.first());
        let (mut state, from) = match start {
            Some((c, st)) => (st.clone(), *c),
            None => (DevState::default(), applied),
        };
        for e in self
            .events
            .get(applied..from)
            .unwrap_or_default()
            .iter()
            .rev()
        {
            let _ = state.undo(*e);
        }
        let mut segments = state.to_segments();
        // A block shows the stack that allocated it, which PyTorch records on the `alloc` event:
        // a block put back by undoing a free holds the free event's stack (with
        // `_record_memory_history(stacks="all")` the freeing one), and a block of the file may
        // name none. Only a block allocated before the trace keeps what it has.
        for b in segments.iter_mut().flat_map(|s| &mut s.blocks) {
            if b.state == BlockState::Inactive {
                continue;
            }
            let latest = self.alloc_frames.get(&b.address).and_then(|l| {
                let upto = l.partition_point(|&(e, _)| e < applied);
                upto.checked_sub(1).and_then(|k| l.get(k))
            });
            if let Some(&(_, frames)) = latest {
                b.frames = frames;
            }
        }
        let reserved = segments
            .iter()
            .fold(0u64, |a, s| a.saturating_add(s.total_size));
        let allocated = segments
            .iter()
            .flat_map(|s| &s.blocks)
            .filter(|b| b.state == BlockState::ActiveAllocated)
            .fold(0u64, |a, b| a.saturating_add(b.size));
        let ev = self.events.get(index);
        StateAt {
            device: self.device,
            index,
            action: ev.map_or("none", |e| e.op.name()),
            addr: ev.and_then(|e| e.addr),
            size: ev.map_or(0, |e| e.size),
            frames: Vec::new(),
            frames_list: ev.map_or(crate::torch::frames::NO_FRAMES, |e| e.frames),
            reserved_bytes: reserved,
            allocated_bytes: allocated,
            requested_bytes: self.requested.get(index).copied().unwrap_or(0),
            segments,
        }
    }

    /// [`History::at`] with the event's frames resolved from `table` (the snapshot's).
    pub fn at_with_frames(
        &self,
        event: usize,
        table: &crate::torch::frames::FrameTable,
    ) -> StateAt {
        let mut at = self.at(event);
        at.frames = table.frames(at.frames_list);
        at
    }

    /// Events between two checkpoints (the most a call to [`History::at`] undoes).
    pub fn interval(&self) -> usize {
        self.interval
    }
}
