//! The kernel's source as Nsight Compute's *Source* page shows it: line numbers, the WGSL
//! highlighted, and beside each line its counters — warp instructions, shared wavefronts vs
//! ideal, global sectors vs ideal, divergent branches, subgroup operations, atomics — red where
//! worse than ideal. The line the stepper's event is on is lit; a click picks a line.

use egui::{Align2, Color32, Pos2, Rect, Sense, Stroke, Vec2};
use warpscope_core::lab::output::{Counters, LineCounters, Warning};

use crate::i18n::tr;
use crate::trf;
use crate::widgets::{GREY, ORANGE, SKY, VERMILLION};

/// One counter column: its header and how a line's counters read in it.
struct Column {
    en: &'static str,
    zh: &'static str,
    hover_en: &'static str,
    hover_zh: &'static str,
    /// The cell's text and whether it is worse than ideal (`None`: nothing on this line).
    cell: fn(&Counters) -> Option<(String, bool)>,
}

fn ratio(actual: u64, ideal: u64) -> Option<(String, bool)> {
    (actual > 0 || ideal > 0).then(|| (format!("{actual} / {ideal}"), actual > ideal))
}

fn count(n: u64, bad: bool) -> Option<(String, bool)> {
    (n > 0).then(|| (n.to_string(), bad))
}

const COLUMNS: &[Column] = &[
    Column {
        en: "instr.",
        zh: "指令",
        hover_en: "Warp instructions issued on this line (one per warp, whatever its active lanes)",
        hover_zh: "这一行发出的线程束指令（每个线程束一条，与活跃线程数无关）",
        cell: |c| count(c.warp_instructions, false),
    },
    Column {
        en: "shared wf / ideal",
        zh: "共享轮数/理想",
        hover_en: "Shared-memory wavefronts vs the wavefronts without bank conflicts",
        hover_zh: "共享内存的轮数（wavefront），对比没有 bank 冲突时的轮数",
        cell: |c| ratio(c.shared_wavefronts, c.shared_ideal_wavefronts),
    },
    Column {
        en: "sectors / ideal",
        zh: "扇区/理想",
        hover_en: "Global 32-byte sectors touched vs a perfectly coalesced access of the same bytes",
        hover_zh: "访问的全局内存 32 字节扇区数，对比同样字节完全合并时的扇区数",
        cell: |c| ratio(c.global_sectors, c.global_ideal_sectors),
    },
    Column {
        en: "divergent",
        zh: "分支发散",
        hover_en: "Times a warp's active lanes split at this line's if/switch",
        hover_zh: "线程束的活跃线程在这一行的 if/switch 处分开走的次数",
        cell: |c| count(c.divergent_branches, true),
    },
    Column {
        en: "subgroup",
        zh: "子组操作",
        hover_en: "Subgroup operations: shuffles, reductions, scans, ballots, broadcasts",
        hover_zh: "子组操作：shuffle、归约、扫描、ballot、广播",
        cell: |c| count(c.subgroup_ops, false),
    },
    Column {
        en: "atomics",
        zh: "原子操作",
        hover_en: "Atomic read-modify-writes (warp-level requests)",
        hover_zh: "原子读-改-写（按线程束的请求计）",
        cell: |c| count(c.atomics, false),
    },
];

/// Draws the listing; returns the line clicked, if any. `current` is the line of the
/// stepper's event, `selected` the line picked last (a click, a warning); `warnings` mark
/// their lines.
pub fn listing(
    ui: &mut egui::Ui,
    source: &str,
    lines: &[LineCounters],
    current: Option<u32>,
    selected: Option<u32>,
    warnings: &[Warning],
) -> Option<u32> {
    let ctx = ui.ctx().clone();
    let dark = ui.visuals().dark_mode;
    let text = ui.visuals().text_color();
    let mono = egui::TextStyle::Monospace.resolve(ui.style());
    let head_font = crate::theme::label_font(&ctx, 10.5);
    // The theme already sizes the monospace style (Slides: larger); scaling it again as a
    // label would make the code outgrow its column.
    let cell_font = mono;
    let row_h = ui.fonts_mut(|f| f.row_height(&cell_font)) + 4.0;
    let measure = |s: &str, font: &egui::FontId| {
        ui.painter()
            .layout_no_wrap(s.to_owned(), font.clone(), Color32::WHITE)
            .size()
            .x
    };
    let zh = crate::i18n::zh(ui);
    // Only the columns some line has a figure in (a kernel without subgroup operations or
    // atomics leaves their room to the code); instructions always.
    let columns: Vec<&Column> = COLUMNS
        .iter()
        .enumerate()
        .filter(|(k, c)| *k == 0 || lines.iter().any(|l| (c.cell)(&l.counters).is_some()))
        .map(|(_, c)| c)
        .collect();
    // Each column as wide as its widest cell or its header, whichever is wider.
    let widths: Vec<f32> = columns
        .iter()
        .map(|c| {
            let head = measure(if zh { c.zh } else { c.en }, &head_font);
            lines
                .iter()
                .filter_map(|l| (c.cell)(&l.counters))
                .map(|(s, _)| measure(&s, &cell_font))
                .fold(head, f32::max)
                + 18.0
        })
        .collect();
    let n_lines = source.lines().count().max(1);
    let num_w = measure(&n_lines.to_string(), &cell_font) + 10.0;
    let width = ui.available_width().max(300.0);
    let cols_w: f32 = widths.iter().sum();
    // The code keeps at least a third of the width; a column past the edge is clipped.
    let code_w = (width - num_w - cols_w - 8.0).max(width / 3.0);
    let head_h = row_h + 2.0;
    let (rect, resp) = ui.allocate_exact_size(
        Vec2::new(width, head_h + row_h * n_lines as f32),
        Sense::click(),
    );
    let p = ui.painter_at(rect);
    let code_left = rect.left() + num_w;
    let cols_left = code_left + code_w + 8.0;
    // Headers.
    p.text(
        Pos2::new(code_left, rect.top() + head_h * 0.5),
        Align2::LEFT_CENTER,
        tr(ui, "WGSL source", "WGSL 源码"),
        head_font.clone(),
        text,
    );
    let mut x = cols_left;
    let mut header_rects = Vec::new();
    for (c, w) in columns.iter().zip(&widths) {
        p.text(
            Pos2::new(x + w - 6.0, rect.top() + head_h * 0.5),
            Align2::RIGHT_CENTER,
            if zh { c.zh } else { c.en },
            head_font.clone(),
            text,
        );
        header_rects.push(Rect::from_min_size(
            Pos2::new(x, rect.top()),
            Vec2::new(*w, head_h),
        ));
        x += w;
    }
    p.line_segment(
        [
            Pos2::new(rect.left(), rect.top() + head_h),
            Pos2::new(rect.right(), rect.top() + head_h),
        ],
        Stroke::new(1.0, GREY.gamma_multiply(0.6)),
    );
    let warned: Vec<u32> = warnings.iter().map(|w| w.line).collect();
    let mut in_block = false;
    for (k, line_text) in source.lines().enumerate() {
        let line = k as u32 + 1;
        let top = rect.top() + head_h + row_h * k as f32;
        let row = Rect::from_min_size(Pos2::new(rect.left(), top), Vec2::new(width, row_h));
        if current == Some(line) {
            p.rect_filled(row, 2.0, ORANGE.gamma_multiply(0.35));
            p.rect_filled(
                Rect::from_min_size(row.min, Vec2::new(3.0, row_h)),
                0.0,
                ORANGE,
            );
        } else if selected == Some(line) {
            p.rect_filled(row, 2.0, SKY.gamma_multiply(0.25));
        } else if k % 2 == 1 {
            p.rect_filled(row, 0.0, GREY.gamma_multiply(0.08));
        }
        let number_colour = if warned.contains(&line) {
            VERMILLION
        } else {
            text.gamma_multiply(0.6)
        };
        p.text(
            Pos2::new(code_left - 6.0, top + row_h * 0.5),
            Align2::RIGHT_CENTER,
            line.to_string(),
            cell_font.clone(),
            number_colour,
        );
        let underline = warned.contains(&line).then_some(VERMILLION);
        let (mut job, next) = super::wgsl::line_job(
            line_text,
            in_block,
            cell_font.clone(),
            dark,
            text,
            underline,
        );
        in_block = next;
        // A line wider than its column ends in "…" (its hover shows it whole).
        job.wrap = egui::text::TextWrapping::truncate_at_width(code_w);
        let galley = ui.fonts_mut(|f| f.layout_job(job));
        p.galley(
            Pos2::new(code_left, top + (row_h - galley.size().y) * 0.5),
            galley,
            text,
        );
        let counters = lines.iter().find(|l| l.line == line).map(|l| &l.counters);
        let mut x = cols_left;
        for (c, w) in columns.iter().zip(&widths) {
            if let Some((s, bad)) = counters.and_then(|cs| (c.cell)(cs)) {
                let cell = Rect::from_min_size(
                    Pos2::new(x + 2.0, top + 1.0),
                    Vec2::new(w - 4.0, row_h - 2.0),
                );
                if bad {
                    p.rect_filled(cell, 2.0, VERMILLION.gamma_multiply(0.3));
                }
                p.text(
                    Pos2::new(x + w - 6.0, top + row_h * 0.5),
                    Align2::RIGHT_CENTER,
                    s,
                    cell_font.clone(),
                    text,
                );
            }
            x += w;
        }
    }
    let clicked = resp.clicked();
    let hovered = resp.hover_pos();
    let hit = |pos: Pos2| {
        let k = ((pos.y - rect.top() - head_h) / row_h).floor();
        (k >= 0.0 && (k as usize) < n_lines).then_some(k as u32 + 1)
    };
    let mut out = None;
    if let Some(pos) = hovered {
        if pos.y < rect.top() + head_h {
            if let Some(c) = header_rects
                .iter()
                .position(|r| r.contains(pos))
                .and_then(|i| columns.get(i))
            {
                resp.on_hover_text(if zh { c.hover_zh } else { c.hover_en });
            }
        } else if let Some(line) = hit(pos) {
            if clicked {
                out = Some(line);
            }
            let whole = super::source_line(source, line);
            let counters = lines.iter().find(|l| l.line == line).map(|l| l.counters);
            let figures = counters.map_or(String::new(), |c| {
                trf!(
                    ui,
                    "\n{} warp instructions · shared {} / {} wavefronts · {} / {} sectors · {} divergent · {} subgroup · {} atomics",
                    "\n{} 条线程束指令 · 共享内存 {} / {} 轮 · {} / {} 扇区 · {} 次发散 · {} 次子组操作 · {} 次原子操作",
                    c.warp_instructions,
                    c.shared_wavefronts,
                    c.shared_ideal_wavefronts,
                    c.global_sectors,
                    c.global_ideal_sectors,
                    c.divergent_branches,
                    c.subgroup_ops,
                    c.atomics
                )
            });
            let click = tr(
                ui,
                "\n(click: go to the first event on this line)",
                "\n（点击：跳到这一行的第一个事件）",
            );
            resp.on_hover_text(trf!(
                ui,
                "line {line}: {}{figures}{click}",
                "第 {line} 行：{}{figures}{click}",
                whole
            ));
        }
    }
    out
}
