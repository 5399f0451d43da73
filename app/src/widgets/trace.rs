//! The trace view every stepped scene shares: the stepper, the current event, the warp's lanes,
//! the butterfly filling level by level, and the banks each shared request hits.

use warpscope_core::simt::shared::BankConfig;
use warpscope_core::simt::trace::Event;
use warpscope_core::simt::{EventKind, Trace};

use crate::i18n::tr;
use crate::trf;
use crate::widgets::stepper::Stepper;
use crate::widgets::{self, LaneCell};

fn lane_cells(e: &Event) -> Vec<LaneCell> {
    e.lanes
        .iter()
        .map(|l| LaneCell {
            value: l.value,
            active: l.active,
            highlight: matches!(e.kind, EventKind::SharedStore { .. }) && l.active,
            source: match l.source {
                Some(warpscope_core::simt::shuffle::Source::Lane(s)) => Some(s),
                _ => None,
            },
        })
        .collect()
}

/// The value set an event works on: its label up to the colon (`v0`, `v0 block`).
fn tag(e: &Event) -> Option<&str> {
    // The tag is the same in both languages; the English wording is the stable one.
    e.label.en.split_once(':').map(|(t, _)| t)
}

/// Rows of the butterfly for `tag` in `events`, filled up to event index `upto`.
fn butterfly_rows(events: &[Event], tag: &str, upto: usize) -> (Vec<Option<Vec<f64>>>, Vec<u32>) {
    let vals = |e: &Event| {
        e.lanes
            .iter()
            .map(|l| l.value.unwrap_or(f64::NAN))
            .collect::<Vec<_>>()
    };
    let first_shfl = events
        .iter()
        .position(|e| matches!(e.kind, EventKind::Shuffle { .. }) && self::tag(e) == Some(tag));
    let Some(first) = first_shfl else {
        return (Vec::new(), Vec::new());
    };
    let input = events[..first]
        .iter()
        .rposition(|e| e.lanes.iter().any(|l| l.value.is_some()));
    let mut rows = vec![input.filter(|i| *i <= upto).map(|i| vals(&events[i]))];
    let mut masks = Vec::new();
    for (i, e) in events.iter().enumerate().skip(first) {
        if self::tag(e) != Some(tag) {
            continue;
        }
        match e.kind {
            EventKind::Shuffle { arg, .. } => masks.push(arg),
            EventKind::Compute if e.level.is_some_and(|l| l > 0) => {
                rows.push((i <= upto).then(|| vals(e)))
            }
            _ => {}
        }
    }
    (rows, masks)
}

/// Draws `trace` at the stepper's position, with the stepper's controls above it.
pub fn show(ui: &mut egui::Ui, trace: &Trace, stepper: &mut Stepper) {
    let timeline = trace.timeline();
    stepper.ui(ui, trace, &timeline);
    body(ui, trace, &timeline, stepper.pos);
}

/// Draws `trace` at timeline position `pos` (`timeline` = [`Trace::timeline`]) without the
/// stepper's controls: the event, the warp's lanes, the butterfly and the banks.
pub fn body(ui: &mut egui::Ui, trace: &Trace, timeline: &[(usize, usize)], pos: usize) {
    let Some(&(w, i)) = timeline.get(pos) else {
        return;
    };
    let events = &trace.warps[w].events;
    let e = &events[i];
    ui.horizontal_wrapped(|ui| {
        ui.strong(trf!(ui, "warp {w} · {}", "线程束 {w} · {}", e.kind.short()));
        widgets::marks::label(ui, crate::i18n::pick(ui, &e.label));
        if let Some(l) = e.level {
            ui.label(trf!(ui, "· tree level {l}", "· 树的第 {l} 层"));
        }
        if let (Some(a), Some(b), Some(c)) = (
            e.metrics.wavefronts,
            e.metrics.ideal_wavefronts,
            e.metrics.conflict_degree,
        ) {
            ui.label(trf!(
                ui,
                "· wavefronts {a} (ideal {b}), conflict degree {c}",
                "· 轮数 {a}（理想 {b}），{c} 路冲突"
            ));
        }
        if let Some(s) = e.metrics.sectors {
            ui.label(trf!(ui, "· {s} global sectors", "· {s} 个全局内存扇区"));
        }
    });
    ui.add_space(4.0);
    ui.label(egui::RichText::new(trf!(ui, "Lanes of warp {w}", "线程束 {w} 的各个线程")).strong());
    let shown = events[..=i]
        .iter()
        .rev()
        .find(|e| e.lanes.iter().any(|l| l.value.is_some()))
        .unwrap_or(e);
    let mut cells = lane_cells(shown);
    if !std::ptr::eq(shown, e) {
        for c in &mut cells {
            c.source = None;
        }
    }
    widgets::lane_strip(ui, &cells);
    ui.add_space(6.0);
    let current_tag = events[..=i].iter().rev().find_map(|e| {
        let t = tag(e)?;
        events
            .iter()
            .any(|x| matches!(x.kind, EventKind::Shuffle { .. }) && tag(x) == Some(t))
            .then_some(t)
    });
    let current_tag = current_tag.or_else(|| {
        events
            .iter()
            .find(|e| matches!(e.kind, EventKind::Shuffle { .. }))
            .and_then(tag)
    });
    if let Some(t) = current_tag {
        let (rows, masks) = butterfly_rows(events, t, i);
        let current = rows.iter().rposition(Option::is_some);
        // A max reduction labels its combining step `max with partner's value`.
        let max = events
            .iter()
            .any(|x| tag(x) == Some(t) && x.label.en.contains("max with partner"));
        let down = events.iter().any(|x| {
            tag(x) == Some(t)
                && matches!(
                    x.kind,
                    EventKind::Shuffle {
                        mode: warpscope_core::simt::shuffle::ShuffleMode::Down,
                        ..
                    }
                )
        });
        let caption = match (down, max) {
            (false, true) => trf!(
                ui,
                "Butterfly of {t} in warp {w}: shfl_xor, then max",
                "线程束 {w} 里 {t} 的蝶形归约：先 shfl_xor，再取最大值"
            ),
            (false, false) => trf!(
                ui,
                "Butterfly of {t} in warp {w}: shfl_xor, then add",
                "线程束 {w} 里 {t} 的蝶形归约：先 shfl_xor，再相加"
            ),
            (true, true) => trf!(
                ui,
                "Tree of {t} in warp {w}: shfl_down, then max (lane 0 ends with the result)",
                "线程束 {w} 里 {t} 的归约树：先 shfl_down，再取最大值（结果在 0 号线程）"
            ),
            (true, false) => trf!(
                ui,
                "Tree of {t} in warp {w}: shfl_down, then add (lane 0 ends with the result)",
                "线程束 {w} 里 {t} 的归约树：先 shfl_down，再相加（结果在 0 号线程）"
            ),
        };
        widgets::marks::label(ui, egui::RichText::new(caption).strong());
        widgets::butterfly(ui, &rows, &masks, current, trace.warp_size as usize, down);
    }
    ui.add_space(6.0);
    let shared = events[..=i].iter().rev().find(|e| {
        matches!(
            e.kind,
            EventKind::SharedLoad { .. } | EventKind::SharedStore { .. }
        )
    });
    match shared {
        Some(se) => {
            let width = match se.kind {
                EventKind::SharedLoad { width } | EventKind::SharedStore { width } => width,
                _ => 4,
            };
            let addrs: Vec<Option<u64>> = se.lanes.iter().map(|l| l.address).collect();
            if let Ok(cost) = BankConfig::default().request(&addrs, width) {
                widgets::marks::label(
                    ui,
                    egui::RichText::new(trf!(
                        ui,
                        "Shared memory, last request of warp {w}: {} — {} wavefront(s), ideal {}",
                        "共享内存，线程束 {w} 的最近一次请求：{} — {} 轮，理想 {}",
                        crate::i18n::pick(ui, &se.label),
                        cost.wavefronts,
                        cost.ideal_wavefronts
                    ))
                    .strong(),
                );
                widgets::bank_grid(ui, &cost, 32);
            }
        }
        None => {
            let is_shared = |e: &Event| {
                matches!(
                    e.kind,
                    EventKind::SharedLoad { .. } | EventKind::SharedStore { .. }
                )
            };
            let ever = trace.warps.iter().any(|wt| wt.events.iter().any(is_shared));
            if ever {
                ui.label(trf!(
                    ui,
                    "Warp {w} has not touched shared memory yet.",
                    "线程束 {w} 还没有访问共享内存。"
                ));
            } else {
                ui.label(tr(
                    ui,
                    "This kernel uses no shared memory: its warps exchange values by shuffles, in registers.",
                    "这个内核不用共享内存：线程束之间靠 shuffle 在寄存器里交换数值。",
                ));
            }
        }
    }
}
