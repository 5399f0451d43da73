//! `malloc` (rules 1–7 in order: round, pick the pool, best fit, else — after garbage collection
//! when it is on — a new segment, else release the oversize cached blocks and retry, else
//! release the cache and retry, split what is left over; `malloc` of
//! `CUDACachingAllocator.cpp`) and `free` (merge with free neighbours).

use super::rules::{pool_of, segment_size};
use super::{Allocation, Block, CachingAllocator, OutOfMemory, Pool, Served};

impl CachingAllocator {
    /// Allocates `size` bytes on `stream` by rules 1–7.
    ///
    /// # Errors
    /// [`OutOfMemory`] when no cached block fits and no segment fits under the capacity even
    /// after the cache is released.
    pub fn malloc(&mut self, size: u64, stream: u64) -> Result<Allocation, OutOfMemory> {
        let rounded = self.config.round(size);
        let pool = pool_of(rounded);
        if pool == Pool::Large && self.gc_enabled() {
            self.free_calls += 1;
        }
        let (block, served) = match self.get_free_block(rounded, pool, stream) {
            Some(b) => {
                self.remove_free(b);
                (b, Served::Reused)
            }
            None => {
                if self.gc_enabled() {
                    self.garbage_collect();
                }
                let seg = segment_size(rounded);
                if let Some(b) = self.alloc_block(rounded, seg, pool, stream) {
                    (b, Served::NewSegment)
                } else if let Some(b) = self
                    .release_available(rounded, stream)
                    .then(|| self.alloc_block(rounded, seg, pool, stream))
                    .flatten()
                {
                    (b, Served::NewSegmentAfterRelease)
                } else {
                    self.empty_cache();
                    match self.alloc_block(rounded, seg, pool, stream) {
                        Some(b) => (b, Served::NewSegmentAfterRelease),
                        None => {
                            return Err(OutOfMemory {
                                requested: size,
                                segment: seg,
                                reserved: self.reserved,
                                capacity: self.capacity,
                            });
                        }
                    }
                }
            }
        };
        let mut served = served;
        if self
            .config
            .should_split(self.blocks[block].size, rounded, pool == Pool::Small)
        {
            let b = self.blocks[block].clone();
            let rest = self.new_block(Block {
                segment: b.segment,
                address: b.address + rounded,
                size: b.size - rounded,
                requested: 0,
                allocated: false,
                prev: Some(block),
                next: b.next,
                live: true,
                freed_at: 0,
            });
            if let Some(n) = b.next {
                self.blocks[n].prev = Some(rest);
            }
            self.blocks[block].next = Some(rest);
            self.blocks[block].size = rounded;
            self.insert_free(rest);
            if served == Served::Reused {
                served = Served::ReusedSplit;
            }
        }
        let seg = self.blocks[block].segment;
        self.segments[seg].version += 1;
        let b = &mut self.blocks[block];
        b.allocated = true;
        b.requested = size;
        self.allocated += b.size;
        self.requested += size;
        Ok(Allocation {
            block,
            address: b.address,
            size: b.size,
            requested: size,
            served,
        })
    }

    /// Frees a block returned by [`Self::malloc`] (rule 6: merge with free neighbours).
    /// Returns false (and changes nothing) for a handle that is not an allocated block.
    pub fn free(&mut self, block: usize) -> bool {
        match self.blocks.get(block) {
            Some(b) if b.live && b.allocated => {}
            _ => return false,
        }
        let (size, requested) = (self.blocks[block].size, self.blocks[block].requested);
        let seg = self.blocks[block].segment;
        self.segments[seg].version += 1;
        self.allocated -= size;
        self.requested -= requested;
        self.blocks[block].allocated = false;
        self.blocks[block].requested = 0;
        let mut cur = block;
        if let Some(p) = self.blocks[cur].prev.filter(|&p| !self.blocks[p].allocated) {
            self.remove_free(p);
            self.absorb(p, cur);
            cur = p;
        }
        if let Some(n) = self.blocks[cur].next.filter(|&n| !self.blocks[n].allocated) {
            self.remove_free(n);
            self.absorb(cur, n);
        }
        self.insert_free(cur);
        true
    }
}
