//! Shared memory as banks, and the cost of one warp request in wavefronts.
//!
//! The rule (NVIDIA CUDA C++ Programming Guide, "Shared Memory" for compute capability 5.x+;
//! Nsight Compute's `l1tex__data_bank_conflicts_pipe_lsu_mem_shared` and
//! `smsp__sass_inst_executed_op_shared_*` metrics count the same way):
//!
//! - shared memory is `banks` (32) banks of `bank_bytes` (4) bytes; the word at byte address `a`
//!   is `a / 4` and lives in bank `(a / 4) mod 32`;
//! - a request is split into groups of lanes that can be served together: the whole warp for
//!   accesses of up to 4 bytes, each half-warp for 8-byte accesses, each quarter-warp for
//!   16-byte accesses (in general `banks × bank_bytes / width` lanes per group);
//! - within a group, each bank serves one distinct word per wavefront; lanes reading the same
//!   word share it (a broadcast / multicast costs nothing extra). A group therefore needs as many
//!   wavefronts as the largest number of *distinct* words requested from any one bank;
//! - the request's actual wavefronts are the sum over its groups; the *ideal* wavefronts are what
//!   the same distinct words would need spread perfectly over the banks: per group
//!   `ceil(distinct words / banks)`, summed;
//! - the conflict degree is the largest number of distinct words one bank must serve in a group
//!   (1 = conflict-free, 32 = every lane in one bank).

use serde::{Deserialize, Serialize};

use crate::Error;

/// Shared-memory geometry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BankConfig {
    /// Number of banks (32 on every NVIDIA GPU since Kepler).
    pub banks: u32,
    /// Bytes per bank word (4).
    pub bank_bytes: u32,
}

impl Default for BankConfig {
    fn default() -> Self {
        BankConfig {
            banks: 32,
            bank_bytes: 4,
        }
    }
}

/// The bank-level cost of one warp request to shared memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharedCost {
    /// Wavefronts the hardware needs (sum over lane groups).
    pub wavefronts: u32,
    /// Wavefronts the same distinct words would need with no conflict.
    pub ideal_wavefronts: u32,
    /// Largest number of distinct words one bank serves within a group (1 = no conflict).
    pub conflict_degree: u32,
    /// Lanes per group: warp, half-warp (8-byte) or quarter-warp (16-byte).
    pub group_lanes: u32,
    /// Per lane: the first bank its access touches (`None` for inactive lanes).
    pub lane_bank: Vec<Option<u32>>,
    /// Per lane: the first word its access touches (byte address / bank_bytes).
    pub lane_word: Vec<Option<u64>>,
    /// Consecutive words each lane's access spans: `width / bank_bytes`, at least 1 (an 8-byte
    /// element covers two banks).
    pub lane_words: u32,
}

impl BankConfig {
    /// The bank of the word holding byte `address`.
    pub fn bank(&self, address: u64) -> u32 {
        ((address / u64::from(self.bank_bytes)) % u64::from(self.banks)) as u32
    }

    /// The cost of one warp request where lane `l` accesses `width` bytes at `addresses[l]`
    /// (`None` = lane inactive).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for a width other than 1, 2, 4, 8 or 16 bytes, or a misaligned
    /// address (CUDA requires natural alignment).
    pub fn request(&self, addresses: &[Option<u64>], width: u32) -> Result<SharedCost, Error> {
        if !matches!(width, 1 | 2 | 4 | 8 | 16) {
            return Err(Error::invalid(
                "elem_bytes",
                width,
                crate::error::Expected::custom(
                    "expected 1, 2, 4, 8 or 16 bytes",
                    "应为 1、2、4、8 或 16 字节",
                ),
            ));
        }
        if let Some(a) = addresses
            .iter()
            .flatten()
            .find(|a| *a % u64::from(width) != 0)
        {
            return Err(Error::invalid(
                "address",
                a,
                crate::error::Expected::custom(
                    format!("a {width}-byte access must be {width}-byte aligned"),
                    format!("{width} 字节的访问必须按 {width} 字节对齐"),
                ),
            ));
        }
        let bank_bytes = u64::from(self.bank_bytes);
        let group_lanes = (self.banks * self.bank_bytes / width.max(self.bank_bytes)).max(1);
        let words_per_lane = u64::from(width.div_ceil(self.bank_bytes));
        let (mut wavefronts, mut ideal, mut degree) = (0u32, 0u32, 0u32);
        for group in addresses.chunks(group_lanes as usize) {
            let mut words: Vec<u64> = group
                .iter()
                .flatten()
                .flat_map(|a| (0..words_per_lane).map(move |k| a / bank_bytes + k))
                .collect();
            if words.is_empty() {
                continue;
            }
            words.sort_unstable();
            words.dedup();
            let mut per_bank = vec![0u32; self.banks as usize];
            for w in &words {
                per_bank[(w % u64::from(self.banks)) as usize] += 1;
            }
            let worst = per_bank.iter().copied().max().unwrap_or(0);
            wavefronts += worst;
            degree = degree.max(worst);
            ideal += (words.len() as u32).div_ceil(self.banks);
        }
        Ok(SharedCost {
            wavefronts,
            ideal_wavefronts: ideal,
            conflict_degree: degree,
            group_lanes,
            lane_bank: addresses.iter().map(|a| a.map(|a| self.bank(a))).collect(),
            lane_word: addresses
                .iter()
                .map(|a| a.map(|a| a / bank_bytes))
                .collect(),
            lane_words: words_per_lane as u32,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cost(addr: impl Fn(u64) -> u64, width: u32) -> SharedCost {
        let a: Vec<_> = (0..32).map(|l| Some(addr(l))).collect();
        BankConfig::default().request(&a, width).unwrap()
    }

    #[test]
    fn row_access_is_conflict_free() {
        // Lane l reads float l: 32 consecutive words, one per bank.
        let c = cost(|l| 4 * l, 4);
        assert_eq!(
            (c.wavefronts, c.ideal_wavefronts, c.conflict_degree),
            (1, 1, 1)
        );
    }

    #[test]
    fn column_of_32x32_floats_is_32_way() {
        // buf[32][32] read down a column: lane l reads buf[l][0] at word 32·l → bank 0 always.
        let c = cost(|l| 4 * 32 * l, 4);
        assert_eq!(
            (c.wavefronts, c.ideal_wavefronts, c.conflict_degree),
            (32, 1, 32)
        );
        // buf[32][33]: word 33·l → bank l.
        let c = cost(|l| 4 * 33 * l, 4);
        assert_eq!(
            (c.wavefronts, c.ideal_wavefronts, c.conflict_degree),
            (1, 1, 1)
        );
    }

    #[test]
    fn stride_two_is_two_way() {
        // Word 2l: banks 0,2,…,30 each hold two distinct words.
        let c = cost(|l| 8 * l, 4);
        assert_eq!((c.wavefronts, c.conflict_degree), (2, 2));
    }

    #[test]
    fn broadcast_is_free() {
        let c = cost(|_| 40, 4);
        assert_eq!(
            (c.wavefronts, c.ideal_wavefronts, c.conflict_degree),
            (1, 1, 1)
        );
        // Half the lanes on one word, half on another in the same bank: two distinct words.
        let c = cost(|l| if l < 16 { 0 } else { 128 }, 4);
        assert_eq!((c.wavefronts, c.conflict_degree), (2, 2));
    }

    #[test]
    fn sixty_four_bit_accesses_go_by_half_warp() {
        // Lane l reads double l: each half-warp covers 32 words in 32 banks → 2 wavefronts,
        // which is also ideal (64 distinct words need two passes over 32 banks).
        let c = cost(|l| 8 * l, 8);
        assert_eq!(
            (c.wavefronts, c.ideal_wavefronts, c.conflict_degree),
            (2, 2, 1)
        );
        assert_eq!(c.group_lanes, 16);
        // Doubles with a stride of 2 (16 bytes): a half-warp touches words 4l, 4l+1 → banks
        // {0,1,4,5,…} twice each → 2 per half-warp, 4 in all.
        let c = cost(|l| 16 * l, 8);
        assert_eq!(
            (c.wavefronts, c.ideal_wavefronts, c.conflict_degree),
            (4, 2, 2)
        );
    }

    #[test]
    fn one_twenty_eight_bit_accesses_go_by_quarter_warp() {
        // float4 per lane, consecutive: each quarter-warp covers 32 words → 4 wavefronts, ideal.
        let c = cost(|l| 16 * l, 16);
        assert_eq!(
            (c.wavefronts, c.ideal_wavefronts, c.conflict_degree),
            (4, 4, 1)
        );
        assert_eq!(c.group_lanes, 8);
    }

    #[test]
    fn inactive_lanes_cost_nothing_and_misalignment_is_an_error() {
        let mut a: Vec<_> = (0..32).map(|l| Some(4 * 32 * l)).collect();
        for x in a.iter_mut().skip(4) {
            *x = None;
        }
        let c = BankConfig::default().request(&a, 4).unwrap();
        assert_eq!(c.wavefronts, 4);
        assert_eq!(c.lane_bank[5], None);
        let none = vec![None; 32];
        assert_eq!(
            BankConfig::default().request(&none, 4).unwrap().wavefronts,
            0
        );
        assert!(BankConfig::default().request(&[Some(2)], 4).is_err());
        assert!(BankConfig::default().request(&[Some(0)], 3).is_err());
    }
}
