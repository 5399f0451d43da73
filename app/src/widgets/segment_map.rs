//! The segment map: caching-allocator segments as rows of blocks (allocated, rounding, pending
//! free, free), with its legend and totals.

use super::gantt::fitted_text;
use super::palette::{BLUE, ORANGE, VERMILLION};
use crate::i18n::tr;
use crate::trf;
use egui::{Color32, Pos2, Rect, Sense, Stroke, StrokeKind, Vec2};

/// What a block of a [`segment_map`] holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockUse {
    /// Handed to a tensor.
    Allocated,
    /// Freed by the program but not yet reusable (PyTorch's `active_pending_free`).
    PendingFree,
    /// Cached free.
    Free,
}

/// A block of a [`MapSegment`], relative to its segment.
#[derive(Debug, Clone, PartialEq)]
pub struct MapBlock {
    /// Offset from the segment's start (bytes).
    pub offset: u64,
    /// Size (bytes).
    pub size: u64,
    /// Bytes asked for (0 = unknown); `size − requested` of an allocated block is rounding loss.
    pub requested: u64,
    /// State.
    pub state: BlockUse,
}

/// A segment (one `cudaMalloc`) of a [`segment_map`].
#[derive(Debug, Clone, PartialEq)]
pub struct MapSegment {
    /// Address (bytes).
    pub address: u64,
    /// Size (bytes).
    pub size: u64,
    /// Pool or kind, e.g. "small" / "large".
    pub pool: String,
    /// Blocks in address order.
    pub blocks: Vec<MapBlock>,
}

/// Colour of allocated bytes in the segment map.
pub const MAP_ALLOCATED: Color32 = BLUE;

/// Colour of rounding loss (allocated but not requested).
pub const MAP_ROUNDING: Color32 = VERMILLION;

/// Colour of pending-free blocks.
pub const MAP_PENDING: Color32 = ORANGE;

fn map_free_colour(ui: &egui::Ui) -> Color32 {
    if ui.visuals().dark_mode {
        Color32::from_gray(70)
    } else {
        Color32::from_gray(215)
    }
}

/// Bytes as MiB (2²⁰ bytes), KiB below 1 MiB, B below 1 KiB, in four significant digits with
/// thousands grouped ([`super::format_number`]: "12,336 MiB", "1.5 MiB", "16 KiB", "512 B").
pub fn mib_text(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{} MiB", super::format_number(bytes as f64 / 1_048_576.0))
    } else if bytes >= 1024 {
        format!("{} KiB", super::format_number(bytes as f64 / 1024.0))
    } else {
        format!("{bytes} B")
    }
}

/// Sums of a group of segments: (allocated requested, rounding loss, pending, free, unknown).
#[derive(Default, Clone, Copy)]
struct Totals {
    used: u64,
    rounding: u64,
    pending: u64,
    free: u64,
}

fn totals(segs: &[MapSegment]) -> Totals {
    let mut t = Totals::default();
    for b in segs.iter().flat_map(|s| &s.blocks) {
        match b.state {
            BlockUse::Allocated => {
                let req = if b.requested == 0 {
                    b.size
                } else {
                    b.requested.min(b.size)
                };
                t.used += req;
                t.rounding += b.size - req;
            }
            BlockUse::PendingFree => t.pending += b.size,
            BlockUse::Free => t.free += b.size,
        }
    }
    t
}

/// The legend of a [`segment_map`].
pub fn segment_map_legend(ui: &mut egui::Ui) {
    let free = map_free_colour(ui);
    ui.horizontal_wrapped(|ui| {
        for (c, name) in [
            (
                MAP_ALLOCATED,
                tr(ui, "allocated (bytes asked for)", "已分配（申请的字节）"),
            ),
            (
                MAP_ROUNDING,
                tr(
                    ui,
                    "rounding loss (block size − bytes asked for)",
                    "取整损失（块大小 − 申请的字节）",
                ),
            ),
            (MAP_PENDING, tr(ui, "pending free", "待释放")),
            (free, tr(ui, "cached free", "缓存中空闲")),
        ] {
            let (r, _) = ui.allocate_exact_size(Vec2::new(14.0, 14.0), Sense::hover());
            ui.painter().rect_filled(r, 2.0, c);
            ui.label(name);
            ui.add_space(8.0);
        }
    });
}

/// A segment map: one row per segment, its bar as wide as its bytes (on one scale for all rows),
/// blocks coloured allocated / rounding loss / pending free / cached free; hover names the
/// segment and block (address, size, state). With more than `max_rows` segments, consecutive
/// segments share a row and the row shows their totals — the map says so above itself.
pub fn segment_map(ui: &mut egui::Ui, segments: &[MapSegment], max_rows: usize) {
    if segments.is_empty() {
        ui.label(tr(ui, "No segments.", "没有段。"));
        return;
    }
    let max_rows = max_rows.max(1);
    let per_row = segments.len().div_ceil(max_rows);
    let groups: Vec<&[MapSegment]> = segments.chunks(per_row).collect();
    if per_row > 1 {
        ui.colored_label(
            ui.visuals().warn_fg_color,
            trf!(
                ui,
                "{} segments: detail is aggregated — each row sums up to {per_row} consecutive segments (allocated, rounding loss, pending and free bytes in that order), not their block layout.",
                "{} 个段：细节已汇总 — 每行是最多 {per_row} 个相邻段的合计（依次为已分配、取整损失、待释放和空闲字节），不是它们的块布局。",
                segments.len()
            ),
        );
    }
    segment_map_legend(ui);
    let free_col = map_free_colour(ui);
    let scale_bytes = groups
        .iter()
        .map(|g| g.iter().map(|s| s.size).sum::<u64>())
        .max()
        .unwrap_or(1)
        .max(1);
    let width = ui.available_width().max(300.0);
    let label_w = 190.0;
    let row_h = if groups.len() > 30 { 13.0 } else { 18.0 };
    let (rect, resp) = ui.allocate_exact_size(
        Vec2::new(width, row_h * groups.len() as f32 + 4.0),
        Sense::hover(),
    );
    let p = ui.painter_at(rect);
    let text = ui.visuals().text_color();
    let bar_w = width - label_w - 80.0;
    let px = |bytes: u64| (bytes as f64 / scale_bytes as f64 * f64::from(bar_w)) as f32;
    let hover = resp.hover_pos();
    let mut hovered: Option<String> = None;
    let font = crate::theme::label_font(ui.ctx(), if row_h < 16.0 { 9.5 } else { 11.0 });
    for (r, group) in groups.iter().enumerate() {
        let y = rect.top() + r as f32 * row_h;
        let left = rect.left() + label_w;
        let group_bytes: u64 = group.iter().map(|s| s.size).sum();
        let label = match group {
            [one] => trf!(
                ui,
                "{:#x} · {}",
                "{:#x} · {}池",
                one.address,
                pool_name(ui, &one.pool)
            ),
            _ => trf!(
                ui,
                "segments {}–{} ({})",
                "段 {}–{}（{} 个）",
                r * per_row,
                r * per_row + group.len() - 1,
                group.len()
            ),
        };
        fitted_text(
            &p,
            Pos2::new(rect.left() + 2.0, y + row_h * 0.5),
            egui::Align2::LEFT_CENTER,
            &label,
            font.clone(),
            text,
            label_w - 6.0,
        );
        let whole = Rect::from_min_size(
            Pos2::new(left, y + 1.5),
            Vec2::new(px(group_bytes).max(1.0), row_h - 3.0),
        );
        p.rect_filled(whole, 0.0, free_col);
        if let [seg] = group {
            for b in &seg.blocks {
                let x0 = left + px(b.offset);
                // A block in use stays visible however small beside its segment (a 1 KiB block
                // in a 2 MiB segment is under a tenth of a point wide).
                let w = if matches!(b.state, BlockUse::Free) {
                    px(b.size).max(0.5)
                } else {
                    px(b.size).max(2.0)
                };
                let r0 =
                    Rect::from_min_size(Pos2::new(x0, whole.top()), Vec2::new(w, whole.height()));
                match b.state {
                    BlockUse::Allocated => {
                        let req = if b.requested == 0 {
                            b.size
                        } else {
                            b.requested.min(b.size)
                        };
                        p.rect_filled(r0, 0.0, MAP_ALLOCATED);
                        if b.size > req {
                            let lw = px(b.size - req).max(0.5);
                            p.rect_filled(
                                Rect::from_min_max(
                                    Pos2::new(r0.right() - lw, r0.top()),
                                    r0.right_bottom(),
                                ),
                                0.0,
                                MAP_ROUNDING,
                            );
                        }
                    }
                    BlockUse::PendingFree => {
                        p.rect_filled(r0, 0.0, MAP_PENDING);
                    }
                    BlockUse::Free => {}
                }
                if w >= 2.0 {
                    p.line_segment(
                        [r0.left_top(), r0.left_bottom()],
                        Stroke::new(0.5, ui.visuals().panel_fill),
                    );
                }
                if hover.is_some_and(|h| r0.contains(h)) {
                    let state = match b.state {
                        BlockUse::Allocated if b.requested > 0 => trf!(
                            ui,
                            "allocated: {} asked for, {} rounding loss",
                            "已分配：申请 {}，取整损失 {}",
                            mib_text(b.requested.min(b.size)),
                            mib_text(b.size.saturating_sub(b.requested))
                        ),
                        BlockUse::Allocated => tr(
                            ui,
                            "allocated (bytes asked for not recorded)",
                            "已分配（没有记录申请的字节）",
                        )
                        .to_owned(),
                        BlockUse::PendingFree => tr(ui, "pending free", "待释放").to_owned(),
                        BlockUse::Free => tr(ui, "cached free", "缓存中空闲").to_owned(),
                    };
                    hovered = Some(trf!(
                        ui,
                        "segment {:#x} ({}, {} pool)\nblock at {:#x} (+{}): {} = {} B\n{state}",
                        "段 {:#x}（{}，{}池）\n块地址 {:#x}（+{}）：{} = {} B\n{state}",
                        seg.address,
                        mib_text(seg.size),
                        pool_name(ui, &seg.pool),
                        seg.address.saturating_add(b.offset),
                        mib_text(b.offset),
                        mib_text(b.size),
                        b.size
                    ));
                }
            }
        } else {
            let t = totals(group);
            let mut x = left;
            for (bytes, c) in [
                (t.used, MAP_ALLOCATED),
                (t.rounding, MAP_ROUNDING),
                (t.pending, MAP_PENDING),
            ] {
                let w = px(bytes);
                p.rect_filled(
                    Rect::from_min_size(Pos2::new(x, whole.top()), Vec2::new(w, whole.height())),
                    0.0,
                    c,
                );
                x += w;
            }
            if hover.is_some_and(|h| whole.contains(h)) {
                hovered = Some(trf!(
                    ui,
                    "segments {}–{} ({} segments, aggregated): {} reserved\nallocated {} + rounding loss {} + pending free {} + cached free {}",
                    "段 {}–{}（{} 个段，汇总）：保留 {}\n已分配 {} + 取整损失 {} + 待释放 {} + 缓存中空闲 {}",
                    r * per_row,
                    r * per_row + group.len() - 1,
                    group.len(),
                    mib_text(group_bytes),
                    mib_text(t.used),
                    mib_text(t.rounding),
                    mib_text(t.pending),
                    mib_text(t.free)
                ));
            }
        }
        p.rect_stroke(
            whole,
            0.0,
            Stroke::new(0.8, text.gamma_multiply(0.6)),
            StrokeKind::Inside,
        );
        p.text(
            Pos2::new(whole.right() + 6.0, y + row_h * 0.5),
            egui::Align2::LEFT_CENTER,
            mib_text(group_bytes),
            font.clone(),
            text,
        );
    }
    if let Some(h) = hovered {
        resp.on_hover_text(h);
    }
}

/// A segment's pool as the file or the simulator names it (`large`, `small`), in the language
/// of `ui`; any other name as it is.
fn pool_name<'a>(ui: &egui::Ui, pool: &'a str) -> &'a str {
    match pool {
        "large" => tr(ui, "large", "大"),
        "small" => tr(ui, "small", "小"),
        other => other,
    }
}
