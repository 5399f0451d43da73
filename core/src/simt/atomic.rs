//! Atomics: how many lanes of one warp request contend for the same address. Contending
//! atomics to one address are serialised by the memory system (NVIDIA CUDA C++ Programming
//! Guide, "Atomic Functions"), so the largest group bounds the request's latency.

use serde::{Deserialize, Serialize};

/// Contention of one atomic request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Contention {
    /// Distinct addresses updated.
    pub addresses: u32,
    /// Most lanes updating one address.
    pub max_lanes_per_address: u32,
}

/// Contention when lane `l` updates `addresses[l]` (`None` = inactive).
pub fn contention(addresses: &[Option<u64>]) -> Contention {
    let mut a: Vec<u64> = addresses.iter().flatten().copied().collect();
    a.sort_unstable();
    let (mut distinct, mut best, mut run) = (0u32, 0u32, 0u32);
    for (i, x) in a.iter().enumerate() {
        if i == 0 || a[i - 1] != *x {
            distinct += 1;
            run = 0;
        }
        run += 1;
        best = best.max(run);
    }
    Contention {
        addresses: distinct,
        max_lanes_per_address: best,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_lanes_per_address() {
        let all_one: Vec<_> = (0..32).map(|_| Some(8)).collect();
        assert_eq!(
            contention(&all_one),
            Contention {
                addresses: 1,
                max_lanes_per_address: 32
            }
        );
        let pairs: Vec<_> = (0..32).map(|l| Some(4 * (l / 2))).collect();
        assert_eq!(
            contention(&pairs),
            Contention {
                addresses: 16,
                max_lanes_per_address: 2
            }
        );
        assert_eq!(contention(&[None, None]).max_lanes_per_address, 0);
    }
}
