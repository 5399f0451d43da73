//! The stepped workgroup at the current event: one cell per warp, saying whether it waits at a
//! barrier (and which), has run past its last event, has not started, or is where the
//! schedule is — the warp the stepper's event belongs to outlined.

use egui::{Align2, Pos2, Rect, Sense, Stroke, StrokeKind, Vec2};
use warpscope_core::simt::{EventKind, Trace};

use crate::i18n::tr;
use crate::trf;
use crate::widgets::{BLUE, GREY, ORANGE};

/// Where one warp stands at the current event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WarpState {
    /// None of its events has run yet.
    NotStarted,
    /// It has run events and is not held at a barrier; `line` is where its last event was.
    Running {
        /// The source line of its last event, when known.
        line: Option<u32>,
    },
    /// Its last event was barrier `index` and some warp of the workgroup has not reached it.
    Waiting {
        /// The barrier's number (1 = the first).
        index: u32,
        /// Its source line, when known.
        line: Option<u32>,
    },
    /// All its events have run.
    Done,
}

/// Every warp's state at timeline position `pos`.
pub fn states(trace: &Trace, timeline: &[(usize, usize)], pos: usize) -> Vec<WarpState> {
    let n = trace.warps.len();
    let mut done = vec![0usize; n];
    let mut last: Vec<Option<usize>> = vec![None; n];
    for &(w, i) in timeline.iter().take(pos.saturating_add(1)) {
        if let Some(d) = done.get_mut(w) {
            *d += 1;
            last[w] = Some(i);
        }
    }
    // Warps that have arrived at each barrier by now.
    let arrived = |index: u32| {
        trace
            .warps
            .iter()
            .zip(&done)
            .filter(|(wt, d)| {
                wt.events
                    .iter()
                    .take(**d)
                    .any(|e| e.kind == EventKind::Barrier { index })
            })
            .count()
    };
    trace
        .warps
        .iter()
        .enumerate()
        .map(|(w, wt)| {
            let Some(i) = last[w] else {
                return WarpState::NotStarted;
            };
            let Some(e) = wt.events.get(i) else {
                return WarpState::NotStarted;
            };
            let line = super::event_line(e);
            match e.kind {
                EventKind::Barrier { index } if arrived(index) < n => {
                    WarpState::Waiting { index, line }
                }
                _ if done[w] == wt.events.len() => WarpState::Done,
                _ => WarpState::Running { line },
            }
        })
        .collect()
}

/// Draws the workgroup's warps at timeline position `pos`.
pub fn show(ui: &mut egui::Ui, trace: &Trace, timeline: &[(usize, usize)], pos: usize) {
    let states = states(trace, timeline, pos);
    let current = timeline.get(pos).map(|&(w, _)| w);
    let waiting: Vec<(u32, Option<u32>)> = states
        .iter()
        .filter_map(|s| match s {
            WarpState::Waiting { index, line } => Some((*index, *line)),
            _ => None,
        })
        .collect();
    let headline = match waiting.first() {
        Some((index, line)) => {
            let at = line.map_or(String::new(), |l| trf!(ui, " (line {l})", "（第 {l} 行）"));
            trf!(
                ui,
                "Workgroup: {} of {} warps wait at barrier #{index}{at}",
                "工作组：{1} 个线程束中有 {0} 个在第 {index} 个屏障等待{at}",
                waiting.len(),
                states.len()
            )
        }
        None => trf!(
            ui,
            "Workgroup: {} warps, none waiting at a barrier",
            "工作组：{} 个线程束，没有在屏障等待的",
            states.len()
        ),
    };
    ui.label(egui::RichText::new(headline).strong());
    let ctx = ui.ctx().clone();
    let big = crate::theme::label_font(&ctx, 11.0);
    let small = crate::theme::label_font(&ctx, 9.5);
    let cell_w = (big.size * 6.5).max(small.size * 8.5);
    let cell_h = big.size + small.size + 14.0;
    let width = ui.available_width().max(200.0);
    let per_row = ((width / (cell_w + 4.0)).floor() as usize).max(1);
    let rows = states.len().div_ceil(per_row).max(1);
    let (rect, resp) = ui.allocate_exact_size(
        Vec2::new(width, rows as f32 * (cell_h + 4.0)),
        Sense::hover(),
    );
    let p = ui.painter_at(rect);
    let panel = ui.visuals().panel_fill;
    let text = ui.visuals().text_color();
    let mut cells = Vec::new();
    for (w, s) in states.iter().enumerate() {
        let (r, c) = (w / per_row, w % per_row);
        let cell = Rect::from_min_size(
            Pos2::new(
                rect.left() + c as f32 * (cell_w + 4.0),
                rect.top() + r as f32 * (cell_h + 4.0),
            ),
            Vec2::new(cell_w, cell_h),
        );
        let (fill, what) = match s {
            WarpState::NotStarted => (
                GREY.gamma_multiply(0.25),
                tr(ui, "not started", "未开始").to_owned(),
            ),
            WarpState::Running { line } => (
                BLUE.gamma_multiply(0.8),
                line.map_or_else(
                    || tr(ui, "running", "运行中").to_owned(),
                    |l| trf!(ui, "line {l}", "第 {l} 行"),
                ),
            ),
            WarpState::Waiting { index, .. } => {
                (ORANGE, trf!(ui, "barrier #{index}", "屏障 #{index}"))
            }
            WarpState::Done => (
                GREY.gamma_multiply(0.6),
                tr(ui, "done", "已结束").to_owned(),
            ),
        };
        p.rect_filled(cell, 3.0, fill);
        if current == Some(w) {
            p.rect_stroke(cell, 3.0, Stroke::new(2.5, text), StrokeKind::Outside);
        }
        let on = crate::widgets::palette::text_on(crate::widgets::palette::over(fill, panel));
        p.text(
            cell.center_top() + Vec2::new(0.0, 4.0),
            Align2::CENTER_TOP,
            trf!(ui, "warp {w}", "线程束 {w}"),
            big.clone(),
            on,
        );
        p.text(
            cell.center_bottom() - Vec2::new(0.0, 4.0),
            Align2::CENTER_BOTTOM,
            what,
            small.clone(),
            on,
        );
        cells.push(cell);
    }
    if let Some(hover) = resp.hover_pos()
        && cells.iter().any(|c| c.contains(hover))
    {
        resp.on_hover_text(tr(
            ui,
            "Orange: waits at a barrier until every warp of the workgroup arrives. Blue: has run up to this event (its last line). Grey: done, or not started yet. Outlined: the warp of the current event. The schedule runs warp 0 until it blocks, then warp 1, …",
            "橙色：在屏障等待，直到工作组里每个线程束都到达。蓝色：已运行到当前事件（显示它最后执行的行）。灰色：已结束或尚未开始。加框：当前事件所在的线程束。调度顺序：线程束 0 运行到阻塞，然后线程束 1，……",
        ));
    }
}
