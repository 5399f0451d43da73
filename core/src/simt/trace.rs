//! The trace: what a kernel run did, warp by warp. Simulated runs ([`super::Block`]) and real
//! GPU recordings (instrumented WGSL kernels in `warpscope-kernels`) produce this same type, so
//! every view can show either, or both side by side.

use serde::{Deserialize, Serialize};

use super::shuffle::{ShuffleMode, Source};
use crate::text::Text;

/// Where a trace came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Origin {
    /// warpscope's SIMT model.
    Simulated,
    /// Recorded on a real adapter.
    Recorded {
        /// The adapter's name, e.g. `llvmpipe (LLVM 15.0.6, 256 bits)`.
        adapter: String,
    },
}

/// What one event did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "op")]
pub enum EventKind {
    /// Load from global memory; `width` bytes per lane.
    GlobalLoad {
        /// Bytes per lane.
        width: u32,
    },
    /// Store to global memory.
    GlobalStore {
        /// Bytes per lane.
        width: u32,
    },
    /// Load from shared memory.
    SharedLoad {
        /// Bytes per lane.
        width: u32,
    },
    /// Store to shared memory.
    SharedStore {
        /// Bytes per lane.
        width: u32,
    },
    /// A warp shuffle.
    Shuffle {
        /// Which shuffle.
        mode: ShuffleMode,
        /// Its lane argument (xor mask, delta or source lane).
        arg: u32,
    },
    /// A block barrier (`__syncthreads()`); recorded once per warp that reaches it.
    Barrier {
        /// 1 for the block's first barrier, 2 for the second, …
        index: u32,
    },
    /// An atomic read-modify-write to global memory.
    Atomic {
        /// Bytes per lane.
        width: u32,
    },
    /// Register arithmetic (an add of two lane vectors, a multiply, …).
    Compute,
}

impl EventKind {
    /// A short name for views (`shfl.xor 16`, `ld.shared.b32`, `bar.sync`).
    pub fn short(&self) -> String {
        match self {
            EventKind::GlobalLoad { width } => format!("ld.global.b{}", width * 8),
            EventKind::GlobalStore { width } => format!("st.global.b{}", width * 8),
            EventKind::SharedLoad { width } => format!("ld.shared.b{}", width * 8),
            EventKind::SharedStore { width } => format!("st.shared.b{}", width * 8),
            EventKind::Shuffle { mode, arg } => {
                let m = match mode {
                    ShuffleMode::Idx => "idx",
                    ShuffleMode::Up => "up",
                    ShuffleMode::Down => "down",
                    ShuffleMode::Xor => "bfly",
                };
                format!("shfl.{m} {arg}")
            }
            EventKind::Barrier { index } => format!("bar.sync #{index}"),
            EventKind::Atomic { width } => format!("atom.global.add.b{}", width * 8),
            EventKind::Compute => "alu".to_owned(),
        }
    }
}

/// One lane's part in an event.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Lane {
    /// Whether the lane took part.
    pub active: bool,
    /// Byte address it accessed (memory events).
    pub address: Option<u64>,
    /// The value it holds after the event (loaded, received, stored, computed).
    pub value: Option<f64>,
    /// For shuffles: where its value came from.
    pub source: Option<Source>,
}

/// Costs derived from an event by the hardware's rules (`None` where not applicable).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Metrics {
    /// Shared-memory wavefronts the request needed.
    pub wavefronts: Option<u32>,
    /// Shared-memory wavefronts with no bank conflict.
    pub ideal_wavefronts: Option<u32>,
    /// Largest number of distinct words one bank served (1 = conflict-free).
    pub conflict_degree: Option<u32>,
    /// Global 32-byte sectors touched.
    pub sectors: Option<u32>,
    /// Global sectors if perfectly coalesced.
    pub ideal_sectors: Option<u32>,
    /// Atomics: most lanes updating one address.
    pub contention: Option<u32>,
}

/// One warp-wide instruction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Position in the block's execution order (a valid interleaving of all warps).
    pub seq: u64,
    /// What it did.
    pub kind: EventKind,
    /// What the kernel means by it, e.g. `partial sums → shared[k][warp]`, in both languages
    /// (code and formulas the same in both).
    pub label: Text,
    /// For reductions: the tree level this event belongs to (0 = leaves).
    pub level: Option<u32>,
    /// One entry per lane of the warp.
    pub lanes: Vec<Lane>,
    /// Derived costs.
    pub metrics: Metrics,
    /// The 1-based source line that issued it (the kernel lab's WGSL), where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
}

/// One warp's events in program order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WarpTrace {
    /// Warp index within the block.
    pub warp: u32,
    /// Events in order.
    pub events: Vec<Event>,
}

/// A whole block's run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    /// The kernel's name (its identifier, with a note in both languages where core adds one).
    pub kernel: Text,
    /// Simulated or recorded.
    pub origin: Origin,
    /// Lanes per warp.
    pub warp_size: u32,
    /// Threads in the block.
    pub block_threads: u32,
    /// Per warp, its events.
    pub warps: Vec<WarpTrace>,
}

/// Totals over a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TraceSummary {
    /// Events of all warps.
    pub events: usize,
    /// Block barriers passed (each counted once, not once per warp).
    pub barriers: u32,
    /// Shuffle instructions (warp-wide).
    pub shuffles: usize,
    /// Shared-memory requests.
    pub shared_requests: usize,
    /// Their wavefronts.
    pub shared_wavefronts: u64,
    /// Their ideal wavefronts.
    pub shared_ideal_wavefronts: u64,
    /// Global sectors touched.
    pub global_sectors: u64,
}

impl Trace {
    /// Every event as `(warp index, event index)` in execution order (by `seq`).
    pub fn timeline(&self) -> Vec<(usize, usize)> {
        let mut t: Vec<(u64, usize, usize)> = self
            .warps
            .iter()
            .enumerate()
            .flat_map(|(w, wt)| {
                wt.events
                    .iter()
                    .enumerate()
                    .map(move |(i, e)| (e.seq, w, i))
            })
            .collect();
        t.sort_unstable();
        t.into_iter().map(|(_, w, i)| (w, i)).collect()
    }

    /// Totals over all warps.
    pub fn summary(&self) -> TraceSummary {
        let mut s = TraceSummary::default();
        for e in self.warps.iter().flat_map(|w| &w.events) {
            s.events += 1;
            match e.kind {
                EventKind::Barrier { index } => s.barriers = s.barriers.max(index),
                EventKind::Shuffle { .. } => s.shuffles += 1,
                EventKind::SharedLoad { .. } | EventKind::SharedStore { .. } => {
                    s.shared_requests += 1;
                    s.shared_wavefronts += u64::from(e.metrics.wavefronts.unwrap_or(0));
                    s.shared_ideal_wavefronts += u64::from(e.metrics.ideal_wavefronts.unwrap_or(0));
                }
                _ => {}
            }
            s.global_sectors += u64::from(e.metrics.sectors.unwrap_or(0));
        }
        s
    }
}
