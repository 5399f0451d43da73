//! The Reductions scene: both runs' barrier counts and sums, then the chosen run stepped event by
//! event in the shared trace view.

use warpscope_core::reduction::ReductionOutput;
use warpscope_core::simt::Trace;

use super::ViewState;
use crate::gui::SceneState;
use crate::i18n::tr;
use crate::trf;

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
        ui.label(tr(ui, "Run:", "运行："));
        let together = trf!(
            ui,
            "K values together ({} barriers)",
            "K 个值一起归约（{} 次栅栏）",
            r.block_barriers_together
        );
        let seq = trf!(
            ui,
            "one after the other ({} barriers)",
            "一个接一个归约（{} 次栅栏）",
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
            ui.strong(tr(ui, "value", "值"));
            ui.strong(tr(
                ui,
                "block sum (f32, together)",
                "块内和（f32，一起归约）",
            ));
            ui.strong(tr(ui, "one after the other", "一个接一个"));
            ui.strong(tr(ui, "f64 reference", "f64 参考值"));
            ui.end_row();
            for k in 0..r.sums.len() {
                ui.label(format!("v{k}"));
                ui.monospace(format!("{:.6}", r.sums[k]));
                ui.monospace(format!("{:.6}", r.sums_sequential[k]));
                ui.monospace(format!("{:.6}", r.reference_sums[k]));
                ui.end_row();
            }
        });
    ui.label(trf!(
        ui,
        "{} warps × {} lanes; {} shuffle steps per warp sum; max |error| vs f64 = {:.2e}",
        "{} 个线程束 × {} 个线程；每个线程束求和要 {} 次 shuffle；与 f64 相比最大 |误差| = {:.2e}",
        r.warps,
        trace_of(r, &state.view).warp_size,
        r.shuffle_steps,
        r.max_abs_error
    ));
    ui.separator();
    super::trace::show(ui, trace_of(r, &state.view), &mut state.stepper);
}
