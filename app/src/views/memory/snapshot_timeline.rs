//! The snapshot's trace as a timeline to scrub: reserved and live requested bytes after every
//! event, a cursor on one event with its details and neighbours, zoom into a range of events.
//!
//! A trace of 250,000 events cannot be drawn one event per pixel; the plot draws one column per
//! pixel with the minimum and maximum of each column's events ([`Timeline::columns`]), so no
//! peak is lost, and says on screen when it aggregates. The cursor is the scene's stepper
//! position, so a session or `export --step N` reproduces the event shown.

use egui::{Color32, Rect, Sense, Stroke, pos2, vec2};
use warpscope_core::torch::active::Active;
use warpscope_core::torch::frames::FrameTable;
use warpscope_core::torch::snapshot::SnapshotRun;
use warpscope_core::torch::timeline::{Column, Timeline};

use crate::i18n::tr;
use crate::views::ViewContext;
use crate::widgets::stepper::figure_mode;
use crate::widgets::{self, mib_text};

/// What the timeline keeps between frames: the device and range shown, the columns last drawn
/// and the play cursor's fraction. The `memory-snapshot` view holds it; the timeline alone
/// changes it (the device buttons, zoom, play).
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Which of the devices with a trace is shown.
    pub device: usize,
    /// The range of events shown (`None`: the whole trace).
    pub zoom: Option<(usize, usize)>,
    /// The columns last drawn.
    pub columns: ColumnCache,
    /// Fraction of an event accumulated while playing.
    pub play_carry: f32,
}

/// Columns of the last drawing, kept so an idle or scrubbing frame does not rescan the events.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ColumnCache {
    key: (usize, usize, usize, usize, usize),
    columns: Vec<Column>,
}

/// The device timeline the view shows.
pub fn shown(run: &SnapshotRun, state_device: usize) -> Option<&Timeline> {
    run.timelines
        .get(state_device)
        .or_else(|| run.timelines.first())
}

const RESERVED: Color32 = widgets::ORANGE;
const LIVE: Color32 = widgets::BLUE;

/// Draws the timeline of `run` with its scrubber.
pub fn show(ui: &mut egui::Ui, run: &SnapshotRun, opts: &mut Options, cx: &mut ViewContext<'_>) {
    ui.label(egui::RichText::new(tr(ui, "The trace, event by event", "逐个事件看轨迹")).strong());
    if run.timelines.is_empty() {
        ui.label(tr(
            ui,
            "This file has no trace events (recorded without `_record_memory_history`), so there is nothing to scrub.",
            "这个文件没有轨迹事件（录制时没有开 `_record_memory_history`），没有可以逐个查看的事件。",
        ));
        return;
    }
    if run.timelines.len() > 1 && !figure_mode(ui.ctx()) {
        ui.horizontal(|ui| {
            ui.label(tr(ui, "Device", "设备"));
            for (i, t) in run.timelines.iter().enumerate() {
                if ui
                    .selectable_label(opts.device == i, format!("cuda:{}", t.device))
                    .clicked()
                {
                    opts.device = i;
                    cx.stepper.pos = 0;
                    opts.zoom = None;
                }
            }
        });
    }
    let Some(t) = shown(run, opts.device) else {
        return;
    };
    let n = t.events.len();
    let pos = cx.stepper.pos.min(n - 1);
    let (start, end) = opts
        .zoom
        .filter(|&(a, b)| a < b && b <= n)
        .unwrap_or((0, n));
    if !figure_mode(ui.ctx()) {
        controls(ui, opts, cx, n, pos, (start, end));
        play(ui, opts, cx, (start, end));
    }
    let pos = cx.stepper.pos.min(n - 1);
    let (start, end) = opts
        .zoom
        .filter(|&(a, b)| a < b && b <= n)
        .unwrap_or((0, n));
    let act = run.active.get(opts.device).or_else(|| run.active.first());
    plot(ui, (t, act, &run.frames), opts, cx, pos, (start, end));
    details(ui, t, pos, &run.frames);
}

fn controls(
    ui: &mut egui::Ui,
    opts: &mut Options,
    cx: &mut ViewContext<'_>,
    n: usize,
    pos: usize,
    range: (usize, usize),
) {
    let (start, end) = range;
    if ui.memory(|m| m.focused().is_none()) {
        let (left, right, home, endk, space) = ui.input(|i| {
            (
                i.key_pressed(egui::Key::ArrowLeft),
                i.key_pressed(egui::Key::ArrowRight),
                i.key_pressed(egui::Key::Home),
                i.key_pressed(egui::Key::End),
                i.key_pressed(egui::Key::Space),
            )
        });
        if space {
            toggle_play(cx, pos, range);
        }
        if left {
            cx.stepper.pos = pos.saturating_sub(1);
        }
        if right {
            cx.stepper.pos = (pos + 1).min(n - 1);
        }
        if home {
            cx.stepper.pos = start;
        }
        if endk {
            cx.stepper.pos = end - 1;
        }
    }
    ui.horizontal_wrapped(|ui| {
        let label = if cx.stepper.playing {
            tr(ui, "Pause", "暂停")
        } else {
            tr(ui, "Play", "播放")
        };
        if ui
            .button(label)
            .on_hover_text(tr(
                ui,
                "Play the trace from the cursor, the block map following it (space)",
                "从光标处播放轨迹，块图随之变化（空格）",
            ))
            .clicked()
        {
            toggle_play(cx, pos, range);
        }
        cx.stepper.speed = cx.stepper.speed.clamp(1.0, MAX_SPEED);
        ui.add(
            egui::Slider::new(&mut cx.stepper.speed, 1.0..=MAX_SPEED)
                .logarithmic(true)
                .text(tr(ui, "events/s", "事件/秒")),
        );
        ui.label(tr(ui, "Event", "事件"));
        let mut p = cx.stepper.pos.min(n - 1);
        // A long bar: one pixel of a short slider would skip hundreds of events.
        ui.spacing_mut().slider_width = (ui.available_width() - 420.0).clamp(160.0, 900.0);
        let slider = egui::Slider::new(&mut p, start..=end - 1)
            .clamping(egui::SliderClamping::Always)
            .smart_aim(false);
        if ui
            .add(slider)
            .on_hover_text(tr(
                ui,
                "Scrub through the shown range (← → one event, Home/End: the range's ends)",
                "在显示的范围内拖动（← → 一次一个事件，Home/End 到范围两端）",
            ))
            .changed()
        {
            cx.stepper.pos = p;
        }
        let span = end - start;
        if ui
            .add_enabled(
                span > 16,
                egui::Button::new(tr(ui, "Zoom in ×4", "放大 ×4")),
            )
            .on_hover_text(tr(
                ui,
                "Show a quarter of the range, centred on the cursor event",
                "只看当前范围的四分之一，以光标所在事件为中心",
            ))
            .clicked()
        {
            let w = (span / 4).max(16);
            let a = pos.saturating_sub(w / 2).min(n - w);
            opts.zoom = Some((a, a + w));
        }
        if ui
            .add_enabled(span < n, egui::Button::new(tr(ui, "Zoom out", "缩小")))
            .clicked()
        {
            let w = (span * 4).min(n);
            let a = (start + span / 2).saturating_sub(w / 2).min(n - w);
            opts.zoom = (w < n).then_some((a, a + w));
        }
        if ui
            .add_enabled(
                span < n,
                egui::Button::new(tr(ui, "Whole trace", "整条轨迹")),
            )
            .clicked()
        {
            opts.zoom = None;
        }
    });
}

/// Fastest playing speed (events per second): a 5,000-event trace in a few seconds.
const MAX_SPEED: f32 = 2000.0;

/// Starts or stops playing; a start at the range's last event starts over at its first.
fn toggle_play(cx: &mut ViewContext<'_>, pos: usize, (start, end): (usize, usize)) {
    cx.stepper.playing = !cx.stepper.playing;
    if cx.stepper.playing && pos + 1 >= end {
        cx.stepper.pos = start;
    }
}

/// Advances the cursor while playing, at the stepper's speed, stopping at the range's end.
fn play(ui: &egui::Ui, opts: &mut Options, cx: &mut ViewContext<'_>, (start, end): (usize, usize)) {
    if !cx.stepper.playing {
        opts.play_carry = 0.0;
        return;
    }
    let dt = ui.input(|i| i.stable_dt).min(0.1);
    opts.play_carry += dt * cx.stepper.speed;
    let whole = opts.play_carry.floor();
    if whole >= 1.0 {
        opts.play_carry -= whole;
        cx.stepper.pos = (cx.stepper.pos.max(start) + whole as usize).min(end - 1);
    }
    if cx.stepper.pos + 1 >= end {
        cx.stepper.playing = false;
    } else {
        ui.ctx().request_repaint();
    }
}

fn plot(
    ui: &mut egui::Ui,
    (t, act, frames): (&Timeline, Option<&Active>, &FrameTable),
    opts: &mut Options,
    cx: &mut ViewContext<'_>,
    pos: usize,
    range: (usize, usize),
) {
    let (start, end) = range;
    let width = ui.available_width().clamp(200.0, 1600.0);
    let height = 240.0;
    let (rect, resp) = ui.allocate_exact_size(vec2(width, height), Sense::click_and_drag());
    let hint = tr(
        ui,
        "Click or drag to move the cursor to an event",
        "点击或拖动，把光标移到某个事件",
    );
    let axis_w = 96.0;
    let area = Rect::from_min_max(
        pos2(rect.left() + axis_w, rect.top() + 4.0),
        rect.max - vec2(4.0, 16.0),
    );
    let ncols = (area.width().floor() as usize).max(1);
    let key = (
        t.events.as_ptr() as usize,
        t.events.len(),
        start,
        end,
        ncols,
    );
    if opts.columns.key != key {
        opts.columns = ColumnCache {
            key,
            columns: t.columns(start..end, ncols),
        };
    }
    let cols = &opts.columns.columns;
    let peak = cols
        .iter()
        .map(|c| c.reserved.1.max(c.allocated.1))
        .max()
        .unwrap_or(0)
        .max(1);
    // Headroom, so a flat line at the peak does not vanish into the frame.
    let top = peak.saturating_add(peak / 12);
    let painter = ui.painter_at(rect);
    let visuals = ui.visuals();
    painter.rect_stroke(
        area,
        0.0,
        Stroke::new(1.0, visuals.weak_text_color()),
        egui::StrokeKind::Inside,
    );
    let y = |bytes: u64| area.bottom() - (bytes as f64 / top as f64) as f32 * area.height();
    let span = (end - start) as f32;
    let x_of = |event: usize| area.left() + ((event - start) as f32 + 0.5) / span * area.width();
    let cw = area.width() / cols.len().max(1) as f32;
    let hovered = act.and_then(|a| {
        super::snapshot_active::paint(
            ui,
            &painter,
            area,
            (t, a, frames),
            cols,
            &y,
            resp.hover_pos(),
        )
    });
    let resp = resp.on_hover_text(hovered.unwrap_or_else(|| hint.to_owned()));
    // One polyline per series that runs down and up each column's min–max: peaks stay visible
    // and steps between columns stay connected.
    for (which, colour) in [(0, RESERVED), (1, LIVE)] {
        let mut points: Vec<egui::Pos2> = Vec::with_capacity(2 * cols.len());
        for (i, c) in cols.iter().enumerate() {
            let (lo, hi) = if which == 0 { c.reserved } else { c.allocated };
            let x0 = area.left() + i as f32 * cw;
            let (ylo, yhi) = (y(lo), y(hi));
            let last_y = points.last().map_or(ylo, |p| p.y);
            // Enter the column at the end nearer to where the line is.
            let (a, b) = if (last_y - ylo).abs() <= (last_y - yhi).abs() {
                (ylo, yhi)
            } else {
                (yhi, ylo)
            };
            points.push(pos2(x0, a));
            points.push(pos2(x0 + cw, b));
        }
        painter.add(egui::Shape::line(points, Stroke::new(1.5, colour)));
    }
    let text = visuals.text_color();
    let font = crate::theme::label_font(ui.ctx(), 11.0);
    painter.text(
        pos2(area.left() - 4.0, area.top()),
        egui::Align2::RIGHT_TOP,
        mib_text(top),
        font.clone(),
        text,
    );
    painter.text(
        pos2(area.left() - 4.0, area.bottom()),
        egui::Align2::RIGHT_BOTTOM,
        "0 MiB",
        font.clone(),
        text,
    );
    painter.text(
        pos2(area.left(), area.bottom() + 2.0),
        egui::Align2::LEFT_TOP,
        start.to_string(),
        font.clone(),
        text,
    );
    painter.text(
        pos2(area.right(), area.bottom() + 2.0),
        egui::Align2::RIGHT_TOP,
        (end - 1).to_string(),
        font.clone(),
        text,
    );
    if (start..end).contains(&pos) {
        // Inside the frame even at the first and last event.
        let x = x_of(pos).clamp(area.left() + 1.5, area.right() - 1.5);
        painter.line_segment(
            [pos2(x, area.top()), pos2(x, area.bottom())],
            Stroke::new(1.5, visuals.strong_text_color()),
        );
    }
    if let Some(p) = resp.interact_pointer_pos()
        && area.x_range().contains(p.x)
    {
        let f = ((p.x - area.left()) / area.width()).clamp(0.0, 1.0);
        cx.stepper.pos = (start + (f * span) as usize).min(end - 1);
    }
    legend(ui, (end - start, cols.len()));
    if let Some(a) = act {
        super::snapshot_active::key(ui, a, frames);
    }
}

fn legend(ui: &mut egui::Ui, (events, columns): (usize, usize)) {
    ui.horizontal_wrapped(|ui| {
        swatch(ui, RESERVED);
        ui.label(tr(ui, "reserved (segments)", "保留（段）"));
        swatch(ui, LIVE);
        ui.label(tr(
            ui,
            "live requested bytes (alloc − free_completed)",
            "存活的请求字节（alloc − free_completed）",
        ));
        ui.label(
            egui::RichText::new(if crate::widgets::stepper::figure_mode(ui.ctx()) {
                tr(
                    ui,
                    "· under it, the largest live allocations stacked, coloured by the user frame that made them (the rest in grey)",
                    "· 下面按分配它们的用户栈帧着色，叠放最大的那些存活分配（其余为灰色）",
                )
            } else {
                tr(
                    ui,
                    "· under it, the largest live allocations stacked, coloured by the user frame that made them (the rest in grey; hover for size and stack)",
                    "· 下面按分配它们的用户栈帧着色，叠放最大的那些存活分配（其余为灰色；悬停可看大小和调用栈）",
                )
            })
            .small(),
        );
        let per = events as f64 / columns.max(1) as f64;
        let note = if per > 1.0 {
            crate::trf!(
                ui,
                "· aggregated: {} events in {} columns, each column the min–max of ~{:.0} events",
                "· 已聚合：{} 个事件画成 {} 列，每列是约 {:.0} 个事件的最小–最大值",
                events,
                columns,
                per
            )
        } else {
            crate::trf!(
                ui,
                "· every one of the {} events drawn",
                "· {} 个事件逐个画出",
                events
            )
        };
        ui.label(egui::RichText::new(note).small());
    });
}

fn swatch(ui: &mut egui::Ui, c: Color32) {
    let (r, _) = ui.allocate_exact_size(vec2(12.0, 12.0), Sense::hover());
    ui.painter().rect_filled(r, 2.0, c);
}

fn details(ui: &mut egui::Ui, t: &Timeline, pos: usize, frames: &FrameTable) {
    let Some(e) = t.events.get(pos) else {
        return;
    };
    ui.label(
        egui::RichText::new(crate::trf!(
            ui,
            "Event {} of {}: {} of {} at 0x{:x} — reserved {}, live {}",
            "第 {} 个事件（共 {} 个）：{}，{}，地址 0x{:x} —— 保留 {}，存活 {}",
            pos,
            t.events.len(),
            e.action,
            mib_text(e.size),
            e.addr,
            mib_text(e.reserved),
            mib_text(e.allocated)
        ))
        .strong(),
    );
    if !figure_mode(ui.ctx()) || e.frames != warpscope_core::torch::frames::NO_FRAMES {
        ui.label(egui::RichText::new(tr(ui, "Its stack:", "它的调用栈：")).small());
        super::snapshot_frames::stack_ui(ui, frames, e.frames, "event");
    }
    let lo = pos.saturating_sub(4);
    let hi = (pos + 5).min(t.events.len());
    egui::Grid::new("snapshot-events")
        .num_columns(5)
        .striped(true)
        .show(ui, |ui| {
            for h in [
                tr(ui, "event", "事件"),
                tr(ui, "action", "动作"),
                tr(ui, "size", "大小"),
                tr(ui, "reserved", "保留"),
                tr(ui, "live", "存活"),
            ] {
                ui.label(egui::RichText::new(h).small().strong());
            }
            ui.end_row();
            for (i, e) in t.events[lo..hi].iter().enumerate() {
                let i = lo + i;
                let mark = |s: String| {
                    let r = egui::RichText::new(s).small();
                    if i == pos { r.strong() } else { r }
                };
                ui.label(mark(format!("{}{i}", if i == pos { "▶ " } else { "" })));
                ui.label(mark(e.action.to_owned()));
                ui.label(mark(format!(
                    "{} B",
                    crate::widgets::format::group_thousands(&e.size.to_string())
                )));
                ui.label(mark(mib_text(e.reserved)));
                ui.label(mark(mib_text(e.allocated)));
                ui.end_row();
            }
        });
    let mut notes = Vec::new();
    if t.unmatched_frees > 0 {
        notes.push(crate::trf!(
            ui,
            "The trace starts mid-run ({} frees of blocks allocated before it): live requested bytes start at {}, what those frees and the file's own active blocks say was live before the first event.",
            "轨迹从运行中途开始（有 {} 次释放的块在轨迹之前就已分配）：存活的请求字节从 {} 开始——这是这些释放和文件里的活动块说明的、第一个事件之前就已存活的字节。",
            t.unmatched_frees,
            mib_text(t.start_allocated)
        ));
    }
    if t.inconsistent > 0 {
        notes.push(crate::trf!(
            ui,
            "{} segment events disagree with the file's segments (a trimmed trace?); reserved is clamped at 0 there.",
            "{} 个段事件与文件里的段对不上（轨迹被截短了？）；那里的保留按 0 截断。",
            t.inconsistent
        ));
    }
    for n in notes {
        ui.add(egui::Label::new(egui::RichText::new(n).small().italics()).wrap());
    }
}
