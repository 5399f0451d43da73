//! Replaying a snapshot's recorded trace through the caching-allocator simulator
//! ([`crate::caching`]), device by device, and saying whether the trace starts from an
//! empty allocator and, if it does, whether the replay recreates the file's segments.

use crate::text::Text;
use std::collections::BTreeMap;

use serde::Serialize;

use super::{Action, report_events, sat_sum};
use super::{PROGRESS_EVERY, PROGRESS_EXTRACTED, PROGRESS_TOTAL, SnapSegment, Snapshot};
use crate::caching::CachingAllocator;

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
    /// Replayed segment sizes in creation order (bytes), per device concatenated.
    pub segments: Vec<u64>,
    /// Whether the trace starts from an empty allocator (every freed address was allocated in
    /// the trace and every alloc lies in a segment the trace created).
    pub starts_empty: bool,
    /// Whether the replay recreates the file's segments one for one, in creation order
    /// (`None` when the trace starts mid-run or is empty: no claim either way).
    pub segments_match: Option<bool>,
    /// Frees of addresses the trace never allocated (the trace began mid-run).
    pub unmatched_frees: usize,
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
        note: Text::default(),
    };
    let events: usize = s.device_traces.iter().map(Vec::len).sum();
    if events == 0 {
        r.starts_empty = false;
        r.note.en = "the trace is empty (history recording was off): nothing to replay".into();
        r.note.zh = "轨迹是空的（录制时没有打开历史记录）：没有可回放的内容".into();
        return r;
    }
    let mut all_match = true;
    let mut reasons: Vec<String> = Vec::new();
    let mut reasons_zh: Vec<String> = Vec::new();
    let mut expandable = false;
    let mut replayed = 0usize;
    'devices: for (dev, trace) in s.device_traces.iter().enumerate() {
        if trace.is_empty() {
            continue;
        }
        let mut a = CachingAllocator::new(u64::MAX);
        let mut live: foldhash::HashMap<u64, usize> = foldhash::HashMap::default();
        // Segments the trace created and has not freed: address → (size, creation order).
        let mut trace_segs: BTreeMap<u64, (u64, usize)> = BTreeMap::new();
        let mut created = 0usize;
        let (mut peak, mut apeak, mut npeak) = (0u64, 0u64, 0u64);
        let mut from_empty = true;
        for e in trace {
            if replayed.is_multiple_of(PROGRESS_EVERY)
                && report_events(PROGRESS_EXTRACTED, PROGRESS_TOTAL, replayed, events).is_err()
            {
                // Cancelled: stop here; `run_path` reports the cancellation.
                break 'devices;
            }
            replayed += 1;
            match e.action {
                Action::Alloc => {
                    if let Some(addr) = e.addr {
                        let inside = trace_segs
                            .range(..=addr)
                            .next_back()
                            .is_some_and(|(&sa, &(ss, _))| addr < sa.saturating_add(ss));
                        from_empty &= inside;
                        if let Some(old) = a
                            .malloc(e.size, e.stream)
                            .ok()
                            .and_then(|x| live.insert(addr, x.block))
                        {
                            a.free(old);
                        }
                    }
                }
                Action::FreeCompleted => match e.addr.and_then(|addr| live.remove(&addr)) {
                    Some(h) => {
                        a.free(h);
                    }
                    None => {
                        r.unmatched_frees += 1;
                        from_empty = false;
                    }
                },
                Action::SegmentAlloc => {
                    if let Some(addr) = e.addr {
                        trace_segs.insert(addr, (e.size, created));
                        created += 1;
                    }
                }
                Action::SegmentFree => {
                    if let Some(addr) = e.addr {
                        from_empty &= trace_segs.remove(&addr).is_some();
                    }
                    a.release_segment_of_size(e.size, e.stream);
                }
                Action::SegmentMap | Action::SegmentUnmap => expandable = true,
                _ => {}
            }
            peak = peak.max(a.reserved());
            apeak = apeak.max(a.allocated());
            npeak = npeak.max(a.requested());
        }
        r.reserved_peak_bytes = r.reserved_peak_bytes.saturating_add(peak);
        r.reserved_final_bytes = r.reserved_final_bytes.saturating_add(a.reserved());
        r.allocated_peak_bytes = r.allocated_peak_bytes.saturating_add(apeak);
        r.needed_peak_bytes = r.needed_peak_bytes.saturating_add(npeak);
        let replayed: Vec<u64> = a.segments().iter().map(|sv| sv.size).collect();
        r.segments.extend(&replayed);
        r.starts_empty &= from_empty;
        // The file's segments of this device, in the order the trace created them.
        let file_segs: Vec<&SnapSegment> = s
            .segments
            .iter()
            .filter(|sg| usize::try_from(sg.device).ok() == Some(dev))
            .collect();
        let mut ordered: Vec<(usize, u64)> = Vec::new();
        for sg in &file_segs {
            match trace_segs.get(&sg.address) {
                Some(&(_, order)) => ordered.push((order, sg.total_size)),
                None => r.starts_empty = false,
            }
        }
        ordered.sort_unstable();
        let expected: Vec<u64> = ordered.iter().map(|&(_, size)| size).collect();
        if ordered.len() != trace_segs.len() {
            all_match = false;
            let missing = trace_segs.len() - ordered.len().min(trace_segs.len());
            reasons.push(format!(
                "device {dev}: {missing} segments the trace created are not in the file"
            ));
            reasons_zh.push(format!(
                "设备 {dev}：轨迹创建的段中有 {missing} 个不在文件里"
            ));
        }
        if expected != replayed {
            all_match = false;
            let (n_replayed, replayed_bytes) = (replayed.len(), sat_sum(replayed.iter().copied()));
            let (n_file, file_bytes) = (
                file_segs.len(),
                sat_sum(file_segs.iter().map(|s| s.total_size)),
            );
            reasons.push(format!(
                "device {dev}: replayed {n_replayed} segments ({replayed_bytes} bytes), the file has {n_file} ({file_bytes} bytes)"
            ));
            reasons_zh.push(format!(
                "设备 {dev}：回放得到 {n_replayed} 个段（{replayed_bytes} 字节），文件里有 {n_file} 个（{file_bytes} 字节）"
            ));
        }
    }
    if expandable || s.segments.iter().any(|sg| sg.is_expandable) {
        r.starts_empty = false;
        r.note.en =
            "expandable segments (segment_map/segment_unmap): the simulator follows the default \
                  non-expandable rules, so its segments cannot match the file's"
                .into();
        r.note.zh = "可扩展段（segment_map/segment_unmap）：模拟器按默认的不可扩展规则分配，\
                     所以它的段不可能与文件里的一致"
            .into();
    } else if !r.starts_empty {
        r.note.en = format!(
            "the trace starts mid-run ({} frees of blocks allocated before it; segments created before \
             it): a replay from an empty allocator cannot recreate the file's segments, so no match is \
             claimed — the replay figures cover only the recorded window",
            r.unmatched_frees
        );
        r.note.zh = format!(
            "轨迹从运行中途开始（{} 次释放的块在轨迹开始前就已分配；有的段在它之前就已创建）：\
             从空的分配器开始回放无法重建文件里的段，所以不判断是否一致——回放的数字只覆盖录下的这一段",
            r.unmatched_frees
        );
    } else {
        r.segments_match = Some(all_match);
        r.note.en = if all_match {
            "the trace starts from an empty allocator and the replay recreates the file's segments one \
             for one, in creation order"
                .into()
        } else {
            format!(
                "the trace starts from an empty allocator but the replay differs: {}",
                reasons.join("; ")
            )
        };
        r.note.zh = if all_match {
            "轨迹从空的分配器开始，回放按创建顺序逐一重建了文件里的段".into()
        } else {
            format!(
                "轨迹从空的分配器开始，但回放结果不同：{}",
                reasons_zh.join("；")
            )
        };
    }
    r
}
