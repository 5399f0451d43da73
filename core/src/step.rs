//! Lab E: the whole training step (lecture §6) and the exercises (§9).
//!
//! Not built yet: this module registers no scenes so far.

use crate::scene::Scene;

/// The scenes of this lab, in lecture order.
pub const SCENES: &[Scene] = &[];
