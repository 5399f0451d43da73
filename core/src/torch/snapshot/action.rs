//! A trace event's `action`: `TraceEntry::Action` of `c10/cuda/CUDACachingAllocator.h`, as
//! `torch/csrc/cuda/memory_snapshot.cpp` spells it in the snapshot (`alloc`, `free_requested`,
//! …). The names this reader knows are variants, so a trace of millions of events holds no
//! string per event and the replays compare no strings; any other name is kept as read (its
//! first 32 characters) so the summary can still count it.

use std::fmt;

use serde::{Serialize, Serializer};

/// A trace event's action.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    /// `alloc`: a block handed out (`size`: the requested bytes).
    Alloc,
    /// `free_requested`: the block freed by its user, waiting for its stream events.
    FreeRequested,
    /// `free_completed`: the block back in the free space.
    FreeCompleted,
    /// `segment_alloc`: a segment `cudaMalloc`ed.
    SegmentAlloc,
    /// `segment_free`: a segment `cudaFree`d.
    SegmentFree,
    /// `segment_map`: pages mapped into an expandable segment.
    SegmentMap,
    /// `segment_unmap`: pages unmapped from an expandable segment.
    SegmentUnmap,
    /// `snapshot`: `_snapshot()` ran here.
    Snapshot,
    /// `oom`: an allocation failed (`device_free` says what the device had left).
    Oom,
    /// Any other name (its first 32 characters).
    Other(Box<str>),
}

/// Longest name an [`Action::Other`] keeps (characters).
const MAX_OTHER_CHARS: usize = 32;

impl Action {
    /// The action named `name` as PyTorch spells it; any other name is [`Action::Other`].
    pub fn from_name(name: &str) -> Action {
        match name {
            "alloc" => Action::Alloc,
            "free_requested" => Action::FreeRequested,
            "free_completed" => Action::FreeCompleted,
            "segment_alloc" => Action::SegmentAlloc,
            "segment_free" => Action::SegmentFree,
            "segment_map" => Action::SegmentMap,
            "segment_unmap" => Action::SegmentUnmap,
            "snapshot" => Action::Snapshot,
            "oom" => Action::Oom,
            other => Action::Other(truncated(other).into()),
        }
    }

    /// The name as PyTorch spells it (an [`Action::Other`]'s as read).
    pub fn as_str(&self) -> &str {
        match self {
            Action::Other(name) => name,
            known => known.known_name(),
        }
    }

    /// The name of a known action; `other` for [`Action::Other`].
    pub fn known_name(&self) -> &'static str {
        match self {
            Action::Alloc => "alloc",
            Action::FreeRequested => "free_requested",
            Action::FreeCompleted => "free_completed",
            Action::SegmentAlloc => "segment_alloc",
            Action::SegmentFree => "segment_free",
            Action::SegmentMap => "segment_map",
            Action::SegmentUnmap => "segment_unmap",
            Action::Snapshot => "snapshot",
            Action::Oom => "oom",
            Action::Other(_) => "other",
        }
    }
}

fn truncated(name: &str) -> &str {
    match name.char_indices().nth(MAX_OTHER_CHARS) {
        Some((end, _)) => name.get(..end).unwrap_or(name),
        None => name,
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<&str> for Action {
    fn from(name: &str) -> Action {
        Action::from_name(name)
    }
}

impl PartialEq<str> for Action {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Action {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl Serialize for Action {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::Action;

    #[test]
    fn names_round_trip_and_others_keep_32_characters() {
        for name in [
            "alloc",
            "free_requested",
            "free_completed",
            "segment_alloc",
            "segment_free",
            "segment_map",
            "segment_unmap",
            "snapshot",
            "oom",
        ] {
            let a = Action::from_name(name);
            assert!(!matches!(a, Action::Other(_)), "{name}");
            assert_eq!((a.as_str(), a.known_name()), (name, name));
        }
        let a = Action::from_name("user_defined");
        assert_eq!((a.as_str(), a.known_name()), ("user_defined", "other"));
        // 40 two-byte characters: 32 kept, cut on a character boundary.
        let long = Action::from_name(&"é".repeat(40));
        assert_eq!(long.as_str(), "é".repeat(32));
        assert_eq!(
            serde_json::to_string(&Action::FreeCompleted).unwrap(),
            "\"free_completed\""
        );
    }
}
