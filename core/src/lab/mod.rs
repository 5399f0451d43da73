//! The kernel lab: a user's own WGSL compute kernel, parsed and validated by naga and
//! interpreted warp by warp on the SIMT model of [`crate::simt`] — per-line bank conflicts,
//! sectors and divergence, sanitizer warnings, and a [`crate::simt::Trace`] the stepper walks.
//! The same source runs on the GPU in `warpscope-kernels` (`kernels::lab`) with the same
//! [`dispatch::Dispatch`] bytes, so simulated and real buffers can be compared.

pub mod dispatch;
pub mod examples;
pub mod output;
