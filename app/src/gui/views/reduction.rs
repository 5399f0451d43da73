//! The Reductions scene: both runs' barrier counts and sums, then the chosen run stepped event by
//! event in the shared trace view.

use warpscope_core::reduction::ReductionOutput;
use warpscope_core::simt::Trace;

use super::ViewState;
use crate::gui::SceneState;

/// The trace the view steps through.
pub fn trace_of<'a>(r: &'a ReductionOutput, view: &ViewState) -> &'a Trace {
    if view.sequential {
        &r.trace_sequential
    } else {
        &r.trace_together
    }
}

/// Draws the scene.
pub fn show(ui: &mut egui::Ui, r: &ReductionOutput, state: &mut SceneState) {
    ui.horizontal(|ui| {
        ui.label("Run:");
        let together = format!("K values together ({} barriers)", r.block_barriers_together);
        let seq = format!(
            "one after the other ({} barriers)",
            r.block_barriers_sequential
        );
        let mut changed = ui
            .radio_value(&mut state.view.sequential, false, together)
            .changed();
        changed |= ui
            .radio_value(&mut state.view.sequential, true, seq)
            .changed();
        if changed {
            state.stepper.pos = 0;
        }
    });
    egui::Grid::new("reduction-sums")
        .striped(true)
        .show(ui, |ui| {
            ui.strong("value");
            ui.strong("block sum (f32, together)");
            ui.strong("one after the other");
            ui.strong("f64 reference");
            ui.end_row();
            for k in 0..r.sums.len() {
                ui.label(format!("v{k}"));
                ui.monospace(format!("{:.6}", r.sums[k]));
                ui.monospace(format!("{:.6}", r.sums_sequential[k]));
                ui.monospace(format!("{:.6}", r.reference_sums[k]));
                ui.end_row();
            }
        });
    ui.label(format!(
        "{} warps × {} lanes; {} shuffle steps per warp sum; max |error| vs f64 = {:.2e}",
        r.warps,
        trace_of(r, &state.view).warp_size,
        r.shuffle_steps,
        r.max_abs_error
    ));
    ui.separator();
    super::trace::show(ui, trace_of(r, &state.view), &mut state.stepper);
}
