//! # warpscope-core
//!
//! The one computation behind every face of warpscope (GUI, CLI JSON, export, tests,
//! benchmarks). Pure Rust: no GUI, no GPU. Every result is a typed, serialisable value.
//!
//! - [`simt`]: the warp-level (SIMT) model — warps, lanes, active masks, shared-memory banks
//!   and wavefronts, global-memory sectors, shuffles, barriers, atomics — and the [`simt::trace`]
//!   type that simulated and recorded runs share.
//! - [`input`]: the one checked door every input file is read through (type and size first).
//! - [`params`]: typed, validated scene parameters (what a slider, a preset or `--set` sets).
//! - [`scene`]: the registry of scenes, one per lab figure, each `params → result` (and, for
//!   some, `params, input → result`); [`presets`]: the bundled pitfall examples.
//! - [`caching`]: a rule-for-rule model of PyTorch's CUDA caching allocator, a hardware-like
//!   model beside [`simt`]; [`torch`]: the reader of PyTorch's memory snapshots (pickle guard,
//!   decoder, frames, timeline, what-if replay, diff) behind `memory-snapshot` and `memory-diff`.
//! - [`device`] and [`cost`]: the one device table and the one bytes/FLOPs/launches → time
//!   model every lab uses.
//! - Labs: [`reduction`] and [`banks`] (foundation), [`layernorm`] (A, §2), [`softmax`]
//!   (B, §3), [`trainer`] (C, §4), [`memory`] (D, §5), [`step`] (E, §6, and the §9 exercises).
//!
//! Figures quoted from the lecture (*Accelerating Transformer on GPU (II): Training with
//! LightSeq2*) are checks in tests, never constants in the computation.

pub mod banks;
pub mod caching;
pub mod cost;
pub mod device;
pub mod error;
pub mod input;
pub mod lab;
pub mod layernorm;
pub mod memory;
pub mod params;
pub mod presets;
pub mod progress;
pub mod reduction;
pub mod scene;
pub mod session;
pub mod simt;
pub mod softmax;
pub mod step;
pub mod text;
pub mod torch;
pub mod trainer;

pub use error::Error;
