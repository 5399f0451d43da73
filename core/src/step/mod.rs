//! Lab E: the whole training step (lecture §6, script 05) and the §9 exercises.
//!
//! - [`ledger`] — scene `step-ledger` (§1.2, §6.1, §6.2): one training step of a GPT-2 model
//!   (default GPT-2 large, 36 layers, d = 1280, 8 × 1024 tokens, A100) broken into stages —
//!   embedding, forward GEMMs, forward non-GEMM ops, cross-entropy (with the LM-head GEMMs),
//!   backward GEMMs, backward non-GEMM ops, trainer — every kernel with its FLOPs, bytes,
//!   launches and time on the one cost model ([`crate::cost`]) and device table
//!   ([`crate::device`]). Baseline (PyTorch-style, no cross-op fusion, per-tensor FP32-master
//!   trainer) vs LightSeq2-style (fused forward kernels, the Lab A / Lab B fused backward
//!   kernels, the linked FP16 workspace trainer). The LayerNorm backward kernels are Lab A's
//!   ledger ([`crate::layernorm::bytes`]), the attention dropout + softmax backward kernels are
//!   Lab B's ([`crate::softmax::fusion`]) and the trainer stage is Lab C's
//!   ([`crate::trainer::workspace::trainer_ledger`]) — one computation each, not two. Sweeps
//!   over tokens per batch, GEMM efficiency and device; the paper's measured figures carried
//!   beside the model as quoted data.
//! - [`exercises`] — scene `exercises` (§9): all twelve exercises, each answer computed by the
//!   lab that owns it (keys `ex1` … `ex12`), with the lecture's answer quoted where it gives one.
//!
//! Units: bytes are bytes; "MB"/"GB" are 10⁶/10⁹ bytes, "MiB" is 2²⁰ bytes; times are in ms
//! (`_ms`) or µs (`_us`); FLOPs are floating-point operations (a multiply-add is 2).

mod exercise_list;
mod exercise_words;
pub mod exercises;
pub mod ledger;

pub use exercise_list::ExerciseItem;

use crate::scene::Scene;

/// The scenes of this lab, in lecture order.
pub const SCENES: &[Scene] = &[ledger::SCENE, exercises::SCENE];
