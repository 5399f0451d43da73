//! Softmax backward views (lecture §3), one file per scene.

pub mod formula;
pub mod fusion;
pub mod saved;
pub mod warp;
