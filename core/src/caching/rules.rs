//! The allocator's constants (named as in `CUDACachingAllocator.cpp`) and the rules that are
//! pure functions of a size: rounding a request (rule 1), choosing its pool (rule 2), sizing a
//! new segment (rule 3) and deciding whether a free block is split (rule 5).

use serde::Serialize;

/// `kMinBlockSize`: requests round up to a multiple of this (bytes).
pub const MIN_BLOCK_SIZE: u64 = 512;
/// `kSmallSize`: the largest rounded request served by the small pool (bytes, 1 MiB).
pub const SMALL_SIZE: u64 = 1 << 20;
/// `kSmallBuffer`: the segment size for small requests (bytes, 2 MiB).
pub const SMALL_BUFFER: u64 = 2 << 20;
/// `kLargeBuffer`: the segment size for large requests under [`MIN_LARGE_ALLOC`] (bytes, 20 MiB).
pub const LARGE_BUFFER: u64 = 20 << 20;
/// `kMinLargeAlloc`: requests from this size on get a segment of their own size (bytes, 10 MiB).
pub const MIN_LARGE_ALLOC: u64 = 10 << 20;
/// `kRoundLarge`: such segments round up to a multiple of this (bytes, 2 MiB).
pub const ROUND_LARGE: u64 = 2 << 20;

/// Rule 1 (`round_size`): the block size a request of `size` bytes needs.
pub fn round_size(size: u64) -> u64 {
    if size < MIN_BLOCK_SIZE {
        MIN_BLOCK_SIZE
    } else {
        size.div_ceil(MIN_BLOCK_SIZE).saturating_mul(MIN_BLOCK_SIZE)
    }
}

/// Which of the two pools a block belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Pool {
    /// Rounded requests ≤ 1 MiB, in 2 MiB segments.
    Small,
    /// Everything larger.
    Large,
}

/// Rule 2 (`get_pool`): the pool of a rounded size.
pub fn pool_of(rounded: u64) -> Pool {
    if rounded <= SMALL_SIZE {
        Pool::Small
    } else {
        Pool::Large
    }
}

/// Rule 3 (`get_allocation_size`): the size of a new segment for a rounded request (bytes).
pub fn segment_size(rounded: u64) -> u64 {
    if rounded <= SMALL_SIZE {
        SMALL_BUFFER
    } else if rounded < MIN_LARGE_ALLOC {
        LARGE_BUFFER
    } else {
        rounded.div_ceil(ROUND_LARGE).saturating_mul(ROUND_LARGE)
    }
}

/// Rule 5 (`should_split`): whether a free block of `block` bytes in `pool` is split for a
/// rounded request of `rounded` bytes.
pub fn should_split(block: u64, rounded: u64, pool: Pool) -> bool {
    let remaining = block.saturating_sub(rounded);
    match pool {
        Pool::Small => remaining >= MIN_BLOCK_SIZE,
        Pool::Large => remaining > SMALL_SIZE,
    }
}
