//! Reusable views fed plain data: the lane strip, the butterfly (reduction tree) and the bank
//! grid. Colours are the Okabe–Ito palette, safe for colour-blind readers.

use egui::{Color32, FontId, Pos2, Rect, Sense, Stroke, StrokeKind, Vec2};
use warpscope_core::simt::shared::SharedCost;

use crate::i18n::tr;
use crate::trf;

/// Okabe–Ito blue: active lanes.
pub const BLUE: Color32 = Color32::from_rgb(0, 114, 178);
/// Okabe–Ito orange: highlighted lanes / the current step.
pub const ORANGE: Color32 = Color32::from_rgb(230, 159, 0);
/// Okabe–Ito vermillion: conflicts.
pub const VERMILLION: Color32 = Color32::from_rgb(213, 94, 0);
/// Okabe–Ito bluish green: conflict-free.
pub const GREEN: Color32 = Color32::from_rgb(0, 158, 115);
/// Inactive lanes.
pub const GREY: Color32 = Color32::from_gray(150);

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

fn short_value(v: f64) -> String {
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

/// The bank × word grid of one shared-memory request: columns are the 32 banks, rows the
/// 128-byte lines the request touches; each touched word shows the lanes that read it, red
/// where its bank must serve more than one distinct word (a conflict), green otherwise.
pub fn bank_grid(ui: &mut egui::Ui, cost: &SharedCost, banks: u32) {
    let banks = banks.max(1) as usize;
    let mut words: Vec<(u64, Vec<usize>)> = Vec::new();
    for (lane, w) in cost.lane_word.iter().enumerate() {
        if let Some(w) = w {
            match words.iter_mut().find(|(x, _)| x == w) {
                Some((_, lanes)) => lanes.push(lane),
                None => words.push((*w, vec![lane])),
            }
        }
    }
    let mut lines: Vec<u64> = words.iter().map(|(w, _)| w / banks as u64).collect();
    lines.sort_unstable();
    lines.dedup();
    let shown_lines = lines.len().min(32);
    let width = ui.available_width().max(200.0);
    let cw = width / (banks as f32 + 2.5);
    let ch = 18.0;
    let (rect, resp) = ui.allocate_exact_size(
        Vec2::new(width, ch * (shown_lines as f32 + 1.0) + 4.0),
        Sense::hover(),
    );
    let p = ui.painter_at(rect);
    let text = ui.visuals().text_color();
    let left = rect.left() + 2.5 * cw;
    for b in 0..banks {
        p.text(
            Pos2::new(left + (b as f32 + 0.5) * cw, rect.top() + ch * 0.5),
            egui::Align2::CENTER_CENTER,
            b.to_string(),
            FontId::proportional(9.0),
            text,
        );
    }
    let mut per_bank = vec![0usize; banks];
    for (w, _) in &words {
        per_bank[(*w % banks as u64) as usize] += 1;
    }
    for (row, line) in lines.iter().take(shown_lines).enumerate() {
        let y = rect.top() + ch * (row as f32 + 1.0);
        p.text(
            Pos2::new(rect.left(), y + ch * 0.5),
            egui::Align2::LEFT_CENTER,
            trf!(ui, "word {}", "字 {}", line * banks as u64),
            FontId::proportional(9.0),
            text,
        );
        for b in 0..banks {
            let cell = Rect::from_min_size(Pos2::new(left + b as f32 * cw, y), Vec2::new(cw, ch));
            p.rect_stroke(
                cell,
                0.0,
                Stroke::new(0.5, GREY.gamma_multiply(0.5)),
                StrokeKind::Inside,
            );
            let word = line * banks as u64 + b as u64;
            if let Some((_, lanes)) = words.iter().find(|(w, _)| *w == word) {
                let col = if per_bank[b] > 1 { VERMILLION } else { GREEN };
                p.rect_filled(cell.shrink(1.0), 2.0, col);
                let label = if lanes.len() == 1 {
                    lanes[0].to_string()
                } else {
                    format!("{}×", lanes.len())
                };
                p.text(
                    cell.center(),
                    egui::Align2::CENTER_CENTER,
                    label,
                    FontId::proportional(9.0),
                    Color32::WHITE,
                );
            }
        }
    }
    if lines.len() > shown_lines {
        ui.label(trf!(
            ui,
            "… {} more 128-byte lines not drawn",
            "… 另有 {} 行（每行 128 字节）没有画出",
            lines.len() - shown_lines
        ));
    }
    let hover = tr(
        ui,
        "Columns: banks (4-byte words, bank = word mod 32). A cell: a word the request reads, labelled with its lane (or n× when n lanes share it — a broadcast). Red: that bank serves more than one distinct word, so the request needs more wavefronts.",
        "列：bank（4 字节一个字，bank = 字号 mod 32）。格子：这次请求读的一个字，标着读它的线程（n 个线程共用时标 n×，即广播）。红色：这个 bank 要服务不止一个不同的字，请求就要更多轮。",
    );
    resp.on_hover_text(hover);
}

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
    let palette = [
        BLUE,
        ORANGE,
        GREEN,
        VERMILLION,
        Color32::from_rgb(86, 180, 233),
        Color32::from_rgb(204, 121, 167),
        Color32::from_rgb(240, 228, 66),
    ];
    let width = ui.available_width().max(200.0);
    let name_w = 110.0;
    let bar_h = 26.0;
    let text = ui.visuals().text_color();
    for bar in bars {
        let (rect, resp) = ui.allocate_exact_size(Vec2::new(width, bar_h + 6.0), Sense::hover());
        let p = ui.painter_at(rect);
        p.text(
            Pos2::new(rect.left(), rect.center().y),
            egui::Align2::LEFT_CENTER,
            &bar.name,
            FontId::proportional(12.0),
            text,
        );
        let total: f64 = bar.parts.iter().map(|x| x.1).sum();
        let scale = (width - name_w - 90.0) as f64 / max;
        let mut x = rect.left() + name_w;
        let mut hovered = None;
        for (i, (label, v)) in bar.parts.iter().enumerate() {
            let w = (*v * scale) as f32;
            let seg =
                Rect::from_min_size(Pos2::new(x, rect.top() + 3.0), Vec2::new(w.max(1.0), bar_h));
            p.rect_filled(seg, 0.0, palette[i % palette.len()]);
            p.rect_stroke(
                seg,
                0.0,
                Stroke::new(1.0, ui.visuals().panel_fill),
                StrokeKind::Inside,
            );
            // Measured, not estimated from the character count: a hanzi is twice as wide.
            let label_w = p
                .layout_no_wrap(label.clone(), FontId::proportional(10.5), Color32::WHITE)
                .size()
                .x;
            if w > label_w + 4.0 {
                p.text(
                    seg.center(),
                    egui::Align2::CENTER_CENTER,
                    label,
                    FontId::proportional(10.5),
                    Color32::WHITE,
                );
            }
            if resp.hover_pos().is_some_and(|h| seg.contains(h)) {
                hovered = Some(trf!(
                    ui,
                    "{label}: {} {unit} ({:.1}% of {})",
                    "{label}：{} {unit}（占 {2} 的 {1:.1}%）",
                    super::generic::format_number(*v),
                    100.0 * v / total.max(f64::MIN_POSITIVE),
                    bar.name
                ));
            }
            x += w;
        }
        p.text(
            Pos2::new(x + 6.0, rect.center().y),
            egui::Align2::LEFT_CENTER,
            format!("{} {unit}", super::generic::format_number(total)),
            FontId::proportional(12.0),
            text,
        );
        if let Some(h) = hovered {
            resp.on_hover_text(h);
        }
    }
}

/// A line plot of `series` (name, points) with both axes logarithmic: points are plotted at
/// their log10 and the axes label decades as 10ⁿ. Non-positive values are left out.
pub fn log_log_plot(
    ui: &mut egui::Ui,
    id: &str,
    series: &[(&str, Vec<[f64; 2]>)],
    x_label: &str,
    y_label: &str,
) {
    let decade = |m: egui_plot::GridMark, _r: &std::ops::RangeInclusive<f64>| {
        if (m.value - m.value.round()).abs() < 1e-9 {
            format!("1e{}", m.value.round() as i64)
        } else {
            String::new()
        }
    };
    egui_plot::Plot::new(id)
        .height(260.0)
        .legend(egui_plot::Legend::default())
        .x_axis_label(x_label)
        .y_axis_label(y_label)
        .x_axis_formatter(decade)
        .y_axis_formatter(decade)
        .allow_scroll(false)
        .show(ui, |plot| {
            let palette = [BLUE, VERMILLION, GREEN, ORANGE];
            for (k, (name, pts)) in series.iter().enumerate() {
                let colour = palette[k % palette.len()];
                let logged: Vec<[f64; 2]> = pts
                    .iter()
                    .filter(|p| p[0] > 0.0 && p[1] > 0.0)
                    .map(|p| [p[0].log10(), p[1].log10()])
                    .collect();
                plot.line(egui_plot::Line::new(*name, logged).width(2.0).color(colour));
                plot.points(
                    egui_plot::Points::new(
                        *name,
                        pts.iter()
                            .filter(|p| p[0] > 0.0 && p[1] > 0.0)
                            .map(|p| [p[0].log10(), p[1].log10()])
                            .collect::<Vec<_>>(),
                    )
                    .radius(3.0)
                    .color(colour),
                );
            }
        });
}

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
        let r = Rect::from_center_size(
            c,
            Vec2::new((cw - 8.0).min(7.0 * l.chars().count() as f32 + 12.0), 20.0),
        );
        p.rect_filled(r, 4.0, if reductions[i] { ORANGE } else { BLUE });
        p.text(
            c,
            egui::Align2::CENTER_CENTER,
            l,
            FontId::proportional(10.5),
            Color32::WHITE,
        );
    }
}

/// Okabe–Ito sky blue.
pub const SKY: Color32 = Color32::from_rgb(86, 180, 233);
/// Okabe–Ito reddish purple.
pub const PURPLE: Color32 = Color32::from_rgb(204, 121, 167);
/// Okabe–Ito yellow.
pub const YELLOW: Color32 = Color32::from_rgb(240, 228, 66);

/// The seven Okabe–Ito colours, for series that need one colour each.
pub const PALETTE: [Color32; 7] = [BLUE, ORANGE, GREEN, VERMILLION, SKY, PURPLE, YELLOW];

/// Colour `i` of a categorical series: the palette, then the same colours darkened (so ten
/// series stay distinguishable).
pub fn series_colour(i: usize) -> Color32 {
    let c = PALETTE[i % PALETTE.len()];
    if (i / PALETTE.len()) % 2 == 1 {
        Color32::from_rgb(
            (u16::from(c.r()) * 3 / 5) as u8,
            (u16::from(c.g()) * 3 / 5) as u8,
            (u16::from(c.b()) * 3 / 5) as u8,
        )
    } else {
        c
    }
}

/// Black or white, whichever reads better on `fill`.
pub fn text_on(fill: Color32) -> Color32 {
    let lum =
        0.299 * f32::from(fill.r()) + 0.587 * f32::from(fill.g()) + 0.114 * f32::from(fill.b());
    if lum > 150.0 {
        Color32::BLACK
    } else {
        Color32::WHITE
    }
}

/// Draws `text` anchored at `pos`, cut with "…" to at most `max_w` points wide (nothing when not
/// even one character fits).
fn fitted_text(
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
            FontId::proportional(10.5),
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
            FontId::proportional(11.5),
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
                FontId::proportional(12.0),
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

/// Bytes as MiB (2²⁰ bytes) with two decimals, or KiB / B below 0.01 MiB.
pub fn mib_text(bytes: u64) -> String {
    if bytes >= 10_486 {
        format!("{:.2} MiB", bytes as f64 / 1_048_576.0)
    } else if bytes >= 1024 {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
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
    let font = FontId::proportional(if row_h < 16.0 { 9.5 } else { 11.0 });
    for (r, group) in groups.iter().enumerate() {
        let y = rect.top() + r as f32 * row_h;
        let left = rect.left() + label_w;
        let group_bytes: u64 = group.iter().map(|s| s.size).sum();
        let label = match group {
            [one] => format!("{:#x} · {}", one.address, one.pool),
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
                let w = px(b.size).max(0.5);
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
                        "段 {:#x}（{}，{} 池）\n块地址 {:#x}（+{}）：{} = {} B\n{state}",
                        seg.address,
                        mib_text(seg.size),
                        seg.pool,
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
