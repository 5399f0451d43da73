//! The cost ledger: kernels with their bytes, FLOPs and launches → time on a [`Device`].
//!
//! The model (lecture §2.2, §4.2, §6.1): a kernel takes
//! `max(bytes / bandwidth, flops / (peak × gemm_efficiency)) + launches × launch_overhead`.
//! Memory-bound kernels (everything but GEMMs) reduce to `bytes / bandwidth + launches × 4 µs`,
//! which reproduces the lecture's LayerNorm and trainer figures exactly. Bytes are bytes;
//! the lecture's "MB" is 10⁶ bytes.

use serde::{Deserialize, Serialize};

use crate::device::Device;

/// One kernel (or a group of identical launches) in a ledger.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelCost {
    /// What it does, e.g. `∇x̂ = γ ⊙ ∇y`.
    pub name: String,
    /// Bytes read from DRAM.
    pub bytes_read: f64,
    /// Bytes written to DRAM.
    pub bytes_written: f64,
    /// Floating-point operations (only GEMMs are compute-bound in these models).
    pub flops: f64,
    /// Kernel launches.
    pub launches: u64,
}

impl KernelCost {
    /// A memory-bound kernel launched once.
    pub fn memory(name: impl Into<String>, bytes_read: f64, bytes_written: f64) -> Self {
        KernelCost {
            name: name.into(),
            bytes_read,
            bytes_written,
            flops: 0.0,
            launches: 1,
        }
    }

    /// Bytes moved.
    pub fn bytes(&self) -> f64 {
        self.bytes_read + self.bytes_written
    }

    /// Time on `device` in seconds, with GEMM throughput at `gemm_efficiency` × peak.
    pub fn seconds(&self, device: &Device, gemm_efficiency: f64) -> f64 {
        let mem = self.bytes() / device.bandwidth_bytes_per_s;
        let compute = if self.flops > 0.0 {
            self.flops / (device.peak_fp16_flops * gemm_efficiency.max(1e-9))
        } else {
            0.0
        };
        mem.max(compute) + self.launches as f64 * device.launch_overhead_s
    }
}

/// Totals of a ledger on one device.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LedgerTotals {
    /// Bytes moved.
    pub bytes: f64,
    /// Kernel launches.
    pub launches: u64,
    /// Time spent launching, seconds.
    pub launch_s: f64,
    /// Total time, seconds.
    pub seconds: f64,
}

/// Sums `kernels` on `device`.
pub fn totals(kernels: &[KernelCost], device: &Device, gemm_efficiency: f64) -> LedgerTotals {
    let launches: u64 = kernels.iter().map(|k| k.launches).sum();
    LedgerTotals {
        bytes: kernels.iter().map(KernelCost::bytes).sum(),
        launches,
        launch_s: launches as f64 * device.launch_overhead_s,
        seconds: kernels
            .iter()
            .map(|k| k.seconds(device, gemm_efficiency))
            .sum(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::device;

    #[test]
    fn memory_bound_time_is_bytes_over_bandwidth_plus_launches() {
        let a100 = device("a100").unwrap();
        // 1.555e6 bytes at 1.555e12 B/s = 1 µs, plus one 4 µs launch.
        let k = KernelCost::memory("copy", 1.0e6, 0.555e6);
        assert!((k.seconds(a100, 1.0) - 5e-6).abs() < 1e-15);
        // A GEMM of 312e9 FLOP at 312 TFLOP/s and 50% efficiency: 2 ms, + 4 µs.
        let g = KernelCost {
            name: "gemm".into(),
            bytes_read: 0.0,
            bytes_written: 0.0,
            flops: 312e9,
            launches: 1,
        };
        assert!((g.seconds(a100, 0.5) - 2.004e-3).abs() < 1e-12);
        let t = totals(&[k, g], a100, 0.5);
        assert_eq!(t.launches, 2);
    }
}
