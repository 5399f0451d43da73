//! The butterfly: a warp reduction tree filling level by level (`shfl_xor` 16 … 1).

use super::lanes::{fit_value, short_value};
use super::palette::{BLUE, GREY, ORANGE};
use crate::i18n::tr;
use crate::trf;
use egui::{Color32, Pos2, Rect, Sense, Stroke, Vec2};

/// Lanes at least this wide (points) hold their value inside the circle.
const INSIDE_W: f32 = 26.0;

/// The butterfly network of a warp sum: row 0 holds the inputs, row `k` the lanes' values
/// after the k-th `shfl_xor` + add, with a line from each lane's partner (`lane ^ masks[k-1]`;
/// with `down`, the tree of `shfl_down`: partner `lane + masks[k-1]`, a lane past the end
/// reading its own value).
/// Rows that have not happened yet are `None`; `current` is emphasised. `lanes` is the warp's
/// (or subgroup's) width, drawn while no row has values yet.
///
/// Lanes wider than 26 points write their value inside the circle. Narrower lanes (a small
/// window, a wide parameter panel) write it beside the circle instead — even lanes above, odd
/// lanes below, so each value has two lanes' width — in a smaller font and then with fewer
/// digits; only a value that fits in none of these is left out. Hovering a circle shows its
/// value in full.
pub fn butterfly(
    ui: &mut egui::Ui,
    rows: &[Option<Vec<f64>>],
    masks: &[u32],
    current: Option<usize>,
    lanes: usize,
    down: bool,
) {
    let op = if down { "down" } else { "xor" };
    let n = rows
        .iter()
        .flatten()
        .map(Vec::len)
        .max()
        .unwrap_or(lanes)
        .max(1);
    // Where each lane's partner value comes from (CUDA's rules: a `shfl_down` past the last
    // lane reads the lane's own value).
    let partner = |lane: usize, m: usize| {
        if down {
            Some(lane + m).filter(|p| *p < n).unwrap_or(lane)
        } else {
            lane ^ m
        }
    };
    let width = ui.available_width().max(200.0);
    // Room for the row labels ("xor 16") at the theme's label size.
    let margin = (crate::theme::label_size(ui.ctx(), 9.0) * 4.2).max(44.0);
    let w = (width - margin) / n as f32;
    let rr = (w * 0.42).min(11.0);
    // Values go inside the circles only where a typical one ("-0.23") fits there at the
    // theme's label size; otherwise above and below them.
    let inside_font = crate::theme::label_font(ui.ctx(), (w * 0.3).clamp(6.5, 11.0));
    let inside = w > INSIDE_W
        && ui
            .painter()
            .layout_no_wrap("-0.23".to_owned(), inside_font.clone(), Color32::WHITE)
            .size()
            .x
            <= 2.0 * rr + 1.0;
    // Beside the circles: a band for the labels above and one below each row of circles.
    let label_size = crate::theme::label_size(ui.ctx(), (w * 0.6).clamp(6.5, 9.5));
    let min_label = crate::theme::label_size(ui.ctx(), 6.5);
    let band = if inside { 0.0 } else { label_size * 1.3 };
    let row_h = if inside {
        34.0
    } else {
        2.0 * rr + 2.0 * band + 8.0
    };
    let (rect, resp) = ui.allocate_exact_size(
        Vec2::new(width, row_h * rows.len() as f32 + 4.0),
        Sense::hover(),
    );
    let p = ui.painter_at(rect);
    let text = ui.visuals().text_color();
    let centre = |row: usize, lane: usize| {
        Pos2::new(
            rect.left() + margin + (lane as f32 + 0.5) * w,
            rect.top() + row as f32 * row_h + if inside { 12.0 } else { band + rr + 2.0 },
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
                    [centre(r - 1, partner(lane, m)), centre(r, lane)],
                    Stroke::new(1.0, col),
                );
            }
        }
    }
    let font = inside_font;
    for (r, row) in rows.iter().enumerate() {
        for lane in 0..n {
            let c = centre(r, lane);
            match row {
                Some(vals) => {
                    let fill = if Some(r) == current { ORANGE } else { BLUE };
                    p.circle_filled(c, rr, fill);
                    let Some(v) = vals.get(lane) else { continue };
                    if inside {
                        p.text(
                            c,
                            egui::Align2::CENTER_CENTER,
                            short_value(*v),
                            font.clone(),
                            super::palette::text_on(fill),
                        );
                    } else if let Some((label, f)) =
                        fit_value(&p, *v, 2.0 * w - 2.0, label_size, min_label)
                    {
                        let above = lane % 2 == 0;
                        let at = c + Vec2::new(0.0, if above { -1.0 } else { 1.0 } * (rr + 1.0));
                        let anchor = if above {
                            egui::Align2::CENTER_BOTTOM
                        } else {
                            egui::Align2::CENTER_TOP
                        };
                        let g = p.layout_no_wrap(label, f, text);
                        let mut r = anchor.anchor_size(at, g.size());
                        // The last lanes' values stay inside the widget.
                        r = r.translate(Vec2::new((rect.right() - r.right()).min(0.0), 0.0));
                        // A backing in the panel's colour keeps the value readable over lines.
                        p.rect_filled(r.expand(0.5), 1.0, ui.visuals().panel_fill);
                        p.galley(r.min, g, text);
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
            format!("{op} {}", masks.get(r - 1).copied().unwrap_or(0))
        };
        p.text(
            Pos2::new(rect.left() + 2.0, centre(r, 0).y),
            egui::Align2::LEFT_CENTER,
            label,
            crate::theme::label_font(ui.ctx(), 9.0),
            text,
        );
    }
    if let Some(h) = resp.hover_pos() {
        let lane = ((h.x - rect.left() - margin) / w).floor();
        let r = ((h.y - rect.top()) / row_h).floor();
        if lane >= 0.0 && r >= 0.0 {
            let (lane, r) = (lane as usize, r as usize);
            let hit = Rect::from_center_size(centre(r, lane), Vec2::splat(2.0 * rr + 4.0));
            if let Some(Some(vals)) = rows.get(r)
                && let Some(v) = vals.get(lane)
                && hit.contains(h)
            {
                let level = if r == 0 {
                    tr(ui, "input", "输入").to_owned()
                } else {
                    trf!(
                        ui,
                        "after {op} {}",
                        "{op} {} 之后",
                        masks.get(r - 1).copied().unwrap_or(0)
                    )
                };
                resp.on_hover_text(trf!(
                    ui,
                    "lane {lane}, {level}: {v}",
                    "线程 {lane}，{level}：{v}"
                ));
            }
        }
    }
}
