//! The sanitizers' bookkeeping and the per-line counters: who touched each workgroup word
//! since the last barrier (races), whether it was ever written (uninitialised reads), which
//! invocation wrote each storage word (storage races), and the warnings, one per kind and line.

use std::collections::HashSet;

use super::output::{Counters, Warning, WarningKind};
use crate::text::Text;

/// No warp / invocation.
const NONE: u32 = 0;
/// More than one warp.
const MANY: u32 = u32::MAX;

/// One 4-byte workgroup word's accesses in the current barrier interval.
#[derive(Debug, Clone, Copy, Default)]
pub struct SharedWord {
    /// Barrier interval (epoch) the two fields below belong to.
    epoch: u32,
    /// Warp + 1 that wrote the word this epoch ([`NONE`], or [`MANY`]).
    writer: u32,
    /// Warp + 1 that read it this epoch ([`NONE`], or [`MANY`]).
    reader: u32,
    /// Whether any invocation wrote it since the workgroup started.
    written: bool,
}

impl SharedWord {
    fn roll(&mut self, epoch: u32) {
        if self.epoch != epoch {
            self.epoch = epoch;
            self.writer = NONE;
            self.reader = NONE;
        }
    }

    /// Warp `warp` reads the word in `epoch`: (a race with another warp's write, never
    /// written).
    pub fn read(&mut self, warp: u32, epoch: u32) -> (bool, bool) {
        self.roll(epoch);
        let me = warp + 1;
        let race = self.writer != NONE && self.writer != me;
        self.reader = if self.reader == NONE || self.reader == me {
            me
        } else {
            MANY
        };
        (race, !self.written)
    }

    /// An atomic updated the word: written, no race (atomics are the synchronised way).
    pub fn touch(&mut self) {
        self.written = true;
    }

    /// Warp `warp` writes the word in `epoch`: whether another warp read or wrote it this
    /// epoch.
    pub fn write(&mut self, warp: u32, epoch: u32) -> bool {
        self.roll(epoch);
        let me = warp + 1;
        let race = (self.writer != NONE && self.writer != me)
            || (self.reader != NONE && self.reader != me);
        self.writer = if self.writer == NONE || self.writer == me {
            me
        } else {
            MANY
        };
        self.written = true;
        race
    }
}

/// Invocation `inv` writes a storage word whose last writer was `*slot` (invocation + 1, 0 for
/// none): whether that was another invocation.
pub fn storage_write(slot: &mut u32, inv: u32) -> bool {
    let me = inv.wrapping_add(1);
    let race = *slot != NONE && *slot != me;
    *slot = me;
    race
}

/// Per-line counters and the warnings of a run.
#[derive(Debug, Default)]
pub struct Stats {
    /// Counters by 1-based line (index 0: spans naga left undefined).
    pub lines: Vec<Counters>,
    /// Lines that issued a warp instruction.
    pub touched: Vec<bool>,
    /// Lane instructions.
    pub lane_instructions: u64,
    /// Barrier completions.
    pub barriers: u64,
    /// Warnings in order of first occurrence.
    pub warnings: Vec<Warning>,
    seen: HashSet<(WarningKind, u32)>,
}

impl Stats {
    /// Counters for a source of `lines` lines.
    pub fn new(lines: usize) -> Stats {
        Stats {
            lines: vec![Counters::default(); lines + 1],
            touched: vec![false; lines + 1],
            ..Stats::default()
        }
    }

    /// The counters of `line` (line 0 for anything out of range).
    #[inline]
    pub fn at(&mut self, line: u32) -> &mut Counters {
        let i = if (line as usize) < self.lines.len() {
            line as usize
        } else {
            0
        };
        if let Some(t) = self.touched.get_mut(i) {
            *t = true;
        }
        // Index 0 always exists: `new` makes `lines + 1` entries.
        let len = self.lines.len();
        &mut self.lines[i.min(len.saturating_sub(1))]
    }

    /// Records a warning unless one of the same kind was already given for `line`.
    pub fn warn(&mut self, kind: WarningKind, line: u32, message: impl FnOnce() -> Text) {
        if self.seen.insert((kind, line)) {
            self.warnings.push(Warning {
                kind,
                line,
                message: message(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn races_need_two_warps_in_one_epoch() {
        let mut w = SharedWord::default();
        // Warp 0 writes then reads its own word: no race; never-written read flagged first.
        let mut fresh = SharedWord::default();
        assert_eq!(fresh.read(0, 1), (false, true));
        assert!(!w.write(0, 1));
        assert_eq!(w.read(0, 1), (false, false));
        // Warp 1 reads it in the same epoch: race; after a barrier (epoch 2): none.
        assert!(w.read(1, 1).0);
        assert!(!w.read(1, 2).0);
        assert!(w.write(0, 2));
        let mut slot = 0;
        assert!(!storage_write(&mut slot, 5));
        assert!(!storage_write(&mut slot, 5));
        assert!(storage_write(&mut slot, 6));
    }
}
