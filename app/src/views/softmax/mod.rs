//! Softmax backward views (lecture §3), one file per scene.

pub mod fusion;
pub mod warp;
