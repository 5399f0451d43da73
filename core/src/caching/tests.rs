//! Tests of the caching allocator's rules: rounding and pools, segment sizes, both split
//! rules, best fit, merging inside a segment only, releasing the cache before running out of
//! memory, and streams kept apart.

use super::*;
use crate::memory::MIB;

const KIB: u64 = 1024;

#[test]
fn rounding_and_pool_threshold() {
    assert_eq!(round_size(1), 512);
    assert_eq!(round_size(512), 512);
    assert_eq!(round_size(513), 1024);
    // 1 MiB exactly is small; 1 MiB + 1 rounds to 1 MiB + 512 and is large.
    assert_eq!(pool_of(round_size(MIB)), Pool::Small);
    assert_eq!(pool_of(round_size(MIB + 1)), Pool::Large);
    let mut a = CachingAllocator::new(u64::MAX);
    let s = a.malloc(MIB, 0).unwrap();
    let l = a.malloc(MIB + 1, 0).unwrap();
    let segs = a.segments();
    assert_eq!((segs[0].pool, segs[0].size), (Pool::Small, 2 * MIB));
    assert_eq!((segs[1].pool, segs[1].size), (Pool::Large, 20 * MIB));
    assert_eq!(s.size, MIB);
    assert_eq!(l.size, MIB + 512);
}

#[test]
fn segment_sizes() {
    // small → 2 MiB; 1 MiB < r < 10 MiB → 20 MiB; ≥ 10 MiB → rounded up to 2 MiB.
    for (req, seg) in [
        (100, 2 * MIB),
        (2 * MIB, 20 * MIB),
        (10 * MIB - 512, 20 * MIB),
        (10 * MIB, 10 * MIB),
        (10 * MIB + 1, 12 * MIB),
        (25 * MIB, 26 * MIB),
    ] {
        let mut a = CachingAllocator::new(u64::MAX);
        a.malloc(req, 0).unwrap();
        assert_eq!(a.reserved(), seg, "request {req}");
    }
}

#[test]
fn small_split_rule_remainder_at_least_512() {
    let mut a = CachingAllocator::new(u64::MAX);
    // 1 MiB (small) in a fresh 2 MiB segment: remainder 1 MiB ≥ 512 B → split.
    let x = a.malloc(MIB, 0).unwrap();
    assert_eq!(x.size, MIB);
    // 1 MiB − 512 B from the 1 MiB remainder: remainder exactly 512 B → still split.
    let y = a.malloc(MIB - 512, 0).unwrap();
    assert_eq!((y.size, y.served), (MIB - 512, Served::ReusedSplit));
    assert_eq!(a.segments()[0].blocks.len(), 3);
    // The last 512 B serves a 1-byte request whole (exact fit, nothing to split).
    let z = a.malloc(1, 0).unwrap();
    assert_eq!((z.size, z.served), (512, Served::Reused));
    assert_eq!(a.reserved(), 2 * MIB);
    // The rule itself: small blocks split at remainder ≥ 512, large ones only at > 1 MiB.
    assert!(should_split(1024, 512, Pool::Small));
    assert!(!should_split(512, 512, Pool::Small));
    assert!(!should_split(3 * MIB, 2 * MIB, Pool::Large));
    assert!(should_split(3 * MIB + 512, 2 * MIB, Pool::Large));
}

#[test]
fn large_split_rule_remainder_over_1_mib() {
    // 20 MiB segment for an 8 MiB request: remainder 12 MiB > 1 MiB → split.
    let mut a = CachingAllocator::new(u64::MAX);
    let x = a.malloc(8 * MIB, 0).unwrap();
    assert_eq!(x.size, 8 * MIB);
    assert_eq!(a.allocated(), 8 * MIB);
    // 19 MiB request into a free 20 MiB block: remainder exactly 1 MiB → not split, the
    // whole 20 MiB block is handed out (1 MiB rounding loss).
    let mut a = CachingAllocator::new(u64::MAX);
    let x = a.malloc(19 * MIB, 0).unwrap();
    assert_eq!((x.size, x.requested), (20 * MIB, 19 * MIB));
    assert_eq!(a.segments()[0].blocks.len(), 1);
    // 18 MiB + 512: remainder 2 MiB − 512 > 1 MiB → split.
    let mut a = CachingAllocator::new(u64::MAX);
    let x = a.malloc(18 * MIB + 512, 0).unwrap();
    assert_eq!(x.size, 18 * MIB + 512);
    assert_eq!(a.segments()[0].blocks.len(), 2);
}

#[test]
fn best_fit_by_size_then_address() {
    let mut a = CachingAllocator::new(u64::MAX);
    // Three 20 MiB segments; carve free holes of 6, 4 and 4 MiB.
    let s1 = a.malloc(6 * MIB, 0).unwrap();
    let _k1 = a.malloc(14 * MIB - 512 * KIB, 0).unwrap(); // fills segment 1 (remainder 512 KiB kept whole)
    let s2 = a.malloc(4 * MIB, 0).unwrap(); // new segment 2
    let _k2 = a.malloc(16 * MIB, 0).unwrap();
    let s3 = a.malloc(4 * MIB, 0).unwrap(); // new segment 3
    let _k3 = a.malloc(16 * MIB, 0).unwrap();
    assert_eq!(a.reserved(), 60 * MIB);
    a.free(s1.block);
    a.free(s3.block);
    a.free(s2.block);
    // 3 MiB: the 4 MiB holes fit best; of the two, the lower address (segment 2).
    let x = a.malloc(3 * MIB, 0).unwrap();
    assert_eq!(x.address, s2.address);
    assert_eq!(x.size, 4 * MIB); // remainder 1 MiB is not > 1 MiB: not split
}

#[test]
fn merge_only_inside_a_segment() {
    let mut a = CachingAllocator::new(u64::MAX);
    // Two 12 MiB segments (≥ 10 MiB requests get their own size), adjacent in address space.
    let x = a.malloc(12 * MIB, 0).unwrap();
    let y = a.malloc(12 * MIB, 0).unwrap();
    assert_eq!(y.address, x.address + 12 * MIB);
    a.free(x.block);
    a.free(y.block);
    // Adjacent addresses, but different segments: still two free blocks, never one 24 MiB.
    let segs = a.segments();
    assert_eq!(segs.len(), 2);
    assert!(
        segs.iter()
            .all(|s| s.blocks.len() == 1 && !s.blocks[0].allocated)
    );
    // A 24 MiB request cannot use them: a new 24 MiB segment.
    let z = a.malloc(24 * MIB, 0).unwrap();
    assert_eq!(z.served, Served::NewSegment);
    assert_eq!(a.reserved(), 48 * MIB);
    // Inside one segment, freed neighbours do merge back into one block.
    let mut a = CachingAllocator::new(u64::MAX);
    let p = a.malloc(4 * MIB, 0).unwrap();
    let q = a.malloc(4 * MIB, 0).unwrap();
    let r = a.malloc(4 * MIB, 0).unwrap();
    a.free(p.block);
    a.free(r.block);
    assert_eq!(a.segments()[0].blocks.len(), 3); // free, q, free(r + tail)
    a.free(q.block);
    assert_eq!(a.segments()[0].blocks.len(), 1);
    assert_eq!(a.segments()[0].blocks[0].size, 20 * MIB);
    a.check().unwrap();
}

#[test]
fn release_cache_then_oom() {
    let mut a = CachingAllocator::new(40 * MIB);
    let x = a.malloc(12 * MIB, 0).unwrap();
    let y = a.malloc(12 * MIB, 0).unwrap();
    a.free(x.block);
    // 14 MiB segment: 24 + 14 = 38 ≤ 40 fits without release.
    let z = a.malloc(14 * MIB, 0).unwrap();
    assert_eq!(z.served, Served::NewSegment);
    a.free(z.block);
    // 16 MiB: 38 + 16 > 40 → release the two whole free segments (12 + 14), then fit.
    let w = a.malloc(16 * MIB, 0).unwrap();
    assert_eq!(w.served, Served::NewSegmentAfterRelease);
    assert_eq!(a.reserved(), 28 * MIB);
    // 14 MiB more: 28 + 14 > 40 and nothing cached → OOM.
    let e = a.malloc(14 * MIB, 0).unwrap_err();
    assert_eq!(e.capacity, 40 * MIB);
    let _ = y;
    a.check().unwrap();
}

#[test]
fn streams_do_not_share_blocks() {
    let mut a = CachingAllocator::new(u64::MAX);
    let x = a.malloc(512, 0).unwrap();
    a.free(x.block);
    let y = a.malloc(512, 1).unwrap();
    assert_eq!(y.served, Served::NewSegment);
}
