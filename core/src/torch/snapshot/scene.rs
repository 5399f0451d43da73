//! `memory-snapshot`'s typed definition: the report's summary and, beside it, what the view
//! scrubs (every device's trace, the allocator's state at any event, the file's frames).

use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;

use super::{History, SnapshotOutput, WhatIfParams, analyse_with, open};
use crate::Error;
use crate::params::ParamValues;
use crate::scene::SceneDef;
use crate::torch::active::{self, Active};
use crate::torch::frames::FrameTable;
use crate::torch::timeline::Timeline;

/// The scene's typed definition (`memory-snapshot`).
pub struct SnapshotScene;

impl SceneDef for SnapshotScene {
    const ID: &'static str = "memory-snapshot";
    type Output = SnapshotRun;

    fn run(v: &ParamValues) -> Result<SnapshotRun, Error> {
        static RUNS: AtomicU64 = AtomicU64::new(1);
        let (label, mut s) = open(v.text("path")?)?;
        let event = v.int("event")?;
        let a = analyse_with(label, &s, event, &WhatIfParams::from_values(v)?)?;
        // A replay cut short by a cancel is never returned.
        crate::progress::report(super::PROGRESS_TOTAL, super::PROGRESS_TOTAL)?;
        let active = a.timelines.iter().map(active::active).collect();
        Ok(SnapshotRun {
            id: RUNS.fetch_add(1, Ordering::Relaxed),
            event,
            output: a.output,
            timelines: a.timelines,
            histories: a.histories,
            frames: std::mem::take(&mut s.frames),
            active,
        })
    }
}

/// `memory-snapshot`'s result: the summary the CLI prints (its serialisation) and, derived from
/// the same reading, the trace of every device that has one and the allocator's state at any of
/// its events.
#[derive(Debug)]
pub struct SnapshotRun {
    /// A number no other run of this process has (a new file, or the same file read again,
    /// gets a new one): a view keys its caches and the cursor's jump on it.
    pub id: u64,
    /// The `event` parameter the run was computed with (-1: the last).
    pub event: i64,
    /// What `warpscope report memory-snapshot` prints.
    pub output: SnapshotOutput,
    /// One timeline per device with a non-empty trace.
    pub timelines: Vec<Timeline>,
    /// Beside [`SnapshotRun::timelines`], the allocator state history of each (one of the
    /// file's own state when there is no trace).
    pub histories: Vec<History>,
    /// The file's stack frames, each distinct one once (blocks and events hold list ids).
    pub frames: FrameTable,
    /// Beside [`SnapshotRun::timelines`], the largest allocations of each (the active memory
    /// timeline).
    pub active: Vec<Active>,
}

impl Serialize for SnapshotRun {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.output.serialize(s)
    }
}
