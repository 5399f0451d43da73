//! The stepper's current event in the kernel lab: the warp's lanes, the bank grid of a shared
//! request, the sectors of a global one, and the butterfly of a run of `subgroupShuffleXor`s —
//! the shared widgets fed the event's plain data.

use warpscope_core::simt::shared::BankConfig;
use warpscope_core::simt::shuffle::{ShuffleMode, Source};
use warpscope_core::simt::trace::Event;
use warpscope_core::simt::{EventKind, Trace};

use crate::i18n::tr;
use crate::trf;
use crate::widgets::{self, LaneCell};

/// The lane cells of `e`: values, active lanes, stores highlighted, shuffle sources.
fn lane_cells(e: &Event) -> Vec<LaneCell> {
    e.lanes
        .iter()
        .map(|l| LaneCell {
            value: l.value,
            active: l.active,
            highlight: l.active
                && matches!(
                    e.kind,
                    EventKind::SharedStore { .. } | EventKind::GlobalStore { .. }
                ),
            source: match l.source {
                Some(Source::Lane(s)) => Some(s),
                _ => None,
            },
        })
        .collect()
}

/// Draws event `e` of warp `w` (at timeline position `pos`).
pub fn show(
    ui: &mut egui::Ui,
    trace: &Trace,
    timeline: &[(usize, usize)],
    pos: usize,
    w: usize,
    e: &Event,
) {
    let active = e.lanes.iter().filter(|l| l.active).count();
    ui.label(
        egui::RichText::new(trf!(
            ui,
            "Event {pos} of {}: warp {w}, {} ({active} of {} lanes active)",
            "第 {pos} 个事件（共 {} 个）：线程束 {w}，{}（{} 个线程中 {active} 个活跃）",
            timeline.len(),
            e.kind.short(),
            e.lanes.len()
        ))
        .strong(),
    );
    if !e.label.en.is_empty() {
        widgets::marks::label(ui, crate::i18n::pick(ui, &e.label));
    }
    widgets::lane_strip(ui, &lane_cells(e));
    match e.kind {
        EventKind::SharedLoad { width } | EventKind::SharedStore { width } => {
            let addrs: Vec<Option<u64>> = e
                .lanes
                .iter()
                .map(|l| l.address.filter(|_| l.active))
                .collect();
            // Core's figures for the request; the grid lays its lanes on the banks.
            let (wf, ideal) = (
                e.metrics.wavefronts.unwrap_or(0),
                e.metrics.ideal_wavefronts.unwrap_or(0),
            );
            ui.label(
                egui::RichText::new(trf!(
                    ui,
                    "Shared-memory request: {wf} wavefront(s), ideal {ideal}{}",
                    "共享内存请求：{wf} 轮，理想 {ideal}{}",
                    e.metrics
                        .conflict_degree
                        .filter(|d| *d > 1)
                        .map_or(String::new(), |d| trf!(
                            ui,
                            " — {d}-way bank conflict",
                            " — {d} 路 bank 冲突"
                        ))
                ))
                .strong(),
            );
            if let Ok(cost) = BankConfig::default().request(&addrs, width) {
                widgets::bank_grid(ui, &cost, 32);
            }
        }
        EventKind::GlobalLoad { .. } | EventKind::GlobalStore { .. } | EventKind::Atomic { .. } => {
            if let (Some(s), Some(i)) = (e.metrics.sectors, e.metrics.ideal_sectors) {
                ui.label(trf!(
                    ui,
                    "Global request: {s} sector(s) of 32 bytes, ideal {i}{}",
                    "全局内存请求：{s} 个 32 字节扇区，理想 {i}{}",
                    if s > i {
                        tr(ui, " — not coalesced", " — 未合并")
                    } else {
                        ""
                    }
                ));
            }
            if let Some(c) = e.metrics.contention.filter(|c| *c > 1) {
                ui.label(trf!(
                    ui,
                    "Atomic: up to {c} lanes update one address (serialised)",
                    "原子操作：最多 {c} 个线程更新同一地址（串行执行）"
                ));
            }
        }
        EventKind::Shuffle { .. } => butterfly(ui, trace, w, e),
        EventKind::Barrier { index } => {
            ui.label(trf!(
                ui,
                "Warp {w} arrives at barrier #{index}: it waits until every warp of the workgroup has (below).",
                "线程束 {w} 到达第 {index} 个屏障：它要等工作组里的每个线程束都到达（见下）。"
            ));
        }
        EventKind::Compute => {}
    }
}

/// The butterfly of the run of `subgroupShuffleXor`s `e` belongs to in warp `w`: row k holds
/// the value each lane gave to shuffle k+1 (read off where the lanes of that shuffle took their
/// values from), so each line joins a lane to its partner `lane ^ mask`. Other shuffles draw as
/// the lane strip's arrows above.
fn butterfly(ui: &mut egui::Ui, trace: &Trace, w: usize, e: &Event) {
    let EventKind::Shuffle {
        mode: ShuffleMode::Xor,
        ..
    } = e.kind
    else {
        return;
    };
    let Some(events) = trace.warps.get(w).map(|wt| &wt.events) else {
        return;
    };
    let Some(here) = events.iter().position(|x| x.seq == e.seq) else {
        return;
    };
    let is_xor = |x: &Event| {
        matches!(
            x.kind,
            EventKind::Shuffle {
                mode: ShuffleMode::Xor,
                ..
            }
        )
    };
    // The run: consecutive xor shuffles of this warp (its other events end it).
    let mut start = here;
    while start > 0 && events.get(start - 1).is_some_and(is_xor) {
        start -= 1;
    }
    let mut end = here;
    while events.get(end + 1).is_some_and(is_xor) {
        end += 1;
    }
    let run = &events[start..=end];
    if run.len() < 2 {
        return;
    }
    let given = |x: &Event| {
        let mut v = vec![f64::NAN; x.lanes.len()];
        for l in &x.lanes {
            if let (Some(Source::Lane(s)), Some(val)) = (l.source, l.value)
                && let Some(slot) = v.get_mut(s as usize)
            {
                *slot = val;
            }
        }
        v
    };
    let rows: Vec<Option<Vec<f64>>> = run.iter().map(|x| Some(given(x))).collect();
    let masks: Vec<u32> = run
        .iter()
        .filter_map(|x| match x.kind {
            EventKind::Shuffle { arg, .. } => Some(arg),
            _ => None,
        })
        .take(run.len() - 1)
        .collect();
    ui.label(
        egui::RichText::new(trf!(
            ui,
            "Butterfly of warp {w}: the value each lane gives to each subgroupShuffleXor (masks {})",
            "线程束 {w} 的蝶形交换：每次 subgroupShuffleXor 时各线程交出的值（掩码 {}）",
            run.iter()
                .filter_map(|x| match x.kind {
                    EventKind::Shuffle { arg, .. } => Some(arg.to_string()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join(", ")
        ))
        .strong(),
    );
    widgets::butterfly(
        ui,
        &rows,
        &masks,
        Some(here - start),
        trace.warp_size as usize,
        false,
    );
}
