//! What the settings of [`super::AllocatorConfig`] add to a miss (`malloc` in
//! `c10/cuda/CUDACachingAllocator.cpp`): expandable segments (`alloc_block` →
//! `try_allocate_expandable_block`, and unmapping on release), garbage collection
//! (`garbage_collect_cached_blocks`) and releasing oversize blocks
//! (`release_available_cached_blocks`). See `config.rs` for the rules in words.

use super::rules::{LARGE_BUFFER, SMALL_BUFFER};
use super::{Block, CachingAllocator, Pool, Segment};

/// Virtual address space reserved for each expandable segment (bytes, 1 TiB: PyTorch reserves
/// the device's whole memory; any range larger than what a trace maps would do).
const EXPANDABLE_SPAN: u64 = 1 << 40;

/// `ExpandableSegment`'s page (`segment_size`): `kSmallBuffer` (2 MiB) for the small pool,
/// `kLargeBuffer` (20 MiB) for the large one.
pub fn page_size(pool: Pool) -> u64 {
    match pool {
        Pool::Small => SMALL_BUFFER,
        Pool::Large => LARGE_BUFFER,
    }
}

impl CachingAllocator {
    /// Whether garbage collection runs: a threshold is set, and so is a memory limit (PyTorch
    /// collects only under `set_per_process_memory_fraction`, `set_fraction`).
    pub(super) fn gc_enabled(&self) -> bool {
        self.config.garbage_collection_threshold > 0.0 && self.capacity < u64::MAX
    }

    /// `alloc_block`: a new segment of `seg` bytes, or with expandable segments `rounded` bytes
    /// mapped into this pool's and stream's range; `None` when the device is full.
    pub(super) fn alloc_block(
        &mut self,
        rounded: u64,
        seg: u64,
        pool: Pool,
        stream: u64,
    ) -> Option<usize> {
        if self.config.expandable_segments {
            self.expand(rounded, pool, stream)
        } else {
            self.new_segment(seg, pool, stream)
        }
    }

    /// `try_allocate_expandable_block`: the free block at the end of the pool's and stream's
    /// expandable segment (one is created, empty, if there is none) grown by whole pages
    /// (`map_block`) until it holds `rounded` bytes; answers the block (not in a free list).
    fn expand(&mut self, rounded: u64, pool: Pool, stream: u64) -> Option<usize> {
        let page = page_size(pool);
        let found = (0..self.segments.len()).find(|&s| {
            let g = &self.segments[s];
            g.live && g.expandable && g.pool == pool && g.stream == stream
        });
        let tail = found.map(|s| {
            let mut b = self.segments[s].first;
            while let Some(n) = self.blocks[b].next {
                b = n;
            }
            b
        });
        let have = tail
            .filter(|&t| !self.blocks[t].allocated)
            .map_or(0, |t| self.blocks[t].size);
        let map = rounded
            .saturating_sub(have)
            .div_ceil(page)
            .checked_mul(page)?;
        match self.reserved.checked_add(map) {
            Some(r) if r <= self.capacity => {}
            _ => return None,
        }
        let block = match (found, tail) {
            (Some(s), Some(t)) => {
                let seg_end = self.segments[s].address + self.segments[s].size;
                if seg_end.checked_add(map)? > self.segments[s].address + EXPANDABLE_SPAN {
                    return None;
                }
                if self.blocks[t].allocated {
                    let b = self.new_block(Block {
                        segment: s,
                        address: seg_end,
                        size: map,
                        requested: 0,
                        allocated: false,
                        prev: Some(t),
                        next: None,
                        live: true,
                        freed_at: 0,
                    });
                    self.blocks[t].next = Some(b);
                    b
                } else {
                    self.remove_free(t);
                    self.blocks[t].size += map;
                    t
                }
            }
            _ => {
                let address = self.next_address;
                self.next_address = address.checked_add(EXPANDABLE_SPAN)?;
                let s = self.segments.len();
                let b = self.new_block(Block {
                    segment: s,
                    address,
                    size: 0,
                    requested: 0,
                    allocated: false,
                    prev: None,
                    next: None,
                    live: true,
                    freed_at: 0,
                });
                self.blocks[b].size = map;
                self.segments.push(Segment {
                    address,
                    size: 0,
                    pool,
                    stream,
                    first: b,
                    live: true,
                    version: 0,
                    expandable: true,
                });
                self.segments_created += 1;
                b
            }
        };
        let s = self.blocks[block].segment;
        self.segments[s].size += map;
        self.segments[s].version += 1;
        self.reserved += map;
        self.segment_maps += 1;
        Some(block)
    }

    /// Unmaps the whole pages of the free block at the end of expandable segment `s`
    /// (`unmap_block`); a segment left with nothing mapped is released. Returns the bytes.
    pub(super) fn unmap_tail(&mut self, s: usize) -> u64 {
        let page = page_size(self.segments[s].pool);
        let base = self.segments[s].address;
        let end = base + self.segments[s].size;
        let mut t = self.segments[s].first;
        while let Some(n) = self.blocks[t].next {
            t = n;
        }
        if self.blocks[t].allocated {
            return 0;
        }
        let from = base + (self.blocks[t].address - base).div_ceil(page) * page;
        if from >= end {
            return 0;
        }
        let unmapped = end - from;
        self.remove_free(t);
        self.blocks[t].size -= unmapped;
        self.segments[s].size -= unmapped;
        self.segments[s].version += 1;
        self.reserved -= unmapped;
        if self.blocks[t].size == 0 {
            self.blocks[t].live = false;
            self.recycled.push(t);
            match self.blocks[t].prev {
                Some(p) => self.blocks[p].next = None,
                None => {
                    self.segments[s].live = false;
                    self.segments_released += 1;
                }
            }
        } else {
            self.insert_free(t);
        }
        unmapped
    }

    /// `release_available_cached_blocks`: with `max_split_size` set, releases the smallest
    /// cached oversize block (a whole segment) of the large pool and this stream that holds
    /// `rounded` bytes, or else the largest ones, from the top, while they are oversize, until
    /// they add up to `rounded`. Answers whether that freed enough (always false without
    /// `max_split_size`).
    pub(super) fn release_available(&mut self, rounded: u64, stream: u64) -> bool {
        let max_split = self.config.max_split_size;
        if max_split == u64::MAX {
            return false;
        }
        let key = rounded.max(max_split);
        let large = Self::pool_index(Pool::Large);
        let one = self.free[large]
            .range((stream, key, 0, 0)..)
            .next()
            .filter(|k| k.0 == stream)
            .map(|k| k.3);
        if let Some(b) = one {
            return self.release_whole(b) > 0;
        }
        let oversize: Vec<usize> = self.free[large]
            .range((stream, max_split, 0, 0)..(stream, key, 0, 0))
            .rev()
            .map(|k| k.3)
            .collect();
        let mut released = 0;
        for b in oversize {
            if released >= rounded {
                break;
            }
            released += self.release_whole(b);
        }
        released >= rounded
    }

    /// `garbage_collect_cached_blocks`: once reserved exceeds threshold × the memory limit,
    /// releases the large pool's cached whole-segment blocks whose age (`get_free_block` calls
    /// since they were freed) is at least the average age of those blocks, pass after pass with
    /// the average of the rest, until reserved is back under the threshold or none is released.
    pub(super) fn garbage_collect(&mut self) {
        let threshold = (self.config.garbage_collection_threshold * self.capacity as f64) as u64;
        if self.reserved <= threshold {
            return;
        }
        let target = self.reserved - threshold;
        let large = Self::pool_index(Pool::Large);
        let whole = |a: &CachingAllocator, b: usize| {
            let blk = &a.blocks[b];
            blk.prev.is_none() && blk.next.is_none() && !a.segments[blk.segment].expandable
        };
        let candidates: Vec<usize> = self.free[large]
            .iter()
            .map(|k| k.3)
            .filter(|&b| whole(self, b))
            .collect();
        let age = |a: &CachingAllocator, b: usize| a.free_calls - a.blocks[b].freed_at;
        let mut total: u64 = candidates.iter().map(|&b| age(self, b)).sum();
        let mut count = candidates.len() as u64;
        let mut reclaimed = 0u64;
        let mut freed = true;
        let mut left = candidates;
        while reclaimed < target && freed && count > 0 {
            let average = total as f64 / count as f64;
            freed = false;
            let mut keep = Vec::with_capacity(left.len());
            for b in left {
                let a = age(self, b);
                if a as f64 >= average {
                    let size = self.release_whole(b);
                    if size > 0 {
                        freed = true;
                        reclaimed += size;
                        total -= a;
                        count -= 1;
                        continue;
                    }
                }
                keep.push(b);
            }
            left = keep;
        }
    }
}
