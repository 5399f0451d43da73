//! Stacked ledger bars: one bar per variant, one segment per kernel or stage.

use crate::trf;
use egui::{Pos2, Rect, Sense, Stroke, StrokeKind, Vec2};

/// One bar of a [`ledger_bars`] chart: a flow (e.g. "unfused") and its parts (kernel, amount).
#[derive(Debug, Clone, PartialEq)]
pub struct LedgerBar {
    /// Name of the bar.
    pub name: String,
    /// Its segments in order: (label, amount in `unit`).
    pub parts: Vec<(String, f64)>,
}

/// Stacked horizontal bars on one scale, one per flow, each segment a kernel (or stage) with its
/// amount; labels sit inside segments wide enough, and every segment explains itself on hover.
pub fn ledger_bars(ui: &mut egui::Ui, bars: &[LedgerBar], unit: &str) {
    let max = bars
        .iter()
        .map(|b| b.parts.iter().map(|p| p.1).sum::<f64>())
        .fold(0.0, f64::max);
    if max <= 0.0 {
        return;
    }
    // One colour per part name, the same in every bar (a kernel both flows run is one
    // colour), each named once in the legend below.
    let mut names: Vec<&str> = Vec::new();
    for bar in bars {
        for (label, _) in &bar.parts {
            if !names.contains(&label.as_str()) {
                names.push(label);
            }
        }
    }
    let colour_of = |label: &str| {
        super::palette::series_colour(names.iter().position(|n| *n == label).unwrap_or(0))
    };
    let series: Vec<super::Series> = names
        .iter()
        .map(|n| super::Series {
            name: (*n).to_owned(),
            colour: colour_of(n),
        })
        .collect();
    let width = ui.available_width().max(200.0);
    let name_w = 110.0;
    // Room right of the longest bar for the widest total ("11.51 × scores tensor").
    let total_font = crate::theme::label_font(ui.ctx(), 12.0);
    let total_w = bars
        .iter()
        .map(|b| {
            let total: f64 = b.parts.iter().map(|x| x.1).sum();
            let t = format!("{} {unit}", crate::widgets::format_number(total));
            super::marks::text_width(ui, &t, &total_font)
        })
        .fold(60.0, f32::max);
    let bar_h = 26.0;
    let text = ui.visuals().text_color();
    for bar in bars {
        let (rect, resp) = ui.allocate_exact_size(Vec2::new(width, bar_h + 6.0), Sense::hover());
        let p = ui.painter_at(rect);
        super::marks::text(
            &p,
            Pos2::new(rect.left(), rect.center().y),
            egui::Align2::LEFT_CENTER,
            &bar.name,
            crate::theme::label_font(ui.ctx(), 12.0),
            text,
        );
        let total: f64 = bar.parts.iter().map(|x| x.1).sum();
        let scale = f64::from((width - name_w - total_w - 12.0).max(40.0)) / max;
        let mut x = rect.left() + name_w;
        let mut hovered = None;
        for (label, v) in &bar.parts {
            let colour = colour_of(label);
            let w = (*v * scale) as f32;
            let seg =
                Rect::from_min_size(Pos2::new(x, rect.top() + 3.0), Vec2::new(w.max(1.0), bar_h));
            p.rect_filled(seg, 0.0, colour);
            p.rect_stroke(
                seg,
                0.0,
                Stroke::new(1.0, ui.visuals().panel_fill),
                StrokeKind::Inside,
            );
            // The amount where it fits (the legend below names the colour); measured, not
            // estimated from the character count.
            let font = crate::theme::label_font(ui.ctx(), 10.5);
            let amount = crate::widgets::format_number(*v);
            let fits = |t: &str| super::marks::text_width(ui, t, &font) + 4.0 < w;
            let shown = Some(amount.as_str()).filter(|t| fits(t));
            if let Some(t) = shown {
                super::marks::text(
                    &p,
                    seg.center(),
                    egui::Align2::CENTER_CENTER,
                    t,
                    font.clone(),
                    super::palette::text_on(colour),
                );
            }
            if resp.hover_pos().is_some_and(|h| seg.contains(h)) {
                let label = super::marks::plain(label);
                hovered = Some(trf!(
                    ui,
                    "{label}: {} {unit} ({:.1}% of {})",
                    "{label}：{} {unit}（占 {2} 的 {1:.1}%）",
                    crate::widgets::format_number(*v),
                    100.0 * v / total.max(f64::MIN_POSITIVE),
                    bar.name
                ));
            }
            x += w;
        }
        p.text(
            Pos2::new(x + 6.0, rect.center().y),
            egui::Align2::LEFT_CENTER,
            format!("{} {unit}", crate::widgets::format_number(total)),
            crate::theme::label_font(ui.ctx(), 12.0),
            text,
        );
        if let Some(h) = hovered {
            resp.on_hover_text(h);
        }
    }
    super::legend(ui, &series);
}
