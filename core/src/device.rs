//! The device table: the figures every cost model in warpscope uses, each with its source.
//! One table for all labs (LayerNorm and softmax bytes → time, the trainer, the whole step).

use serde::{Deserialize, Serialize};

use crate::Error;

/// One device's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Device {
    /// Id used by `--set device=…` (`v100`, `a100`, `h100`, `h200`).
    pub id: &'static str,
    /// Marketing name and variant.
    pub name: &'static str,
    /// DRAM bandwidth in bytes per second.
    pub bandwidth_bytes_per_s: f64,
    /// Peak dense FP16/BF16 tensor-core throughput in FLOP/s (no sparsity).
    pub peak_fp16_flops: f64,
    /// Time to launch one kernel, seconds (host launch + GPU scheduling of a tiny kernel).
    pub launch_overhead_s: f64,
    /// Lanes per warp.
    pub warp_size: u32,
    /// Shared-memory banks (4 bytes each).
    pub shared_banks: u32,
    /// Registers one thread may use.
    pub max_registers_per_thread: u32,
    /// Memory capacity in bytes.
    pub memory_bytes: u64,
    /// Where the figures come from.
    pub source: &'static str,
}

/// 4 µs per launch: the figure that, with 1.555 TB/s, reproduces the lecture's LayerNorm
/// timings (§2.2: 302.8 MB → 230.7 µs with 9 kernels, 71.3 MB → 49.9 µs with 1) and its trainer
/// ledger (exercise 8: 1,308 launches → 5.2 ms).
const LAUNCH_S: f64 = 4e-6;

/// Every device warpscope models, slowest first.
pub fn devices() -> &'static [Device] {
    static D: &[Device] = &[
        Device {
            id: "v100",
            name: "NVIDIA V100 SXM2 32 GB",
            bandwidth_bytes_per_s: 900e9,
            peak_fp16_flops: 125e12,
            launch_overhead_s: LAUNCH_S,
            warp_size: 32,
            shared_banks: 32,
            max_registers_per_thread: 255,
            memory_bytes: 32 << 30,
            source: "NVIDIA Tesla V100 datasheet (900 GB/s HBM2, 125 TFLOPS tensor); launch overhead as fitted to the lecture (§2.2)",
        },
        Device {
            id: "a100",
            name: "NVIDIA A100 SXM4 40 GB",
            bandwidth_bytes_per_s: 1.555e12,
            peak_fp16_flops: 312e12,
            launch_overhead_s: LAUNCH_S,
            warp_size: 32,
            shared_banks: 32,
            max_registers_per_thread: 255,
            memory_bytes: 40 << 30,
            source: "NVIDIA A100 datasheet (1,555 GB/s HBM2, 312 TFLOPS dense FP16 tensor); lecture §2.2 uses 1.555 TB/s and 4 µs per launch",
        },
        Device {
            id: "h100",
            name: "NVIDIA H100 SXM5 80 GB",
            bandwidth_bytes_per_s: 3.35e12,
            peak_fp16_flops: 989.4e12,
            launch_overhead_s: LAUNCH_S,
            warp_size: 32,
            shared_banks: 32,
            max_registers_per_thread: 255,
            memory_bytes: 80 << 30,
            source: "NVIDIA H100 datasheet (3.35 TB/s HBM3, 989.4 TFLOPS dense FP16 tensor)",
        },
        Device {
            id: "h200",
            name: "NVIDIA H200 SXM 141 GB",
            bandwidth_bytes_per_s: 4.8e12,
            peak_fp16_flops: 989.4e12,
            launch_overhead_s: LAUNCH_S,
            warp_size: 32,
            shared_banks: 32,
            max_registers_per_thread: 255,
            memory_bytes: 141_000_000_000,
            source: "NVIDIA H200 datasheet (4.8 TB/s HBM3e, 989.4 TFLOPS dense FP16 tensor)",
        },
    ];
    D
}

/// Device ids for a parameter's choices.
pub const DEVICE_IDS: &[&str] = &["v100", "a100", "h100", "h200"];

/// The device with this id.
///
/// # Errors
/// [`Error::InvalidParam`] (`device`) listing the known ids.
pub fn device(id: &str) -> Result<&'static Device, Error> {
    devices()
        .iter()
        .find(|d| d.id == id)
        .ok_or_else(|| Error::invalid("device", id, crate::error::Expected::one_of(DEVICE_IDS)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_match_the_table() {
        let ids: Vec<_> = devices().iter().map(|d| d.id).collect();
        assert_eq!(ids, DEVICE_IDS);
        assert!(device("tpu").is_err());
    }
}
