//! A Gantt chart of blocks over steps (the static memory plan).

use super::palette::{GREY, ORANGE, text_on};
use crate::trf;
use egui::{Color32, FontId, Pos2, Rect, Sense, Stroke, Vec2};

/// Draws `text` anchored at `pos`, cut with "…" to at most `max_w` points wide (nothing when not
/// even one character fits).
pub fn fitted_text(
    p: &egui::Painter,
    pos: Pos2,
    anchor: egui::Align2,
    text: &str,
    font: FontId,
    colour: Color32,
    max_w: f32,
) {
    let chars: Vec<char> = text.chars().collect();
    let mut n = chars.len();
    loop {
        let s: String = if n == chars.len() {
            text.to_owned()
        } else {
            format!("{}…", chars[..n].iter().collect::<String>())
        };
        let galley = p.layout_no_wrap(s, font.clone(), colour);
        if galley.size().x <= max_w {
            let r = anchor.anchor_size(pos, galley.size());
            p.galley(r.min, galley, colour);
            return;
        }
        if n <= 1 {
            return;
        }
        n -= 1;
    }
}

/// A bar of a [`gantt`] row: something that lives from step `first` to step `last` (inclusive).
#[derive(Debug, Clone, PartialEq)]
pub struct GanttBar {
    /// Name drawn inside the bar (when it fits).
    pub name: String,
    /// First step (inclusive).
    pub first: usize,
    /// Last step (inclusive).
    pub last: usize,
    /// Fill colour.
    pub colour: Color32,
    /// Shown on hover (e.g. the size).
    pub hover: String,
}

/// A row of a [`gantt`] chart.
#[derive(Debug, Clone, PartialEq)]
pub struct GanttRow {
    /// Label at the row's left (e.g. "block 1 · 8 BLH").
    pub label: String,
    /// Its bars (they should not overlap in time).
    pub bars: Vec<GanttBar>,
}

/// A Gantt chart: x = steps `1..=steps` (one column each), one row per entry of `rows`, bars
/// with their names inside; `marked` steps get a shaded column. Every bar explains itself on
/// hover.
pub fn gantt(ui: &mut egui::Ui, rows: &[GanttRow], steps: usize, marked: &[usize]) {
    let steps = steps.max(1);
    let width = ui.available_width().max(300.0);
    let label_w = 200.0;
    let row_h = 30.0;
    let head_h = 18.0;
    let (rect, resp) = ui.allocate_exact_size(
        Vec2::new(width, head_h + row_h * rows.len() as f32 + 4.0),
        Sense::hover(),
    );
    let p = ui.painter_at(rect);
    let text = ui.visuals().text_color();
    let col_w = (width - label_w - 8.0) / steps as f32;
    let x_of = |step: usize| rect.left() + label_w + (step.saturating_sub(1)) as f32 * col_w;
    for s in 1..=steps {
        let col = Rect::from_min_size(
            Pos2::new(x_of(s), rect.top()),
            Vec2::new(col_w, rect.height()),
        );
        if marked.contains(&s) {
            p.rect_filled(col, 0.0, ORANGE.gamma_multiply(0.18));
        }
        p.line_segment(
            [col.left_top(), col.left_bottom()],
            Stroke::new(0.5, GREY.gamma_multiply(0.5)),
        );
        p.text(
            Pos2::new(col.center().x, rect.top() + head_h * 0.5),
            egui::Align2::CENTER_CENTER,
            trf!(ui, "step {s}", "第 {s} 步"),
            crate::theme::label_font(ui.ctx(), 10.5),
            text,
        );
    }
    let mut hovered = None;
    for (r, row) in rows.iter().enumerate() {
        let y = rect.top() + head_h + r as f32 * row_h;
        fitted_text(
            &p,
            Pos2::new(rect.left() + 2.0, y + row_h * 0.5),
            egui::Align2::LEFT_CENTER,
            &row.label,
            crate::theme::label_font(ui.ctx(), 11.5),
            text,
            label_w - 6.0,
        );
        p.line_segment(
            [
                Pos2::new(rect.left() + label_w, y + row_h),
                Pos2::new(rect.right(), y + row_h),
            ],
            Stroke::new(0.5, GREY.gamma_multiply(0.4)),
        );
        for b in &row.bars {
            let first = b.first.clamp(1, steps);
            let last = b.last.clamp(first, steps);
            let bar = Rect::from_min_max(
                Pos2::new(x_of(first) + 2.0, y + 4.0),
                Pos2::new(x_of(last) + col_w - 2.0, y + row_h - 4.0),
            );
            p.rect_filled(bar, 4.0, b.colour);
            fitted_text(
                &p,
                bar.center(),
                egui::Align2::CENTER_CENTER,
                &b.name,
                crate::theme::label_font(ui.ctx(), 12.0),
                text_on(b.colour),
                bar.width() - 6.0,
            );
            if resp.hover_pos().is_some_and(|h| bar.contains(h)) {
                hovered = Some(b.hover.clone());
            }
        }
    }
    if let Some(h) = hovered {
        resp.on_hover_text(h);
    }
}
