//! What-if replay: the snapshot's trace replayed through the simulator
//! ([`crate::caching`]) under other allocator settings — `expandable_segments`,
//! `max_split_size_mb`, `roundup_power2_divisions`, `garbage_collection_threshold`
//! (`PYTORCH_CUDA_ALLOC_CONF`, parsed by `c10/cuda/CUDAAllocatorConfig`; the rules are in
//! `caching/config.rs`) — and a device memory limit with the free-the-cache-and-retry path of
//! `malloc` in `c10/cuda/CUDACachingAllocator.cpp`, an `alloc` that still does not fit being
//! counted as out of memory and skipped (its later free with it).
//!
//! Each setting defaults to what the file records in `allocator_settings` (a parameter's
//! "file" value: `file` for `expandable_segments`, −1 for the numbers); a file that records
//! none gets PyTorch's defaults. Replayed as today's replay ([`super::replay`]) replays —
//! `alloc` and `free_completed` in order, a recorded `segment_free` releasing a cached segment
//! of its size — so under the file's own default settings its figures equal the replay's.
//! With expandable segments a recorded `segment_free` releases nothing (the replay's segments
//! are ranges, not the file's `cudaMalloc`s); a memory limit's releases come from the rules.

use serde::Serialize;

use super::{Action, Snapshot};
use crate::Error;
use crate::caching::{AllocatorConfig, CachingAllocator, ROUNDUP_INTERVALS};
use crate::memory::MIB;
use crate::params::ParamValues;

/// The what-if parameters as given (before the file's values fill in the defaults);
/// [`Default`]: every setting the file's, no memory limit.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct WhatIfParams {
    /// `None`: the file's.
    pub expandable_segments: Option<bool>,
    /// MiB; `None`: the file's; `Some(0)`: unlimited.
    pub max_split_size_mb: Option<u64>,
    /// `None`: the file's; `Some(0)`: off; else a power of two for every interval.
    pub roundup_power2_divisions: Option<u64>,
    /// `None`: the file's; `Some(0.0)`: off.
    pub garbage_collection_threshold: Option<f64>,
    /// MiB; 0: no limit.
    pub device_memory_mib: u64,
}

/// Most MiB `max_split_size_mb` and `device_memory_mib` take (2³⁰ MiB = 1 PiB).
pub const MAX_MIB: i64 = 1 << 30;

impl WhatIfParams {
    /// The parameters from the scene's values, validated as `CUDAAllocatorConfig` validates
    /// them: `max_split_size_mb` above 20 (`kLargeBuffer` in MiB), `roundup_power2_divisions`
    /// a power of two, `garbage_collection_threshold` below 1.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] naming the parameter and what it accepts.
    pub fn from_values(v: &ParamValues) -> Result<Self, Error> {
        let expandable_segments = match v.text("expandable_segments")? {
            "on" => Some(true),
            "off" => Some(false),
            _ => None,
        };
        let max_split_size_mb = match v.int("max_split_size_mb")? {
            -1 => None,
            0 => Some(0),
            m @ 21.. => Some(m.unsigned_abs()),
            m => {
                return Err(Error::invalid(
                    "max_split_size_mb",
                    m,
                    "expected -1 (the file's), 0 (unlimited) or more than 20 (PyTorch refuses 20 MiB or less)",
                ));
            }
        };
        let roundup_power2_divisions = match v.int("roundup_power2_divisions")? {
            -1 => None,
            d if d >= 0 && (d == 0 || d.unsigned_abs().is_power_of_two()) => Some(d.unsigned_abs()),
            d => {
                return Err(Error::invalid(
                    "roundup_power2_divisions",
                    d,
                    "expected -1 (the file's), 0 (off) or a power of two",
                ));
            }
        };
        let g = v.float("garbage_collection_threshold")?;
        let garbage_collection_threshold = if g < 0.0 {
            None
        } else if g < 1.0 {
            Some(g)
        } else {
            return Err(Error::invalid(
                "garbage_collection_threshold",
                g,
                "expected -1 (the file's), 0 (off) or a fraction below 1",
            ));
        };
        Ok(WhatIfParams {
            expandable_segments,
            max_split_size_mb,
            roundup_power2_divisions,
            garbage_collection_threshold,
            device_memory_mib: v.int("device_memory_mib")?.unsigned_abs(),
        })
    }
}

/// The settings a what-if replay ran with.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WhatIfSettings {
    /// One growing range per pool and stream.
    pub expandable_segments: bool,
    /// MiB (`null`: unlimited).
    pub max_split_size_mb: Option<u64>,
    /// Divisions per power-of-two interval from 1 MiB (16 intervals; 0: off).
    pub roundup_power2_divisions: Vec<u64>,
    /// Fraction of the memory limit (0: off; needs `device_memory_mib`, as PyTorch collects only
    /// under a memory fraction).
    pub garbage_collection_threshold: f64,
    /// The device memory limit (MiB; `null`: none).
    pub device_memory_mib: Option<u64>,
    /// The settings taken from the file's `allocator_settings` (the rest were given, or
    /// PyTorch's defaults where the file records none).
    pub from_file: Vec<&'static str>,
}

/// The what-if replay's figures (all devices with a trace together, as [`super::Replay`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WhatIf {
    /// The settings.
    pub settings: WhatIfSettings,
    /// Peak reserved (bytes; Σ of the devices' peaks).
    pub reserved_peak_bytes: u64,
    /// Reserved at the end (bytes).
    pub reserved_final_bytes: u64,
    /// Cached free bytes at the end (reserved − allocated blocks): what fragmentation and
    /// caching hold back (bytes).
    pub fragmentation_final_bytes: u64,
    /// Segments created (`cudaMalloc`s; with expandable segments, ranges).
    pub segments_created: u64,
    /// `alloc` events that did not fit under the memory limit even after the cache was freed.
    pub ooms: u64,
}

/// The file's settings as an [`AllocatorConfig`] and which of them it records.
fn file_config(s: &Snapshot) -> (AllocatorConfig, Vec<&'static str>) {
    let mut c = AllocatorConfig::default();
    let mut from = Vec::new();
    let get = |k: &str| s.allocator_settings.get(k).map(String::as_str);
    if let Some(v) = get("expandable_segments") {
        c.expandable_segments = matches!(v, "true" | "True" | "1");
        from.push("expandable_segments");
    }
    if let Some(v) = get("max_split_size").and_then(|v| v.parse::<i64>().ok()) {
        // Recorded in bytes, −1 for unlimited (`SIZE_MAX`).
        if let Ok(b) = u64::try_from(v) {
            c.max_split_size = b;
        }
        from.push("max_split_size_mb");
    }
    if let Some(v) = get("garbage_collection_threshold").and_then(|v| v.parse::<f64>().ok()) {
        c.garbage_collection_threshold = v.clamp(0.0, 1.0);
        from.push("garbage_collection_threshold");
    }
    if let Some(v) = get("roundup_power2_divisions") {
        // Recorded as a dict {interval start in MiB: divisions}, read as "1:0,2:0,…".
        for pair in v.split(',') {
            let mut kv = pair.split(':');
            if let (Some(Ok(start)), Some(Ok(d))) = (
                kv.next().map(|k| k.trim().parse::<u64>()),
                kv.next().map(|d| d.trim().parse::<u64>()),
            ) && start.is_power_of_two()
            {
                let i = start.trailing_zeros() as usize;
                if let Some(slot) = c.roundup_power2_divisions.get_mut(i) {
                    *slot = d;
                }
            }
        }
        from.push("roundup_power2_divisions");
    }
    (c, from)
}

/// The settings a what-if replay of `s` runs with: each given parameter, else the file's.
pub fn resolve(s: &Snapshot, p: &WhatIfParams) -> (AllocatorConfig, WhatIfSettings) {
    let (mut c, recorded) = file_config(s);
    let mut from_file = Vec::new();
    let mut keep = |name: &'static str, given: bool| {
        if !given && recorded.contains(&name) {
            from_file.push(name);
        }
    };
    keep("expandable_segments", p.expandable_segments.is_some());
    keep("max_split_size_mb", p.max_split_size_mb.is_some());
    keep(
        "roundup_power2_divisions",
        p.roundup_power2_divisions.is_some(),
    );
    keep(
        "garbage_collection_threshold",
        p.garbage_collection_threshold.is_some(),
    );
    if let Some(e) = p.expandable_segments {
        c.expandable_segments = e;
    }
    if let Some(m) = p.max_split_size_mb {
        c.max_split_size = if m == 0 {
            u64::MAX
        } else {
            m.saturating_mul(MIB)
        };
    }
    if let Some(d) = p.roundup_power2_divisions {
        c.roundup_power2_divisions = [d; ROUNDUP_INTERVALS];
    }
    if let Some(g) = p.garbage_collection_threshold {
        c.garbage_collection_threshold = g;
    }
    let settings = WhatIfSettings {
        expandable_segments: c.expandable_segments,
        max_split_size_mb: (c.max_split_size != u64::MAX).then_some(c.max_split_size / MIB),
        roundup_power2_divisions: c.roundup_power2_divisions.to_vec(),
        garbage_collection_threshold: c.garbage_collection_threshold,
        device_memory_mib: (p.device_memory_mib > 0).then_some(p.device_memory_mib),
        from_file,
    };
    (c, settings)
}

/// Replays `s`'s trace under `p` (see the module docs). Reports progress every 4,096 events.
///
/// # Errors
/// [`Error::Cancelled`] when the current progress scope is cancelled.
pub fn whatif(s: &Snapshot, p: &WhatIfParams) -> Result<WhatIf, Error> {
    let (config, settings) = resolve(s, p);
    let capacity = if p.device_memory_mib == 0 {
        u64::MAX
    } else {
        p.device_memory_mib.saturating_mul(MIB)
    };
    let mut out = WhatIf {
        settings,
        reserved_peak_bytes: 0,
        reserved_final_bytes: 0,
        fragmentation_final_bytes: 0,
        segments_created: 0,
        ooms: 0,
    };
    let total: usize = s.device_traces.iter().map(Vec::len).sum();
    let mut done = 0usize;
    for trace in s.device_traces.iter().filter(|t| !t.is_empty()) {
        let mut a = CachingAllocator::with_config(capacity, config);
        let mut live: foldhash::HashMap<u64, usize> = foldhash::HashMap::default();
        let mut peak = 0u64;
        for e in trace {
            if done.is_multiple_of(4096) {
                crate::progress::report(done as u64, total.max(1) as u64)?;
            }
            done += 1;
            match e.action {
                Action::Alloc => {
                    if let Some(addr) = e.addr {
                        match a.malloc(e.size, e.stream) {
                            Ok(x) => {
                                if let Some(old) = live.insert(addr, x.block) {
                                    a.free(old);
                                }
                            }
                            Err(_) => out.ooms += 1,
                        }
                    }
                }
                Action::FreeCompleted => {
                    if let Some(h) = e.addr.and_then(|addr| live.remove(&addr)) {
                        a.free(h);
                    }
                }
                Action::SegmentFree if !config.expandable_segments => {
                    a.release_segment_of_size(e.size, e.stream);
                }
                _ => {}
            }
            peak = peak.max(a.reserved());
        }
        out.reserved_peak_bytes = out.reserved_peak_bytes.saturating_add(peak);
        out.reserved_final_bytes = out.reserved_final_bytes.saturating_add(a.reserved());
        out.fragmentation_final_bytes = out
            .fragmentation_final_bytes
            .saturating_add(a.cached_free());
        out.segments_created = out.segments_created.saturating_add(a.segments_created);
    }
    Ok(out)
}
