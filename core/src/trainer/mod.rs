//! Lab C: the mixed-precision trainer (lecture §4; LightSeq2 paper §IV-C, fig. 7).
//!
//! The trainer touches every parameter every step. Five scenes:
//!
//! - [`census`] — `trainer-census` (§4.1): the parameter tensors of real architectures, built
//!   from their hyper-parameters ([`census::parameter_tensors`]); hundreds of tensors, most of
//!   them ~1k-element biases and LayerNorm γ/β.
//! - [`workspace`] — `trainer-workspace` (§4.2, exercises 3, 4, 8): parameters as ndarray views
//!   into one flat buffer, per-tensor Adam vs one Adam over the buffer (bitwise identical), and
//!   the bytes/launches/time ledger of the per-tensor FP32-master trainer vs the linked FP16
//!   workspace ([`workspace::trainer_ledger`], [`workspace::trainer_comparison`]).
//! - [`fp16`] — `trainer-fp16` (§4.3, exercise 9): FP16 spacing, and how FP16 storage swallows
//!   updates smaller than half a spacing ([`fp16::fp16_stored_update`]).
//! - [`precision`] — `trainer-adam` (§4.3, §8): one parameter through Adam step by step in every
//!   precision (FP32 / FP16 / bfloat16 storage, FP32 master weights or none, f32 or f16 state),
//!   with a loss scale and the user's own gradients.
//! - [`timing`] — `trainer-timing` (§4.2 ⏱): per-tensor vs one-buffer Adam measured on this CPU.
//!
//! [`adam`] holds the one Adam update every scene uses.

pub mod adam;
pub mod census;
pub mod fp16;
pub mod precision;
pub mod timing;
pub mod workspace;

use crate::scene::Scene;

/// The scenes of this lab, in lecture order.
pub const SCENES: &[Scene] = &[
    census::SCENE,
    workspace::SCENE,
    fp16::SCENE,
    precision::SCENE,
    timing::SCENE,
];
