//! What-if replay: one device's trace of the snapshot replayed through the simulator
//! ([`crate::caching`], as the replay replays it) under other allocator settings — `expandable_segments`,
//! `max_split_size_mb`, `roundup_power2_divisions`, `garbage_collection_threshold`
//! (`PYTORCH_CUDA_ALLOC_CONF`, parsed by `c10/cuda/CUDAAllocatorConfig`; the rules are in
//! `caching/config.rs`) — and a device memory limit with the free-the-cache-and-retry path of
//! `malloc` in `c10/cuda/CUDACachingAllocator.cpp`, an `alloc` that still does not fit being
//! counted as out of memory and skipped (its later free with it).
//!
//! Each setting defaults to what the file records in `allocator_settings` (a parameter's
//! "file" value: `file` for `expandable_segments`, −1 for the numbers) — expandable segments
//! also where the file holds expandable segments or its trace maps pages (`segment_map`,
//! `segment_unmap`), whatever it records; a file that records none gets PyTorch's defaults.
//! Over those, the `alloc_conf` text (`PYTORCH_CUDA_ALLOC_CONF` syntax, [`crate::caching::conf`])
//! sets what it names, and over that each setting's own parameter when it is not "file".
//! Replayed as the replay ([`super::replay`]) replays, so under the file's own settings and no
//! memory limit its figures equal the replay's for that device. `device_memory_mib` −1 takes
//! the size the device had at the trace's first `oom` (reserved there plus the event's
//! `device_free`), under which the replay asks for the failed request again and fails as
//! PyTorch did.

use serde::Serialize;

use super::warning::Warning;
use super::{Action, Snapshot};
use crate::Error;
use crate::caching::conf::{self, AllocConf};
use crate::caching::{AllocatorConfig, LARGE_BUFFER, ROUNDUP_INTERVALS};
use crate::memory::MIB;
use crate::params::ParamValues;
use crate::text::Text;

/// The what-if parameters as given (before the file's values fill in the defaults);
/// [`Default`]: every setting the file's, no memory limit, the first device with a trace.
#[derive(Debug, Clone, PartialEq, Default)]
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
    /// The limit is the device's size at the trace's first `oom` (`device_memory_mib` −1).
    pub device_memory_from_oom: bool,
    /// Settings of the `alloc_conf` text, between the file's and the parameters above.
    pub alloc_conf: AllocConf,
    /// The device whose trace is replayed (and whose state and timeline the scene reports);
    /// `None`: the first device with a trace.
    pub device: Option<u32>,
}

/// Most MiB `max_split_size_mb` and `device_memory_mib` take (2³⁰ MiB = 1 PiB).
pub const MAX_MIB: i64 = 1 << 30;

/// The `expandable_segments` parameter's spellings: `file`, `on`/`off`, and the ones PyTorch's
/// Python side takes for a bool (`True`/`False`, `true`/`false`, `1`/`0`).
pub const EXPANDABLE_CHOICES: &[&str] = &[
    "file", "on", "off", "True", "False", "true", "false", "1", "0",
];

/// An `expandable_segments` parameter value ([`EXPANDABLE_CHOICES`]; `None`: the file's).
pub fn expandable_choice(v: &str) -> Option<bool> {
    match v {
        "on" | "True" | "true" | "1" => Some(true),
        "off" | "False" | "false" | "0" => Some(false),
        _ => None,
    }
}

impl WhatIfParams {
    /// The parameters from the scene's values, each validated by the rule
    /// [`crate::caching::conf`] holds for its setting (`max_split_size_mb` above 20 MiB,
    /// `roundup_power2_divisions` a power of two, `garbage_collection_threshold` below 1), with
    /// −1 meaning the file's and 0 off or unlimited.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] naming the parameter (for `alloc_conf`, the key too) and what it
    /// accepts.
    pub fn from_values(v: &ParamValues) -> Result<Self, Error> {
        let expandable_segments = expandable_choice(v.text("expandable_segments")?);
        let max_split_size_mb = match v.int("max_split_size_mb")? {
            -1 => None,
            0 => Some(0),
            m => Some(
                u64::try_from(m)
                    .map_err(|_| not_negative())
                    .and_then(conf::max_split_size_mb)
                    .map_err(|e| {
                        Error::invalid(
                            "max_split_size_mb",
                            m,
                            or_else_rule("0 (unlimited)", "0（不限）", &e),
                        )
                    })?,
            ),
        };
        let roundup_power2_divisions = match v.int("roundup_power2_divisions")? {
            -1 => None,
            0 => Some(0),
            d => Some(
                u64::try_from(d)
                    .map_err(|_| not_negative())
                    .and_then(|d| conf::roundup_division(d, true))
                    .map_err(|e| {
                        Error::invalid(
                            "roundup_power2_divisions",
                            d,
                            or_else_rule("0 (off)", "0（关闭）", &e),
                        )
                    })?,
            ),
        };
        let g = v.float("garbage_collection_threshold")?;
        let garbage_collection_threshold = if g < 0.0 {
            None
        } else if g == 0.0 {
            Some(0.0)
        } else {
            Some(conf::garbage_collection_threshold(g).map_err(|e| {
                Error::invalid(
                    "garbage_collection_threshold",
                    g,
                    or_else_rule("0 (off)", "0（关闭）", &e),
                )
            })?)
        };
        let alloc_conf = conf::parse(v.text("alloc_conf")?).map_err(|e| {
            if e.key == "alloc_conf" {
                Error::invalid(
                    "alloc_conf",
                    e.value,
                    crate::error::Expected::custom(
                        format!("expected {}", e.expected.en),
                        format!("应为{}", e.expected.zh),
                    ),
                )
            } else {
                Error::invalid(
                    "alloc_conf",
                    format!("{}:{}", e.key, e.value),
                    crate::error::Expected::custom(
                        format!("expected {} for {}", e.expected.en, e.key),
                        format!("{} 应为{}", e.key, e.expected.zh),
                    ),
                )
            }
        })?;
        let mib = v.int("device_memory_mib")?;
        let device = v.int("device")?;
        Ok(WhatIfParams {
            expandable_segments,
            max_split_size_mb,
            roundup_power2_divisions,
            garbage_collection_threshold,
            device_memory_mib: u64::try_from(mib).unwrap_or(0),
            device_memory_from_oom: mib < 0,
            alloc_conf,
            device: u32::try_from(device).ok(),
        })
    }
}

/// The settings a what-if replay ran with.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WhatIfSettings {
    /// One growing range per pool and stream.
    pub expandable_segments: bool,
    /// MiB, rounded down (`null`: unlimited); [`Self::max_split_size_bytes`] is exact.
    pub max_split_size_mb: Option<u64>,
    /// The split limit in bytes (`null`: unlimited): a file may record one that is not a
    /// whole number of MiB (1 B is 0 MiB here, not unlimited).
    pub max_split_size_bytes: Option<u64>,
    /// How much larger than a request of at least `max_split_size_mb` a cached block it takes
    /// may be (MiB; 20 by default).
    pub max_non_split_rounding_mb: u64,
    /// Divisions per power-of-two interval from 1 MiB (16 intervals; 0: off).
    pub roundup_power2_divisions: Vec<u64>,
    /// Fraction of the memory limit (0: off; needs `device_memory_mib`, as PyTorch collects only
    /// under a memory fraction).
    pub garbage_collection_threshold: f64,
    /// The device memory limit (MiB, rounded down; `null`: none).
    pub device_memory_mib: Option<u64>,
    /// The device memory limit (bytes; `null`: none).
    pub device_memory_bytes: Option<u64>,
    /// The settings taken from the file's `allocator_settings` (the rest were given, or
    /// PyTorch's defaults where the file records none).
    pub from_file: Vec<&'static str>,
    /// The settings taken from `alloc_conf` (not overridden by their own parameter).
    pub from_alloc_conf: Vec<&'static str>,
    /// Keys of `alloc_conf` that were checked but change nothing the simulator models.
    pub not_simulated: Vec<String>,
}

/// The what-if replay's figures (one device).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WhatIf {
    /// The settings.
    pub settings: WhatIfSettings,
    /// The device replayed (`null`: the file has no trace).
    pub device: Option<u32>,
    /// Peak reserved (bytes).
    pub reserved_peak_bytes: u64,
    /// Reserved at the end (bytes).
    pub reserved_final_bytes: u64,
    /// Cached free bytes at the end (reserved − allocated blocks): what fragmentation and
    /// caching hold back (bytes).
    pub fragmentation_final_bytes: u64,
    /// Segments created (`cudaMalloc`s; with expandable segments, ranges; a rebuilt start's
    /// segments not counted).
    pub segments_created: u64,
    /// `alloc` events that did not fit under the memory limit even after the cache was freed.
    pub ooms: u64,
    /// `oom` events in the trace.
    pub recorded_ooms: u64,
    /// Of them, requests that failed again here (all of them at the file's own device size).
    pub reproduced_ooms: u64,
}

/// The file's settings as an [`AllocatorConfig`], which of them the replay takes from the
/// file, and a warning (English, Chinese) for each recorded value it cannot take as written.
///
/// A value PyTorch itself refuses (`caching::conf`'s rules: a garbage-collection threshold
/// outside (0, 1), a split limit of 20 MiB or less) cannot be what the run used; it is kept
/// as text in `allocator_settings` and named in a warning saying what the replay uses instead.
fn file_config(s: &Snapshot) -> (AllocatorConfig, Vec<&'static str>, Vec<Warning>) {
    let mut c = AllocatorConfig::default();
    let mut from = Vec::new();
    let mut notes = Vec::new();
    let get = |k: &str| s.allocator_settings.get(k).map(String::as_str);
    // Expandable segments exist only while the setting is on: their presence says so too.
    let has_expandable = s.segments.iter().any(|g| g.is_expandable)
        || s.device_traces
            .iter()
            .flatten()
            .any(|e| matches!(e.action, Action::SegmentMap | Action::SegmentUnmap));
    let recorded = get("expandable_segments");
    if recorded.is_some() || has_expandable {
        c.expandable_segments =
            has_expandable || recorded.and_then(expandable_choice).unwrap_or(false);
        from.push("expandable_segments");
    }
    if let Some(t) = get("max_split_size") {
        // Recorded in bytes, −1 for unlimited (`SIZE_MAX` written as an `int64_t`).
        let bytes = match t.parse::<i64>() {
            Ok(-1) => Some(u64::MAX),
            Ok(v) => u64::try_from(v).ok(),
            Err(_) => t.parse::<u64>().ok(),
        };
        match bytes {
            Some(b) => {
                c.max_split_size = b;
                from.push("max_split_size_mb");
                if b <= LARGE_BUFFER {
                    notes.push(Warning::SplitLimitRefused {
                        recorded: t.to_owned(),
                    });
                }
            }
            None => notes.push(Warning::SplitLimitNotBytes {
                recorded: t.to_owned(),
            }),
        }
    }
    if let Some(t) = get("garbage_collection_threshold") {
        match t.parse::<f64>() {
            // 0 is what PyTorch records when the setting is not given: off.
            Ok(g) if g == 0.0 || conf::garbage_collection_threshold(g).is_ok() => {
                c.garbage_collection_threshold = g;
                from.push("garbage_collection_threshold");
            }
            _ => notes.push(Warning::GcThresholdRefused {
                recorded: t.to_owned(),
            }),
        }
    }
    if let Some(v) = get("roundup_power2_divisions") {
        // Recorded as a dict {interval start in MiB: divisions}, read as "1:0,2:0,…".
        let mut refused = Vec::new();
        for pair in v.split(',').filter(|p| !p.is_empty()) {
            let mut kv = pair.split(':');
            let slot = match (
                kv.next().map(|k| k.trim().parse::<u64>()),
                kv.next().map(|d| d.trim().parse::<u64>()),
            ) {
                (Some(Ok(start)), Some(Ok(d))) => conf::roundup_interval(start)
                    .ok()
                    .filter(|_| conf::roundup_division(d, false).is_ok())
                    .and_then(|i| c.roundup_power2_divisions.get_mut(i))
                    .map(|slot| (slot, d)),
                _ => None,
            };
            match slot {
                Some((slot, d)) => *slot = d,
                None => refused.push(pair.chars().take(60).collect::<String>()),
            }
        }
        if !refused.is_empty() {
            let list = refused.join(", ");
            notes.push(Warning::RoundupEntriesRefused { entries: list });
        }
        from.push("roundup_power2_divisions");
    }
    (c, from, notes)
}

/// Warnings for the recorded settings the what-if replay cannot take as written (see
/// [`file_config`]).
pub(super) fn file_settings_warnings(s: &Snapshot) -> Vec<Warning> {
    file_config(s).2
}

/// The settings a what-if replay of `s` runs with: each given parameter, else `alloc_conf`'s,
/// else the file's. The memory limit is `device_memory_mib`'s (the caller resolves −1).
pub fn resolve(s: &Snapshot, p: &WhatIfParams) -> (AllocatorConfig, WhatIfSettings) {
    let (mut c, recorded, _) = file_config(s);
    let a = &p.alloc_conf;
    let (mut from_file, mut from_alloc_conf) = (Vec::new(), Vec::new());
    let mut keep = |name: &'static str, in_conf: bool, given: bool| {
        if given {
        } else if in_conf {
            from_alloc_conf.push(name);
        } else if recorded.contains(&name) {
            from_file.push(name);
        }
    };
    keep(
        "expandable_segments",
        a.expandable_segments.is_some(),
        p.expandable_segments.is_some(),
    );
    keep(
        "max_split_size_mb",
        a.max_split_size_mb.is_some(),
        p.max_split_size_mb.is_some(),
    );
    keep(
        "max_non_split_rounding_mb",
        a.max_non_split_rounding_mb.is_some(),
        false,
    );
    keep(
        "roundup_power2_divisions",
        a.roundup_power2_divisions.is_some(),
        p.roundup_power2_divisions.is_some(),
    );
    keep(
        "garbage_collection_threshold",
        a.garbage_collection_threshold.is_some(),
        p.garbage_collection_threshold.is_some(),
    );
    let mib = |m: u64| {
        if m == 0 {
            u64::MAX
        } else {
            m.saturating_mul(MIB)
        }
    };
    if let Some(e) = p.expandable_segments.or(a.expandable_segments) {
        c.expandable_segments = e;
    }
    if let Some(m) = p.max_split_size_mb.or(a.max_split_size_mb) {
        c.max_split_size = mib(m);
    }
    if let Some(m) = a.max_non_split_rounding_mb {
        c.max_non_split_rounding = mib(m);
    }
    if let Some(d) = p.roundup_power2_divisions {
        c.roundup_power2_divisions = [d; ROUNDUP_INTERVALS];
    } else if let Some(d) = a.roundup_power2_divisions {
        c.roundup_power2_divisions = d;
    }
    if let Some(g) = p
        .garbage_collection_threshold
        .or(a.garbage_collection_threshold)
    {
        c.garbage_collection_threshold = g;
    }
    let limit = (p.device_memory_mib > 0).then(|| p.device_memory_mib.saturating_mul(MIB));
    let settings = WhatIfSettings {
        expandable_segments: c.expandable_segments,
        max_split_size_mb: (c.max_split_size != u64::MAX).then_some(c.max_split_size / MIB),
        max_split_size_bytes: (c.max_split_size != u64::MAX).then_some(c.max_split_size),
        max_non_split_rounding_mb: c.max_non_split_rounding / MIB,
        roundup_power2_divisions: c.roundup_power2_divisions.to_vec(),
        garbage_collection_threshold: c.garbage_collection_threshold,
        device_memory_mib: limit.map(|b| b / MIB),
        device_memory_bytes: limit,
        from_file,
        from_alloc_conf,
        not_simulated: a.not_simulated.clone(),
    };
    (c, settings)
}

/// The devices of `s`: those with a trace or a segment, ascending.
pub fn devices(s: &Snapshot) -> Vec<u32> {
    let mut d: Vec<u32> = s
        .device_traces
        .iter()
        .enumerate()
        .filter(|(_, t)| !t.is_empty())
        .filter_map(|(i, _)| u32::try_from(i).ok())
        .chain(
            s.segments
                .iter()
                .filter_map(|g| u32::try_from(g.device).ok()),
        )
        .collect();
    d.sort_unstable();
    d.dedup();
    d
}

/// What a refused setting's rule reads as when `-1` (keep the file's value) and a fixed `zero`
/// are accepted beside `rule` (what the setting itself accepts).
fn or_else_rule(zero_en: &str, zero_zh: &str, rule: &Text) -> crate::error::Expected {
    crate::error::Expected::custom(
        format!("expected -1 (the file's), {zero_en} or {}", rule.en),
        format!("应为 -1（沿用文件的值）、{zero_zh}或{}", rule.zh),
    )
}

/// The rule of a value below -1 for a setting that takes a count of MiB or divisions.
fn not_negative() -> Text {
    Text::new("not negative".to_owned(), "非负数".to_owned())
}

/// The device `wanted` names, or the first device with a trace (`None` when there is none).
///
/// # Errors
/// [`Error::InvalidParam`] naming `device` and the devices present when the file has nothing
/// of `wanted`.
pub fn choose_device(s: &Snapshot, wanted: Option<u32>) -> Result<Option<u32>, Error> {
    let present = devices(s);
    match wanted {
        Some(d) if present.contains(&d) => Ok(Some(d)),
        Some(d) => {
            let list: Vec<String> = present.iter().map(u32::to_string).collect();
            Err(Error::invalid(
                "device",
                d,
                if list.is_empty() {
                    crate::error::Expected::custom(
                        "-1: the file holds no device",
                        "-1：文件里没有设备",
                    )
                } else {
                    crate::error::Expected::custom(
                        format!("-1 or a device the file holds: {}", list.join(", ")),
                        format!("-1 或文件里的设备：{}", list.join(", ")),
                    )
                },
            ))
        }
        None => Ok(s
            .device_traces
            .iter()
            .position(|t| !t.is_empty())
            .and_then(|i| u32::try_from(i).ok())),
    }
}

/// Replays the chosen device's trace of `s` under `p` (see the module docs). Reports progress
/// every 4,096 events.
///
/// # Errors
/// As [`choose_device`]; [`Error::InvalidParam`] naming `device_memory_mib` when it is −1 and
/// the device's trace has no `oom` event; [`Error::Cancelled`] when the current progress scope
/// is cancelled.
pub fn whatif(s: &Snapshot, p: &WhatIfParams) -> Result<WhatIf, Error> {
    let (config, mut settings) = resolve(s, p);
    let device = choose_device(s, p.device)?;
    if p.device_memory_from_oom {
        let d = device.unwrap_or(0);
        let Some(b) = super::drive::oom_device_bytes(s, d)? else {
            return Err(Error::invalid(
                "device_memory_mib",
                -1,
                crate::error::Expected::custom(
                    format!(
                        "0 (no limit) or MiB: device {d}'s trace has no oom event to take the \
                         size from"
                    ),
                    format!("0（不限）或 MiB 数：设备 {d} 的轨迹里没有可取大小的 oom 事件"),
                ),
            ));
        };
        settings.device_memory_bytes = Some(b);
        settings.device_memory_mib = Some(b / MIB);
    }
    let capacity = settings.device_memory_bytes.unwrap_or(u64::MAX);
    let mut out = WhatIf {
        settings,
        device,
        reserved_peak_bytes: 0,
        reserved_final_bytes: 0,
        fragmentation_final_bytes: 0,
        segments_created: 0,
        ooms: 0,
        recorded_ooms: 0,
        reproduced_ooms: 0,
    };
    let Some(d) = device else {
        return Ok(out);
    };
    let total = s.device_traces.get(d as usize).map_or(0, Vec::len);
    let mut progress = |i: usize| crate::progress::report(i as u64, total.max(1) as u64);
    let run = super::drive::drive(s, d, config, capacity, &mut progress)?;
    out.reserved_peak_bytes = run.reserved_peak;
    out.reserved_final_bytes = run.reserved_final;
    out.fragmentation_final_bytes = run.cached_free_final;
    out.segments_created = run.segments_created;
    out.ooms = run.ooms;
    out.recorded_ooms = run.recorded_ooms;
    out.reproduced_ooms = run.reproduced_ooms;
    Ok(out)
}
