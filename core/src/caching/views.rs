//! Copies of the segment map for display: [`SegmentView`]s with their [`BlockView`]s in
//! address order, written over a caller's vectors and, for the simulator's many copies per
//! batch, only for the segments that changed since the last copy.

use serde::Serialize;

use super::{CachingAllocator, Pool};

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
}
