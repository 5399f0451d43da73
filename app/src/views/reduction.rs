//! The Reductions scene: both runs' barrier counts and results (sum or max), what a wrong
//! identity in the empty lanes gives, then the chosen run stepped event by event in the shared
//! trace view.

use warpscope_core::reduction::{ReduceOp, ReductionOutput};
use warpscope_core::simt::Trace;

use crate::i18n::tr;
use crate::trf;
use crate::views::{Out, View, ViewContext};
use crate::widgets;

/// The `reduction` view and its state.
#[derive(Debug, Clone, Default)]
pub struct ReductionView {
    /// Shows the run that reduces the K values one after the other.
    pub sequential: bool,
}

impl View for ReductionView {
    type Scene = warpscope_core::reduction::ReductionScene;

    fn events(&self, out: &Out<Self>) -> usize {
        trace_of(out, self).timeline().len()
    }

    fn ui(&mut self, ui: &mut egui::Ui, out: &Out<Self>, cx: &mut ViewContext<'_>) {
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
    let max = r.op == ReduceOp::Max;
    let id = if max { "−∞" } else { "0" };
    egui::Grid::new("reduction-sums")
        .striped(true)
        .show(ui, |ui| {
            ui.strong(tr(ui, "value", "值"));
            ui.strong(if max {
                trf!(
                    ui,
                    "block max (f32, together; empty lanes {})",
                    "块内最大值（f32，一起归约；空 lane 为 {}）",
                    id
                )
            } else {
                trf!(
                    ui,
                    "block sum (f32, together; empty lanes {})",
                    "块内和（f32，一起归约；空 lane 为 {}）",
                    id
                )
            });
            ui.strong(tr(ui, "one after the other", "一个接一个"));
            ui.strong(tr(ui, "f64 reference", "f64 参考值"));
            if max {
                ui.strong(tr(
                    ui,
                    "with 0 in the empty lanes (wrong identity)",
                    "空 lane 填 0（错误的单位元）",
                ));
            }
            ui.end_row();
            let cell = |v: f64| widgets::format_extended(v, 7);
            for k in 0..r.sums.len() {
                ui.label(format!("v{k}"));
                let at = |v: &[f32]| v.get(k).map_or(f64::NAN, |x| f64::from(*x));
                ui.monospace(cell(at(&r.sums)));
                ui.monospace(cell(at(&r.sums_sequential)));
                ui.monospace(cell(r.reference_sums.get(k).copied().unwrap_or(f64::NAN)));
                if max {
                    let wrong = at(&r.sums_zero_identity);
                    let t = egui::RichText::new(cell(wrong)).monospace();
                    ui.label(if wrong == at(&r.sums) {
                        t
                    } else {
                        t.color(widgets::VERMILLION).strong()
                    });
                }
                ui.end_row();
            }
        });
    ui.label(if max {
        trf!(
            ui,
            "{} lanes per value set held no value and entered the butterfly as −∞, the identity of max (max(−∞, x) = x). With 0 there instead, a max over negative values returns 0 — a value no thread holds.",
            "每组值有 {} 个 lane 没有值，以 max 的单位元 −∞ 进入蝶形归约（max(−∞, x) = x）。若填 0，负数的最大值就会变成 0——一个没有任何线程持有的值。",
            r.identity_lanes
        )
    } else {
        // Name only the cause there is: a partial last warp exists only when the block is not a
        // whole number of warps.
        let t = &r.trace_together;
        if !t.block_threads.is_multiple_of(t.warp_size.max(1)) {
            trf!(
                ui,
                "{} lanes per value set held no value (a partial last warp, and warp 0's lanes past the number of warps in the second stage) and entered the butterfly as 0, the identity of the sum.",
                "每组值有 {} 个 lane 没有值（不满的最后一个线程束、第二阶段中线程束 0 多出的 lane），以求和的单位元 0 进入蝶形归约。",
                r.identity_lanes
            )
        } else {
            trf!(
                ui,
                "{} lanes per value set held no value (warp 0's lanes past the number of warps, in the second stage) and entered the butterfly as 0, the identity of the sum.",
                "每组值有 {} 个 lane 没有值（第二阶段中线程束 0 多出的 lane），以求和的单位元 0 进入蝶形归约。",
                r.identity_lanes
            )
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
