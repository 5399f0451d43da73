//! Lab D: memory — lifetimes, the static plan, the caching allocator, PyTorch snapshots (lecture §5).
//!
//! Not built yet: this module registers no scenes so far.

use crate::scene::Scene;

/// The scenes of this lab, in lecture order.
pub const SCENES: &[Scene] = &[];
