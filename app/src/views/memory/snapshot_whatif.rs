//! The what-if replay in the `memory-snapshot` view: the trace replayed under the scene's
//! allocator settings ([`warpscope_core::torch::snapshot::whatif`]) beside the recorded run —
//! reserved (peak and final), cached free at the end (what fragmentation and caching hold
//! back), segments created and out-of-memory events, as bars and a table.

use warpscope_core::torch::snapshot::{SnapshotOutput, WhatIf};

use crate::i18n::tr;
use crate::trf;
use crate::widgets::{self, Bar, BarGroup, Scale, Series, mib_text};
use warpscope_core::torch::snapshot::SnapshotRun;

/// The recorded run's figures beside a what-if replay's.
struct Figures {
    reserved_peak: u64,
    reserved_final: u64,
    cached_free: u64,
    segments: u64,
    ooms: u64,
}

fn recorded(run: &SnapshotRun) -> Figures {
    let o = &run.output;
    let count = |a: &str| o.trace_actions.get(a).copied().unwrap_or(0) as u64;
    Figures {
        reserved_peak: run
            .timelines
            .iter()
            .map(|t| t.peak_reserved())
            .fold(0, u64::saturating_add)
            .max(o.reserved_bytes),
        reserved_final: o.reserved_bytes,
        cached_free: o.reserved_bytes.saturating_sub(o.allocated_bytes),
        segments: count("segment_alloc"),
        ooms: count("oom"),
    }
}

fn replayed(w: &WhatIf) -> Figures {
    Figures {
        reserved_peak: w.reserved_peak_bytes,
        reserved_final: w.reserved_final_bytes,
        cached_free: w.fragmentation_final_bytes,
        segments: w.segments_created,
        ooms: w.ooms,
    }
}

/// The settings as one line.
fn settings_line(ui: &egui::Ui, w: &WhatIf) -> String {
    let s = &w.settings;
    let divisions = match s.roundup_power2_divisions.iter().max() {
        Some(&d) if d > 1 => {
            if s.roundup_power2_divisions.iter().all(|&x| x == d) {
                d.to_string()
            } else {
                tr(ui, "per interval", "分区间设置").to_owned()
            }
        }
        _ => tr(ui, "off", "关").to_owned(),
    };
    let on_off = |b: bool| {
        if b {
            tr(ui, "on", "开")
        } else {
            tr(ui, "off", "关")
        }
    };
    let from_file = if s.from_file.is_empty() {
        String::new()
    } else {
        trf!(
            ui,
            "; from the file: {}",
            "；取自文件：{}",
            s.from_file.join(", ")
        )
    };
    trf!(
        ui,
        "expandable_segments {} · max_split_size_mb {} · roundup_power2_divisions {} · garbage_collection_threshold {} · device memory {}{}",
        "expandable_segments {} · max_split_size_mb {} · roundup_power2_divisions {} · garbage_collection_threshold {} · 设备显存 {}{}",
        on_off(s.expandable_segments),
        // A file may record a limit that is no whole MiB (1 B): shown in bytes, not as 0.
        match (s.max_split_size_mb, s.max_split_size_bytes) {
            (Some(_), Some(b)) if b % (1 << 20) != 0 => format!("{b} B"),
            (Some(m), _) => m.to_string(),
            (None, _) => tr(ui, "unlimited", "不限").to_owned(),
        },
        divisions,
        if s.garbage_collection_threshold > 0.0 && s.device_memory_mib.is_none() {
            trf!(
                ui,
                "{} (no effect: it needs a device memory limit)",
                "{}（不起作用：需要设备显存上限）",
                s.garbage_collection_threshold
            )
        } else if s.garbage_collection_threshold > 0.0 {
            s.garbage_collection_threshold.to_string()
        } else {
            tr(ui, "off", "关").to_owned()
        },
        s.device_memory_mib.map_or_else(
            || tr(ui, "unlimited", "不限").to_owned(),
            |m| format!("{m} MiB")
        ),
        from_file
    )
}

/// Draws the what-if section (nothing for a file without a trace).
pub fn show(ui: &mut egui::Ui, run: &SnapshotRun) {
    let o: &SnapshotOutput = &run.output;
    let Some(w) = o.whatif.as_ref() else {
        return;
    };
    if o.trace_events == 0 {
        return;
    }
    ui.label(
        egui::RichText::new(tr(
            ui,
            "What-if: the trace replayed under other allocator settings",
            "假设：换一组分配器设置重放轨迹",
        ))
        .strong(),
    );
    ui.add(egui::Label::new(egui::RichText::new(settings_line(ui, w)).small()).wrap());
    let (rec, what) = (recorded(run), replayed(w));
    // A trace that starts mid-run: the replay, from an empty allocator, lacks what was live
    // before it, so even the file's own settings reserve less than the recorded run; the
    // replay under the file's settings is the baseline a what-if compares with.
    let mid_run = !o.trace_starts_empty;
    if mid_run {
        let before = run.timelines.first().map_or(0, |t| t.start_allocated);
        ui.add(
            egui::Label::new(
                egui::RichText::new(trf!(
                    ui,
                    "This trace starts mid-run: {} were live before its first event, which a replay from an empty allocator does not hold. Even with the file's own settings the replay reserves {} at its peak against the recorded {}: compare a what-if with that replay (the middle bars), not with the recorded run.",
                    "这条轨迹从运行中途开始：第一个事件之前已有 {} 存活，从空分配器开始的重放没有这些。即使用文件自己的设置，重放的保留峰值也只有 {}，而录下的是 {}：请把假设与这次重放（中间的横条）比较，而不是与录下的运行比较。",
                    mib_text(before),
                    mib_text(o.replay_reserved_peak_bytes),
                    mib_text(rec.reserved_peak)
                ))
                .color(ui.visuals().warn_fg_color),
            )
            .wrap(),
        );
    }
    let mut series = vec![Series {
        name: tr(ui, "recorded run (the file)", "录下的运行（文件）").to_owned(),
        colour: widgets::GREY,
    }];
    if mid_run {
        series.push(Series {
            name: tr(ui, "replay, the file's settings", "重放，文件的设置").to_owned(),
            colour: widgets::ORANGE,
        });
    }
    series.push(Series {
        name: tr(ui, "what-if replay", "假设的重放").to_owned(),
        colour: widgets::BLUE,
    });
    let what_series = series.len() - 1;
    let bar = |series: usize, bytes: u64| Bar {
        series,
        value: warpscope_core::memory::mib(bytes),
        range: None,
        text: mib_text(bytes),
    };
    let groups = [
        (
            tr(ui, "reserved, peak", "保留，峰值"),
            rec.reserved_peak,
            Some(o.replay_reserved_peak_bytes),
            what.reserved_peak,
        ),
        (
            tr(ui, "reserved, final", "保留，最终"),
            rec.reserved_final,
            Some(o.replay_reserved_final_bytes),
            what.reserved_final,
        ),
        (
            tr(ui, "cached free at the end", "最终缓存中的空闲"),
            rec.cached_free,
            None,
            what.cached_free,
        ),
    ]
    .map(|(name, a, baseline, b)| BarGroup {
        name: name.to_owned(),
        bars: std::iter::once(bar(0, a))
            .chain(baseline.filter(|_| mid_run).map(|x| bar(1, x)))
            .chain(std::iter::once(bar(what_series, b)))
            .collect(),
    });
    widgets::grouped_bars(ui, &groups, &series, Scale::Linear, "MiB");
    egui::Grid::new("snapshot-whatif")
        .num_columns(3)
        .striped(true)
        .show(ui, |ui| {
            ui.label("");
            ui.strong(tr(ui, "recorded", "录下的"));
            ui.strong(tr(ui, "what-if", "假设"));
            ui.end_row();
            ui.label(tr(
                ui,
                "segments created (recorded: segment_alloc events)",
                "新建的段（录下的：segment_alloc 事件）",
            ));
            ui.label(rec.segments.to_string());
            ui.label(what.segments.to_string());
            ui.end_row();
            ui.label(tr(ui, "out of memory", "显存不足"));
            ui.label(rec.ooms.to_string());
            let text = what.ooms.to_string();
            if what.ooms > 0 {
                ui.colored_label(widgets::VERMILLION, text);
            } else {
                ui.label(text);
            }
            ui.end_row();
        });
    ui.add(
        egui::Label::new(
            egui::RichText::new(tr(
                ui,
                "The replay feeds the trace's alloc and free_completed events to the simulator; with the file's own settings its figures are the replay's below. An alloc that does not fit under the device limit even after the cache is freed counts as out of memory and is skipped. Garbage collection runs only under a device limit, as PyTorch collects only under a memory fraction.",
                "重放把轨迹里的 alloc 和 free_completed 事件交给模拟器；用文件自己的设置时，数字与下面的重放相同。在设备上限下释放缓存后仍放不下的 alloc 记为显存不足并跳过。垃圾回收只在设了设备上限时运行，正如 PyTorch 只在设了显存比例时回收。",
            ))
            .small()
            .italics(),
        )
        .wrap(),
    );
}
