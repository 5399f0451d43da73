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
}
