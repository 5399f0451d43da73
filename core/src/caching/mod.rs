//! A simulator of PyTorch's CUDA caching allocator, rule for rule from
//! `c10/cuda/CUDACachingAllocator.cpp` (by default with PyTorch's default settings: no
//! `max_split_size_mb`, no `roundup_power2_divisions`, no expandable segments, no garbage
//! collection threshold; [`AllocatorConfig`] changes them, `config` says how): blocks
//! carved out of segments (one `cudaMalloc` each), two pools of free blocks per stream, and the
//! rules that pick, split, merge and release them. Scene `memory-allocator`
//! ([`crate::memory::allocator`]) feeds it a training workload; [`crate::torch::snapshot`] replays a recorded
//! trace through it.
//!
//! The rules (constant names as in `CUDACachingAllocator.cpp`):
//! 1. `round_size`: requests round up to a multiple of 512 B (`kMinBlockSize`), at least 512 B.
//! 2. `get_pool`: a rounded size ≤ 1 MiB (`kSmallSize`) goes to the small pool, else the large.
//! 3. `get_allocation_size`: a new segment is 2 MiB (`kSmallBuffer`) for small requests, 20 MiB
//!    (`kLargeBuffer`) for requests under 10 MiB (`kMinLargeAlloc`), otherwise the request rounded
//!    up to 2 MiB (`kRoundLarge`).
//! 4. `get_free_block`: best fit — the free block of the same pool and stream with the smallest
//!    (size, address) not below the request.
//! 5. `should_split`: split a small-pool block when the remainder is ≥ 512 B, a large-pool block
//!    when the remainder is > 1 MiB; the request takes the front, the remainder stays free.
//! 6. `free_block` / `try_merge_blocks`: a freed block merges with its free neighbours, which are
//!    only ever blocks of the same segment (segments are separate `cudaMalloc`s).
//! 7. `malloc`: on a miss, `alloc_block` (cudaMalloc a new segment); if the device is full,
//!    `release_cached_blocks` (free every cached segment that is one whole free block) and retry;
//!    else out of memory.
//!
//! Stats as PyTorch reports them: *reserved* = Σ segment sizes; *allocated* = Σ sizes of
//! allocated blocks (rounded, including unsplit remainders); *requested* = Σ sizes asked for;
//! *cached free* = reserved − allocated. All sizes here are bytes unless a name ends in `_mib`
//! (MiB = 2²⁰ bytes).
//!
//! Layout: `rules` (the constants and rules 1, 2, 3 and 5 as functions), `config` (the settings
//! and the rules they change), `expandable` (expandable segments, garbage collection, releasing
//! oversize blocks), `pools` (the free
//! lists and rule 4's best fit), `segments` (blocks and segments: creating, merging,
//! releasing), `malloc` (rules 1–7 put together, and `free`), `views` (copies of the segment map
//! for display), `seed` (starting from a recorded state) and `check` (the invariants).

mod check;
pub mod conf;
mod config;
mod expandable;
mod malloc;
mod pools;
mod rules;
mod seed;
mod segments;
#[cfg(test)]
mod settings_tests;
#[cfg(test)]
mod tests;
mod views;

use std::collections::BTreeSet;

use serde::Serialize;

pub use config::{AllocatorConfig, ROUNDUP_INTERVALS, next_division};
pub use rules::{
    LARGE_BUFFER, MIN_BLOCK_SIZE, MIN_LARGE_ALLOC, Pool, ROUND_LARGE, SMALL_BUFFER, SMALL_SIZE,
    pool_of, round_size, segment_size, should_split,
};
pub use seed::{SeedBlock, SeedSegment};
pub use views::{BlockView, SegmentView};

/// How a request was served.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Served {
    /// A cached free block, whole.
    Reused,
    /// A cached free block, split.
    ReusedSplit,
    /// A new segment.
    NewSegment,
    /// A new segment after freeing the cached segments (`release_cached_blocks`).
    NewSegmentAfterRelease,
}

/// A successful allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Allocation {
    /// Handle for [`CachingAllocator::free`] (valid until freed).
    pub block: usize,
    /// Address of the block.
    pub address: u64,
    /// The block's size (≥ the rounded request; larger when a block was not split).
    pub size: u64,
    /// The bytes asked for.
    pub requested: u64,
    /// How it was served.
    pub served: Served,
}

#[derive(Debug, Clone)]
struct Block {
    segment: usize,
    address: u64,
    size: u64,
    requested: u64,
    allocated: bool,
    prev: Option<usize>,
    next: Option<usize>,
    live: bool,
    /// The large pool's `get_free_block` count when the block was last put in a free list
    /// (its age for garbage collection: `gc_count`).
    freed_at: u64,
}

#[derive(Debug, Clone)]
struct Segment {
    address: u64,
    size: u64,
    pool: Pool,
    stream: u64,
    first: usize,
    live: bool,
    /// Bumped whenever one of its blocks changes (malloc, free): a copy of the segment's map
    /// taken at the same version is still exact.
    version: u64,
    /// An expandable segment: its size is the part of its virtual range mapped so far.
    expandable: bool,
}

/// The simulated allocator (one device).
#[derive(Debug, Clone)]
pub struct CachingAllocator {
    capacity: u64,
    blocks: Vec<Block>,
    recycled: Vec<usize>,
    segments: Vec<Segment>,
    free: [BTreeSet<(u64, u64, u64, usize)>; 2],
    next_address: u64,
    reserved: u64,
    allocated: u64,
    requested: u64,
    /// Segments `cudaMalloc`ed so far.
    pub segments_created: u64,
    /// Segments released by `release_cached_blocks`.
    pub segments_released: u64,
    /// Page ranges mapped into expandable segments so far (`segment_map` events).
    pub segment_maps: u64,
    config: AllocatorConfig,
    /// `get_free_block` calls on the large pool (ages for garbage collection).
    free_calls: u64,
    /// The expandable ranges made so far: (pool, stream, base address). A range's mapped
    /// runs are its pieces, one segment each.
    ranges: Vec<(Pool, u64, u64)>,
}

/// Why a request failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OutOfMemory {
    /// Bytes asked for.
    pub requested: u64,
    /// The segment it would have needed.
    pub segment: u64,
    /// Reserved bytes after releasing the cache.
    pub reserved: u64,
    /// The device's capacity.
    pub capacity: u64,
}

impl std::fmt::Display for OutOfMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "out of memory: {} bytes asked for need a {}-byte segment; {} of {} bytes reserved",
            self.requested, self.segment, self.reserved, self.capacity
        )
    }
}

impl CachingAllocator {
    /// An empty allocator on a device of `capacity` bytes, with PyTorch's default settings.
    pub fn new(capacity: u64) -> Self {
        Self::with_config(capacity, AllocatorConfig::default())
    }

    /// An empty allocator on a device of `capacity` bytes (`u64::MAX`: no limit — a finite one
    /// stands for `set_per_process_memory_fraction`, which garbage collection needs) with
    /// `config`.
    pub fn with_config(capacity: u64, config: AllocatorConfig) -> Self {
        CachingAllocator {
            capacity,
            blocks: Vec::new(),
            recycled: Vec::new(),
            segments: Vec::new(),
            free: [BTreeSet::new(), BTreeSet::new()],
            // Simulated device addresses start at 1 GiB (any 2 MiB-aligned base would do).
            next_address: 1 << 30,
            reserved: 0,
            allocated: 0,
            requested: 0,
            segments_created: 0,
            segments_released: 0,
            segment_maps: 0,
            config,
            free_calls: 0,
            ranges: Vec::new(),
        }
    }

    /// The settings.
    pub fn config(&self) -> &AllocatorConfig {
        &self.config
    }

    /// Σ segment sizes (bytes).
    pub fn reserved(&self) -> u64 {
        self.reserved
    }

    /// Σ allocated block sizes (bytes).
    pub fn allocated(&self) -> u64 {
        self.allocated
    }

    /// Σ bytes asked for by live allocations.
    pub fn requested(&self) -> u64 {
        self.requested
    }

    /// Cached free bytes (reserved − allocated).
    pub fn cached_free(&self) -> u64 {
        self.reserved - self.allocated
    }

    /// Bytes asked for by the block with handle `block` (0 for a free block, or a handle that
    /// is not a block).
    pub(crate) fn block_requested(&self, block: usize) -> u64 {
        self.blocks.get(block).map_or(0, |b| b.requested)
    }
}
