//! LayerNorm backward views (lecture §2), one file per scene.

pub mod bytes;
pub mod dgamma;
pub mod error;
pub mod formulas;
pub mod syncs;
