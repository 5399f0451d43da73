//! What the settings of [`super::AllocatorConfig`] add to a miss (`malloc` in
//! `c10/cuda/CUDACachingAllocator.cpp`): expandable segments (`alloc_block` →
//! `try_allocate_expandable_block`, and `unmap_block` on release), garbage collection
//! (`garbage_collect_cached_blocks`) and releasing oversize blocks
//! (`release_available_cached_blocks`). See `config.rs` for the rules in words.

use super::rules::{LARGE_BUFFER, SMALL_BUFFER};
use super::{Block, CachingAllocator, Pool, Segment};

/// Virtual address space reserved for each expandable segment (bytes, 1 TiB: PyTorch reserves
/// the device's whole memory; any range larger than what a trace maps would do).
pub(super) const EXPANDABLE_SPAN: u64 = 1 << 40;

/// `ExpandableSegment`'s page (`segment_size`): `kSmallBuffer` (2 MiB) for the small pool,
/// `kLargeBuffer` (20 MiB) for the large one.
pub fn page_size(pool: Pool) -> u64 {
    match pool {
        Pool::Small => SMALL_BUFFER,
        Pool::Large => LARGE_BUFFER,
    }
}

/// Where a block from unmapped runs will start, the piece it starts in (if any), and the runs
/// to map (address, bytes).
type Plan = (u64, Option<usize>, Vec<(u64, u64)>);

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

    /// The base of the expandable range of `pool` and `stream`, if it has one.
    fn range_base(&self, pool: Pool, stream: u64) -> Option<u64> {
        self.ranges
            .iter()
            .find(|r| r.0 == pool && r.1 == stream)
            .map(|r| r.2)
    }

    /// The live pieces (mapped runs, each one segment) of the expandable range at `base`, in
    /// address order.
    fn pieces(&self, base: u64) -> Vec<usize> {
        let owner = self.ranges.iter().find(|r| r.2 == base).map(|r| (r.0, r.1));
        let mut p: Vec<usize> = (0..self.segments.len())
            .filter(|&s| {
                let g = &self.segments[s];
                g.live
                    && g.expandable
                    && owner.is_none_or(|o| o == (g.pool, g.stream))
                    && g.address >= base
                    && g.address - base < EXPANDABLE_SPAN
            })
            .collect();
        p.sort_unstable_by_key(|&s| self.segments[s].address);
        p
    }

    fn last_block(&self, s: usize) -> usize {
        let mut b = self.segments[s].first;
        while let Some(n) = self.blocks[b].next {
            b = n;
        }
        b
    }

    /// `try_allocate_expandable_block` (with `find_expandable_block`): the lowest-addressed
    /// unmapped run of the pool's and stream's range — together with the free block right
    /// before it, and past it free blocks and further unmapped runs while they last — that holds
    /// `rounded` bytes is mapped in whole pages (`map_block`) as far as the request needs; the
    /// mapped pages join their free neighbours, and two pieces of the range that meet become
    /// one segment. A range (one segment created) is made on the first request. Answers the free
    /// block that now holds `rounded` bytes (not in a free list), `None` when the pages needed
    /// do not fit under the capacity (then nothing is mapped).
    fn expand(&mut self, rounded: u64, pool: Pool, stream: u64) -> Option<usize> {
        let page = page_size(pool);
        let (base, new_range) = match self.range_base(pool, stream) {
            Some(b) => (b, false),
            None => (self.next_address, true),
        };
        let end = base.checked_add(EXPANDABLE_SPAN)?;
        let pieces = self.pieces(base);
        let span = |s: usize| {
            let g = &self.segments[s];
            (g.address, g.address + g.size)
        };
        // Unmapped run `i`: before piece `i` (the last one runs to the range's end).
        let gap = |i: usize| {
            let from = if i == 0 { base } else { span(pieces[i - 1]).1 };
            let to = pieces.get(i).map_or(end, |&s| span(s).0);
            (from, to)
        };
        let mut plan: Option<Plan> = None;
        'runs: for i in 0..=pieces.len() {
            let (from, to) = gap(i);
            if from >= to {
                continue;
            }
            let before = (i > 0)
                .then(|| self.last_block(pieces[i - 1]))
                .filter(|&t| !self.blocks[t].allocated);
            let start = before.map_or(from, |t| self.blocks[t].address);
            let mut have = before.map_or(0, |t| self.blocks[t].size);
            let mut maps = Vec::new();
            let mut j = i;
            loop {
                let (from, to) = gap(j);
                let take = rounded
                    .saturating_sub(have)
                    .div_ceil(page)
                    .checked_mul(page)?
                    .min(to - from);
                if take > 0 {
                    maps.push((from, take));
                }
                have += take;
                if have >= rounded {
                    plan = Some((start, before.map(|_| pieces[i - 1]), maps));
                    break 'runs;
                }
                // The whole run mapped: the piece after it continues the block while it is free.
                let Some(&next) = pieces.get(j) else {
                    // Past the range's end.
                    return None;
                };
                let first = self.segments[next].first;
                if self.blocks[first].allocated {
                    continue 'runs;
                }
                have += self.blocks[first].size;
                if have >= rounded {
                    plan = Some((start, before.map(|_| pieces[i - 1]), maps));
                    break 'runs;
                }
                if self.blocks[first].next.is_some() {
                    continue 'runs;
                }
                j += 1;
            }
        }
        let (start, mut seg, maps) = plan?;
        let total = maps.iter().map(|m| m.1).sum::<u64>();
        match self.reserved.checked_add(total) {
            Some(r) if r <= self.capacity => {}
            _ => return None,
        }
        if new_range {
            self.next_address = end;
            self.ranges.push((pool, stream, base));
            self.segments_created += 1;
        }
        for (at, len) in maps {
            seg = Some(self.map_at(base, at, len, pool, stream));
        }
        let s = seg?;
        let mut b = Some(self.segments[s].first);
        while let Some(i) = b {
            if self.blocks[i].address == start {
                self.remove_free(i);
                return Some(i);
            }
            b = self.blocks[i].next;
        }
        None
    }

    /// Maps `at..at + len` of the range at `base` (`map_block`): a free block joined to the
    /// piece ending at `at` (merged with its free last block) or a new piece, which then joins
    /// a piece starting at `at + len`. Returns the piece that holds it.
    fn map_at(&mut self, base: u64, at: u64, len: u64, pool: Pool, stream: u64) -> usize {
        let pieces = self.pieces(base);
        let ends_at = |a: &CachingAllocator, s: usize| {
            let g = &a.segments[s];
            g.address + g.size
        };
        let left = pieces.iter().copied().find(|&s| ends_at(self, s) == at);
        let right = pieces
            .iter()
            .copied()
            .find(|&s| self.segments[s].address == at + len);
        let s = match left {
            Some(l) => {
                let t = self.last_block(l);
                if self.blocks[t].allocated {
                    let b = self.new_block(Block {
                        segment: l,
                        address: at,
                        size: len,
                        requested: 0,
                        allocated: false,
                        prev: Some(t),
                        next: None,
                        live: true,
                        freed_at: 0,
                    });
                    self.blocks[t].next = Some(b);
                    self.insert_free(b);
                } else {
                    self.remove_free(t);
                    self.blocks[t].size += len;
                    self.insert_free(t);
                }
                self.segments[l].size += len;
                l
            }
            None => {
                let (s, b) = self.push_free_segment(at, len, (pool, stream), true);
                self.insert_free(b);
                s
            }
        };
        self.segments[s].version += 1;
        self.reserved += len;
        self.segment_maps += 1;
        if let Some(r) = right {
            self.join(s, r);
        }
        s
    }

    /// Joins piece `r` (starting where piece `s` ends) into `s`, merging the free blocks that
    /// meet.
    fn join(&mut self, s: usize, r: usize) {
        let t = self.last_block(s);
        let f = self.segments[r].first;
        let mut b = Some(f);
        while let Some(i) = b {
            let free = !self.blocks[i].allocated;
            if free {
                self.remove_free(i);
            }
            self.blocks[i].segment = s;
            if free {
                self.insert_free(i);
            }
            b = self.blocks[i].next;
        }
        self.blocks[t].next = Some(f);
        self.blocks[f].prev = Some(t);
        self.segments[s].size += self.segments[r].size;
        self.segments[s].version += 1;
        self.segments[r].live = false;
        if !self.blocks[t].allocated && !self.blocks[f].allocated {
            self.remove_free(t);
            self.remove_free(f);
            self.absorb(t, f);
            self.insert_free(t);
        }
    }

    /// Unmaps the whole pages inside free block `b` of an expandable segment (`unmap_block`;
    /// pages are counted from the range's base). What is left of the block before and after
    /// them stays mapped and free; the segment splits in two where they were, and a segment
    /// left with nothing mapped is released. Returns the bytes unmapped.
    pub(super) fn unmap_free_block(&mut self, b: usize) -> u64 {
        let s = self.blocks[b].segment;
        let (pool, stream) = (self.segments[s].pool, self.segments[s].stream);
        let Some(base) = self.range_base(pool, stream) else {
            return 0;
        };
        let page = page_size(pool);
        let (lo, hi) = (
            self.blocks[b].address,
            self.blocks[b].address + self.blocks[b].size,
        );
        let from = base + (lo - base).div_ceil(page) * page;
        let to = base + (hi - base) / page * page;
        if self.blocks[b].allocated || from >= to {
            return 0;
        }
        self.remove_free(b);
        let (prev, next) = (self.blocks[b].prev, self.blocks[b].next);
        let (seg_start, seg_end) = (
            self.segments[s].address,
            self.segments[s].address + self.segments[s].size,
        );
        // What is left before the unmapped pages keeps block `b`; after them, a new block.
        let head = (from > lo).then_some(b);
        match head {
            Some(h) => {
                self.blocks[h].size = from - lo;
                self.blocks[h].next = None;
            }
            None => {
                self.blocks[b].live = false;
                self.recycled.push(b);
            }
        }
        let tail = (hi > to).then(|| {
            self.new_block(Block {
                segment: s,
                address: to,
                size: hi - to,
                requested: 0,
                allocated: false,
                prev: None,
                next,
                live: true,
                freed_at: 0,
            })
        });
        let left_last = head.or(prev);
        let right_first = tail.or(next);
        if let Some(l) = left_last {
            self.blocks[l].next = None;
        }
        if let Some(r) = right_first {
            self.blocks[r].prev = None;
        }
        if let (Some(t), Some(n)) = (tail, next) {
            self.blocks[n].prev = Some(t);
        }
        let right_seg = match (left_last, right_first) {
            (Some(_), Some(rf)) => {
                self.segments[s].size = from - seg_start;
                let r = self.segments.len();
                self.segments.push(Segment {
                    address: to,
                    size: seg_end - to,
                    pool,
                    stream,
                    first: rf,
                    live: true,
                    version: 0,
                    expandable: true,
                });
                let mut c = Some(rf);
                while let Some(i) = c {
                    self.blocks[i].segment = r;
                    c = self.blocks[i].next;
                }
                Some(r)
            }
            (Some(_), None) => {
                self.segments[s].size = from - seg_start;
                None
            }
            (None, Some(rf)) => {
                let g = &mut self.segments[s];
                (g.address, g.size, g.first) = (to, seg_end - to, rf);
                None
            }
            (None, None) => {
                self.segments[s].live = false;
                self.segments_released += 1;
                None
            }
        };
        if let Some(h) = head {
            self.insert_free(h);
        }
        if let Some(t) = tail {
            if let Some(r) = right_seg {
                self.blocks[t].segment = r;
            }
            self.insert_free(t);
        }
        self.segments[s].version += 1;
        self.reserved -= to - from;
        to - from
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
