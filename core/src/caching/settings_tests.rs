//! Tests of the settings' rules (`config.rs`, `expandable.rs`) on hand-made request sequences,
//! each figure worked out by hand from the rules of `c10/cuda/CUDACachingAllocator.cpp`, and
//! each setting moving the result the way the source says it does.

use super::*;
use crate::memory::MIB;

fn with(config: AllocatorConfig) -> CachingAllocator {
    CachingAllocator::with_config(u64::MAX, config)
}

fn expandable() -> AllocatorConfig {
    AllocatorConfig {
        expandable_segments: true,
        ..AllocatorConfig::default()
    }
}

/// A 12 MiB, B 12 MiB, free both, C 24 MiB: with separate segments 12 + 12 + 24 MiB; with one
/// expandable range, A maps a 20 MiB page, B needs 4 MiB past the free 8 MiB tail and maps one
/// more page, the freed blocks merge into one 40 MiB block and C fits in it.
#[test]
fn expandable_segments_grow_one_range_in_20_mib_pages_and_merge_across_it() {
    for (config, reserved, segments) in [
        (AllocatorConfig::default(), 48 * MIB, 3),
        (expandable(), 40 * MIB, 1),
    ] {
        let mut a = with(config);
        let x = a.malloc(12 * MIB, 0).unwrap();
        let y = a.malloc(12 * MIB, 0).unwrap();
        a.free(x.block);
        a.free(y.block);
        let z = a.malloc(24 * MIB, 0).unwrap();
        a.check().unwrap();
        assert_eq!(a.reserved(), reserved);
        assert_eq!(a.segments_created, segments);
        assert_eq!(z.size, 24 * MIB);
    }
    let mut a = with(expandable());
    a.malloc(12 * MIB, 0).unwrap();
    a.malloc(12 * MIB, 0).unwrap();
    assert_eq!(a.segment_maps, 2);
    assert_eq!(a.segments()[0].size, 40 * MIB);
}

/// Small requests map 2 MiB pages of their own range: three 1 MiB blocks take two pages of one
/// segment (separate segments: two 2 MiB segments); a second stream gets a range of its own.
#[test]
fn expandable_small_pool_maps_2_mib_pages_per_stream() {
    let mut a = with(expandable());
    for _ in 0..3 {
        a.malloc(MIB, 0).unwrap();
    }
    assert_eq!((a.reserved(), a.segments_created), (4 * MIB, 1));
    assert_eq!(a.segment_maps, 2);
    a.malloc(MIB, 7).unwrap();
    assert_eq!((a.reserved(), a.segments_created), (6 * MIB, 2));
    let mut d = with(AllocatorConfig::default());
    for _ in 0..3 {
        d.malloc(MIB, 0).unwrap();
    }
    assert_eq!((d.reserved(), d.segments_created), (4 * MIB, 2));
    a.check().unwrap();
}

/// Best fit under expandable segments ranks a free block by its size plus the unmapped space
/// after it (`get_free_block`'s `expandable_size`). Mapped in 20 MiB pages: A 22 + B 18 fill
/// pages 0–1, C 24 + D 16 pages 2–3, E 18 (page 4, a 2 MiB free tail) and F 22 (that tail plus
/// page 5) end at the mapped edge. With C (24 MiB, between B and D) and F (22 MiB, nothing mapped
/// after it) free, a 21 MiB request's plain best fit is F; ranked with the unmapped space F is
/// far larger than C, so the walk moves on to C and F stays at the edge, free to grow.
#[test]
fn expandable_best_fit_keeps_the_block_at_the_mapped_edge() {
    let mut a = with(expandable());
    let base = a.malloc(22 * MIB, 0).unwrap().address;
    a.malloc(18 * MIB, 0).unwrap();
    let c = a.malloc(24 * MIB, 0).unwrap();
    a.malloc(16 * MIB, 0).unwrap();
    a.malloc(18 * MIB, 0).unwrap();
    let f = a.malloc(22 * MIB, 0).unwrap();
    assert_eq!(
        (c.address - base, f.address - base, a.reserved()),
        (40 * MIB, 98 * MIB, 120 * MIB)
    );
    a.free(c.block);
    a.free(f.block);
    let r = a.malloc(21 * MIB, 0).unwrap();
    a.check().unwrap();
    assert_eq!(r.address, c.address);
    assert_eq!(a.reserved(), 120 * MIB);
    // Without expandable segments the same two free blocks give the plain best fit.
    let mut d = with(AllocatorConfig::default());
    let c = d.malloc(24 * MIB, 0).unwrap();
    let _keep = d.malloc(MIB, 0).unwrap();
    let f = d.malloc(22 * MIB, 0).unwrap();
    d.free(c.block);
    d.free(f.block);
    assert_eq!(d.malloc(21 * MIB, 0).unwrap().address, f.address);
}

/// Releasing the cache unmaps the free pages at the end of the range: with B (the last block)
/// freed, the pages wholly past A are unmapped — A ends at 12 MiB, so the second 20 MiB page
/// goes, the first stays mapped.
#[test]
fn releasing_the_cache_unmaps_the_free_pages_at_the_end() {
    let mut a = with(expandable());
    let _x = a.malloc(12 * MIB, 0).unwrap();
    let y = a.malloc(12 * MIB, 0).unwrap();
    a.free(y.block);
    assert_eq!(a.empty_cache(), 20 * MIB);
    assert_eq!(a.reserved(), 20 * MIB);
    a.check().unwrap();
}

/// Three 20 MiB blocks A, B, C fill three 20 MiB pages of one range. With B freed, releasing
/// the cache unmaps B's page although C still holds the page after it (`unmap_block`: the whole
/// pages inside any free block, page 1 = bytes 20–40 MiB of the range): reserved 60 → 40 MiB, and
/// the range is two mapped runs of 20 MiB. The next 20 MiB request maps the lowest unmapped run
/// (`find_expandable_block` walks `pool->unmapped` by address), B's old page, and the range is
/// one 60 MiB segment again.
#[test]
fn releasing_the_cache_unmaps_free_pages_inside_the_range_and_refills_them_first() {
    let mut a = with(expandable());
    let x = a.malloc(20 * MIB, 0).unwrap();
    let y = a.malloc(20 * MIB, 0).unwrap();
    let z = a.malloc(20 * MIB, 0).unwrap();
    assert_eq!(
        (y.address - x.address, z.address - x.address),
        (20 * MIB, 40 * MIB)
    );
    a.free(y.block);
    assert_eq!(a.empty_cache(), 20 * MIB);
    a.check().unwrap();
    assert_eq!(a.reserved(), 40 * MIB);
    let runs: Vec<(u64, u64)> = a
        .segments()
        .iter()
        .map(|g| (g.address - x.address, g.size))
        .collect();
    assert_eq!(runs, [(0, 20 * MIB), (40 * MIB, 20 * MIB)]);
    let w = a.malloc(20 * MIB, 0).unwrap();
    a.check().unwrap();
    assert_eq!(w.address, y.address);
    assert_eq!(a.reserved(), 60 * MIB);
    assert_eq!(a.segments().len(), 1);
    assert_eq!(a.segments_created, 1);
}

/// On an 80 MiB device holding A, B, C (20 MiB each, B freed), a 40 MiB request does not fit:
/// no cached block holds it and two more pages would make 100 MiB. Releasing the cache unmaps
/// B's page inside the range (40 MiB reserved); B's unmapped 20 MiB run is too small and C
/// stops the walk past it, so two pages are mapped after C: 80 MiB, which fits. Unmapping only
/// the range's end (nothing: C is there) would run out of memory.
#[test]
fn under_a_device_limit_unmapped_inner_pages_make_room() {
    let mut a = CachingAllocator::with_config(80 * MIB, expandable());
    let x = a.malloc(20 * MIB, 0).unwrap();
    let y = a.malloc(20 * MIB, 0).unwrap();
    a.malloc(20 * MIB, 0).unwrap();
    a.free(y.block);
    let big = a.malloc(40 * MIB, 0).unwrap();
    a.check().unwrap();
    assert_eq!(big.served, Served::NewSegmentAfterRelease);
    assert_eq!(big.address - x.address, 60 * MIB);
    assert_eq!(a.reserved(), 80 * MIB);
}

/// A, B, C, D 20 MiB each; B freed and its page unmapped, then C freed (the free head of the
/// second run). A 30 MiB request walks unmapped → free (`has_available_address_space`): B's old
/// page (20 MiB) plus C (20 MiB) hold it, so that page is mapped again, joining both runs into
/// one 80 MiB segment; the block starts at B's old address and splits off 10 MiB.
#[test]
fn a_request_spans_an_unmapped_run_and_the_free_block_after_it() {
    let mut a = with(expandable());
    let x = a.malloc(20 * MIB, 0).unwrap();
    let y = a.malloc(20 * MIB, 0).unwrap();
    let z = a.malloc(20 * MIB, 0).unwrap();
    a.malloc(20 * MIB, 0).unwrap();
    a.free(y.block);
    assert_eq!(a.empty_cache(), 20 * MIB);
    a.free(z.block);
    a.check().unwrap();
    let w = a.malloc(30 * MIB, 0).unwrap();
    a.check().unwrap();
    assert_eq!((w.address - x.address, w.size), (20 * MIB, 30 * MIB));
    assert_eq!(a.reserved(), 80 * MIB);
    let segs = a.segments();
    assert_eq!(segs.len(), 1);
    let sizes: Vec<(u64, bool)> = segs[0]
        .blocks
        .iter()
        .map(|b| (b.size / MIB, b.allocated))
        .collect();
    assert_eq!(sizes, [(20, true), (30, true), (10, false), (20, true)]);
}

/// A device limit with the free-cached-and-retry path: on a 50 MiB device, 30 MiB freed then
/// 40 MiB asked for: the cached 30 MiB segment is released and the 40 MiB one fits; with the
/// 30 MiB still live, it is out of memory.
#[test]
fn a_device_limit_frees_the_cache_then_runs_out() {
    let mut a = CachingAllocator::with_config(50 * MIB, AllocatorConfig::default());
    let x = a.malloc(30 * MIB, 0).unwrap();
    a.free(x.block);
    let y = a.malloc(40 * MIB, 0).unwrap();
    assert_eq!(y.served, Served::NewSegmentAfterRelease);
    assert_eq!(a.reserved(), 40 * MIB);
    assert!(a.malloc(30 * MIB, 0).is_err());
}

/// `max_split_size_mb` 32: a cached 40 MiB block is no longer split for a 10 MiB request (a new
/// 10 MiB segment instead: more reserved, the big block kept whole); under a 45 MiB limit the
/// oversize block is released first (`release_available_cached_blocks`) and the 10 MiB fit.
#[test]
fn max_split_size_keeps_large_blocks_whole_and_releases_them_first() {
    let split = AllocatorConfig {
        max_split_size: 32 * MIB,
        ..AllocatorConfig::default()
    };
    for (config, reserved) in [(AllocatorConfig::default(), 40 * MIB), (split, 50 * MIB)] {
        let mut a = with(config);
        let x = a.malloc(40 * MIB, 0).unwrap();
        a.free(x.block);
        a.malloc(10 * MIB, 0).unwrap();
        assert_eq!(a.reserved(), reserved);
        a.check().unwrap();
    }
    let mut a = CachingAllocator::with_config(45 * MIB, split);
    let x = a.malloc(40 * MIB, 0).unwrap();
    a.free(x.block);
    let y = a.malloc(10 * MIB, 0).unwrap();
    assert_eq!(y.served, Served::NewSegmentAfterRelease);
    assert_eq!((a.reserved(), a.segments_released), (10 * MIB, 1));
    // An oversize request takes no block 20 MiB or more larger than itself: 33 MiB does not
    // take a cached 60 MiB block (60 ≥ 33 + 20), it gets a 34 MiB segment.
    let mut a = with(split);
    let x = a.malloc(60 * MIB, 0).unwrap();
    a.free(x.block);
    a.malloc(33 * MIB, 0).unwrap();
    assert_eq!(a.reserved(), 94 * MIB);
}

/// `roundup_power2_divisions` 4 (steps of 4 MiB between 16 and 32 MiB): 17 MiB rounds to
/// 20 MiB, so after it is freed a 19 MiB request (also 20 MiB) reuses it — one 20 MiB segment
/// instead of 18 + 20 MiB — while the 17 MiB tensor itself holds 3 MiB more than it asked for.
#[test]
fn power2_divisions_trade_internal_waste_for_reuse() {
    let four = AllocatorConfig {
        roundup_power2_divisions: [4; ROUNDUP_INTERVALS],
        ..AllocatorConfig::default()
    };
    for (config, block, reserved) in [
        (AllocatorConfig::default(), 18 * MIB, 38 * MIB),
        (four, 20 * MIB, 20 * MIB),
    ] {
        let mut a = with(config);
        let x = a.malloc(17 * MIB, 0).unwrap();
        // Default: 17 MiB in an 18 MiB segment, the 1 MiB rest not split (not > 1 MiB).
        assert_eq!(x.size, block);
        a.free(x.block);
        a.malloc(19 * MIB, 0).unwrap();
        assert_eq!(a.reserved(), reserved);
    }
}

/// `garbage_collection_threshold` 0.5 on a 100 MiB device: 30 + 30 MiB cached (60 MiB > 50),
/// then a 40 MiB miss collects both (each as old as the average) before mapping — reserved
/// 40 MiB instead of 100 MiB. Without a limit (no `set_fraction`) nothing is collected.
#[test]
fn garbage_collection_releases_old_cached_blocks_above_the_threshold() {
    let gc = AllocatorConfig {
        garbage_collection_threshold: 0.5,
        ..AllocatorConfig::default()
    };
    let run = |capacity: u64, config: AllocatorConfig| {
        let mut a = CachingAllocator::with_config(capacity, config);
        let x = a.malloc(30 * MIB, 0).unwrap();
        let y = a.malloc(30 * MIB, 0).unwrap();
        a.free(x.block);
        a.free(y.block);
        a.malloc(40 * MIB, 0).unwrap();
        a.check().unwrap();
        a.reserved()
    };
    assert_eq!(run(100 * MIB, AllocatorConfig::default()), 100 * MIB);
    assert_eq!(run(100 * MIB, gc), 40 * MIB);
    assert_eq!(run(u64::MAX, gc), 100 * MIB);
}

mod expandable_properties {
    use super::*;
    use proptest::prelude::*;

    /// The mapped pages of a range after releasing the cache, worked out from the live blocks
    /// alone: exactly the pages (counted from their range's base) that some allocated block
    /// touches — every other mapped page lies inside one free block, and `unmap_block` unmaps
    /// it. Σ over pools and streams.
    fn pages_touched(a: &CachingAllocator, live: &[Allocation]) -> u64 {
        let mut pages = std::collections::BTreeSet::new();
        for x in live {
            let &(pool, _, base) = a
                .ranges
                .iter()
                .find(|r| x.address >= r.2 && x.address - r.2 < expandable::EXPANDABLE_SPAN)
                .expect("an expandable block lies in a range");
            let page = expandable::page_size(pool);
            let (lo, hi) = (x.address - base, x.address - base + x.size);
            for p in lo / page..hi.div_ceil(page) {
                pages.insert((base, p, page));
            }
        }
        pages.iter().map(|&(_, _, page)| page).sum()
    }

    proptest! {
        /// Random requests (small and large, two streams), frees and cache releases under a
        /// device limit: the invariants hold after every step, and after every release the
        /// reserved bytes are exactly the pages the live blocks touch.
        #[test]
        fn invariants_hold_and_a_release_keeps_only_pages_in_use(
            ops in proptest::collection::vec((0u8..4, 1u64..(48 << 20), 0u64..2, any::<usize>()), 1..120),
        ) {
            let mut a = CachingAllocator::with_config(400 * MIB, expandable());
            let mut live: Vec<Allocation> = Vec::new();
            for (kind, size, stream, pick) in ops {
                match kind {
                    0 | 1 => {
                        // Small requests a quarter of the time.
                        let size = if pick % 4 == 0 { size % (1 << 20) + 1 } else { size };
                        if let Ok(x) = a.malloc(size, stream) {
                            live.push(x);
                        }
                    }
                    2 if !live.is_empty() => {
                        let x = live.swap_remove(pick % live.len());
                        prop_assert!(a.free(x.block));
                    }
                    _ => {
                        a.empty_cache();
                        prop_assert_eq!(a.reserved(), pages_touched(&a, &live));
                    }
                }
                if let Err(e) = a.check() {
                    return Err(TestCaseError::fail(e));
                }
                prop_assert!(a.reserved() <= 400 * MIB);
            }
        }
    }
}

/// A mid-run state seeded as it is: the free space left by the blocks (gaps and free blocks
/// that touch) is one free block, allocated blocks keep their handles, reserved and allocated
/// count them, and best fit then uses the seeded free block at its own address.
#[test]
fn a_seeded_state_serves_requests_at_its_own_addresses() {
    const A: u64 = 0x7f00_0000_0000;
    let mut a = CachingAllocator::new(u64::MAX);
    let used = |address, size| SeedBlock {
        address,
        size,
        requested: size,
        allocated: true,
    };
    let handles = a.seed(&[SeedSegment {
        address: A,
        size: 20 * MIB,
        pool: Pool::Large,
        stream: 0,
        expandable: false,
        blocks: vec![
            used(A, 4 * MIB),
            // A free block touching the gap after it: 2 + 4 MiB free from A + 4 MiB.
            SeedBlock {
                address: A + 4 * MIB,
                size: 2 * MIB,
                requested: 0,
                allocated: false,
            },
            used(A + 10 * MIB, 10 * MIB),
        ],
    }]);
    assert_eq!(handles.len(), 2);
    assert_eq!(
        (a.reserved(), a.allocated(), a.segments_created),
        (20 * MIB, 14 * MIB, 0)
    );
    let views = a.segments();
    let sizes: Vec<(u64, u64, bool)> = views[0]
        .blocks
        .iter()
        .map(|b| (b.offset, b.size, b.allocated))
        .collect();
    let want = [
        (0, 4 * MIB, true),
        (4 * MIB, 6 * MIB, false),
        (10 * MIB, 10 * MIB, true),
    ];
    assert_eq!(sizes, want);
    // 5 MiB fits the 6 MiB block at A + 4 MiB (remainder 1 MiB: not split in the large pool).
    let x = a.malloc(5 * MIB, 0).unwrap();
    assert_eq!((x.address, x.size), (A + 4 * MIB, 6 * MIB));
    // Freeing the seeded first block merges nothing (its neighbour is in use).
    let first = handles.iter().find(|h| h.0 == A).map(|h| h.1).unwrap();
    assert!(a.free(first));
    assert_eq!(a.allocated(), 16 * MIB);
    // A new segment goes past the seeded ones.
    let y = a.malloc(30 * MIB, 0).unwrap();
    assert!(y.address >= A + 20 * MIB);
}
