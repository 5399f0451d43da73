//! `memory-allocator` on the user's own trace (`--input`): reserved and allocated after every
//! op, the op the stepper stands on (its rounding, pool, block and new segment) and the segment
//! map right after it.

use egui_plot::{Legend, Line, VLine};
use warpscope_core::memory::allocator::trace::{self, TraceRun};
use warpscope_core::memory::allocator::{Pool, Served};

use super::{MAP_ROWS, mib, plot_base, sim_segments};
use crate::i18n::tr;
use crate::trf;
use crate::views::ViewContext;
use crate::widgets::stepper::figure_mode;
use crate::widgets::{self, MapSegment, bytes_text};

/// The segment map of the last drawing, keyed by (run, op).
#[derive(Debug, Clone, Default)]
pub struct MapCache {
    key: Option<(u64, usize)>,
    segments: Vec<MapSegment>,
}

fn pool_name(ui: &egui::Ui, p: Pool) -> &'static str {
    match p {
        Pool::Small => tr(ui, "small", "小"),
        Pool::Large => tr(ui, "large", "大"),
    }
}

fn served_text(ui: &egui::Ui, s: Option<Served>) -> &'static str {
    match s {
        None => tr(
            ui,
            "freed: the block goes back to the cache (merged with free neighbours in its segment)",
            "释放：块回到缓存（和同一段里空闲的邻居合并）",
        ),
        Some(Served::Reused) => tr(ui, "a cached free block, whole", "缓存里的空闲块，整块"),
        Some(Served::ReusedSplit) => tr(ui, "a cached free block, split", "缓存里的空闲块，切开"),
        Some(Served::NewSegment) => tr(ui, "a new segment (cudaMalloc)", "新段（cudaMalloc）"),
        Some(Served::NewSegmentAfterRelease) => tr(
            ui,
            "a new segment after releasing the cached ones",
            "释放缓存的段之后的新段",
        ),
    }
}

/// Draws the replayed trace.
pub fn draw(ui: &mut egui::Ui, r: &TraceRun, map: &mut MapCache, cx: &mut ViewContext<'_>) {
    let o = &r.output;
    ui.label(
        egui::RichText::new(trf!(
            ui,
            "Your trace: {} ops on a {} device. At the end: reserved {} ({} B), allocated {} ({} B), {} segments, largest cached free block {}; peaks: reserved {}, allocated {}.",
            "你的 trace：{} 个操作，设备显存 {}。结束时：保留 {}（{} B），已分配 {}（{} B），{} 个段，缓存里最大的空闲块 {}；峰值：保留 {}，已分配 {}。",
            o.per_step.len(),
            bytes_text(o.device_memory_bytes),
            bytes_text(o.final_reserved),
            o.final_reserved,
            bytes_text(o.final_allocated),
            o.final_allocated,
            o.segments.len(),
            bytes_text(o.largest_free_block),
            bytes_text(o.peak_reserved),
            bytes_text(o.peak_allocated)
        ))
        .strong(),
    );
    if let Some((i, why)) = &o.oom {
        ui.colored_label(
            ui.visuals().error_fg_color,
            trf!(
                ui,
                "Out of memory at trace[{i}] — the replay stopped there: {why}",
                "在 trace[{i}] 显存不足，重放到此为止：{why}"
            ),
        );
    }
    let n = o.per_step.len();
    if n == 0 {
        return;
    }
    let last = n - 1;
    let pos = cx.stepper.pos.min(last);
    if !figure_mode(ui.ctx()) {
        ui.horizontal(|ui| {
            if ui
                .button("<")
                .on_hover_text(tr(ui, "previous op", "上一个操作"))
                .clicked()
            {
                cx.stepper.pos = pos.saturating_sub(1);
            }
            if ui
                .button(">")
                .on_hover_text(tr(ui, "next op", "下一个操作"))
                .clicked()
            {
                cx.stepper.pos = (pos + 1).min(last);
            }
            let l = ui.label(tr(ui, "op shown", "当前显示的操作"));
            let mut p = pos;
            if ui
                .add(egui::Slider::new(&mut p, 0..=last).clamping(egui::SliderClamping::Always))
                .labelled_by(l.id)
                .changed()
            {
                cx.stepper.pos = p;
            }
        });
    }
    let pos = cx.stepper.pos.min(last);
    ui.label(
        egui::RichText::new(tr(
            ui,
            "Reserved and allocated after each op, MiB (2²⁰ bytes)",
            "每个操作之后保留的和已分配的显存，MiB（2²⁰ 字节）",
        ))
        .strong(),
    );
    let names = [
        tr(ui, "reserved (Σ segments)", "保留（各段之和）"),
        tr(
            ui,
            "allocated (Σ allocated blocks)",
            "已分配（已分配块之和）",
        ),
        tr(ui, "op shown", "当前显示的操作"),
    ];
    let series = |f: &dyn Fn(&trace::TraceStep) -> u64| -> Vec<[f64; 2]> {
        o.per_step
            .iter()
            .enumerate()
            .map(|(i, s)| [i as f64, mib(f(s))])
            .collect()
    };
    plot_base("memory-allocator-trace", 220.0)
        .legend(
            Legend::default()
                .position(egui_plot::Corner::LeftTop)
                .follow_insertion_order(true),
        )
        .x_axis_label(tr(ui, "op (index into trace)", "操作（trace 的下标）"))
        .y_axis_label("MiB")
        .include_y(0.0)
        .include_y(mib(o.peak_reserved) * 1.15)
        .show(ui, |pu| {
            pu.line(
                Line::new(names[0], series(&|s| s.reserved))
                    .color(widgets::VERMILLION)
                    .width(2.0),
            );
            pu.line(
                Line::new(names[1], series(&|s| s.allocated))
                    .color(widgets::BLUE)
                    .width(2.0),
            );
            pu.vline(
                VLine::new(names[2], pos as f64)
                    .color(widgets::ORANGE)
                    .width(2.0),
            );
        });
    let Some(s) = o.per_step.get(pos) else { return };
    let new_segment = if s.new_segment_bytes > 0 {
        trf!(
            ui,
            "; new segment {}",
            "；新段 {}",
            bytes_text(s.new_segment_bytes)
        )
    } else {
        String::new()
    };
    ui.label(
        egui::RichText::new(trf!(
            ui,
            "trace[{pos}]: {} \"{}\" {} B → rounded {} B, {} pool, block {} B{new_segment} — {}. Reserved {} B, allocated {} B.",
            "trace[{pos}]：{} \"{}\" {} B → 取整 {} B，{}池，块 {} B{new_segment} — {}。保留 {} B，已分配 {} B。",
            s.op,
            s.name,
            s.bytes,
            s.rounded,
            pool_name(ui, s.pool),
            s.block_size,
            served_text(ui, s.served),
            s.reserved,
            s.allocated
        ))
        .strong(),
    );
    ui.label(tr(
        ui,
        "Segment map right after this op (one row per segment, blocks in address order):",
        "这个操作之后的段图（每段一行，块按地址排列）：",
    ));
    if map.key != Some((r.id, pos)) {
        *map = MapCache {
            key: Some((r.id, pos)),
            segments: sim_segments(&trace::segments_after(&r.trace, pos)),
        };
    }
    widgets::segment_map(ui, &map.segments, MAP_ROWS);
}
