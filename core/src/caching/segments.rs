//! Blocks and segments: block slots (recycled once merged away), a new segment as one free
//! block (`cudaMalloc`), merging a freed block with its neighbour (rule 6), and releasing
//! segments that are one whole free block (`release_cached_blocks`, or one recorded
//! `segment_free`).

use super::rules::ROUND_LARGE;
use super::{Block, CachingAllocator, Pool, Segment};

impl CachingAllocator {
    pub(super) fn new_block(&mut self, b: Block) -> usize {
        if let Some(i) = self.recycled.pop() {
            self.blocks[i] = b;
            i
        } else {
            self.blocks.push(b);
            self.blocks.len() - 1
        }
    }

    pub(super) fn new_segment(&mut self, size: u64, pool: Pool, stream: u64) -> Option<usize> {
        // A segment must fit under the capacity and in the (simulated) address space: a size
        // near 2⁶⁴ (a replayed trace can ask for one) is refused, never wrapped around.
        let span = size.div_ceil(ROUND_LARGE).checked_mul(ROUND_LARGE)?;
        let next_address = self.next_address.checked_add(span)?;
        match self.reserved.checked_add(size) {
            Some(r) if r <= self.capacity => {}
            _ => return None,
        }
        let address = self.next_address;
        self.next_address = next_address;
        let (_, b) = self.push_free_segment(address, size, (pool, stream), false);
        self.reserved += size;
        self.segments_created += 1;
        Some(b)
    }

    /// Adds a live segment at `address` of `size` bytes holding one free block (not yet in a
    /// free list, not yet counted in reserved); answers the segment and the block.
    pub(super) fn push_free_segment(
        &mut self,
        address: u64,
        size: u64,
        (pool, stream): (Pool, u64),
        expandable: bool,
    ) -> (usize, usize) {
        let seg = self.segments.len();
        let b = self.new_block(Block {
            segment: seg,
            address,
            size,
            requested: 0,
            allocated: false,
            prev: None,
            next: None,
            live: true,
            freed_at: 0,
        });
        self.segments.push(Segment {
            address,
            size,
            pool,
            stream,
            first: b,
            live: true,
            version: 0,
            expandable,
        });
        (seg, b)
    }

    /// Merges block `b` (right after `a`, same segment) into `a`.
    pub(super) fn absorb(&mut self, a: usize, b: usize) {
        let (size, next) = (self.blocks[b].size, self.blocks[b].next);
        self.blocks[a].size += size;
        self.blocks[a].next = next;
        if let Some(n) = next {
            self.blocks[n].prev = Some(a);
        }
        self.blocks[b].live = false;
        self.recycled.push(b);
    }

    /// `release_cached_blocks` (`torch.cuda.empty_cache()`, `release_blocks`): frees every
    /// segment that is one whole free block, and unmaps the whole free pages inside every free
    /// block of an expandable segment (`unmap_block`). Returns the bytes released.
    pub fn empty_cache(&mut self) -> u64 {
        let mut released = 0;
        for s in 0..self.segments.len() {
            let seg = &self.segments[s];
            if seg.live && !seg.expandable {
                released += self.release_whole(seg.first);
            }
        }
        released + self.unmap_cached_pages()
    }

    /// The expandable half of [`Self::empty_cache`]: unmaps the whole free pages inside every
    /// free block of an expandable segment (`release_blocks` → `unmap_block`, what a recorded
    /// run of `segment_unmap` events did). Returns the bytes unmapped.
    pub fn unmap_cached_pages(&mut self) -> u64 {
        let mut expandable_free = Vec::new();
        for seg in self.segments.iter().filter(|g| g.live && g.expandable) {
            let mut b = Some(seg.first);
            while let Some(i) = b {
                if !self.blocks[i].allocated {
                    expandable_free.push(i);
                }
                b = self.blocks[i].next;
            }
        }
        // Collected first: unmapping splits segments and moves blocks between them.
        expandable_free
            .into_iter()
            .map(|b| self.unmap_free_block(b))
            .sum()
    }

    /// Releases the segment of block `first` if the block is the whole (non-expandable)
    /// segment and free (`release_block`); returns the bytes released.
    pub(super) fn release_whole(&mut self, first: usize) -> u64 {
        let b = &self.blocks[first];
        let s = b.segment;
        let seg = &self.segments[s];
        if b.allocated || b.prev.is_some() || b.next.is_some() || !seg.live || seg.expandable {
            return 0;
        }
        let size = seg.size;
        self.remove_free(first);
        self.blocks[first].live = false;
        self.recycled.push(first);
        self.segments[s].live = false;
        self.reserved -= size;
        self.segments_released += 1;
        size
    }

    /// Releases the whole-free (not expandable) segment of `size` bytes at `address` on
    /// `stream` — a recorded `segment_free` of a segment held at the file's own address;
    /// returns whether there was one.
    pub fn release_segment_at(&mut self, address: u64, size: u64, stream: u64) -> bool {
        let key = |i| (stream, size, address, i);
        let found = self
            .free
            .iter()
            .flat_map(|set| set.range(key(0)..=key(usize::MAX)))
            .map(|k| k.3)
            .next();
        found.is_some_and(|b| self.release_whole(b) > 0)
    }

    /// Releases one whole-free segment of exactly `size` bytes on `stream` (what a recorded
    /// `segment_free` event did); returns whether one existed.
    pub fn release_segment_of_size(&mut self, size: u64, stream: u64) -> bool {
        // A whole-free segment is one free block with no neighbours, so it sits in a free list
        // under (stream, size): look there rather than scanning every segment ever created (a
        // replayed trace of a million segment frees would otherwise take 10¹² steps). The first
        // such segment in creation order is released, as before.
        let found = self
            .free
            .iter()
            .flat_map(|set| set.range((stream, size, 0, 0)..=(stream, size, u64::MAX, usize::MAX)))
            .map(|k| k.3)
            .filter(|&i| {
                let b = &self.blocks[i];
                b.prev.is_none()
                    && b.next.is_none()
                    && self.segments[b.segment].size == size
                    && !self.segments[b.segment].expandable
            })
            .map(|i| self.blocks[i].segment)
            .min();
        match found {
            Some(s) => {
                let first = self.segments[s].first;
                self.remove_free(first);
                self.blocks[first].live = false;
                self.recycled.push(first);
                self.segments[s].live = false;
                self.reserved -= size;
                self.segments_released += 1;
                true
            }
            None => false,
        }
    }
}
