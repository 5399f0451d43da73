//! The lane strip: one cell per lane of a warp, its value and whether it is active.

use super::palette::{BLUE, GREY, ORANGE};
use crate::i18n::tr;
use crate::trf;
use egui::{Color32, FontId, Pos2, Rect, Sense, Stroke, Vec2};

/// One lane in a [`lane_strip`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LaneCell {
    /// Value the lane holds (None = nothing recorded / inactive).
    pub value: Option<f64>,
    /// Whether the lane took part.
    pub active: bool,
    /// Drawn in the highlight colour (e.g. lane 0 storing).
    pub highlight: bool,
    /// For shuffles: the lane it read from.
    pub source: Option<u32>,
}

pub(super) fn short_value(v: f64) -> String {
    if v.is_nan() {
        "undef".into()
    } else if v != 0.0 && v.abs() < 0.01 {
        format!("{v:.0e}")
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// A row of lanes with their values; for shuffles, an arrow from each lane's source.
pub fn lane_strip(ui: &mut egui::Ui, lanes: &[LaneCell]) {
    let n = lanes.len().max(1);
    let width = ui.available_width().max(200.0);
    let has_arrows = lanes.iter().any(|l| l.source.is_some());
    let h = if has_arrows { 86.0 } else { 46.0 };
    let (rect, resp) = ui.allocate_exact_size(Vec2::new(width, h), Sense::hover());
    let p = ui.painter_at(rect);
    let w = width / n as f32;
    let text = ui.visuals().text_color();
    let font = FontId::proportional((w * 0.32).clamp(7.0, 12.0));
    let box_top = rect.bottom() - 34.0;
    for (i, l) in lanes.iter().enumerate() {
        let x = rect.left() + i as f32 * w;
        let cell = Rect::from_min_size(Pos2::new(x + 1.0, box_top), Vec2::new(w - 2.0, 30.0));
        let fill = if !l.active {
            GREY.gamma_multiply(0.3)
        } else if l.highlight {
            ORANGE
        } else {
            BLUE.gamma_multiply(0.8)
        };
        p.rect_filled(cell, 2.0, fill);
        p.text(
            cell.center_top() + Vec2::new(0.0, 7.0),
            egui::Align2::CENTER_CENTER,
            i.to_string(),
            FontId::proportional(8.0),
            Color32::WHITE,
        );
        if let Some(v) = l.value {
            p.text(
                cell.center_bottom() - Vec2::new(0.0, 9.0),
                egui::Align2::CENTER_CENTER,
                short_value(v),
                font.clone(),
                Color32::WHITE,
            );
        }
        if let Some(s) = l.source
            && s as usize != i
        {
            let from = Pos2::new(rect.left() + (s as f32 + 0.5) * w, rect.top() + 4.0);
            let to = Pos2::new(x + 0.5 * w, box_top - 2.0);
            p.line_segment([from, to], Stroke::new(1.0, text.gamma_multiply(0.5)));
        }
    }
    if has_arrows {
        p.text(
            rect.left_top(),
            egui::Align2::LEFT_TOP,
            tr(
                ui,
                "lines: the lane each value came from",
                "连线：每个值来自哪个线程",
            ),
            FontId::proportional(10.0),
            text,
        );
    }
    if let Some(pos) = resp.hover_pos() {
        let i = ((pos.x - rect.left()) / w) as usize;
        if let Some(l) = lanes.get(i) {
            let from = l.source.map_or(String::new(), |s| {
                trf!(ui, " (from lane {s})", "（来自线程 {s}）")
            });
            resp.on_hover_text(trf!(
                ui,
                "lane {i}: {}{from}",
                "线程 {i}：{}{from}",
                l.value.map_or("—".into(), |v| format!("{v}")),
            ));
        }
    }
}
