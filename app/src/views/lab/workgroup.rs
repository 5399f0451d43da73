//! The stepped workgroup at the current event: one cell per warp, saying whether it waits at a
//! barrier (and which), has been released by one and waits its turn, has finished, has not
//! started, or is the warp the stepper's event belongs to (outlined).
//!
//! The trace records a barrier once per warp when that warp *passes* it, in the deterministic
//! schedule's order (warp 0 runs until it blocks, then warp 1, …). So between its events a warp
//! other than the running one is blocked: at the barrier its next event passes — still waiting
//! while no warp has passed that barrier yet, released once one has.

use egui::{Align2, Pos2, Rect, Sense, Stroke, StrokeKind, Vec2};
use warpscope_core::simt::{EventKind, Trace};

use crate::i18n::tr;
use crate::trf;
use crate::widgets::{BLUE, GREY, ORANGE, SKY};

/// Where one warp stands at the current event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WarpState {
    /// None of its events has run yet, and the next is not a barrier.
    NotStarted,
    /// The warp of the current event; `line` is that event's.
    Current {
        /// The event's source line, when known.
        line: Option<u32>,
    },
    /// Blocked at barrier `index`, which some warp has not reached yet.
    Waiting {
        /// The barrier's number (1 = the first the workgroup passes).
        index: u32,
        /// Its source line, when known.
        line: Option<u32>,
    },
    /// Barrier `index` is complete (another warp has passed it); this warp resumes when the
    /// schedule comes to it.
    Released {
        /// The barrier's number.
        index: u32,
        /// Its source line, when known.
        line: Option<u32>,
    },
    /// Has run events and waits its turn elsewhere than at a barrier; `line` is its last.
    Ready {
        /// The source line of its last event, when known.
        line: Option<u32>,
    },
    /// All its events have run.
    Done,
}

/// Every warp's state at timeline position `pos`.
pub fn states(trace: &Trace, timeline: &[(usize, usize)], pos: usize) -> Vec<WarpState> {
    let n = trace.warps.len();
    let mut done = vec![0usize; n];
    let mut passed: Vec<u32> = Vec::new();
    for &(w, i) in timeline.iter().take(pos.saturating_add(1)) {
        if let Some(d) = done.get_mut(w) {
            *d += 1;
        }
        if let Some(EventKind::Barrier { index }) = trace
            .warps
            .get(w)
            .and_then(|wt| wt.events.get(i))
            .map(|e| e.kind)
        {
            passed.push(index);
        }
    }
    let current = timeline.get(pos).map(|&(w, _)| w);
    trace
        .warps
        .iter()
        .enumerate()
        .map(|(w, wt)| {
            let ran = done.get(w).copied().unwrap_or(0);
            if current == Some(w) {
                let line = ran
                    .checked_sub(1)
                    .and_then(|i| wt.events.get(i))
                    .and_then(super::event_line);
                return WarpState::Current { line };
            }
            match wt.events.get(ran) {
                None if ran > 0 => WarpState::Done,
                None => WarpState::NotStarted,
                Some(next) => match next.kind {
                    EventKind::Barrier { index } => {
                        let line = super::event_line(next);
                        if passed.contains(&index) {
                            WarpState::Released { index, line }
                        } else {
                            WarpState::Waiting { index, line }
                        }
                    }
                    _ if ran == 0 => WarpState::NotStarted,
                    _ => WarpState::Ready {
                        line: wt.events.get(ran - 1).and_then(super::event_line),
                    },
                },
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
            WarpState::Current { line } => (
                BLUE.gamma_multiply(0.8),
                line.map_or_else(
                    || tr(ui, "running", "运行中").to_owned(),
                    |l| trf!(ui, "runs line {l}", "执行第 {l} 行"),
                ),
            ),
            WarpState::Waiting { index, .. } => {
                (ORANGE, trf!(ui, "waits at #{index}", "等待屏障 #{index}"))
            }
            WarpState::Released { index, .. } => (
                SKY.gamma_multiply(0.7),
                trf!(ui, "#{index} passed", "已过屏障 #{index}"),
            ),
            WarpState::Ready { line } => (
                SKY.gamma_multiply(0.7),
                line.map_or_else(
                    || tr(ui, "ready", "就绪").to_owned(),
                    |l| trf!(ui, "ready · line {l}", "就绪 · 第 {l} 行"),
                ),
            ),
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
            "Orange: waits at a barrier until every warp of the workgroup arrives. Blue, outlined: the warp of the current event. Light blue: the barrier is complete (or the warp is between instructions) and it resumes when the schedule comes to it. Grey: done, or not started yet. The schedule runs warp 0 until it blocks, then warp 1, …",
            "橙色：在屏障等待，直到工作组里每个线程束都到达。蓝色加框：当前事件所在的线程束。浅蓝色：屏障已完成（或在两条指令之间），轮到它时继续执行。灰色：已结束或尚未开始。调度顺序：线程束 0 运行到阻塞，然后线程束 1，……",
        ));
    }
}
