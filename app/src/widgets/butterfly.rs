//! The butterfly: a warp reduction tree filling level by level (`shfl_xor` 16 … 1).

use super::lanes::short_value;
use super::palette::{BLUE, GREY, ORANGE};
use crate::i18n::tr;
use egui::{Color32, FontId, Pos2, Sense, Stroke, Vec2};

/// The butterfly network of a warp sum: row 0 holds the inputs, row `k` the lanes' values
/// after the k-th `shfl_xor` + add, with a line from each lane's partner (`lane ^ masks[k-1]`).
/// Rows that have not happened yet are `None`; `current` is emphasised.
pub fn butterfly(
    ui: &mut egui::Ui,
    rows: &[Option<Vec<f64>>],
    masks: &[u32],
    current: Option<usize>,
) {
    let n = rows
        .iter()
        .flatten()
        .map(Vec::len)
        .max()
        .unwrap_or(32)
        .max(1);
    let width = ui.available_width().max(200.0);
    let row_h = 34.0;
    let (rect, _) = ui.allocate_exact_size(
        Vec2::new(width, row_h * rows.len() as f32 + 4.0),
        Sense::hover(),
    );
    let p = ui.painter_at(rect);
    let margin = 44.0;
    let w = (width - margin) / n as f32;
    let text = ui.visuals().text_color();
    let centre = |row: usize, lane: usize| {
        Pos2::new(
            rect.left() + margin + (lane as f32 + 0.5) * w,
            rect.top() + row as f32 * row_h + 12.0,
        )
    };
    for (r, row) in rows.iter().enumerate() {
        if r > 0 && row.is_some() {
            let m = masks.get(r - 1).copied().unwrap_or(0) as usize;
            for lane in 0..n {
                let col = if Some(r) == current {
                    ORANGE
                } else {
                    text.gamma_multiply(0.35)
                };
                p.line_segment(
                    [centre(r - 1, lane ^ m), centre(r, lane)],
                    Stroke::new(1.0, col),
                );
            }
        }
    }
    let font = FontId::proportional((w * 0.3).clamp(6.5, 11.0));
    for (r, row) in rows.iter().enumerate() {
        for lane in 0..n {
            let c = centre(r, lane);
            let rr = (w * 0.42).min(11.0);
            match row {
                Some(vals) => {
                    let fill = if Some(r) == current { ORANGE } else { BLUE };
                    p.circle_filled(c, rr, fill);
                    if let Some(v) = vals.get(lane)
                        && w > 26.0
                    {
                        p.text(
                            c,
                            egui::Align2::CENTER_CENTER,
                            short_value(*v),
                            font.clone(),
                            Color32::WHITE,
                        );
                    }
                }
                None => {
                    p.circle_stroke(c, rr, Stroke::new(1.0, GREY));
                }
            }
        }
        let label = if r == 0 {
            tr(ui, "inputs", "输入").to_owned()
        } else {
            format!("xor {}", masks.get(r - 1).copied().unwrap_or(0))
        };
        p.text(
            Pos2::new(rect.left() + 2.0, centre(r, 0).y),
            egui::Align2::LEFT_CENTER,
            label,
            FontId::proportional(9.0),
            text,
        );
    }
}
