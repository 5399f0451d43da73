//! Starting the simulator from a recorded state instead of an empty allocator: the segments and
//! blocks a trace that starts mid-run found in place (rebuilt from a snapshot), so that its
//! events can be replayed forward from there.

use super::expandable::EXPANDABLE_SPAN;
use super::rules::ROUND_LARGE;
use super::{Block, CachingAllocator, Pool};

/// One block of a [`SeedSegment`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeedBlock {
    /// Address.
    pub address: u64,
    /// Size (bytes).
    pub size: u64,
    /// Bytes asked for (bytes; 0 for a free block).
    pub requested: u64,
    /// In use (allocated, or freed and waiting for its stream events) rather than cached free.
    pub allocated: bool,
}

/// A segment to start from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedSegment {
    /// Address.
    pub address: u64,
    /// Size (bytes).
    pub size: u64,
    /// Pool.
    pub pool: Pool,
    /// Stream (a CUDA-graph pool's segments take a stream no request names, so that only their
    /// own blocks' frees touch them).
    pub stream: u64,
    /// A mapped piece of an expandable segment's range.
    pub expandable: bool,
    /// Blocks in any order; the space they leave uncovered is free, a block that overlaps an
    /// earlier one or runs past the segment is cut to fit.
    pub blocks: Vec<SeedBlock>,
}

impl CachingAllocator {
    /// Adds `segments` as they are (counted in reserved, allocated and requested, not in
    /// [`Self::segments_created`]); free blocks that touch merge, as `free_block` would have
    /// merged them. An expandable piece joins its pool's and stream's range, whose base is the
    /// lowest such piece. New segments are placed past every seeded one. Answers the handle of
    /// every allocated block, by address (for [`Self::free`]).
    pub fn seed(&mut self, segments: &[SeedSegment]) -> Vec<(u64, usize)> {
        let mut handles = Vec::new();
        let mut order: Vec<&SeedSegment> = segments.iter().filter(|g| g.size > 0).collect();
        order.sort_by_key(|g| g.address);
        for g in &order {
            if g.expandable && !self.ranges.iter().any(|r| r.0 == g.pool && r.1 == g.stream) {
                self.ranges.push((g.pool, g.stream, g.address));
            }
            self.seed_segment(g, &mut handles);
        }
        let top = order
            .iter()
            .map(|g| g.address.saturating_add(g.size))
            .max()
            .unwrap_or(0);
        let past = top
            .saturating_add(EXPANDABLE_SPAN)
            .div_ceil(ROUND_LARGE)
            .saturating_mul(ROUND_LARGE);
        self.next_address = self.next_address.max(past);
        handles
    }

    fn seed_segment(&mut self, g: &SeedSegment, handles: &mut Vec<(u64, usize)>) {
        let end = g.address.saturating_add(g.size);
        let mut blocks: Vec<SeedBlock> = g.blocks.clone();
        blocks.sort_by_key(|b| b.address);
        // The segment's blocks tiling it: gaps become free blocks, overlaps are cut.
        let mut tiles: Vec<SeedBlock> = Vec::new();
        let mut cursor = g.address;
        for b in blocks {
            let from = b.address.max(cursor);
            let to = b.address.saturating_add(b.size).min(end);
            if from >= to {
                continue;
            }
            if from > cursor {
                tiles.push(free_tile(cursor, from - cursor));
            }
            tiles.push(SeedBlock {
                address: from,
                size: to - from,
                requested: if b.allocated { b.requested } else { 0 },
                allocated: b.allocated,
            });
            cursor = to;
        }
        if cursor < end {
            tiles.push(free_tile(cursor, end - cursor));
        }
        // Touching free blocks are one.
        let mut merged: Vec<SeedBlock> = Vec::with_capacity(tiles.len());
        for t in tiles {
            match merged.last_mut() {
                Some(last) if !last.allocated && !t.allocated => last.size += t.size,
                _ => merged.push(t),
            }
        }
        let Some(first) = merged.first() else {
            return;
        };
        let (s, b0) = self.push_free_segment(g.address, g.size, (g.pool, g.stream), g.expandable);
        self.blocks[b0].size = first.size;
        let mut ids = vec![b0];
        for t in merged.iter().skip(1) {
            let prev = ids.last().copied();
            let i = self.new_block(Block {
                segment: s,
                address: t.address,
                size: t.size,
                requested: 0,
                allocated: false,
                prev,
                next: None,
                live: true,
                freed_at: 0,
            });
            if let Some(p) = prev {
                self.blocks[p].next = Some(i);
            }
            ids.push(i);
        }
        for (&i, t) in ids.iter().zip(&merged) {
            if t.allocated {
                self.blocks[i].allocated = true;
                self.blocks[i].requested = t.requested;
                self.allocated += t.size;
                self.requested += t.requested;
                handles.push((t.address, i));
            } else {
                self.insert_free(i);
            }
        }
        self.reserved += g.size;
    }
}

fn free_tile(address: u64, size: u64) -> SeedBlock {
    SeedBlock {
        address,
        size,
        requested: 0,
        allocated: false,
    }
}
