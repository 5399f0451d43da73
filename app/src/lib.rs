//! # warpscope (the binary's library half)
//!
//! The GUI ([`gui`]) and CLI ([`cli`]) over `warpscope-core`'s scene registry. Kept as a
//! library so the kittest GUI tests drive the same code the binary runs.

pub mod cli;
pub mod export;
pub mod fonts;
pub mod gui;
pub mod i18n;
pub mod theme;
pub mod views;
pub mod widgets;
