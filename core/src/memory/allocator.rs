//! Scene `memory-allocator` (lecture §5.3): a simulator of PyTorch's CUDA caching allocator,
//! rule for rule from `c10/cuda/CUDACachingAllocator.cpp` (default settings: no
//! `max_split_size_mb`, no `roundup_power2_divisions`, no expandable segments, no garbage
//! collection threshold), fed the allocation sequence of a 6-layer encoder trained on
//! variable-length batches — and LightSeq2's alternative (paper §IV-D): one allocation at the
//! largest shape, made before training.
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

use std::collections::BTreeSet;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use super::{DTYPES, Dtype, MIB, mib};
use crate::Error;
use crate::params::{ParamSpec, ParamValues};
use crate::scene::{Scene, to_json};

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

/// One block in a [`SegmentView`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BlockView {
    /// Offset from the segment's start (bytes).
    pub offset: u64,
    /// Block size (bytes).
    pub size: u64,
    /// Bytes asked for (0 when free); `size − requested` is rounding loss.
    pub requested: u64,
    /// Allocated (true) or cached free.
    pub allocated: bool,
}

/// One segment (one `cudaMalloc`) with its blocks in address order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SegmentView {
    /// Address (simulated addresses grow with creation order).
    pub address: u64,
    /// Size (bytes).
    pub size: u64,
    /// Pool.
    pub pool: Pool,
    /// Stream.
    pub stream: u64,
    /// Blocks in address order.
    pub blocks: Vec<BlockView>,
}

impl CachingAllocator {
    /// An empty allocator on a device of `capacity` bytes.
    pub fn new(capacity: u64) -> Self {
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
        }
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

    fn pool_index(p: Pool) -> usize {
        match p {
            Pool::Small => 0,
            Pool::Large => 1,
        }
    }

    fn new_block(&mut self, b: Block) -> usize {
        if let Some(i) = self.recycled.pop() {
            self.blocks[i] = b;
            i
        } else {
            self.blocks.push(b);
            self.blocks.len() - 1
        }
    }

    fn key(&self, i: usize) -> (u64, u64, u64, usize) {
        let b = &self.blocks[i];
        (self.segments[b.segment].stream, b.size, b.address, i)
    }

    fn insert_free(&mut self, i: usize) {
        let pool = self.segments[self.blocks[i].segment].pool;
        let k = self.key(i);
        self.free[Self::pool_index(pool)].insert(k);
    }

    fn remove_free(&mut self, i: usize) {
        let pool = self.segments[self.blocks[i].segment].pool;
        let k = self.key(i);
        self.free[Self::pool_index(pool)].remove(&k);
    }

    /// Rule 4: the best-fit free block for a rounded request on `stream`.
    fn best_fit(&self, rounded: u64, pool: Pool, stream: u64) -> Option<usize> {
        self.free[Self::pool_index(pool)]
            .range((stream, rounded, 0, 0)..)
            .next()
            .filter(|k| k.0 == stream)
            .map(|k| k.3)
    }

    fn new_segment(&mut self, size: u64, pool: Pool, stream: u64) -> Option<usize> {
        // A segment must fit under the capacity and in the (simulated) address space: a size
        // near 2⁶⁴ (a replayed trace can ask for one) is refused, never wrapped around.
        let span = size.div_ceil(ROUND_LARGE).checked_mul(ROUND_LARGE)?;
        let next_address = self.next_address.checked_add(span)?;
        match self.reserved.checked_add(size) {
            Some(r) if r <= self.capacity => {}
            _ => return None,
        }
        let address = self.next_address;
        self.next_address = next_address;
        let seg = self.segments.len();
        let b = self.new_block(Block {
            segment: seg,
            address,
            size,
            requested: 0,
            allocated: false,
            prev: None,
            next: None,
            live: true,
        });
        self.segments.push(Segment {
            address,
            size,
            pool,
            stream,
            first: b,
            live: true,
            version: 0,
        });
        self.reserved += size;
        self.segments_created += 1;
        Some(b)
    }

    /// Allocates `size` bytes on `stream` by rules 1–7.
    ///
    /// # Errors
    /// [`OutOfMemory`] when no cached block fits and no segment fits under the capacity even
    /// after the cache is released.
    pub fn malloc(&mut self, size: u64, stream: u64) -> Result<Allocation, OutOfMemory> {
        let rounded = round_size(size);
        let pool = pool_of(rounded);
        let (block, served) = match self.best_fit(rounded, pool, stream) {
            Some(b) => {
                self.remove_free(b);
                (b, Served::Reused)
            }
            None => {
                let seg = segment_size(rounded);
                match self.new_segment(seg, pool, stream) {
                    Some(b) => (b, Served::NewSegment),
                    None => {
                        self.empty_cache();
                        match self.new_segment(seg, pool, stream) {
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
            }
        };
        let mut served = served;
        if should_split(self.blocks[block].size, rounded, pool) {
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

    /// Merges block `b` (right after `a`, same segment) into `a`.
    fn absorb(&mut self, a: usize, b: usize) {
        let (size, next) = (self.blocks[b].size, self.blocks[b].next);
        self.blocks[a].size += size;
        self.blocks[a].next = next;
        if let Some(n) = next {
            self.blocks[n].prev = Some(a);
        }
        self.blocks[b].live = false;
        self.recycled.push(b);
    }

    /// `release_cached_blocks` (`torch.cuda.empty_cache()`): frees every segment that is one whole
    /// free block. Returns the bytes released.
    pub fn empty_cache(&mut self) -> u64 {
        let mut released = 0;
        for s in 0..self.segments.len() {
            let seg = &self.segments[s];
            if !seg.live {
                continue;
            }
            let b = &self.blocks[seg.first];
            if !b.allocated && b.prev.is_none() && b.next.is_none() {
                let first = seg.first;
                let size = seg.size;
                self.remove_free(first);
                self.blocks[first].live = false;
                self.recycled.push(first);
                self.segments[s].live = false;
                self.reserved -= size;
                self.segments_released += 1;
                released += size;
            }
        }
        released
    }

    /// Releases one whole-free segment of exactly `size` bytes on `stream` (what a recorded
    /// `segment_free` event did); returns whether one existed.
    pub fn release_segment_of_size(&mut self, size: u64, stream: u64) -> bool {
        // A whole-free segment is one free block with no neighbours, so it sits in a free list
        // under (stream, size): look there rather than scanning every segment ever created (a
        // replayed trace of a million segment frees would otherwise take 10¹² steps). The first
        // such segment in creation order is released, as before.
        let found = self
            .free
            .iter()
            .flat_map(|set| set.range((stream, size, 0, 0)..=(stream, size, u64::MAX, usize::MAX)))
            .map(|k| k.3)
            .filter(|&i| {
                let b = &self.blocks[i];
                b.prev.is_none() && b.next.is_none() && self.segments[b.segment].size == size
            })
            .map(|i| self.blocks[i].segment)
            .min();
        match found {
            Some(s) => {
                let first = self.segments[s].first;
                self.remove_free(first);
                self.blocks[first].live = false;
                self.recycled.push(first);
                self.segments[s].live = false;
                self.reserved -= size;
                self.segments_released += 1;
                true
            }
            None => false,
        }
    }

    /// The live segments in creation order, each with its blocks in address order.
    pub fn segments(&self) -> Vec<SegmentView> {
        let mut out = Vec::new();
        self.segments_into(&mut out);
        out
    }

    /// [`Self::segments`] written over `out`, reusing its vectors' memory (the simulator takes
    /// many such copies per batch; allocating each one anew dominated its time).
    pub fn segments_into(&self, out: &mut Vec<SegmentView>) {
        self.segments_update(out, &mut Vec::new());
    }

    /// [`Self::segments_into`] for an `out` last written by this function with the same
    /// `keys`: segments unchanged since then (same segment, same version) are kept as they
    /// are, only the others are copied again. `keys` records, per entry of `out`, which segment
    /// at which version it holds; pass an empty one (and any `out`) for a full copy.
    pub fn segments_update(&self, out: &mut Vec<SegmentView>, keys: &mut Vec<(usize, u64)>) {
        keys.truncate(out.len());
        let mut k = 0;
        for (si, s) in self.segments.iter().enumerate().filter(|(_, s)| s.live) {
            let key = (si, s.version);
            if keys.get(k) == Some(&key) {
                k += 1;
                continue;
            }
            if k == keys.len() {
                keys.push(key);
            } else {
                keys[k] = key;
            }
            if k == out.len() {
                out.push(SegmentView {
                    address: 0,
                    size: 0,
                    pool: s.pool,
                    stream: 0,
                    blocks: Vec::new(),
                });
            }
            let view = &mut out[k];
            view.address = s.address;
            view.size = s.size;
            view.pool = s.pool;
            view.stream = s.stream;
            view.blocks.clear();
            let mut cur = Some(s.first);
            while let Some(i) = cur {
                let b = &self.blocks[i];
                view.blocks.push(BlockView {
                    offset: b.address - s.address,
                    size: b.size,
                    requested: b.requested,
                    allocated: b.allocated,
                });
                cur = b.next;
            }
            k += 1;
        }
        out.truncate(k);
        keys.truncate(k);
    }

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

// ---------------------------------------------------------------------------------------------
// The workload.

/// The encoder workload's parameters (validated).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AllocatorParams {
    /// Encoder layers.
    pub layers: u64,
    /// Target tokens per batch (B = ⌊tokens / L⌋ sequences of length L, at least 1).
    pub tokens: u64,
    /// Shortest sequence length.
    pub len_min: u64,
    /// Longest sequence length.
    pub len_max: u64,
    /// Batches.
    pub batches: u64,
    /// Seed of the lengths (ChaCha8).
    pub seed: u64,
    /// Hidden size H.
    pub hidden: u64,
    /// Attention heads N.
    pub heads: u64,
    /// Feed-forward size F.
    pub ffn: u64,
    /// Element type of activations.
    pub dtype: Dtype,
    /// Device capacity for the simulator (bytes).
    pub capacity: u64,
}

const PARAMS: &[ParamSpec] = &[
    ParamSpec::int("layers", "encoder layers", "编码器层数", 1, 48, 6),
    ParamSpec::int(
        "tokens",
        "tokens per batch",
        "每批 token 数",
        64,
        65536,
        4096,
    )
    .log(),
    ParamSpec::int(
        "len_min",
        "shortest sequence (tokens)",
        "最短序列（token）",
        1,
        4096,
        32,
    )
    .log(),
    ParamSpec::int(
        "len_max",
        "longest sequence (tokens)",
        "最长序列（token）",
        1,
        4096,
        256,
    )
    .log(),
    ParamSpec::int("batches", "batches", "批数", 1, 2000, 300),
    ParamSpec::int("seed", "random seed", "随机种子", 0, 1 << 31, 1),
    ParamSpec::int("hidden", "hidden size H", "隐藏维度 H", 8, 8192, 512).log(),
    ParamSpec::int("heads", "attention heads N", "注意力头数 N", 1, 128, 8),
    ParamSpec::int("ffn", "feed-forward size F", "前馈层维度 F", 8, 32768, 2048).log(),
    ParamSpec::choice(
        "dtype",
        "activation element type",
        "激活元素类型",
        DTYPES,
        "f32",
    ),
    ParamSpec::int(
        "capacity_mib",
        "device memory (MiB)",
        "设备显存（MiB）",
        64,
        1 << 20,
        32768,
    )
    .log(),
];

/// Most allocator events a run may simulate (each event keeps a few words of timeline).
pub const MAX_EVENTS: u64 = 4_000_000;

/// Allocations per layer per batch in [`batch_ops`] (forward + backward).
const ALLOCS_PER_LAYER: u64 = 33;

impl AllocatorParams {
    /// Reads and cross-checks the values.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for a value out of range, `len_min > len_max`, `hidden` not a
    /// multiple of `heads`, or a run that would simulate more than [`MAX_EVENTS`] events.
    pub fn from_values(v: &ParamValues) -> Result<Self, Error> {
        let get = |name: &str, lo: u64, hi: u64| -> Result<u64, Error> {
            let x = v.int(name)?;
            match u64::try_from(x) {
                Ok(u) if (lo..=hi).contains(&u) => Ok(u),
                _ => Err(Error::invalid(
                    name,
                    x,
                    format!("expected an integer in {lo}..={hi}"),
                )),
            }
        };
        let p = AllocatorParams {
            layers: get("layers", 1, 48)?,
            tokens: get("tokens", 64, 65536)?,
            len_min: get("len_min", 1, 4096)?,
            len_max: get("len_max", 1, 4096)?,
            batches: get("batches", 1, 2000)?,
            seed: get("seed", 0, 1 << 31)?,
            hidden: get("hidden", 8, 8192)?,
            heads: get("heads", 1, 128)?,
            ffn: get("ffn", 8, 32768)?,
            dtype: Dtype::parse(v.text("dtype")?)?,
            capacity: get("capacity_mib", 64, 1 << 20)? * MIB,
        };
        if p.len_min > p.len_max {
            return Err(Error::invalid(
                "len_min",
                p.len_min,
                format!("expected at most len_max = {}", p.len_max),
            ));
        }
        if !p.hidden.is_multiple_of(p.heads) {
            return Err(Error::invalid(
                "hidden",
                p.hidden,
                format!("expected a multiple of heads = {}", p.heads),
            ));
        }
        let events = 2 * (ALLOCS_PER_LAYER * p.layers + 2) * p.batches;
        if events > MAX_EVENTS {
            return Err(Error::invalid(
                "batches",
                p.batches,
                format!(
                    "layers × batches would simulate about {events} allocator events; at most {MAX_EVENTS} — fewer batches or layers"
                ),
            ));
        }
        Ok(p)
    }
}

/// One step of a batch's allocation sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Allocate tensor slot `slot` of `bytes` bytes.
    Alloc {
        /// Slot (index into the batch's tensors).
        slot: usize,
        /// Bytes.
        bytes: u64,
    },
    /// Free the tensor in slot `slot`.
    Free {
        /// Slot.
        slot: usize,
    },
}

/// The allocation sequence of one batch of `seqs` sequences of `len` tokens (the workload model).
///
/// Per layer, forward (a pre-LN encoder layer; `BLH` = seqs·len·hidden elements, `BNL²` =
/// seqs·heads·len² elements, masks 1 byte per element, LayerNorm statistics 2 f32 per token):
/// LN₁ output (BLH) and statistics, QKV (3BLH), scores (BNL², freed after softmax), softmax
/// output (BNL²), dropout mask (BNL² bytes), dropped probabilities (BNL²), context (BLH),
/// projection (BLH, freed after the residual), its dropout mask, residual sum h (BLH), LN₂ output
/// and statistics, FFN₁ (B·L·F), activation (B·L·F), FFN₂ (BLH, freed after the residual), its
/// mask, and the layer output (BLH) — everything but the three marked temporaries is saved for
/// backward. The batch starts with the embeddings (BLH) and the loss gradient (BLH).
///
/// Backward, layer by layer from the top, allocates the gradient temporaries in the order of
/// lecture §5.1 for attention (∇Y, ∇Z, ∇Y′, ∇S and ∇V, ∇Q and ∇K, ∇Q̃K̃Ṽ, ∇Y″, ∇in) after the
/// FFN's (∇FFN₂ output, ∇activation, ∇FFN₁, ∇LN₂, ∇h), each freed after its last use, and frees
/// each saved activation when its layer's backward no longer needs it. Parameters, their
/// gradients and optimizer state are permanent and the same under both policies, so they are
/// left out.
pub fn batch_ops(p: &AllocatorParams, seqs: u64, len: u64) -> Vec<Op> {
    let e = p.dtype.bytes();
    let blh = seqs * len * p.hidden * e;
    let bnl2 = seqs * p.heads * len * len * e;
    let mask_s = seqs * p.heads * len * len;
    let mask_h = seqs * len * p.hidden;
    let blf = seqs * len * p.ffn * e;
    let stats = seqs * len * 2 * 4;
    let mut ops = Vec::new();
    let mut slots = 0usize;
    let mut alloc = |ops: &mut Vec<Op>, bytes: u64| {
        let slot = slots;
        slots += 1;
        ops.push(Op::Alloc { slot, bytes });
        slot
    };
    let free = |ops: &mut Vec<Op>, slot: usize| ops.push(Op::Free { slot });

    struct Saved {
        x: usize,
        ln1: usize,
        ln1s: usize,
        qkv: usize,
        probs: usize,
        mask: usize,
        probs_d: usize,
        ctx: usize,
        mask2: usize,
        h: usize,
        ln2: usize,
        ln2s: usize,
        f1: usize,
        act: usize,
        mask3: usize,
    }
    let mut x = alloc(&mut ops, blh); // embeddings
    let mut saved = Vec::new();
    for _ in 0..p.layers {
        let ln1 = alloc(&mut ops, blh);
        let ln1s = alloc(&mut ops, stats);
        let qkv = alloc(&mut ops, 3 * blh);
        let scores = alloc(&mut ops, bnl2);
        let probs = alloc(&mut ops, bnl2);
        free(&mut ops, scores);
        let mask = alloc(&mut ops, mask_s);
        let probs_d = alloc(&mut ops, bnl2);
        let ctx = alloc(&mut ops, blh);
        let proj = alloc(&mut ops, blh);
        let mask2 = alloc(&mut ops, mask_h);
        let h = alloc(&mut ops, blh);
        free(&mut ops, proj);
        let ln2 = alloc(&mut ops, blh);
        let ln2s = alloc(&mut ops, stats);
        let f1 = alloc(&mut ops, blf);
        let act = alloc(&mut ops, blf);
        let f2 = alloc(&mut ops, blh);
        let mask3 = alloc(&mut ops, mask_h);
        let out = alloc(&mut ops, blh);
        free(&mut ops, f2);
        saved.push(Saved {
            x,
            ln1,
            ln1s,
            qkv,
            probs,
            mask,
            probs_d,
            ctx,
            mask2,
            h,
            ln2,
            ln2s,
            f1,
            act,
            mask3,
        });
        x = out;
    }
    // Loss gradient w.r.t. the top output; the top output itself is no longer needed.
    let mut d_out = alloc(&mut ops, blh);
    free(&mut ops, x);
    while let Some(s) = saved.pop() {
        // FFN backward.
        let d_f2 = alloc(&mut ops, blh); // dropout backward
        free(&mut ops, s.mask3);
        let d_act = alloc(&mut ops, blf);
        free(&mut ops, d_f2);
        free(&mut ops, s.act);
        let d_f1 = alloc(&mut ops, blf);
        free(&mut ops, d_act);
        free(&mut ops, s.f1);
        let d_ln2 = alloc(&mut ops, blh);
        free(&mut ops, d_f1);
        free(&mut ops, s.ln2);
        let d_h = alloc(&mut ops, blh); // LN₂ backward + d_out (residual)
        free(&mut ops, d_ln2);
        free(&mut ops, s.ln2s);
        free(&mut ops, s.h);
        free(&mut ops, d_out);
        // Attention backward (lecture §5.1's ten steps).
        let d_y = alloc(&mut ops, blh);
        free(&mut ops, s.mask2);
        let d_z = alloc(&mut ops, blh);
        free(&mut ops, d_y);
        free(&mut ops, s.ctx);
        let d_y1 = alloc(&mut ops, blh);
        free(&mut ops, d_z);
        let d_s = alloc(&mut ops, bnl2);
        let d_v = alloc(&mut ops, blh);
        free(&mut ops, d_y1);
        free(&mut ops, s.probs_d);
        free(&mut ops, s.mask);
        free(&mut ops, s.probs);
        let d_q = alloc(&mut ops, blh);
        let d_k = alloc(&mut ops, blh);
        free(&mut ops, d_s);
        let d_qkv = alloc(&mut ops, 3 * blh);
        free(&mut ops, d_q);
        free(&mut ops, d_k);
        free(&mut ops, d_v);
        free(&mut ops, s.qkv);
        let d_y2 = alloc(&mut ops, blh);
        free(&mut ops, d_qkv);
        free(&mut ops, s.ln1);
        let d_in = alloc(&mut ops, blh);
        free(&mut ops, d_y2);
        free(&mut ops, s.ln1s);
        free(&mut ops, s.x);
        free(&mut ops, d_h);
        d_out = d_in;
    }
    free(&mut ops, d_out);
    ops
}

/// Peak of Σ bytes live during a sequence of ops (what the batch truly needs, bytes).
pub fn needed_bytes(ops: &[Op]) -> u64 {
    let mut sizes: Vec<u64> = Vec::new();
    let (mut live, mut peak) = (0u64, 0u64);
    for op in ops {
        match *op {
            Op::Alloc { slot, bytes } => {
                if sizes.len() <= slot {
                    sizes.resize(slot + 1, 0);
                }
                sizes[slot] = bytes;
                live += bytes;
                peak = peak.max(live);
            }
            Op::Free { slot } => live -= sizes.get(slot).copied().unwrap_or(0),
        }
    }
    peak
}

/// One batch of the run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BatchRecord {
    /// 0-based batch number.
    pub batch: u64,
    /// Sequence length L.
    pub len: u64,
    /// Sequences B.
    pub seqs: u64,
    /// Tokens B·L.
    pub tokens: u64,
    /// What this batch needs: peak of live requested bytes, in MiB.
    pub needed_mib: f64,
    /// Peak allocated (rounded blocks) during the batch, MiB.
    pub allocated_peak_mib: f64,
    /// Reserved at the batch's end, MiB.
    pub reserved_mib: f64,
    /// Share of the up-front LightSeq2 allocation idle at this batch's peak (1 − needed/prealloc).
    pub preallocated_idle_share: f64,
    /// Index of this batch's first event in the event timeline.
    pub first_event: usize,
}

/// One allocator event.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Event {
    /// Batch.
    pub batch: u32,
    /// True for malloc, false for free.
    pub alloc: bool,
    /// Bytes asked for (malloc) or freed (the block's requested size).
    pub bytes: u64,
    /// How a malloc was served (None for a free).
    pub served: Option<Served>,
    /// Reserved after the event (bytes).
    pub reserved: u64,
    /// Allocated after the event (bytes).
    pub allocated: u64,
}

/// A whole simulated run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Simulation {
    /// Per batch.
    pub batches: Vec<BatchRecord>,
    /// Per event (reserved vs allocated over time).
    pub events: Vec<Event>,
    /// Segment map at each batch's allocated peak (batch-by-batch animation).
    pub frames: Vec<Vec<SegmentView>>,
    /// Peak reserved over the run (bytes).
    pub reserved_peak: u64,
    /// Largest per-batch need (bytes).
    pub needed_peak: u64,
    /// Peak allocated over the run (bytes).
    pub allocated_peak: u64,
    /// Segments created.
    pub segments_created: u64,
    /// Segments released on a full device.
    pub segments_released: u64,
    /// Set when the run hit out-of-memory (the run stops there).
    pub oom: Option<OutOfMemory>,
}

/// The lengths of the run's batches: uniform integers in `len_min..=len_max`, ChaCha8(seed).
pub fn batch_lengths(p: &AllocatorParams) -> Vec<u64> {
    let mut rng = ChaCha8Rng::seed_from_u64(p.seed);
    (0..p.batches)
        .map(|_| rng.random_range(p.len_min..=p.len_max))
        .collect()
}

/// Runs the workload through the simulator. `check` verifies the allocator's invariants after
/// every event (slow; for tests). Reports progress ([`crate::progress`]) once per batch.
///
/// # Errors
/// [`Error::BadInput`] if `check` finds a violated invariant (a simulator bug);
/// [`Error::Cancelled`] when the current progress scope is cancelled.
pub fn simulate(p: &AllocatorParams, check: bool) -> Result<Simulation, Error> {
    let lens = batch_lengths(p);
    let shapes: Vec<(u64, u64)> = lens.iter().map(|&l| ((p.tokens / l).max(1), l)).collect();
    let mut total_ops = 0;
    let needs: Vec<u64> = shapes
        .iter()
        .map(|&(b, l)| {
            let ops = batch_ops(p, b, l);
            total_ops += ops.len();
            needed_bytes(&ops)
        })
        .collect();
    let prealloc = needs.iter().copied().max().unwrap_or(0);
    let mut a = CachingAllocator::new(p.capacity);
    let mut sim = Simulation {
        batches: Vec::with_capacity(shapes.len()),
        // One event per op: sized once instead of grown (and copied) by doubling.
        events: Vec::with_capacity(total_ops),
        frames: Vec::with_capacity(shapes.len()),
        reserved_peak: 0,
        needed_peak: prealloc,
        allocated_peak: 0,
        segments_created: 0,
        segments_released: 0,
        oom: None,
    };
    let batches = shapes.len() as u64;
    'run: for (bi, (&(seqs, len), &need)) in shapes.iter().zip(&needs).enumerate() {
        crate::progress::report(bi as u64, batches)?;
        let ops = batch_ops(p, seqs, len);
        let mut handles: Vec<Option<usize>> = vec![None; ops.len()];
        let first_event = sim.events.len();
        let mut peak_alloc = 0;
        // The segment map at the batch's peak. Allocations only raise `allocated`, so the peak
        // is reached just before some free (or at the batch's end): the map is copied there,
        // when it beats the last copy — not at every new high, which copied every segment
        // after almost every allocation of a forward pass (seconds at the top of the ranges).
        // Only segments changed since the last copy are copied again (`frame_keys`).
        let mut frame = Vec::new();
        let mut frame_keys = Vec::new();
        let mut frame_alloc: Option<u64> = None;
        for op in &ops {
            if matches!(op, Op::Free { .. }) && frame_alloc.is_none_or(|f| a.allocated() > f) {
                a.segments_update(&mut frame, &mut frame_keys);
                frame_alloc = Some(a.allocated());
            }
            let (alloc, bytes, served) = match *op {
                Op::Alloc { slot, bytes } => match a.malloc(bytes, 0) {
                    Ok(x) => {
                        if let Some(h) = handles.get_mut(slot) {
                            *h = Some(x.block);
                        }
                        (true, bytes, Some(x.served))
                    }
                    Err(oom) => {
                        sim.oom = Some(oom);
                        break 'run;
                    }
                },
                Op::Free { slot } => {
                    let h = handles.get_mut(slot).and_then(Option::take);
                    let bytes = h.map_or(0, |h| a.blocks[h].requested);
                    if let Some(h) = h {
                        a.free(h);
                    }
                    (false, bytes, None)
                }
            };
            if check {
                a.check()
                    .map_err(|e| Error::BadInput(format!("simulator invariant: {e}")))?;
            }
            sim.events.push(Event {
                batch: bi as u32,
                alloc,
                bytes,
                served,
                reserved: a.reserved(),
                allocated: a.allocated(),
            });
            sim.reserved_peak = sim.reserved_peak.max(a.reserved());
            peak_alloc = peak_alloc.max(a.allocated());
        }
        if frame_alloc.is_none_or(|f| a.allocated() > f) {
            a.segments_update(&mut frame, &mut frame_keys);
        }
        sim.allocated_peak = sim.allocated_peak.max(peak_alloc);
        sim.frames.push(frame);
        sim.batches.push(BatchRecord {
            batch: bi as u64,
            len,
            seqs,
            tokens: seqs * len,
            needed_mib: mib(need),
            allocated_peak_mib: mib(peak_alloc),
            reserved_mib: mib(a.reserved()),
            preallocated_idle_share: if prealloc == 0 {
                0.0
            } else {
                1.0 - need as f64 / prealloc as f64
            },
            first_event,
        });
    }
    sim.segments_created = a.segments_created;
    sim.segments_released = a.segments_released;
    crate::progress::report(batches, batches)?;
    Ok(sim)
}

/// The registry entry.
pub const SCENE: Scene = Scene {
    id: "memory-allocator",
    section: "§5.3",
    title: "Caching allocator vs one up-front allocation",
    title_zh: "缓存分配器与一次性预先分配",
    summary: "Variable-length batches fragment PyTorch's caching allocator until it reserves far more than any batch needs; LightSeq2 allocates the largest shape once.",
    summary_zh: "长度不同的批次把 PyTorch 的缓存分配器切得零零碎碎，直到它保留的显存远多于任何一批所需；LightSeq2 按最大形状一次性分配。",
    params: PARAMS,
    run: |v| to_json(&run(&AllocatorParams::from_values(v)?)?),
};

/// The scene's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AllocatorOutput {
    /// Peak reserved by the caching allocator over the run, MiB.
    pub reserved_peak_mib: f64,
    /// Reserved at the end of the run, MiB.
    pub reserved_final_mib: f64,
    /// The largest single batch's need (peak live requested bytes), MiB.
    pub needed_peak_mib: f64,
    /// Peak allocated (rounded blocks), MiB.
    pub allocated_peak_mib: f64,
    /// reserved_peak / needed_peak.
    pub reserved_over_needed: f64,
    /// LightSeq2: one allocation at the largest batch's need, MiB (flat over the run).
    pub preallocated_mib: f64,
    /// Mean share of the preallocation idle at the batches' peaks.
    pub preallocated_mean_idle_share: f64,
    /// The batch whose need is largest (0-based) and its length.
    pub largest_batch: u64,
    /// Its length L.
    pub largest_batch_len: u64,
    /// Segments `cudaMalloc`ed over the run.
    pub segments_created: u64,
    /// Segments released because the device was full.
    pub segments_released: u64,
    /// Allocator events simulated.
    pub events: usize,
    /// Out-of-memory, if the run hit the capacity.
    pub oom: Option<String>,
    /// Per batch: shape, need, allocated peak, reserved.
    pub timeline: Vec<BatchRecord>,
    /// Segment map at the allocated peak of each batch that grew the reserved memory (at most
    /// [`MAX_FRAMES`], first ones first) — the moments fragmentation shows; [`simulate`] keeps
    /// every batch's frame for a batch-by-batch animation.
    pub frames: Vec<Frame>,
}

/// Most segment-map frames in the scene's result.
pub const MAX_FRAMES: usize = 48;

/// A segment map at one batch's allocated peak.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Frame {
    /// 0-based batch.
    pub batch: u64,
    /// Reserved at the end of the batch (MiB).
    pub reserved_mib: f64,
    /// Segments in creation order.
    pub segments: Vec<SegmentView>,
}

/// Simulates the run and summarises it (progress as [`simulate`]).
///
/// # Errors
/// [`Error::Cancelled`] when the current progress scope is cancelled; otherwise only a
/// simulator invariant failure (not expected).
pub fn run(p: &AllocatorParams) -> Result<AllocatorOutput, Error> {
    Ok(summarise(&simulate(p, false)?))
}

/// Summarises a simulated run (what [`run`] returns; the GUI keeps the [`Simulation`] too, for
/// its batch-by-batch segment map).
pub fn summarise(sim: &Simulation) -> AllocatorOutput {
    let (largest_batch, largest_batch_len) = sim
        .batches
        .iter()
        .max_by(|a, b| {
            a.needed_mib
                .total_cmp(&b.needed_mib)
                .then(b.batch.cmp(&a.batch))
        })
        .map_or((0, 0), |b| (b.batch, b.len));
    let n = sim.batches.len().max(1) as f64;
    let mut frames = Vec::new();
    let mut prev_reserved = 0.0;
    for (b, f) in sim.batches.iter().zip(&sim.frames) {
        if b.reserved_mib > prev_reserved && frames.len() < MAX_FRAMES {
            frames.push(Frame {
                batch: b.batch,
                reserved_mib: b.reserved_mib,
                segments: f.clone(),
            });
        }
        prev_reserved = b.reserved_mib;
    }
    AllocatorOutput {
        reserved_peak_mib: mib(sim.reserved_peak),
        reserved_final_mib: sim.batches.last().map_or(0.0, |b| b.reserved_mib),
        needed_peak_mib: mib(sim.needed_peak),
        allocated_peak_mib: mib(sim.allocated_peak),
        reserved_over_needed: if sim.needed_peak == 0 {
            0.0
        } else {
            sim.reserved_peak as f64 / sim.needed_peak as f64
        },
        preallocated_mib: mib(sim.needed_peak),
        preallocated_mean_idle_share: sim
            .batches
            .iter()
            .map(|b| b.preallocated_idle_share)
            .sum::<f64>()
            / n,
        largest_batch,
        largest_batch_len,
        segments_created: sim.segments_created,
        segments_released: sim.segments_released,
        events: sim.events.len(),
        oom: sim.oom.as_ref().map(ToString::to_string),
        timeline: sim.batches.clone(),
        frames,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    fn defaults() -> AllocatorParams {
        AllocatorParams::from_values(&ParamValues::defaults(PARAMS)).unwrap()
    }

    #[test]
    fn lecture_workload_fragments() {
        let o = run(&defaults()).unwrap();
        assert!(o.oom.is_none());
        assert!(
            o.reserved_peak_mib > o.needed_peak_mib,
            "reserved {} vs needed {}",
            o.reserved_peak_mib,
            o.needed_peak_mib
        );
        // LightSeq2's preallocation = the largest batch's need, recomputed here from the ops.
        let p = defaults();
        let max_need = batch_lengths(&p)
            .iter()
            .map(|&l| needed_bytes(&batch_ops(&p, (p.tokens / l).max(1), l)))
            .max()
            .unwrap();
        assert_eq!(o.preallocated_mib, max_need as f64 / MIB as f64);
        assert_eq!(o.preallocated_mib, o.needed_peak_mib);
        assert_eq!(o.timeline.len(), 300);
    }

    #[test]
    fn invariants_hold_at_every_event_of_a_short_run() {
        let mut p = defaults();
        p.batches = 25;
        p.capacity = 600 * MIB; // small enough to force releases
        let sim = simulate(&p, true).unwrap();
        assert!(!sim.events.is_empty());
        for e in &sim.events {
            assert!(e.allocated <= e.reserved);
        }
    }

    #[test]
    fn incremental_segment_map_equals_a_full_copy_after_every_event() {
        // The simulator's frames are kept up to date segment by segment; after every malloc,
        // free and cache release the incremental map must equal a fresh full copy.
        let mut p = defaults();
        p.batches = 30;
        let mut a = CachingAllocator::new(p.capacity);
        let (mut out, mut keys) = (Vec::new(), Vec::new());
        let mut released = 0;
        for (i, len) in batch_lengths(&p).into_iter().enumerate() {
            let ops = batch_ops(&p, (p.tokens / len).max(1), len);
            let mut handles = vec![None; ops.len()];
            for op in &ops {
                match *op {
                    Op::Alloc { slot, bytes } => {
                        handles[slot] = Some(a.malloc(bytes, 0).unwrap().block);
                    }
                    Op::Free { slot } => {
                        a.free(handles[slot].take().unwrap());
                    }
                }
                a.segments_update(&mut out, &mut keys);
                assert_eq!(out, a.segments());
            }
            if i % 7 == 6 {
                // Segments disappear from the middle of the list.
                released += a.empty_cache();
                a.segments_update(&mut out, &mut keys);
                assert_eq!(out, a.segments());
            }
        }
        assert!(released > 0, "the run should release cached segments");
    }

    #[test]
    fn needed_bytes_by_hand() {
        let ops = [
            Op::Alloc { slot: 0, bytes: 10 },
            Op::Alloc { slot: 1, bytes: 5 },
            Op::Free { slot: 0 },
            Op::Alloc { slot: 2, bytes: 7 },
        ];
        assert_eq!(needed_bytes(&ops), 15);
    }

    #[test]
    fn every_batch_frees_what_it_allocates() {
        let p = defaults();
        let ops = batch_ops(&p, 16, 256);
        let allocs = ops.iter().filter(|o| matches!(o, Op::Alloc { .. })).count();
        let frees = ops.iter().filter(|o| matches!(o, Op::Free { .. })).count();
        assert_eq!(allocs, frees);
        assert_eq!(allocs as u64, 2 + ALLOCS_PER_LAYER * p.layers);
    }

    #[test]
    fn validation() {
        let mut v = ParamValues::defaults(PARAMS);
        v.set(PARAMS, "len_min", "300").unwrap();
        let e = AllocatorParams::from_values(&v).unwrap_err();
        assert!(e.to_string().contains("len_min"), "{e}");
        let mut v = ParamValues::defaults(PARAMS);
        v.set(PARAMS, "layers", "48").unwrap();
        v.set(PARAMS, "batches", "2000").unwrap();
        let e = AllocatorParams::from_values(&v).unwrap_err();
        assert!(e.to_string().contains("events"), "{e}");
    }
}
