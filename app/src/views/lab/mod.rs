//! `kernel-lab`: the user's own WGSL kernel, simulated warp by warp by `core::lab`, drawn as
//! Nsight Compute's *Source* page is (the source with per-line counters beside it) under the
//! stepper, with the current event's lanes, bank grid or shuffle butterfly, the stepped
//! workgroup's warps at their barriers, the sanitizer's warnings and the totals.
//!
//! One file per part: [`wgsl`] (the highlighter), [`source`] (the listing and its columns),
//! [`editor`] (editing in the window: *Save and run* sets the `source` parameter to the file),
//! [`event`] (the current event), [`gpu`] (the same source run on the adapter, compared),
//! [`recorded`] (the same source recorded on the adapter by the record pass, steppable, its
//! differing lines marked), [`workgroup`] (the warps and their barriers), [`summary`]
//! (examples, warnings, totals).

pub mod editor;
pub mod event;
pub mod gpu;
pub mod recorded;
pub mod source;
pub mod summary;
pub mod wgsl;
pub mod workgroup;

#[cfg(test)]
mod tests;

use warpscope_core::lab::scene::{KernelLabScene, LabRun};
use warpscope_core::simt::Trace;
use warpscope_core::simt::trace::Event;

use crate::i18n::tr;
use crate::trf;
use crate::views::{Out, View, ViewContext};

/// What the view draws: core's [`LabRun`] (the simulation with the source text it ran and its
/// dispatch).
pub type LabShown = LabRun;

/// The `kernel-lab` view and its state.
#[derive(Debug, Clone, Default)]
pub struct KernelLabView {
    /// The source line picked by a click on the listing or a warning (1-based).
    pub selected_line: Option<u32>,
    /// The in-window editor.
    pub editor: editor::Editor,
    /// The GPU run of the source shown.
    pub gpu: gpu::GpuSlot,
    /// The recording of the source shown on the adapter.
    pub recorded: recorded::RecordPane,
}

impl View for KernelLabView {
    type Scene = KernelLabScene;

    fn events(&self, out: &Out<Self>) -> usize {
        out.out.trace.timeline().len()
    }

    fn ui(&mut self, ui: &mut egui::Ui, out: &Out<Self>, cx: &mut ViewContext<'_>) {
        draw(ui, out, self, cx);
    }
}

/// The 1-based source line an event executed, when the trace knows it.
pub fn event_line(e: &Event) -> Option<u32> {
    e.line
}

/// The event at timeline position `pos`, with its warp.
fn event_at<'t>(
    trace: &'t Trace,
    timeline: &[(usize, usize)],
    pos: usize,
) -> Option<(usize, &'t Event)> {
    let &(w, i) = timeline.get(pos)?;
    Some((w, trace.warps.get(w)?.events.get(i)?))
}

/// `kernel-lab`.
fn draw(ui: &mut egui::Ui, shown: &LabShown, view: &mut KernelLabView, cx: &mut ViewContext<'_>) {
    let o = &shown.out;
    summary::header(ui, shown, cx);
    ui.add_space(4.0);
    let timeline = o.trace.timeline();
    cx.stepper.ui(ui, &o.trace, &timeline);
    let current = event_at(&o.trace, &timeline, cx.stepper.pos);
    let current_line = current.and_then(|(_, e)| event_line(e));
    match (current, current_line) {
        (Some((w, e)), Some(line)) => {
            let text = source_line(&shown.source, line);
            ui.label(
                egui::RichText::new(trf!(
                    ui,
                    "▶ warp {w} · {} · line {line}: {text}",
                    "▶ 线程束 {w} · {} · 第 {line} 行：{text}",
                    e.kind.short()
                ))
                .monospace(),
            );
        }
        (Some((w, e)), None) => {
            ui.label(trf!(
                ui,
                "▶ warp {w} · {}",
                "▶ 线程束 {w} · {}",
                e.kind.short()
            ));
        }
        (None, _) => {}
    }
    ui.add_space(4.0);
    let editing = editor::ui(ui, &mut view.editor, shown, cx);
    if editing {
        // The listing with its counters is the last good result's; the editor replaces it.
    } else if let Some(line) = source::listing(
        ui,
        &shown.source,
        &o.lines,
        current_line,
        view.selected_line,
        &o.warnings,
    ) {
        view.selected_line = Some(line);
        if let Some(p) = first_event_on(&o.trace, &timeline, line) {
            cx.stepper.pos = p;
        }
    }
    ui.add_space(8.0);
    if let Some((w, e)) = current {
        event::show(ui, &o.trace, &timeline, cx.stepper.pos, w, e);
    }
    ui.add_space(8.0);
    workgroup::show(ui, &o.trace, &timeline, cx.stepper.pos);
    ui.add_space(8.0);
    if let Some(line) = summary::warnings(ui, &o.warnings) {
        view.selected_line = Some(line);
        if let Some(p) = first_event_on(&o.trace, &timeline, line) {
            cx.stepper.pos = p;
        }
    }
    ui.add_space(8.0);
    summary::totals(ui, o);
    ui.add_space(8.0);
    gpu::panel(ui, &view.gpu, shown);
    ui.add_space(8.0);
    recorded::pane(ui, &mut view.recorded, shown);
    ui.add_space(4.0);
    ui.label(
        egui::RichText::new(tr(
            ui,
            "Counts are warp-level: one instruction or request per warp, whatever its active lanes. Red: worse than ideal (bank conflicts, uncoalesced sectors, divergence).",
            "计数按线程束：每个线程束一条指令或一次请求，与活跃线程数无关。红色：比理想差（bank 冲突、未合并的扇区、分支发散）。",
        ))
        .small(),
    );
}

/// Line `line` (1-based) of `source`, trimmed; empty past the end.
fn source_line(source: &str, line: u32) -> &str {
    (line as usize)
        .checked_sub(1)
        .and_then(|k| source.lines().nth(k))
        .unwrap_or("")
        .trim()
}

/// The first timeline position whose event executed source line `line`.
fn first_event_on(trace: &Trace, timeline: &[(usize, usize)], line: u32) -> Option<usize> {
    timeline.iter().position(|&(w, i)| {
        trace
            .warps
            .get(w)
            .and_then(|wt| wt.events.get(i))
            .and_then(event_line)
            == Some(line)
    })
}
