//! The warp-level (SIMT) model every lab simulates with.
//!
//! A block of up to 1024 threads is split into warps of `warp_size` lanes (32 on NVIDIA GPUs;
//! a parameter here, because CPU Vulkan drivers run subgroups of 8 and some AMD GPUs 64).
//! Kernels are written as small Rust programs over *lane vectors* (one value per lane of a
//! warp) against [`Block`], which executes each instruction for a whole warp at once, costs it
//! by the hardware's rules and records it in a [`Trace`]:
//!
//! - [`shared`]: shared memory as banks × 4-byte words; wavefronts per request as Nsight Compute
//!   counts them (ideal vs actual), broadcast, 64-bit by half-warp, 128-bit by quarter-warp.
//! - [`global`]: global memory as 32-byte sectors touched per warp request.
//! - [`shuffle`]: `shfl_xor`, `shfl_down`, `shfl_up`, `shfl_idx` with CUDA's lane mapping,
//!   including what a lane gets when its source is out of range or inactive.
//! - [`atomic`]: lanes contending per address.
//! - [`trace`]: the event record shared by simulated and recorded runs.

pub mod atomic;
pub mod block;
pub mod global;
pub mod shared;
pub mod shuffle;
pub mod trace;

pub use block::{Block, BlockShape};
pub use trace::{Event, EventKind, Trace};

/// Largest warp (subgroup) width the model accepts; a [`Mask`] holds one bit per lane.
pub const MAX_WARP_SIZE: u32 = 64;

/// Largest block CUDA allows (threads per block).
pub const MAX_BLOCK_THREADS: u32 = 1024;

/// An active mask: bit `l` set when lane `l` takes part in an instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Mask(pub u64);

impl Mask {
    /// All of the first `lanes` lanes active.
    pub fn first(lanes: u32) -> Self {
        if lanes >= 64 {
            Mask(u64::MAX)
        } else {
            Mask((1u64 << lanes) - 1)
        }
    }

    /// Whether lane `lane` is active.
    pub fn has(self, lane: u32) -> bool {
        lane < 64 && self.0 >> lane & 1 == 1
    }

    /// Number of active lanes.
    pub fn count(self) -> u32 {
        self.0.count_ones()
    }

    /// The active lanes among the first `width`, as a mask.
    pub fn and(self, other: Mask) -> Mask {
        Mask(self.0 & other.0)
    }
}
