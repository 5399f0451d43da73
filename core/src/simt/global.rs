//! Global memory as 32-byte sectors: the unit in which L1/L2 move data (NVIDIA CUDA C++ Best
//! Practices Guide, "Coalesced Access to Global Memory"; Nsight Compute's
//! `l1tex__t_sectors_pipe_lsu_mem_global_op_ld`).

use serde::{Deserialize, Serialize};

/// Bytes in one sector.
pub const SECTOR_BYTES: u64 = 32;

/// Sectors touched by one warp request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SectorCost {
    /// Distinct 32-byte sectors the active lanes touch.
    pub sectors: u32,
    /// Sectors the same bytes would need if perfectly packed: `ceil(distinct bytes / 32)`.
    pub ideal_sectors: u32,
    /// Bytes the lanes asked for (counting repeats once).
    pub bytes: u64,
}

/// The sectors touched when lane `l` accesses `width` bytes at `addresses[l]` (`None` =
/// inactive).
pub fn sectors(addresses: &[Option<u64>], width: u32) -> SectorCost {
    let w = u64::from(width.max(1));
    let mut secs: Vec<u64> = addresses
        .iter()
        .flatten()
        .flat_map(|a| (a / SECTOR_BYTES)..=(a.saturating_add(w - 1) / SECTOR_BYTES))
        .collect();
    secs.sort_unstable();
    secs.dedup();
    let mut starts: Vec<u64> = addresses.iter().flatten().copied().collect();
    starts.sort_unstable();
    starts.dedup();
    // Distinct bytes: merge the [a, a+w) intervals.
    let (mut bytes, mut end) = (0u64, 0u64);
    for a in starts {
        // Saturating: an access at the very top of the address space ends at 2⁶⁴ − 1.
        let hi = a.saturating_add(w);
        let lo = a.max(end);
        if hi > lo {
            bytes += hi - lo;
        }
        end = end.max(hi);
    }
    SectorCost {
        sectors: secs.len() as u32,
        ideal_sectors: bytes.div_ceil(SECTOR_BYTES) as u32,
        bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coalesced_floats_touch_four_sectors() {
        // 32 lanes × 4 bytes = 128 contiguous bytes from an aligned base: 4 sectors.
        let a: Vec<_> = (0..32).map(|l| Some(4096 + 4 * l)).collect();
        assert_eq!(
            sectors(&a, 4),
            SectorCost {
                sectors: 4,
                ideal_sectors: 4,
                bytes: 128
            }
        );
        // Misaligned by 4 bytes: the same 128 bytes straddle 5 sectors.
        let a: Vec<_> = (0..32).map(|l| Some(4100 + 4 * l)).collect();
        assert_eq!(sectors(&a, 4).sectors, 5);
    }

    #[test]
    fn strided_access_wastes_sectors() {
        // One float per row of a 1024-float matrix: every lane in its own sector.
        let a: Vec<_> = (0..32).map(|l| Some(4096 * l)).collect();
        let c = sectors(&a, 4);
        assert_eq!((c.sectors, c.ideal_sectors), (32, 4));
        // All lanes on one word: one sector.
        assert_eq!(sectors(&vec![Some(64); 32], 4).sectors, 1);
    }
}
