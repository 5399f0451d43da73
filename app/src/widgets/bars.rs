//! Labelled bar charts: grouped horizontal bars on a linear or logarithmic axis, and stacked
//! bars with a colour per part — each with its legend above the data, its axis and ticks
//! below, the value written at every bar's end, and every bar explaining itself on hover. Text
//! sizes follow the theme (larger on slides).

use egui::{Color32, FontId, Pos2, Rect, Sense, Stroke, Vec2};

use super::format_number;
use super::marks;
use super::palette::{GREY, text_on};

/// A series of a chart: its name in the legend and its colour.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Name in the legend (may hold combining marks: x̂).
    pub name: String,
    /// Fill colour.
    pub colour: Color32,
}

/// One bar of a [`grouped_bars`] chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    /// Index into the chart's series (its colour and legend entry).
    pub series: usize,
    /// Length, in the axis's unit. On a logarithmic axis a value ≤ 0 draws no bar, only its
    /// text at the axis's start.
    pub value: f64,
    /// A whisker from `.0` to `.1` (e.g. the fastest and slowest run), in the axis's unit.
    pub range: Option<(f64, f64)>,
    /// Written at the bar's end (the value with its unit, "exactly 0", …).
    pub text: String,
}

/// A named group of bars (one row per bar).
#[derive(Debug, Clone, PartialEq)]
pub struct BarGroup {
    /// Written left of the group (may hold combining marks).
    pub name: String,
    /// Its bars, top to bottom.
    pub bars: Vec<Bar>,
}

/// The axis of a [`grouped_bars`] chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// From 0, ticks at 1, 2 or 5 × 10ⁿ.
    Linear,
    /// Decades (values spanning several powers of ten), ticks at 10ⁿ.
    Log,
}

/// Body and small text sizes of `ui`'s theme, points.
fn sizes(ui: &egui::Ui) -> (f32, f32) {
    let s = ui.style();
    let body = egui::TextStyle::Body.resolve(s).size;
    (
        body,
        egui::TextStyle::Small.resolve(s).size.max(body * 0.85),
    )
}

fn text_width(p: &egui::Painter, s: &str, size: f32) -> f32 {
    p.layout_no_wrap(
        marks::resolve(s).text,
        FontId::proportional(size),
        Color32::WHITE,
    )
    .size()
    .x
}

/// A legend outside the data: a swatch and a name per series, wrapped into rows (an entry
/// wraps whole).
pub fn legend(ui: &mut egui::Ui, series: &[Series]) {
    let (body, _) = sizes(ui);
    ui.horizontal_wrapped(|ui| {
        let font = egui::TextStyle::Body.resolve(ui.style());
        for s in series {
            // One entry wraps as a whole: a swatch never ends a row without its name. (In a
            // wrapping row `available_width` is the whole row's; measure what is left.)
            let name_w = text_width(ui.painter(), &s.name, font.size);
            let entry = body + ui.spacing().item_spacing.x + name_w;
            if ui.max_rect().right() - ui.cursor().min.x < entry {
                ui.end_row();
            }
            ui.horizontal(|ui| {
                let (r, _) = ui.allocate_exact_size(Vec2::splat(body * 0.9), Sense::hover());
                ui.painter().rect_filled(r.shrink(1.0), 2.0, s.colour);
                marks::label(ui, &s.name);
            });
            ui.add_space(8.0);
        }
    });
}

/// Tick values and labels for the axis from `lo` to `hi` (log: exponents of ten, labelled as
/// the log-log plots label them).
fn ticks(scale: Scale, lo: f64, hi: f64) -> Vec<(f64, String)> {
    match scale {
        Scale::Log => {
            let (a, b) = (lo.floor() as i32, hi.ceil() as i32);
            let every = ((b - a) / 8 + 1).max(1);
            let plain = super::log_log_plot::plain_axis(&(f64::from(a)..=f64::from(b)));
            (a..=b)
                .filter(|e| (e - a) % every == 0)
                .map(|e| {
                    let v = f64::from(e);
                    (v, super::log_log_plot::log_label(v, plain))
                })
                .collect()
        }
        Scale::Linear => {
            let span = (hi - lo).max(f64::MIN_POSITIVE);
            let raw = span / 5.0;
            let mag = 10f64.powf(raw.log10().floor());
            let step = [1.0, 2.0, 5.0, 10.0]
                .into_iter()
                .map(|m| m * mag)
                .find(|s| span / s <= 6.0)
                .unwrap_or(10.0 * mag);
            let mut out = Vec::new();
            let mut t = 0.0;
            while t <= hi + step * 1e-9 {
                out.push((t, format_number(t)));
                t += step;
            }
            out
        }
    }
}

/// Grouped horizontal bars: `groups` top to bottom, each bar coloured by its series, on a
/// `scale` axis labelled `axis` (name and unit). The legend sits above the bars, outside the
/// data; a bar's text sits at its end.
pub fn grouped_bars(
    ui: &mut egui::Ui,
    groups: &[BarGroup],
    series: &[Series],
    scale: Scale,
    axis: &str,
) {
    legend(ui, series);
    let (body, small) = sizes(ui);
    let bar_h = (body * 1.2).round();
    let gap = 3.0;
    let group_gap = 8.0;
    let rows: usize = groups.iter().map(|g| g.bars.len()).sum();
    let axis_h = small * 2.6 + body * 1.4;
    let height =
        rows as f32 * (bar_h + gap) + groups.len().saturating_sub(1) as f32 * group_gap + axis_h;
    let width = ui.available_width().max(240.0);
    let (rect, resp) = ui.allocate_exact_size(Vec2::new(width, height), Sense::hover());
    let p = ui.painter_at(rect);
    let text = ui.visuals().text_color();
    let name_w = groups
        .iter()
        .map(|g| text_width(&p, &g.name, body))
        .fold(0.0, f32::max)
        .min(width * 0.3)
        + 10.0;
    let value_w = groups
        .iter()
        .flat_map(|g| &g.bars)
        .map(|b| text_width(&p, &b.text, small))
        .fold(0.0, f32::max)
        + 10.0;
    let x0 = rect.left() + name_w;
    let x1 = (rect.right() - value_w).max(x0 + 40.0);
    // The axis's extent, in axis units (log: exponents).
    let pos = |v: f64| v > 0.0 && v.is_finite();
    let all = || {
        groups.iter().flat_map(|g| &g.bars).flat_map(|b| {
            std::iter::once(b.value).chain(b.range.into_iter().flat_map(|(a, c)| [a, c]))
        })
    };
    let (lo, hi) = match scale {
        Scale::Log => {
            let l = all().filter(|v| pos(*v)).map(f64::log10);
            let (lo, hi) = l.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(v), b.max(v))
            });
            // A decade of room under the smallest bar, so it has a visible length.
            if lo.is_finite() {
                (lo.floor() - 1.0, hi.ceil().max(lo.floor() + 1.0))
            } else {
                (0.0, 1.0)
            }
        }
        Scale::Linear => (0.0, all().fold(0.0, f64::max).max(f64::MIN_POSITIVE)),
    };
    let x_of = |v: f64| -> Option<f32> {
        let t = match scale {
            Scale::Log if pos(v) => (v.log10() - lo) / (hi - lo),
            Scale::Log => return None,
            Scale::Linear => (v - lo) / (hi - lo),
        };
        Some(x0 + (x1 - x0) * t.clamp(0.0, 1.0) as f32)
    };
    let mut y = rect.top();
    let mut hover = None;
    for (gi, g) in groups.iter().enumerate() {
        if gi > 0 {
            y += group_gap;
        }
        let group_h = g.bars.len() as f32 * (bar_h + gap) - gap;
        let name_font = FontId::proportional(body);
        let max_w = name_w - 10.0;
        let resolved = marks::resolve(&g.name);
        if p.layout_no_wrap(resolved.text.clone(), name_font.clone(), text)
            .size()
            .x
            <= max_w
        {
            marks::text(
                &p,
                Pos2::new(rect.left(), y + group_h / 2.0),
                egui::Align2::LEFT_CENTER,
                &g.name,
                name_font,
                text,
            );
        } else {
            super::fitted_text(
                &p,
                Pos2::new(rect.left(), y + group_h / 2.0),
                egui::Align2::LEFT_CENTER,
                &marks::plain(&g.name),
                name_font,
                text,
                max_w,
            );
        }
        for b in &g.bars {
            let colour = series.get(b.series).map_or(GREY, |s| s.colour);
            let end = x_of(b.value);
            let bar = Rect::from_min_max(
                Pos2::new(x0, y),
                Pos2::new(end.unwrap_or(x0).max(x0 + 1.0), y + bar_h),
            );
            if end.is_some() {
                p.rect_filled(bar, 2.0, colour);
            }
            if let Some((a, c)) = b.range
                && let (Some(xa), Some(xc)) = (x_of(a), x_of(c))
            {
                let mid = y + bar_h / 2.0;
                let s = Stroke::new(1.5, text);
                p.line_segment([Pos2::new(xa, mid), Pos2::new(xc, mid)], s);
                for x in [xa, xc] {
                    p.line_segment([Pos2::new(x, mid - 4.0), Pos2::new(x, mid + 4.0)], s);
                }
            }
            let after = b.range.and_then(|r| x_of(r.1)).unwrap_or(bar.right());
            marks::text(
                &p,
                Pos2::new(after.max(bar.right()) + 5.0, y + bar_h / 2.0),
                egui::Align2::LEFT_CENTER,
                &b.text,
                FontId::proportional(small),
                text,
            );
            if resp.hover_pos().is_some_and(|h| {
                h.y >= y && h.y <= y + bar_h && h.x >= rect.left() && h.x <= rect.right()
            }) {
                let name = series.get(b.series).map_or("", |s| s.name.as_str());
                hover = Some(format!(
                    "{} · {}: {}",
                    marks::plain(&g.name),
                    marks::plain(name),
                    marks::plain(&b.text)
                ));
            }
            y += bar_h + gap;
        }
        y -= gap;
    }
    // The axis: a line, ticks with their labels, the title under them.
    let ay = y + 4.0;
    let span = match scale {
        Scale::Log => (lo, hi),
        Scale::Linear => (0.0, hi),
    };
    let at: Vec<(f32, String)> = ticks(scale, span.0, span.1)
        .into_iter()
        .map(|(t, label)| {
            let x = x0 + (x1 - x0) * ((t - lo) / (hi - lo)).clamp(0.0, 1.0) as f32;
            (x, label)
        })
        .collect();
    let fonts = (small, body);
    x_axis(&p, &at, (x0, x1), ay, Some(rect.top()), axis, fonts, text);
    if let Some(h) = hover {
        resp.on_hover_text(h);
    }
}

/// One bar of a [`stacked_bars`] chart: its parts left to right.
#[derive(Debug, Clone, PartialEq)]
pub struct StackedBar {
    /// Written left of the bar (may hold combining marks).
    pub name: String,
    /// (series, amount in the chart's unit) per part, left to right.
    pub parts: Vec<(usize, f64)>,
    /// Written at the bar's end (the total, its share …).
    pub text: String,
}

/// Stacked horizontal bars on one linear scale from 0, one colour per series (legend above,
/// outside the data). A part wide enough is labelled inside with its series name and amount,
/// else with its amount alone, else after the bar ("+ RNG seed 8 B"; and on hover). `amount` writes an
/// amount with its unit; `axis` names the axis and its unit.
pub fn stacked_bars(
    ui: &mut egui::Ui,
    bars: &[StackedBar],
    series: &[Series],
    amount: &dyn Fn(f64) -> String,
    axis: &str,
) {
    legend(ui, series);
    let (body, small) = sizes(ui);
    let bar_h = (body * 1.9).round();
    let gap = 5.0;
    let axis_h = small * 2.6 + body * 1.4;
    let width = ui.available_width().max(240.0);
    let height = bars.len() as f32 * (bar_h + gap) + axis_h;
    let (rect, resp) = ui.allocate_exact_size(Vec2::new(width, height), Sense::hover());
    let p = ui.painter_at(rect);
    let text = ui.visuals().text_color();
    let name_w = bars
        .iter()
        .map(|b| text_width(&p, &b.name, body))
        .fold(0.0, f32::max)
        .min(width * 0.35)
        + 10.0;
    let x0 = rect.left() + name_w;
    let max = bars
        .iter()
        .map(|b| b.parts.iter().map(|x| x.1).sum::<f64>())
        .fold(0.0, f64::max)
        .max(f64::MIN_POSITIVE);
    let series_name = |s: usize| series.get(s).map_or("", |s| s.name.as_str());
    // Whether a part can hold at least its amount at `scale` points per unit.
    let fits = |v: f64, scale: f64| text_width(&p, &amount(v), small) + 6.0 <= (v * scale) as f32;
    // Parts too narrow for a label are named after the bar instead ("+ RNG seed 8 B"; the
    // series name without its parenthesis), so every part is labelled somewhere. The scale
    // depends on the room those texts leave: measured at the scale without them, then again.
    let end_texts = |scale: f64| -> Vec<String> {
        bars.iter()
            .map(|b| {
                let mut t = b.text.clone();
                for (s, v) in &b.parts {
                    if !fits(*v, scale) {
                        let name = series_name(*s);
                        let short = name.split(" (").next().unwrap_or(name);
                        let short = short.split('（').next().unwrap_or(short);
                        let more = format!("{t}  + {} {}", marks::plain(short), amount(*v));
                        // At most a third of the width: the bars keep the rest.
                        if text_width(&p, &more, small) > width / 3.0 {
                            break;
                        }
                        t = more;
                    }
                }
                t
            })
            .collect()
    };
    let scale_for = |texts: &[String]| {
        let value_w = texts
            .iter()
            .map(|t| text_width(&p, t, small))
            .fold(0.0, f32::max)
            + 10.0;
        let x1 = (rect.right() - value_w).max(x0 + 40.0);
        f64::from(x1 - x0) / max
    };
    let plain_texts: Vec<String> = bars.iter().map(|b| b.text.clone()).collect();
    let ends = end_texts(scale_for(&plain_texts));
    let scale = scale_for(&ends);
    let x1 = x0 + (max * scale) as f32;
    let mut hover = None;
    for (i, b) in bars.iter().enumerate() {
        let y = rect.top() + i as f32 * (bar_h + gap);
        super::fitted_text(
            &p,
            Pos2::new(rect.left(), y + bar_h / 2.0),
            egui::Align2::LEFT_CENTER,
            &marks::plain(&b.name),
            FontId::proportional(body),
            text,
            name_w - 10.0,
        );
        let mut x = x0;
        for (s, v) in &b.parts {
            let w = (*v * scale) as f32;
            let seg = Rect::from_min_size(Pos2::new(x, y), Vec2::new(w.max(1.0), bar_h));
            let colour = series.get(*s).map_or(GREY, |s| s.colour);
            p.rect_filled(seg, 0.0, colour);
            p.rect_stroke(
                seg,
                0.0,
                Stroke::new(1.0, ui.visuals().panel_fill),
                egui::StrokeKind::Inside,
            );
            let name = series.get(*s).map_or("", |s| s.name.as_str());
            let a = amount(*v);
            let on = text_on(colour);
            let both = format!("{} {a}", marks::plain(name));
            for label in [both.as_str(), a.as_str()] {
                if text_width(&p, label, small) + 6.0 <= w {
                    p.text(
                        seg.center(),
                        egui::Align2::CENTER_CENTER,
                        label,
                        FontId::proportional(small),
                        on,
                    );
                    break;
                }
            }
            if resp.hover_pos().is_some_and(|h| seg.contains(h)) {
                hover = Some(format!(
                    "{} · {}: {a}",
                    marks::plain(&b.name),
                    marks::plain(name)
                ));
            }
            x += w;
        }
        p.text(
            Pos2::new(x.max(x0) + 6.0, y + bar_h / 2.0),
            egui::Align2::LEFT_CENTER,
            ends.get(i).unwrap_or(&b.text),
            FontId::proportional(small),
            text,
        );
    }
    let ay = rect.top() + bars.len() as f32 * (bar_h + gap);
    let at: Vec<(f32, String)> = ticks(Scale::Linear, 0.0, max)
        .into_iter()
        .map(|(t, label)| (x0 + (t / max * f64::from(x1 - x0)) as f32, label))
        .collect();
    x_axis(&p, &at, (x0, x1), ay, None, axis, (small, body), text);
    if let Some(h) = hover {
        resp.on_hover_text(h);
    }
}

/// A bar chart's value axis at height `ay` from `x0` to `x1`: the line, a tick and its label at
/// each `(x, label)` of `at` (with a faint grid line up to `grid_top` when given), and the axis
/// title under them. `fonts` = (tick label size, title size).
#[allow(clippy::too_many_arguments)] // one per part of the axis
fn x_axis(
    p: &egui::Painter,
    at: &[(f32, String)],
    (x0, x1): (f32, f32),
    ay: f32,
    grid_top: Option<f32>,
    axis: &str,
    (small, body): (f32, f32),
    text: Color32,
) {
    p.line_segment(
        [Pos2::new(x0, ay), Pos2::new(x1, ay)],
        Stroke::new(1.0, text),
    );
    for (x, label) in at {
        let x = *x;
        p.line_segment(
            [Pos2::new(x, ay), Pos2::new(x, ay + 4.0)],
            Stroke::new(1.0, text),
        );
        if let Some(top) = grid_top {
            p.line_segment(
                [Pos2::new(x, top), Pos2::new(x, ay)],
                Stroke::new(0.5, GREY.gamma_multiply(0.35)),
            );
        }
        p.text(
            Pos2::new(x, ay + 5.0),
            egui::Align2::CENTER_TOP,
            label,
            FontId::proportional(small),
            text,
        );
    }
    marks::text(
        p,
        Pos2::new((x0 + x1) / 2.0, ay + 7.0 + small * 1.3),
        egui::Align2::CENTER_TOP,
        axis,
        FontId::proportional(body),
        text,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_ticks_step_by_one_two_or_five() {
        // 0..96: steps of 10 would make ten ticks; 20 makes five: 0, 20, …, 80.
        let t = ticks(Scale::Linear, 0.0, 96.0);
        let v: Vec<f64> = t.iter().map(|x| x.0).collect();
        assert_eq!(v, [0.0, 20.0, 40.0, 60.0, 80.0]);
        // 0..0.7: steps of 0.1 would make eight ticks; 0.2 makes four: 0, 0.2, 0.4, 0.6.
        let t = ticks(Scale::Linear, 0.0, 0.7);
        assert_eq!(t.len(), 4);
    }

    #[test]
    fn log_ticks_are_decades_thinned_past_eight() {
        let t = ticks(Scale::Log, -16.0, -3.0);
        // 13 decades: every second one, from 10⁻¹⁶.
        assert_eq!(t.first().map(|x| x.1.as_str()), Some("10⁻¹⁶"));
        assert_eq!(t.len(), 7);
        assert_eq!(ticks(Scale::Log, -8.0, -6.0).len(), 3);
    }
}
