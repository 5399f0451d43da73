//! Mixed-precision trainer views (lecture §4), one file per scene.

pub mod adam;
pub mod census;
pub mod fp16;
pub mod timing;
pub mod workspace;
