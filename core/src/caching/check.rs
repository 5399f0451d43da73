//! The allocator's invariants, checked on demand (after every event in the tests): counters
//! against the blocks, blocks tiling their segments, free neighbours merged, free lists
//! exact, segments apart.

use super::CachingAllocator;

impl CachingAllocator {
    /// Checks the invariants: allocated + cached free = reserved; each segment's blocks tile it
    /// exactly (no overlap, no gap); no two free neighbours left unmerged; the free lists hold
    /// exactly the free blocks; segments never overlap.
    ///
    /// # Errors
    /// A description of the first violation.
    pub fn check(&self) -> Result<(), String> {
        let (mut reserved, mut allocated, mut free_bytes, mut free_count) = (0u64, 0u64, 0u64, 0);
        let mut spans: Vec<(u64, u64)> = Vec::new();
        for (si, s) in self.segments.iter().enumerate().filter(|(_, s)| s.live) {
            reserved += s.size;
            spans.push((s.address, s.address + s.size));
            let mut expect = s.address;
            let mut cur = Some(s.first);
            let mut prev: Option<usize> = None;
            while let Some(i) = cur {
                let b = &self.blocks[i];
                if !b.live || b.segment != si || b.prev != prev {
                    return Err(format!("segment {si}: broken block list at block {i}"));
                }
                if b.address != expect {
                    return Err(format!(
                        "segment {si}: block {i} at {} but the previous block ends at {expect}",
                        b.address
                    ));
                }
                if b.allocated {
                    allocated += b.size;
                } else {
                    free_bytes += b.size;
                    free_count += 1;
                    if prev.is_some_and(|p| !self.blocks[p].allocated) {
                        return Err(format!(
                            "segment {si}: free neighbours {prev:?} and {i} not merged"
                        ));
                    }
                    if !self.free[Self::pool_index(s.pool)].contains(&self.key(i)) {
                        return Err(format!("free block {i} missing from its pool"));
                    }
                }
                expect = b.address + b.size;
                prev = Some(i);
                cur = b.next;
            }
            if expect != s.address + s.size {
                return Err(format!(
                    "segment {si}: blocks end at {expect}, segment at {}",
                    s.address + s.size
                ));
            }
        }
        spans.sort_unstable();
        if spans.windows(2).any(|w| w[0].1 > w[1].0) {
            return Err("segments overlap".into());
        }
        if self.free[0].len() + self.free[1].len() != free_count {
            return Err("free lists hold blocks that are not free".into());
        }
        if reserved != self.reserved || allocated != self.allocated {
            return Err(format!(
                "counters: reserved {} vs {reserved}, allocated {} vs {allocated}",
                self.reserved, self.allocated
            ));
        }
        if allocated + free_bytes != reserved {
            return Err(format!(
                "allocated {allocated} + cached free {free_bytes} ≠ reserved {reserved}"
            ));
        }
        Ok(())
    }
}
