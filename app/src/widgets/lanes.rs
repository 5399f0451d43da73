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

/// The ways of writing `v`, most precise first: [`short_value`] ("-0.23", "1.41", "12.3"),
/// without the leading zero ("-.23"), one decimal ("-0.2", "1.4"), one decimal without the
/// leading zero ("-.2"), an integer ("12", "1"), a power of ten ("1e3").
pub(super) fn value_forms(v: f64) -> Vec<String> {
    let mut forms = vec![short_value(v)];
    if v.is_finite() {
        let a = v.abs();
        if a < 1.0 {
            forms.push(format!("{v:.2}").replacen("0.", ".", 1));
        }
        if (0.01..10.0).contains(&a) {
            let one = format!("{v:.1}");
            let bare = one.replacen("0.", ".", 1);
            forms.push(one);
            forms.push(bare);
        }
        if a >= 1.0 {
            forms.push(format!("{v:.0}"));
        }
        if a >= 100.0 {
            forms.push(format!("{v:.0e}"));
        }
    }
    // Keep only forms shorter than every one before them: a longer form never helps later.
    let mut out: Vec<String> = Vec::new();
    for f in forms {
        if out
            .last()
            .is_none_or(|l| f.chars().count() < l.chars().count())
        {
            out.push(f);
        }
    }
    out
}

/// The most precise way of writing `v` that fits `max_w` points, at the largest font size from
/// `max_size` down to `min_size` (a form is tried at every size before a shorter one), or
/// `None` when not even the shortest fits at the smallest size.
pub(super) fn fit_value(
    painter: &egui::Painter,
    v: f64,
    max_w: f32,
    max_size: f32,
    min_size: f32,
) -> Option<(String, FontId)> {
    let mut sizes = vec![max_size];
    let mut s = max_size;
    while s - 0.5 >= min_size {
        s -= 0.5;
        sizes.push(s);
    }
    for form in value_forms(v) {
        for &size in &sizes {
            let font = FontId::proportional(size);
            let w = painter
                .layout_no_wrap(form.clone(), font.clone(), Color32::WHITE)
                .size()
                .x;
            if w <= max_w {
                return Some((form, font));
            }
        }
    }
    None
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
    let font_size = crate::theme::label_size(ui.ctx(), (w * 0.32).clamp(7.0, 12.0));
    let min_size = crate::theme::label_size(ui.ctx(), 6.5);
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
        // Inactive lanes are translucent: read against what the fill looks like on the panel.
        let on = super::palette::text_on(super::palette::over(fill, ui.visuals().panel_fill));
        p.text(
            cell.center_top() + Vec2::new(0.0, 7.0),
            egui::Align2::CENTER_CENTER,
            i.to_string(),
            crate::theme::label_font(ui.ctx(), 8.0),
            on,
        );
        // Narrow cells get a smaller font, then fewer digits (the hover has the full value).
        if let Some(v) = l.value
            && let Some((text, font)) = fit_value(&p, v, w - 3.0, font_size, min_size)
        {
            p.text(
                cell.center_bottom() - Vec2::new(0.0, 9.0),
                egui::Align2::CENTER_CENTER,
                text,
                font,
                on,
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
            crate::theme::label_font(ui.ctx(), 10.0),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_forms_shorten_one_step_at_a_time() {
        // Written out by hand: each form strictly shorter than the one before.
        assert_eq!(value_forms(-0.2345), ["-0.23", "-.23", "-.2"]);
        assert_eq!(value_forms(0.33), ["0.33", ".33", ".3"]);
        assert_eq!(value_forms(1.41), ["1.41", "1.4", "1"]);
        assert_eq!(value_forms(12.34), ["12.3", "12"]);
        assert_eq!(value_forms(-1234.0), ["-1234", "-1e3"]);
        assert_eq!(value_forms(f64::NAN), ["undef"]);
    }

    #[test]
    fn fit_value_shrinks_the_font_before_the_digits() {
        let ctx = egui::Context::default();
        let mut out = ctx.run_ui(egui::RawInput::default(), |ui| {
            let p = ui.painter();
            let width = |s: &str, size: f32| {
                p.layout_no_wrap(s.to_owned(), FontId::proportional(size), Color32::WHITE)
                    .size()
                    .x
            };
            // Room for "-0.23" at 9 pt: kept whole, at the largest size.
            let w9 = width("-0.23", 9.0);
            let (t, f) = fit_value(p, -0.2345, w9, 9.0, 6.5).expect("fits");
            assert_eq!((t.as_str(), f.size), ("-0.23", 9.0));
            // Room for "-0.23" only at 7 pt: the font shrinks, the digits stay.
            let (t, f) = fit_value(p, -0.2345, width("-0.23", 7.0), 9.0, 6.5).expect("fits");
            assert_eq!((t.as_str(), f.size), ("-0.23", 7.0));
            // Not even at 6.5 pt: one digit less.
            let (t, _) = fit_value(p, -0.2345, width("-.23", 6.5), 9.0, 6.5).expect("fits");
            assert_eq!(t, "-.23");
            // Nothing fits in one point.
            assert!(fit_value(p, -0.2345, 1.0, 9.0, 6.5).is_none());
        });
        out.textures_delta.clear();
    }
}
