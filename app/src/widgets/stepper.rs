//! The stepper shared by every scene with a trace: play/pause, step one event (forward or
//! back), step to the next warp, jump to the next barrier, scrub, speed; keyboard: space
//! (play/pause), ← and → (one event).

use warpscope_core::simt::{EventKind, Trace};

use crate::i18n::tr;
use crate::trf;

/// Where the stepper stands in a trace's timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct Stepper {
    /// Index into [`Trace::timeline`]: the event shown (already executed).
    pub pos: usize,
    /// Advancing by itself.
    pub playing: bool,
    /// Events per second while playing (1..=200).
    pub speed: f32,
    carry: f32,
}

impl Default for Stepper {
    fn default() -> Self {
        Stepper {
            pos: 0,
            playing: false,
            speed: 8.0,
            carry: 0.0,
        }
    }
}

impl Stepper {
    /// One event forward (stops at the end).
    pub fn step(&mut self, len: usize) {
        self.pos = (self.pos + 1).min(len.saturating_sub(1));
    }

    /// One event back.
    pub fn back(&mut self) {
        self.pos = self.pos.saturating_sub(1);
    }

    /// Forward to the first event of a different warp than the current one.
    pub fn next_warp(&mut self, timeline: &[(usize, usize)]) {
        let Some(&(w, _)) = timeline.get(self.pos) else {
            return;
        };
        self.pos = timeline
            .iter()
            .enumerate()
            .skip(self.pos + 1)
            .find(|(_, (w2, _))| *w2 != w)
            .map_or(timeline.len().saturating_sub(1), |(i, _)| i);
    }

    /// Forward to the next barrier event.
    pub fn next_barrier(&mut self, trace: &Trace, timeline: &[(usize, usize)]) {
        let here = timeline
            .get(self.pos)
            .and_then(|&(w, i)| match trace.warps[w].events[i].kind {
                EventKind::Barrier { index } => Some(index),
                _ => None,
            });
        self.pos = timeline
            .iter()
            .enumerate()
            .skip(self.pos + 1)
            .find(|(_, (w, i))| match trace.warps[*w].events[*i].kind {
                EventKind::Barrier { index } => Some(index) != here,
                _ => false,
            })
            .map_or(timeline.len().saturating_sub(1), |(i, _)| i);
    }

    /// Draws the controls and handles keys; returns true when the position changed. In figure
    /// mode (exports) it draws only where the trace stands.
    pub fn ui(&mut self, ui: &mut egui::Ui, trace: &Trace, timeline: &[(usize, usize)]) -> bool {
        let before = self.pos;
        let len = timeline.len();
        if len == 0 {
            ui.label(tr(ui, "This trace has no events.", "这条轨迹没有事件。"));
            return false;
        }
        self.pos = self.pos.min(len - 1);
        // Keys act only when no text field has focus.
        if ui.memory(|m| m.focused().is_none()) {
            let (space, left, right) = ui.input(|i| {
                (
                    i.key_pressed(egui::Key::Space),
                    i.key_pressed(egui::Key::ArrowLeft),
                    i.key_pressed(egui::Key::ArrowRight),
                )
            });
            if space {
                self.playing = !self.playing;
            }
            if left {
                self.back();
            }
            if right {
                self.step(len);
            }
        }
        // A figure (exports, the window's *Figure only*) shows where the trace stands, no
        // controls; the keys above still step it.
        if figure_mode(ui.ctx()) {
            super::marks::label(
                ui,
                trf!(
                    ui,
                    "{} — event {} of {len}",
                    "{} — 第 {} 个事件，共 {len} 个",
                    crate::i18n::pick(ui, &trace.kernel),
                    self.pos
                ),
            );
            self.advance(ui, len);
            return self.pos != before;
        }
        ui.horizontal_wrapped(|ui| {
            if ui
                .button(tr(ui, "|< Restart", "|< 从头开始"))
                .on_hover_text(tr(ui, "Back to the first event", "回到第一个事件"))
                .clicked()
            {
                self.pos = 0;
                self.playing = false;
            }
            if ui
                .button(tr(ui, "< Back", "< 后退"))
                .on_hover_text(tr(ui, "One event back (←)", "后退一个事件（←）"))
                .clicked()
            {
                self.back();
            }
            let play = match (self.playing, crate::i18n::zh(ui)) {
                (true, false) => "Pause",
                (false, false) => "Play",
                (true, true) => "暂停",
                (false, true) => "播放",
            };
            if ui
                .button(play)
                .on_hover_text(tr(ui, "Play or pause (space)", "播放或暂停（空格）"))
                .clicked()
            {
                self.playing = !self.playing;
            }
            if ui
                .button(tr(ui, "Step event >", "下一个事件 >"))
                .on_hover_text(tr(ui, "One event forward (→)", "前进一个事件（→）"))
                .clicked()
            {
                self.step(len);
            }
            if ui
                .button(tr(ui, "Step warp >>", "下一个线程束 >>"))
                .on_hover_text(tr(
                    ui,
                    "Forward to the next warp's events",
                    "前进到下一个线程束的事件",
                ))
                .clicked()
            {
                self.next_warp(timeline);
            }
            if ui
                .button(tr(ui, "Next barrier >|", "下一个栅栏 >|"))
                .on_hover_text(tr(
                    ui,
                    "Forward to the next __syncthreads()",
                    "前进到下一个 __syncthreads()（块内同步）",
                ))
                .clicked()
            {
                self.next_barrier(trace, timeline);
            }
            // Slider, value and text are one unit the wrapping layout cannot break: start a new
            // row when it does not fit (the Chinese buttons are wider), or it pushes the whole
            // view past the right edge.
            // (In a wrapping row `available_width` is the whole row's; measure what is left.)
            let left = ui.max_rect().right() - ui.cursor().min.x;
            if left < ui.spacing().slider_width + 140.0 {
                ui.end_row();
            }
            ui.add(
                egui::Slider::new(&mut self.speed, 1.0..=200.0)
                    .logarithmic(true)
                    .text(tr(ui, "events/s", "事件/秒")),
            );
        });
        let mut p = self.pos;
        let text = trf!(ui, "event of {len}", "事件（共 {len} 个）");
        // Leave room for the value box and the text, measured (hanzi are twice as wide).
        let text_w = ui
            .painter()
            .layout_no_wrap(
                text.clone(),
                egui::TextStyle::Body.resolve(ui.style()),
                egui::Color32::WHITE,
            )
            .size()
            .x;
        ui.spacing_mut().slider_width = (ui.available_width() - text_w - 70.0).max(120.0);
        ui.add(
            egui::Slider::new(&mut p, 0..=len - 1)
                .text(text)
                .clamping(egui::SliderClamping::Always),
        );
        self.pos = p;
        self.advance(ui, len);
        self.pos != before
    }

    /// While playing: moves on by the events due since the last frame.
    fn advance(&mut self, ui: &egui::Ui, len: usize) {
        if self.playing {
            let dt = ui.input(|i| i.stable_dt).min(0.1);
            self.carry += dt * self.speed;
            while self.carry >= 1.0 {
                self.carry -= 1.0;
                self.step(len);
            }
            if self.pos + 1 >= len {
                self.playing = false;
            }
            ui.ctx().request_repaint();
        }
    }
}

fn figure_mode_id() -> egui::Id {
    egui::Id::unique("warpscope-figure-mode")
}

/// Whether views draw for a figure (no interactive controls).
pub fn figure_mode(ctx: &egui::Context) -> bool {
    ctx.data(|d| d.get_temp::<bool>(figure_mode_id()))
        .unwrap_or(false)
}

fn event_placed_id() -> egui::Id {
    egui::Id::unique("warpscope-event-placed")
}

/// Whether the caller placed the stepper on the event a figure shows (`export --step`, a GIF's
/// frames, the window's own cursor), so a view must not move it to its own default event.
pub fn event_placed(ctx: &egui::Context) -> bool {
    ctx.data(|d| d.get_temp::<bool>(event_placed_id()))
        .unwrap_or(false)
}

/// Says whether the event a figure shows was placed by the caller ([`event_placed`]).
pub fn set_event_placed(ctx: &egui::Context, placed: bool) {
    ctx.data_mut(|d| d.insert_temp(event_placed_id(), placed));
}

/// Turns figure mode on or off for `ctx`.
pub fn set_figure_mode(ctx: &egui::Context, on: bool) {
    ctx.data_mut(|d| d.insert_temp(figure_mode_id(), on));
}
