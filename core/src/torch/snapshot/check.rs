//! What a decodable file can still get wrong: checks of a [`Snapshot`]'s segments and blocks
//! against the allocator's own invariants, reported as warnings (English and Chinese) instead of
//! being drawn as if fine.
//!
//! The invariants are those of `c10/cuda/CUDACachingAllocator.cpp`: a segment's blocks tile it
//! (`Block::prev`/`next` run from the segment's base to its end: every block inside its segment,
//! none overlapping, their sizes summing to `total_size`); segments of one device never overlap
//! (each is one `cudaMalloc` or one expandable reservation); a segment's `allocated_size` is the
//! sum of its `active_allocated` blocks (`snapshot()` adds `block->size` where `block->allocated`).
//! Sums that exceed 2⁶⁴ − 1 bytes are reported too (the figures saturate there).

use super::{Action, BlockState, Snapshot};

/// Problems of one kind listed before the rest are only counted.
const LISTED: usize = 5;

/// Warnings in both languages, at most [`LISTED`] of each kind plus one line with the count of
/// the rest.
#[derive(Debug, Default)]
pub(super) struct Warnings {
    kinds: Vec<(&'static str, usize)>,
    /// English lines.
    pub en: Vec<String>,
    /// The same lines in Chinese.
    pub zh: Vec<String>,
}

impl Warnings {
    /// Adds one problem of `kind`; its text is built only while the kind is still listed.
    pub fn push(&mut self, kind: &'static str, text: impl FnOnce() -> (String, String)) {
        let count = match self.kinds.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, c)) => {
                *c += 1;
                *c
            }
            None => {
                self.kinds.push((kind, 1));
                1
            }
        };
        if count <= LISTED {
            let (en, zh) = text();
            self.en.push(en);
            self.zh.push(zh);
        }
    }

    /// The lines, with one "… and N more" per kind that had more than [`LISTED`].
    pub fn finish(mut self) -> (Vec<String>, Vec<String>) {
        for &(kind, count) in &self.kinds {
            if count > LISTED {
                self.en.push(format!(
                    "… and {} more of the kind \"{kind}\"",
                    count - LISTED
                ));
                self.zh
                    .push(format!("……另有 {} 个同类问题（{kind}）", count - LISTED));
            }
        }
        (self.en, self.zh)
    }
}

/// Checks `s` (see the module docs) into `w`.
pub(super) fn check(s: &Snapshot, w: &mut Warnings) {
    for (en, zh) in super::whatif::file_settings_warnings(s) {
        w.push("allocator setting not taken as recorded", || (en, zh));
    }
    let mut reserved = Some(0u64);
    let mut allocated = Some(0u64);
    for (i, sg) in s.segments.iter().enumerate() {
        reserved = reserved.and_then(|r| r.checked_add(sg.total_size));
        allocated = allocated.and_then(|a| a.checked_add(sg.allocated_size));
        let Some(seg_end) = sg.address.checked_add(sg.total_size) else {
            w.push("segment end overflows", || {
                (
                    format!(
                        "segment {i} at {:#x}: address + total_size ({} B) exceeds 2⁶⁴ − 1",
                        sg.address, sg.total_size
                    ),
                    format!(
                        "段 {i}（{:#x}）：地址 + total_size（{} B）超过 2⁶⁴ − 1",
                        sg.address, sg.total_size
                    ),
                )
            });
            continue;
        };
        let mut covered = Some(0u64);
        let mut prev_end: Option<u64> = None;
        let mut active_allocated = 0u64;
        for (j, b) in sg.blocks.iter().enumerate() {
            covered = covered.and_then(|c| c.checked_add(b.size));
            if b.state == BlockState::ActiveAllocated {
                active_allocated = active_allocated.saturating_add(b.size);
            }
            if b.state == BlockState::ActiveAllocated && b.requested_size > b.size {
                w.push("requested more than the block", || {
                    (
                        format!(
                            "segment {i} at {:#x} block {j}: requested_size {} B is more than the block's {} B",
                            sg.address, b.requested_size, b.size
                        ),
                        format!(
                            "段 {i}（{:#x}）的块 {j}：requested_size {} B 比块的 {} B 还大",
                            sg.address, b.requested_size, b.size
                        ),
                    )
                });
            }
            if b.size > sg.total_size {
                w.push("block larger than its segment", || {
                    (
                        format!(
                            "segment {i} at {:#x} block {j}: {} B, larger than the segment's {} B",
                            sg.address, b.size, sg.total_size
                        ),
                        format!(
                            "段 {i}（{:#x}）的块 {j}：{} B，比段的 {} B 还大",
                            sg.address, b.size, sg.total_size
                        ),
                    )
                });
            }
            let end = b.address.checked_add(b.size);
            if b.address < sg.address || end.is_none_or(|e| e > seg_end) {
                w.push("block outside its segment", || {
                    (
                        format!(
                            "segment {i} at {:#x} block {j} at {:#x} ({} B) lies outside the segment's {:#x}..{seg_end:#x}",
                            sg.address, b.address, b.size, sg.address
                        ),
                        format!(
                            "段 {i}（{:#x}）的块 {j}（{:#x}，{} B）不在段的范围 {:#x}..{seg_end:#x} 内",
                            sg.address, b.address, b.size, sg.address
                        ),
                    )
                });
            }
            if let Some(p) = prev_end
                && b.address < p
            {
                w.push("overlapping blocks", || {
                    (
                        format!(
                            "segment {i} at {:#x}: block {j} at {:#x} overlaps the block before it (which ends at {p:#x})",
                            sg.address, b.address
                        ),
                        format!(
                            "段 {i}（{:#x}）：块 {j}（{:#x}）与前一个块重叠（前一个块止于 {p:#x}）",
                            sg.address, b.address
                        ),
                    )
                });
            }
            prev_end = Some(end.unwrap_or(u64::MAX));
        }
        match covered {
            None => w.push("sum overflows", || {
                (
                    format!(
                        "segment {i} at {:#x}: its block sizes add up to more than 2⁶⁴ − 1 bytes",
                        sg.address
                    ),
                    format!("段 {i}（{:#x}）：块大小之和超过 2⁶⁴ − 1 字节", sg.address),
                )
            }),
            Some(c) if !sg.blocks.is_empty() && c != sg.total_size => {
                w.push("blocks do not tile their segment", || {
                    (
                        format!(
                            "segment {i} at {:#x}: its blocks add up to {c} B, the segment's total_size is {} B",
                            sg.address, sg.total_size
                        ),
                        format!(
                            "段 {i}（{:#x}）：块合计 {c} B，而段的 total_size 是 {} B",
                            sg.address, sg.total_size
                        ),
                    )
                });
            }
            _ => {}
        }
        if !sg.blocks.is_empty() && sg.allocated_size != active_allocated {
            w.push("allocated_size differs from its blocks", || {
                (
                    format!(
                        "segment {i} at {:#x}: allocated_size is {} B, its active_allocated blocks hold {active_allocated} B",
                        sg.address, sg.allocated_size
                    ),
                    format!(
                        "段 {i}（{:#x}）：allocated_size 是 {} B，而它的 active_allocated 块合计 {active_allocated} B",
                        sg.address, sg.allocated_size
                    ),
                )
            });
        }
    }
    if reserved.is_none() {
        w.push("sum overflows", || {
            (
                "the segments' total_size add up to more than 2⁶⁴ − 1 bytes: reserved is shown saturated".into(),
                "各段 total_size 之和超过 2⁶⁴ − 1 字节：显示的 reserved 是截断后的值".into(),
            )
        });
    }
    if allocated.is_none() {
        w.push("sum overflows", || {
            (
                "the segments' allocated_size add up to more than 2⁶⁴ − 1 bytes: allocated is shown saturated".into(),
                "各段 allocated_size 之和超过 2⁶⁴ − 1 字节：显示的 allocated 是截断后的值".into(),
            )
        });
    }
    check_events(s, w);
    // Segments of one device never overlap.
    let mut order: Vec<(i64, u64, u64, usize)> = s
        .segments
        .iter()
        .enumerate()
        .map(|(i, g)| {
            (
                g.device,
                g.address,
                g.address.saturating_add(g.total_size),
                i,
            )
        })
        .collect();
    order.sort_unstable();
    for pair in order.windows(2) {
        if let [(d1, _, end1, i1), (d2, a2, _, i2)] = pair
            && d1 == d2
            && a2 < end1
        {
            w.push("overlapping segments", || {
                (
                    format!(
                        "segments {i1} and {i2} of device {d1} overlap (segment {i2} starts at {a2:#x}, before segment {i1} ends at {end1:#x})"
                    ),
                    format!(
                        "设备 {d1} 的段 {i1} 和段 {i2} 重叠（段 {i2} 起于 {a2:#x}，在段 {i1} 的结尾 {end1:#x} 之前）"
                    ),
                )
            });
        }
    }
}

/// The trace's own consistency: an action this reader does not know (not replayed), an `alloc`
/// or free without a byte count (counted as 0 B), and a free whose size differs from the
/// `alloc` at its address (the live bytes after it would be wrong by the difference).
fn check_events(s: &Snapshot, w: &mut Warnings) {
    for (d, trace) in s.device_traces.iter().enumerate() {
        let mut live: std::collections::HashMap<u64, (usize, u64)> = Default::default();
        for (k, e) in trace.iter().enumerate() {
            let sized = matches!(
                e.action,
                Action::Alloc | Action::FreeRequested | Action::FreeCompleted
            );
            match &e.action {
                Action::Other(name) => w.push("unknown action", || {
                    (
                        format!(
                            "trace {d} event {k}: unknown action \"{name}\"; it is not replayed"
                        ),
                        format!("轨迹 {d} 的事件 {k}：未知的 action \"{name}\"，不参与重放"),
                    )
                }),
                _ if sized && e.size == 0 => w.push("no byte count", || {
                    (
                        format!(
                            "trace {d} event {k} ({}): size is 0 or missing, counted as 0 B",
                            e.action.as_str()
                        ),
                        format!(
                            "轨迹 {d} 的事件 {k}（{}）：size 为 0 或缺失，按 0 B 计",
                            e.action.as_str()
                        ),
                    )
                }),
                _ => {}
            }
            let Some(addr) = e.addr else { continue };
            match e.action {
                Action::Alloc => {
                    live.insert(addr, (k, e.size));
                }
                Action::FreeRequested | Action::FreeCompleted => {
                    let at = if e.action == Action::FreeCompleted {
                        live.remove(&addr)
                    } else {
                        live.get(&addr).copied()
                    };
                    if let Some((j, size)) = at
                        && size != e.size
                    {
                        w.push("free differs from its alloc", || {
                            (
                                format!(
                                    "trace {d} event {k} ({}) at {addr:#x}: {} B, but the alloc at event {j} was {size} B",
                                    e.action.as_str(),
                                    e.size
                                ),
                                format!(
                                    "轨迹 {d} 的事件 {k}（{}，{addr:#x}）：{} B，而事件 {j} 的 alloc 是 {size} B",
                                    e.action.as_str(),
                                    e.size
                                ),
                            )
                        });
                    }
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod event_tests {
    use super::super::tests::ev;
    use super::*;

    #[test]
    fn a_free_of_another_size_a_missing_size_and_an_unknown_action_are_flagged() {
        const M: u64 = 1 << 20;
        let snap = Snapshot {
            layout: "dict",
            protocol: 4,
            blocks_have_addresses: true,
            segments: Vec::new(),
            device_traces: vec![vec![
                ev("segment_alloc", 100 * M, 20 * M),
                ev("alloc", 100 * M, 4 * M),
                ev("free_completed", 100 * M, M),
                ev("alloc", 104 * M, 0),
                ev("rewind", 0, 0),
                ev("alloc", 108 * M, 2 * M),
                ev("free_requested", 108 * M, 2 * M),
                ev("free_completed", 108 * M, 2 * M),
            ]],
            allocator_settings: std::collections::BTreeMap::new(),
            frames: Default::default(),
        };
        let mut w = Warnings::default();
        check_events(&snap, &mut w);
        let (en, zh) = w.finish();
        assert_eq!(
            en,
            vec![
                "trace 0 event 2 (free_completed) at 0x6400000: 1048576 B, but the alloc at event 1 was 4194304 B",
                "trace 0 event 3 (alloc): size is 0 or missing, counted as 0 B",
                "trace 0 event 4: unknown action \"rewind\"; it is not replayed",
            ]
        );
        assert_eq!(zh.len(), 3);
    }
}
