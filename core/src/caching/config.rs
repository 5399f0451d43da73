//! The allocator's settings (`PYTORCH_CUDA_ALLOC_CONF`, parsed by `c10/cuda/CUDAAllocatorConfig`
//! and recorded in a snapshot's `allocator_settings`) and the rules they change, each named as
//! in `c10/cuda/CUDACachingAllocator.cpp`:
//!
//! - `roundup_power2_divisions` ([`AllocatorConfig::round`]): `round_size` rounds a request
//!   above `kMinBlockSize × divisions` up to the next of `divisions` equal steps between two
//!   powers of two (`roundup_power2_next_division`) instead of the next 512 B; the divisions are
//!   chosen per power-of-two interval of the size in MiB, 16 intervals from 1 MiB
//!   (`CUDAAllocatorConfig::roundup_power2_divisions(size)`).
//! - `max_split_size_mb` ([`AllocatorConfig::max_split_size`]): blocks at least this large are
//!   never split (`should_split`), a smaller request never takes one, and a request of at least
//!   this size takes only a block less than `kLargeBuffer` (20 MiB) larger than itself
//!   (`get_free_block`); before releasing the whole cache on a miss, the oversize cached blocks
//!   are released first, the smallest one that is large enough or else the largest ones until
//!   enough is free (`release_available_cached_blocks`). PyTorch refuses values ≤ 20 MiB.
//! - `max_non_split_rounding_mb` ([`AllocatorConfig::max_non_split_rounding`]): how much larger
//!   than a request of at least `max_split_size` a cached block it takes may be (`get_free_block`;
//!   `kLargeBuffer` by default).
//! - `garbage_collection_threshold` ([`AllocatorConfig::garbage_collection_threshold`]): with a
//!   per-process memory limit set (`set_fraction`), on a miss and once reserved memory exceeds
//!   threshold × the limit, cached whole-segment blocks of the large pool at least as old as the
//!   average (counted in `get_free_block` calls since they were freed) are released, repeatedly,
//!   until reserved is back under the threshold (`garbage_collect_cached_blocks`).
//! - `expandable_segments` ([`AllocatorConfig::expandable_segments`]): instead of one
//!   `cudaMalloc` per segment, one growing virtual range per pool and stream (`ExpandableSegment`,
//!   `find_expandable_block`), mapped in pages of `kSmallBuffer` (2 MiB) for the small pool and
//!   `kLargeBuffer` (20 MiB) for the large one as requests need them
//!   (`try_allocate_expandable_block`, `map_block`); every block then splits by the small pool's
//!   rule (remainder ≥ 512 B, `should_split`); releasing the cache unmaps every whole page
//!   inside a free block, wherever it lies in the range (`release_blocks` → `unmap_block`), so
//!   a range can become several mapped runs (each shown as a segment, as PyTorch's snapshot
//!   shows them); a later request maps the lowest unmapped run that, with the free blocks
//!   around it, holds it (`find_expandable_block`). Pages a request needs are mapped only if
//!   all of them fit under the device limit (PyTorch maps page by page and keeps the pages it
//!   mapped before running out).

use serde::Serialize;

use super::rules::{MIN_BLOCK_SIZE, round_size};

/// Power-of-two intervals of `roundup_power2_divisions` (`kRoundUpPowerOfTwoIntervals`).
pub const ROUNDUP_INTERVALS: usize = 16;
/// Where the first interval starts (bytes, 1 MiB: `kRoundUpPowerOfTwoStart`).
const ROUNDUP_START: u64 = 1 << 20;

/// The allocator's settings. [`Default`] is PyTorch's default: no limit on splitting, no
/// power-of-two rounding, no garbage collection, no expandable segments.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct AllocatorConfig {
    /// `max_split_size` (bytes; `u64::MAX`: unlimited, PyTorch's `SIZE_MAX` default).
    pub max_split_size: u64,
    /// Divisions per power-of-two interval of the request, from 1 MiB (0 or 1: plain 512 B
    /// rounding).
    pub roundup_power2_divisions: [u64; ROUNDUP_INTERVALS],
    /// Fraction of the memory limit above which cached blocks are collected (0: off).
    pub garbage_collection_threshold: f64,
    /// One growing, page-mapped range per pool and stream instead of separate segments.
    pub expandable_segments: bool,
    /// `max_non_split_rounding_size` (bytes; `kLargeBuffer`, 20 MiB, by default): a request of
    /// at least `max_split_size` takes no cached block this much or more larger than itself.
    pub max_non_split_rounding: u64,
}

impl Default for AllocatorConfig {
    fn default() -> Self {
        AllocatorConfig {
            max_split_size: u64::MAX,
            roundup_power2_divisions: [0; ROUNDUP_INTERVALS],
            garbage_collection_threshold: 0.0,
            expandable_segments: false,
            max_non_split_rounding: super::rules::LARGE_BUFFER,
        }
    }
}

impl AllocatorConfig {
    /// The divisions for a request of `size` bytes (`roundup_power2_divisions(size)`): the
    /// interval of ⌊log₂ size⌋ counted from 1 MiB, the last interval for anything larger.
    pub fn divisions_for(&self, size: u64) -> u64 {
        let log = 63 - u64::from(size.max(1).leading_zeros());
        let start = 63 - u64::from(ROUNDUP_START.leading_zeros());
        let index = usize::try_from(log.saturating_sub(start))
            .unwrap_or(usize::MAX)
            .min(ROUNDUP_INTERVALS - 1);
        self.roundup_power2_divisions
            .get(index)
            .copied()
            .unwrap_or(0)
    }

    /// Rule 1 with this configuration (`round_size`): at least 512 B; with `divisions` > 1 and
    /// a request above 512 B × divisions, the next of `divisions` steps between its two powers
    /// of two; else the next multiple of 512 B.
    pub fn round(&self, size: u64) -> u64 {
        if size < MIN_BLOCK_SIZE {
            return MIN_BLOCK_SIZE;
        }
        let divisions = self.divisions_for(size);
        if divisions > 1 && size > MIN_BLOCK_SIZE.saturating_mul(divisions) {
            next_division(size, divisions)
        } else {
            round_size(size)
        }
    }

    /// Rule 5 with this configuration (`should_split`): the small pool's rule (remainder
    /// ≥ 512 B) in the small pool and for every block of an expandable segment; in the large
    /// pool a remainder over 1 MiB, and only for requests under `max_split_size`.
    pub fn should_split(&self, block: u64, rounded: u64, small_rule: bool) -> bool {
        let remaining = block.saturating_sub(rounded);
        if small_rule || self.expandable_segments {
            remaining >= MIN_BLOCK_SIZE
        } else {
            rounded < self.max_split_size && remaining > super::rules::SMALL_SIZE
        }
    }
}

/// `roundup_power2_next_division`: `size` rounded up to the next multiple of
/// 2^⌊log₂ size⌋ / `divisions` (a power of two stays as it is).
pub fn next_division(size: u64, divisions: u64) -> u64 {
    if size.is_power_of_two() || divisions < 2 {
        return size;
    }
    let floor = 1u64 << (63 - size.leading_zeros());
    let step = floor >> (63 - divisions.leading_zeros());
    if step == 0 {
        return floor.saturating_mul(2);
    }
    let down = size & !(step - 1);
    if down == size {
        size
    } else {
        down.saturating_add(step)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::MIB;

    #[test]
    fn power2_divisions_round_to_equal_steps_between_powers_of_two() {
        // 4 divisions: between 1 and 2 MiB the steps are 256 KiB; 1.1 MiB → 1.25 MiB.
        let mut c = AllocatorConfig {
            roundup_power2_divisions: [4; ROUNDUP_INTERVALS],
            ..AllocatorConfig::default()
        };
        assert_eq!(c.round(MIB + MIB / 10), MIB + MIB / 4);
        // Between 8 and 16 MiB the steps are 2 MiB: 9 MiB → 10 MiB; 8 MiB (a power of two) stays.
        assert_eq!(c.round(9 * MIB), 10 * MIB);
        assert_eq!(c.round(8 * MIB), 8 * MIB);
        // At most 512 B × 4 = 2 KiB: plain 512 B rounding.
        assert_eq!(c.round(1500), 1536);
        // The interval of a size: 1 MiB → 0, 3 MiB → 1, far beyond 2¹⁵ MiB → the last.
        c.roundup_power2_divisions = [0; ROUNDUP_INTERVALS];
        c.roundup_power2_divisions[1] = 8;
        assert_eq!(c.divisions_for(3 * MIB), 8);
        assert_eq!(c.divisions_for(MIB), 0);
        assert_eq!(c.divisions_for(5 * MIB), 0);
        // Off by default: every size as rule 1 rounds it.
        let d = AllocatorConfig::default();
        for s in [1, 512, 513, MIB + 1, 9 * MIB + 7] {
            assert_eq!(d.round(s), round_size(s));
        }
    }

    #[test]
    fn max_split_size_stops_large_blocks_from_splitting() {
        let mut c = AllocatorConfig::default();
        // Default: a 40 MiB block splits for a 10 MiB request (30 MiB left > 1 MiB).
        assert!(c.should_split(40 * MIB, 10 * MIB, false));
        c.max_split_size = 32 * MIB;
        // Still splits for requests under 32 MiB …
        assert!(c.should_split(40 * MIB, 10 * MIB, false));
        // … never for 32 MiB or more.
        assert!(!c.should_split(60 * MIB, 32 * MIB, false));
        // Expandable segments split every block by the small pool's rule.
        c.expandable_segments = true;
        assert!(c.should_split(60 * MIB, 32 * MIB, false));
        assert!(c.should_split(MIB + 512, MIB, false));
    }
}
