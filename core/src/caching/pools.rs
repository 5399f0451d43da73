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
    /// that size no block `kLargeBuffer` (20 MiB) or more larger than itself.
    pub(super) fn get_free_block(&self, rounded: u64, pool: Pool, stream: u64) -> Option<usize> {
        let b = self.best_fit(rounded, pool, stream)?;
        let size = self.blocks[b].size;
        let max_split = self.config.max_split_size;
        if rounded < max_split && size >= max_split {
            return None;
        }
        if rounded >= max_split && size >= rounded.saturating_add(super::rules::LARGE_BUFFER) {
            return None;
        }
        Some(b)
    }
}
