//! Replaying a snapshot's recorded trace through the caching-allocator simulator
//! ([`crate::caching`]) under the file's own settings, device by device ([`super::drive`]: from
//! an empty allocator when the device's trace starts empty, else from the state rebuilt at its
//! first event), and saying per device whether the replay recreates the file's segments.

use crate::text::Text;

use serde::Serialize;

use super::drive::{Run, drive};
use super::whatif::{WhatIfParams, resolve};
use super::{PROGRESS_EXTRACTED, PROGRESS_TOTAL, Snapshot, report_events};

/// One device's replay.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeviceReplay {
    /// The device.
    pub device: u32,
    /// Trace events of the device.
    pub events: usize,
    /// Whether its trace starts from an empty allocator (every `alloc` in memory the trace created, every free of an address it allocated, every file segment created by it).
    pub starts_empty: bool,
    /// Segments of the state rebuilt at its first event that the replay started from (0 when
    /// it starts empty).
    pub start_segments: usize,
    /// Whether the replay leaves the file's segments.
    pub segments_match: bool,
    /// Segments the replay created (`cudaMalloc`s; with expandable segments, ranges).
    pub segments_created: u64,
    /// `oom` events in the trace.
    pub recorded_ooms: u64,
    /// Of them, requests that failed again in the replay (none can without a memory limit).
    pub reproduced_ooms: u64,
    /// Frees of addresses the trace never allocated (blocks of the rebuilt start).
    pub unmatched_frees: usize,
    /// `alloc` events the replay served.
    pub allocs: u64,
    /// Of them, those it served at the address PyTorch recorded — where the replay started
    /// from the rebuilt state, whose segments keep the file's addresses, a block-for-block check
    /// of the simulator (a replay from empty places its segments at addresses of its own).
    pub allocs_at_recorded_address: u64,
}

/// The replay of one snapshot's trace.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Replay {
    /// Peak reserved during the replay (bytes; summed over devices' peaks).
    pub reserved_peak_bytes: u64,
    /// Reserved at the end (bytes).
    pub reserved_final_bytes: u64,
    /// Peak allocated (rounded blocks; bytes).
    pub allocated_peak_bytes: u64,
    /// Peak of live requested bytes — what a LightSeq2-style up-front allocation of this
    /// trace's memory would need (bytes).
    pub needed_peak_bytes: u64,
    /// Replayed segment sizes left at the end, per device concatenated (bytes; in creation
    /// order, a rebuilt start's segments first).
    pub segments: Vec<u64>,
    /// Whether every device's trace starts from an empty allocator.
    pub starts_empty: bool,
    /// Whether the replay recreates the file's segments on every device (`None` for an empty
    /// trace: no claim either way).
    pub segments_match: Option<bool>,
    /// Frees of addresses the trace never allocated (the trace began mid-run).
    pub unmatched_frees: usize,
    /// Per device with a trace, in device order.
    pub devices: Vec<DeviceReplay>,
    /// What the replay can and cannot say, in English and Chinese (built from the same numbers).
    pub note: Text,
}

/// Replays the snapshot's `device_traces` through the simulator (see the module docs).
/// Reports progress ([`crate::progress`]) every 4,096 events, from 80 % to 100 % of a
/// snapshot's reading; when the current progress scope is cancelled it stops there and returns
/// what it has (partial: [`run_path`](super::run_path) then returns
/// [`Error::Cancelled`](crate::Error::Cancelled) instead).
pub fn replay(s: &Snapshot) -> Replay {
    let mut r = Replay {
        reserved_peak_bytes: 0,
        reserved_final_bytes: 0,
        allocated_peak_bytes: 0,
        needed_peak_bytes: 0,
        segments: Vec::new(),
        starts_empty: true,
        segments_match: None,
        unmatched_frees: 0,
        devices: Vec::new(),
        note: Text::default(),
    };
    let events: usize = s.device_traces.iter().map(Vec::len).sum();
    if events == 0 {
        r.starts_empty = false;
        r.note.en = "the trace is empty (history recording was off): nothing to replay".into();
        r.note.zh = "轨迹是空的（录制时没有打开历史记录）：没有可回放的内容".into();
        return r;
    }
    let (config, _) = resolve(s, &WhatIfParams::default());
    let (mut en, mut zh) = (Vec::new(), Vec::new());
    let mut before = 0usize;
    for (dev, trace) in s.device_traces.iter().enumerate() {
        let Ok(device) = u32::try_from(dev) else {
            break;
        };
        if trace.is_empty() {
            continue;
        }
        let mut progress =
            |i: usize| report_events(PROGRESS_EXTRACTED, PROGRESS_TOTAL, before + i, events);
        // Cancelled: stop here; `run_path` reports the cancellation.
        let Ok(run) = drive(s, device, config, u64::MAX, &mut progress) else {
            break;
        };
        before += trace.len();
        add(
            &mut r,
            &run,
            trace.len(),
            config.expandable_segments,
            (&mut en, &mut zh),
        );
    }
    r.note.en = en.join("; ");
    r.note.zh = zh.join("；");
    r
}

/// Adds one device's run to the replay, with its sentence of the note.
fn add(
    r: &mut Replay,
    run: &Run,
    events: usize,
    expandable: bool,
    (en, zh): (&mut Vec<String>, &mut Vec<String>),
) {
    r.reserved_peak_bytes = r.reserved_peak_bytes.saturating_add(run.reserved_peak);
    r.reserved_final_bytes = r.reserved_final_bytes.saturating_add(run.reserved_final);
    r.allocated_peak_bytes = r.allocated_peak_bytes.saturating_add(run.allocated_peak);
    r.needed_peak_bytes = r.needed_peak_bytes.saturating_add(run.needed_peak);
    r.segments.extend(&run.segments);
    r.starts_empty &= run.starts_empty;
    r.unmatched_frees += run.unmatched_frees;
    r.segments_match = Some(r.segments_match.unwrap_or(true) && run.segments_match);
    r.devices.push(DeviceReplay {
        device: run.device,
        events,
        starts_empty: run.starts_empty,
        start_segments: run.start_segments,
        segments_match: run.segments_match,
        segments_created: run.segments_created,
        recorded_ooms: run.recorded_ooms,
        reproduced_ooms: run.reproduced_ooms,
        unmatched_frees: run.unmatched_frees,
        allocs: run.allocs,
        allocs_at_recorded_address: run.allocs_at_address,
    });
    let d = run.device;
    let rules = if expandable {
        ", expandable segments"
    } else {
        ""
    };
    let rules_zh = if expandable { "，可扩展段" } else { "" };
    let (from, from_zh) = if run.starts_empty {
        (
            format!("device {d}: the trace starts from an empty allocator{rules}"),
            format!("设备 {d}：轨迹从空的分配器开始{rules_zh}"),
        )
    } else {
        (
            format!(
                "device {d}: the trace starts mid-run ({} frees of blocks allocated before it){rules}, replayed from the state rebuilt at its first event ({} segments)",
                run.unmatched_frees, run.start_segments
            ),
            format!(
                "设备 {d}：轨迹从运行中途开始（{} 次释放的块在轨迹开始前就已分配）{rules_zh}，从它第一个事件处重建的状态（{} 个段）开始回放",
                run.unmatched_frees, run.start_segments
            ),
        )
    };
    if run.segments_match {
        en.push(format!("{from}; the replay recreates the file's segments"));
        zh.push(format!("{from_zh}；回放重建了文件里的段"));
    } else {
        let why: Vec<&str> = run.mismatch.iter().map(|m| m.get(false)).collect();
        let why_zh: Vec<&str> = run.mismatch.iter().map(|m| m.get(true)).collect();
        en.push(format!("{from}; the replay differs: {}", why.join(", ")));
        zh.push(format!("{from_zh}；回放结果不同：{}", why_zh.join("，")));
    }
}
