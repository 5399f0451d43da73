//! The Reductions scene: both runs' barrier counts and sums, then the chosen run stepped event by
//! event in the shared trace view.

use warpscope_core::reduction::ReductionOutput;
use warpscope_core::simt::Trace;

use crate::i18n::tr;
use crate::trf;
use crate::views::{View, ViewContext};
use warpscope_core::Error;
use warpscope_core::params::ParamValues;
use warpscope_core::scene::Scene;

/// The `reduction` view and its state.
#[derive(Debug, Clone, Default)]
pub struct ReductionView {
    /// Shows the run that reduces the K values one after the other.
    pub sequential: bool,
}

impl View for ReductionView {
    const SCENE: &'static str = "reduction";
    type Output = warpscope_core::reduction::ReductionOutput;

    fn compute(_scene: &'static Scene, values: &ParamValues) -> Result<Self::Output, Error> {
        warpscope_core::reduction::run(&warpscope_core::reduction::ReductionParams::from_values(
            values,
        )?)
    }

    fn events(&self, out: &Self::Output) -> usize {
        trace_of(out, self).timeline().len()
    }

    fn ui(&mut self, ui: &mut egui::Ui, out: &Self::Output, cx: &mut ViewContext<'_>) {
        draw(ui, out, self, cx);
    }
}

/// The trace the view steps through.
pub fn trace_of<'a>(r: &'a ReductionOutput, view: &ReductionView) -> &'a Trace {
    if view.sequential {
        &r.trace_sequential
    } else {
        &r.trace_together
    }
}

/// Draws the scene.
fn draw(
    ui: &mut egui::Ui,
    r: &ReductionOutput,
    view: &mut ReductionView,
    cx: &mut ViewContext<'_>,
) {
    {
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
        let caption = tr(ui, "Run:", "运行：");
        if crate::widgets::run_choice(ui, caption, &mut view.sequential, &together, &seq) {
            cx.stepper.pos = 0;
        }
    }
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
        trace_of(r, view).warp_size,
        r.shuffle_steps,
        r.max_abs_error
    ));
    ui.separator();
    crate::widgets::trace::show(ui, trace_of(r, view), cx.stepper);
}
