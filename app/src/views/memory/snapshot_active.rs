//! The active memory timeline under the trace's lines (memory_viz's *Active Memory Timeline*):
//! live allocations stacked over the events shown, the largest
//! ([`warpscope_core::torch::active::LARGEST`]) one band each, coloured by the innermost user
//! frame that allocated them, the rest as one grey band at the bottom. Each pixel column shows
//! the state after its last event; hover names the allocation under the pointer.

use egui::{Color32, Mesh, Pos2, Rect, pos2};
use warpscope_core::torch::active::Active;
use warpscope_core::torch::frames::{FrameTable, frame_line};
use warpscope_core::torch::timeline::{Column, Timeline};

use crate::i18n::tr;
use crate::trf;
use crate::widgets::{self, mib_text};

/// The rest band's colour.
fn rest_colour(ui: &egui::Ui) -> Color32 {
    if ui.visuals().dark_mode {
        Color32::from_gray(90)
    } else {
        Color32::from_gray(190)
    }
}

/// The distinct innermost user frames of the kept allocations, in stacking order (as
/// `name (file:line)`; empty for an allocation with no user frame), and each allocation's
/// index into them.
fn frame_groups(act: &Active, frames: &FrameTable) -> (Vec<String>, Vec<usize>) {
    let mut seen: Vec<String> = Vec::new();
    let index = act
        .largest
        .iter()
        .map(|iv| {
            let key = frames
                .top_user_frame(iv.frames)
                .map_or_else(String::new, |f| frame_line(&f));
            seen.iter().position(|k| *k == key).unwrap_or_else(|| {
                seen.push(key);
                seen.len() - 1
            })
        })
        .collect();
    (seen, index)
}

fn group_colour(i: usize) -> Color32 {
    widgets::series_colour(i).gamma_multiply(0.85)
}

/// Colours of the kept allocations: one per distinct innermost user frame, in stacking order.
fn colours(act: &Active, frames: &FrameTable) -> Vec<Color32> {
    frame_groups(act, frames)
        .1
        .into_iter()
        .map(group_colour)
        .collect()
}

/// Frames the colour key names before it sums up the rest.
const KEY_ENTRIES: usize = 8;

/// The colour key of the stacked allocations: each distinct innermost user frame among them
/// with its colour (the first [`KEY_ENTRIES`]), then the grey band of the smaller ones.
pub fn key(ui: &mut egui::Ui, act: &Active, frames: &FrameTable) {
    let (groups, _) = frame_groups(act, frames);
    let mut series: Vec<widgets::Series> = groups
        .iter()
        .take(KEY_ENTRIES)
        .enumerate()
        .map(|(i, k)| widgets::Series {
            name: if k.is_empty() {
                tr(ui, "no user frame", "没有用户栈帧").to_owned()
            } else {
                k.clone()
            },
            colour: group_colour(i),
        })
        .collect();
    if groups.len() > KEY_ENTRIES {
        series.push(widgets::Series {
            name: trf!(
                ui,
                "{} more frames (colours repeat)",
                "另有 {} 个栈帧（颜色会重复）",
                groups.len() - KEY_ENTRIES
            ),
            colour: Color32::TRANSPARENT,
        });
    }
    series.push(widgets::Series {
        name: tr(ui, "the smaller allocations", "其余较小的分配").to_owned(),
        colour: rest_colour(ui),
    });
    widgets::legend(ui, &series);
}

/// Bands drawn as runs of columns with the same top and bottom: one rectangle per run, not per
/// column (fewer triangles, and no seams between equal neighbours in an exported figure).
struct Runs {
    /// Per band: (left x, top y, bottom y, colour) of the run being extended.
    open: Vec<Option<(f32, f32, f32, Color32)>>,
    mesh: Mesh,
}

impl Runs {
    fn flush(&mut self, band: usize, right: f32) {
        if let Some(Some((x0, top, bottom, c))) = self.open.get_mut(band).map(Option::take)
            && bottom - top > 0.05
        {
            self.mesh
                .add_colored_rect(Rect::from_min_max(pos2(x0, top), pos2(right, bottom)), c);
        }
    }

    /// Band `band` spans `top..bottom` from `x0`: extends its run or starts a new one.
    fn push(&mut self, band: usize, x0: f32, (top, bottom): (f32, f32), c: Color32) {
        if self.open.len() <= band {
            self.open.resize(band + 1, None);
        }
        let same = matches!(self.open.get(band), Some(Some((_, t, b, oc)))
            if (t - top).abs() < 0.01 && (b - bottom).abs() < 0.01 && *oc == c);
        if !same {
            self.flush(band, x0);
            if let Some(slot) = self.open.get_mut(band) {
                *slot = Some((x0, top, bottom, c));
            }
        }
    }

    /// Ends every band not drawn in the column starting at `x0`.
    fn end_missing(&mut self, drawn: &[bool], x0: f32) {
        for band in 0..self.open.len() {
            if !drawn.get(band).copied().unwrap_or(false) {
                self.flush(band, x0);
            }
        }
    }
}

/// Paints the stacked allocations in `area` for the columns `cols` of `t` (`y` maps bytes to a
/// screen height); answers the hover text for `hover`, if it lies on an allocation.
pub fn paint(
    ui: &egui::Ui,
    painter: &egui::Painter,
    area: Rect,
    (t, act, frames): (&Timeline, &Active, &FrameTable),
    cols: &[Column],
    y: &dyn Fn(u64) -> f32,
    hover: Option<Pos2>,
) -> Option<String> {
    let cw = area.width() / cols.len().max(1) as f32;
    let palette = colours(act, frames);
    let rest_c = rest_colour(ui);
    let mut runs = Runs {
        open: Vec::new(),
        mesh: Mesh::default(),
    };
    let mut drawn = vec![false; act.largest.len() + 1];
    let mut hovered: Option<String> = None;
    for (i, c) in cols.iter().enumerate() {
        let k = c.first + c.count.saturating_sub(1);
        let Some(e) = t.events.get(k) else {
            continue;
        };
        let x0 = area.left() + i as f32 * cw;
        let x1 = x0 + cw;
        let rest = act.rest(k, e.allocated);
        let mut base = 0u64;
        drawn.iter_mut().for_each(|d| *d = false);
        runs.push(0, x0, (y(rest), y(0)), rest_c);
        if let Some(d) = drawn.first_mut() {
            *d = true;
        }
        let column_hover = hover.filter(|h| h.x >= x0 && h.x < x1);
        if let Some(h) = column_hover
            && h.y >= y(rest)
            && h.y <= y(0)
        {
            hovered = Some(trf!(
                ui,
                "{} live in allocations other than the {} largest",
                "{} 存活在最大的 {} 个分配之外的其他分配里",
                mib_text(rest),
                act.largest.len()
            ));
        }
        base = base.saturating_add(rest);
        for (band, (iv, colour)) in act.largest.iter().zip(&palette).enumerate() {
            if !iv.live_at(k) {
                continue;
            }
            let top = base.saturating_add(iv.size);
            let r = Rect::from_min_max(pos2(x0, y(top)), pos2(x1, y(base)));
            runs.push(band + 1, x0, (r.top(), r.bottom()), *colour);
            if let Some(d) = drawn.get_mut(band + 1) {
                *d = true;
            }
            if let Some(h) = column_hover
                && h.y >= r.top()
                && h.y <= r.bottom()
            {
                let from = if iv.before_trace {
                    tr(ui, "before the trace", "轨迹开始之前").to_owned()
                } else {
                    trf!(ui, "event {}", "第 {} 个事件", iv.start)
                };
                let to = if iv.end >= t.events.len() {
                    tr(ui, "the end (still live)", "结束（仍存活）").to_owned()
                } else {
                    trf!(ui, "event {}", "第 {} 个事件", iv.end)
                };
                hovered = Some(trf!(
                    ui,
                    "{} ({} B) at {:#x}, live from {} to {}{}",
                    "{}（{} B），地址 {:#x}，存活于 {} 到 {}{}",
                    mib_text(iv.size),
                    iv.size,
                    iv.addr,
                    from,
                    to,
                    super::snapshot_frames::hover_line(ui, frames, iv.frames)
                ));
            }
            base = top;
        }
        runs.end_missing(&drawn, x0);
    }
    for band in 0..runs.open.len() {
        runs.flush(band, area.right());
    }
    painter.add(egui::Shape::mesh(runs.mesh));
    hovered
}
