//! Lab D: memory — lifetimes, the static plan, the caching allocator and real PyTorch snapshots
//! (lecture §5, script 04; LightSeq2 paper §IV-D and fig. 8). The allocator model lives in
//! [`crate::caching`] and the snapshot reader in [`crate::torch`]; this lab's scene list carries
//! their scenes.
//!
//! - [`lifetimes`] (`memory-lifetimes`, §5.1): the ten steps of self-attention backward as data,
//!   the gradient tensors each creates and when each dies, live temporaries per step and the lower
//!   bound 3BLH + max{BL²N, 3BLH}; exercises 5 and 6 of §9.
//! - [`plan`] (`memory-plan`, §5.2): the greedy static planner that packs those tensors into a few
//!   reusable blocks (lecture: 4 blocks of 1, 8, 1, 1 BLH = the lower bound).
//! - [`arena`]: `memory-plan` on the user's own tensors (`--input`), placed in one arena by the
//!   lecture's creation-order planner or TFLite's greedy-by-size.
//! - [`crate::caching`]: a rule-for-rule simulator of PyTorch's CUDA caching allocator
//!   (`c10/cuda/CUDACachingAllocator.cpp`) — blocks, segments, pools and the rules.
//! - [`allocator`] (`memory-allocator`, §5.3): that simulator fed a variable-length encoder
//!   workload, and LightSeq2's one up-front allocation beside it.
//! - [`crate::torch::snapshot`] (`memory-snapshot`): a reader for `torch.cuda.memory._snapshot()`
//!   pickles that executes nothing from the file ([`crate::torch::pickle`] checks every opcode
//!   first) and replays the recorded trace through the simulator.
//! - [`crate::torch::diff`] (`memory-diff`): two snapshots compared — reserved and allocated deltas, segments
//!   only in one, live bytes by the user frame that allocated them.
//!
//! Units: bytes are bytes; MiB = 2²⁰ bytes (every `_mib` field); BLH and BL²N are the sizes of
//! one B × L × H tensor and one B × N × L × L score tensor, in elements (×dtype bytes for bytes).

use serde::Serialize;

use crate::Error;
use crate::scene::Scene;

pub mod allocator;
pub mod arena;
pub mod lifetimes;
pub mod plan;

/// Bytes in one MiB (2²⁰).
pub const MIB: u64 = 1 << 20;

/// Bytes → MiB (2²⁰ bytes), as a real number.
pub fn mib(bytes: u64) -> f64 {
    bytes as f64 / MIB as f64
}

/// Element type of the tensors whose sizes a scene counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Dtype {
    /// IEEE half precision, 2 bytes.
    F16,
    /// bfloat16, 2 bytes.
    Bf16,
    /// IEEE single precision, 4 bytes.
    F32,
}

/// The dtype names a `dtype` parameter accepts.
pub const DTYPES: &[&str] = &["f16", "bf16", "f32"];

impl Dtype {
    /// Bytes per element.
    pub fn bytes(self) -> u64 {
        match self {
            Dtype::F16 | Dtype::Bf16 => 2,
            Dtype::F32 => 4,
        }
    }

    /// Parses a [`DTYPES`] name (`fp16`/`fp32` spellings accepted too).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] naming `dtype` and the valid names.
    pub fn parse(name: &str) -> Result<Self, Error> {
        match name {
            "f16" | "fp16" | "half" => Ok(Dtype::F16),
            "bf16" => Ok(Dtype::Bf16),
            "f32" | "fp32" | "float" => Ok(Dtype::F32),
            other => Err(Error::invalid(
                "dtype",
                other,
                crate::error::Expected::one_of(DTYPES),
            )),
        }
    }
}

/// The scenes of this lab, in lecture order.
pub const SCENES: &[Scene] = &[
    lifetimes::SCENE,
    plan::SCENE,
    allocator::SCENE,
    crate::torch::snapshot::SCENE,
    crate::torch::diff::SCENE,
];
