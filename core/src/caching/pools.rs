//! The free lists: one ordered set per pool of the free blocks keyed by (stream, size,
//! address), and rule 4's best fit over it.

use super::{CachingAllocator, Pool};

impl CachingAllocator {
    pub(super) fn pool_index(p: Pool) -> usize {
        match p {
            Pool::Small => 0,
            Pool::Large => 1,
        }
    }

    pub(super) fn key(&self, i: usize) -> (u64, u64, u64, usize) {
        let b = &self.blocks[i];
        (self.segments[b.segment].stream, b.size, b.address, i)
    }

    pub(super) fn insert_free(&mut self, i: usize) {
        self.blocks[i].freed_at = self.free_calls;
        let pool = self.segments[self.blocks[i].segment].pool;
        let k = self.key(i);
        self.free[Self::pool_index(pool)].insert(k);
    }

    pub(super) fn remove_free(&mut self, i: usize) {
        let pool = self.segments[self.blocks[i].segment].pool;
        let k = self.key(i);
        self.free[Self::pool_index(pool)].remove(&k);
    }

    /// Rule 4: the best-fit free block for a rounded request on `stream`.
    pub(super) fn best_fit(&self, rounded: u64, pool: Pool, stream: u64) -> Option<usize> {
        self.free[Self::pool_index(pool)]
            .range((stream, rounded, 0, 0)..)
            .next()
            .filter(|k| k.0 == stream)
            .map(|k| k.3)
    }

    /// Rule 4 with `max_split_size` (`get_free_block`): the best fit, except that a request
    /// under `max_split_size` takes no block of at least that size, and a request of at least
    /// that size no block `max_non_split_rounding` (`kLargeBuffer`, 20 MiB, by default) or more
    /// larger than itself.
    pub(super) fn get_free_block(&self, rounded: u64, pool: Pool, stream: u64) -> Option<usize> {
        let mut b = self.best_fit(rounded, pool, stream)?;
        if self.config.expandable_segments {
            b = self.expandable_best_fit(b, pool, stream);
        }
        let size = self.blocks[b].size;
        let max_split = self.config.max_split_size;
        if rounded < max_split && size >= max_split {
            return None;
        }
        if rounded >= max_split
            && size >= rounded.saturating_add(self.config.max_non_split_rounding)
        {
            return None;
        }
        Some(b)
    }

    /// Rule 4 under expandable segments (`get_free_block` in `CUDACachingAllocator.cpp`, the
    /// `expandable_size` walk): a free block of an expandable segment ranks by its size plus the
    /// unmapped space right after it, and from the best fit `first` the search moves on to the
    /// next free block in (stream, size, address) order while that one ranks smaller. A block at
    /// the edge of the mapped pages — which could grow in place — is so kept for requests that
    /// need more, and an interior block a little larger serves this one.
    fn expandable_best_fit(&self, first: usize, pool: Pool, stream: u64) -> usize {
        let mut it = first;
        let after_first = self.free[Self::pool_index(pool)]
            .range(self.key(first)..)
            .skip(1);
        for k in after_first {
            let in_expandable = self.segments[self.blocks[it].segment].expandable;
            if !in_expandable || k.0 != stream {
                break;
            }
            if self.expandable_size(k.3) < self.expandable_size(it) {
                it = k.3;
            } else {
                break;
            }
        }
        it
    }

    /// A free block's size plus, for the last block of an expandable segment's mapped pages,
    /// the unmapped bytes after it: up to the next mapped piece of its range or the range's end
    /// (PyTorch's `b->size + (b->next && !b->next->mapped ? b->next->size : 0)`).
    fn expandable_size(&self, i: usize) -> u64 {
        let b = &self.blocks[i];
        let seg = &self.segments[b.segment];
        if !seg.expandable || b.next.is_some() {
            return b.size;
        }
        let end = b.address + b.size;
        let Some(&(_, _, base)) = self
            .ranges
            .iter()
            .find(|r| r.0 == seg.pool && r.1 == seg.stream && end >= r.2)
        else {
            return b.size;
        };
        let range_end = base.saturating_add(super::expandable::EXPANDABLE_SPAN);
        let next_piece = self
            .segments
            .iter()
            .filter(|g| g.live && g.expandable && (g.pool, g.stream) == (seg.pool, seg.stream))
            .filter(|g| g.address >= end && g.address < range_end)
            .map(|g| g.address)
            .min()
            .unwrap_or(range_end);
        b.size + next_piece.saturating_sub(end)
    }
}
