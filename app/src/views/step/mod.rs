//! The whole training step (lecture §6) and the §9 exercises, one file per scene.

pub mod exercises;
pub mod ledger;
