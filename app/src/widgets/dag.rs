//! A dependency graph laid out by level.

use super::palette::{BLUE, ORANGE};
use egui::{Color32, FontId, Pos2, Rect, Sense, Stroke, Vec2};

/// A layered drawing of a dependency graph: `layers[i]` is node i's column (longest path from an
/// input), `reductions[i]` marks reduction nodes (drawn orange), edges are (from, to).
pub fn dag(
    ui: &mut egui::Ui,
    labels: &[String],
    layers: &[usize],
    reductions: &[bool],
    edges: &[(usize, usize)],
) {
    let cols = layers.iter().copied().max().unwrap_or(0) + 1;
    let mut rows_in = vec![0usize; cols];
    let mut slot = vec![0usize; labels.len()];
    for (i, l) in layers.iter().enumerate() {
        slot[i] = rows_in[*l];
        rows_in[*l] += 1;
    }
    let max_rows = rows_in.iter().copied().max().unwrap_or(1).max(1);
    let width = ui.available_width().max(200.0);
    let (rect, _) = ui.allocate_exact_size(
        Vec2::new(width, 30.0 * max_rows as f32 + 10.0),
        Sense::hover(),
    );
    let p = ui.painter_at(rect);
    let cw = width / cols as f32;
    let centre = |i: usize| {
        Pos2::new(
            rect.left() + (layers[i] as f32 + 0.5) * cw,
            rect.top() + 18.0 + 30.0 * slot[i] as f32,
        )
    };
    let text = ui.visuals().text_color();
    for (a, b) in edges {
        if *a < labels.len() && *b < labels.len() {
            p.line_segment(
                [centre(*a), centre(*b)],
                Stroke::new(1.0, text.gamma_multiply(0.4)),
            );
        }
    }
    for (i, l) in labels.iter().enumerate() {
        let c = centre(i);
        let chars = super::marks::resolve(l).text.chars().count();
        let r = Rect::from_center_size(
            c,
            Vec2::new((cw - 8.0).min(7.0 * chars as f32 + 12.0), 20.0),
        );
        p.rect_filled(r, 4.0, if reductions[i] { ORANGE } else { BLUE });
        super::marks::text(
            &p,
            c,
            egui::Align2::CENTER_CENTER,
            l,
            FontId::proportional(10.5),
            Color32::WHITE,
        );
    }
}
