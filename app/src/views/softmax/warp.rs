//! `softmax-warp`: `ker_attn_softmax_bw`, one warp per row, stepped lane by lane, with its register
//! budget per bucket.

use crate::i18n::tr;
use crate::trf;
use crate::views::{Out, View, ViewContext};
use crate::widgets;
use warpscope_core::softmax::warp::WarpOutput;

/// The `softmax-warp` view and its state.
#[derive(Debug, Clone, Default)]
pub struct WarpView {
    /// Shows the forward trace instead of the backward one.
    pub sequential: bool,
}

impl View for WarpView {
    type Scene = warpscope_core::softmax::warp::WarpScene;

    fn events(&self, out: &Out<Self>) -> usize {
        if self.sequential {
            &out.forward_trace
        } else {
            &out.trace
        }
        .timeline()
        .len()
    }

    fn ui(&mut self, ui: &mut egui::Ui, out: &Out<Self>, cx: &mut ViewContext<'_>) {
        draw(ui, out, self, cx);
    }
}

/// `softmax-warp`.
fn draw(ui: &mut egui::Ui, o: &WarpOutput, view: &mut WarpView, cx: &mut ViewContext<'_>) {
    ui.label(trf!(
        ui,
        "L = {} → bucket {}, ITERATIONS = {} values of ∇y and of y per lane → {} registers per thread of {}; {} shuffle steps, {} block barriers (the forward pass needs {} reductions: max and sum).",
        "L = {} → 档位 {}，ITERATIONS = 每个线程 {} 个 ∇y 和 y → 每线程 {} 个寄存器（上限 {}）；{} 次 shuffle，{} 次块级栅栏（前向要 {} 次归约：最大值和求和）。",
        o.len, o.bucket, o.iterations, o.registers_per_thread, o.register_limit, o.shuffle_steps, o.block_barriers, o.forward_reductions
    ));
    ui.label(
        egui::RichText::new(tr(
            ui,
            "Registers per thread by bucket (the line is the 255-register limit)",
            "各档位每线程的寄存器数（竖线是 255 个寄存器的上限）",
        ))
        .strong(),
    );
    let width = ui.available_width().max(200.0);
    let rows = o.buckets.len() + 1;
    let (rect, _) = ui.allocate_exact_size(
        egui::vec2(width, 18.0 * rows as f32 + 8.0),
        egui::Sense::hover(),
    );
    let p = ui.painter_at(rect);
    let text = ui.visuals().text_color();
    let left = rect.left() + 150.0;
    let scale = (width - 220.0) / 300.0;
    for (i, b) in o
        .buckets
        .iter()
        .chain(std::iter::once(&o.past_largest))
        .enumerate()
    {
        let y = rect.top() + 18.0 * i as f32;
        let chosen = b.bucket == o.bucket;
        let label = if b.fits {
            format!("L ≤ {} (×{})", b.bucket, b.iterations)
        } else {
            format!("L = {} (×{})", b.bucket, b.iterations)
        };
        p.text(
            egui::pos2(rect.left(), y + 8.0),
            egui::Align2::LEFT_CENTER,
            label,
            crate::theme::label_font(ui.ctx(), 11.0),
            text,
        );
        let w = (b.registers_per_thread as f32).min(300.0) * scale;
        let col = if !b.fits {
            widgets::VERMILLION
        } else if chosen {
            widgets::ORANGE
        } else {
            widgets::BLUE
        };
        p.rect_filled(
            egui::Rect::from_min_size(egui::pos2(left, y + 2.0), egui::vec2(w, 13.0)),
            1.0,
            col,
        );
        p.text(
            egui::pos2(left + w + 4.0, y + 8.0),
            egui::Align2::LEFT_CENTER,
            b.registers_per_thread.to_string(),
            crate::theme::label_font(ui.ctx(), 10.0),
            text,
        );
    }
    let limit_x = left + o.register_limit as f32 * scale;
    p.line_segment(
        [
            egui::pos2(limit_x, rect.top()),
            egui::pos2(limit_x, rect.bottom()),
        ],
        egui::Stroke::new(1.5, widgets::VERMILLION),
    );
    ui.label(trf!(
        ui,
        "One row simulated: Σ∇y·y = {:.6} (f64 reference {:.6}); max |∇x error| {:.1e}.",
        "模拟一行：Σ∇y·y = {:.6}（f64 参考值 {:.6}）；最大 |∇x 误差| {:.1e}。",
        o.dot,
        o.dot_reference,
        o.max_abs_error
    ));
    ui.separator();
    {
        let backward = tr(ui, "backward (one reduction)", "反向（一次归约）");
        let forward = tr(ui, "forward (max, then sum)", "前向（先最大值，再求和）");
        let caption = tr(ui, "Trace:", "轨迹：");
        if crate::widgets::run_choice(ui, caption, &mut view.sequential, backward, forward) {
            cx.stepper.pos = 0;
        }
    }
    let trace = if view.sequential {
        &o.forward_trace
    } else {
        &o.trace
    };
    let recordable = !view.sequential;
    crate::widgets::recorded::show(
        ui,
        "softmax-warp",
        trace,
        recordable,
        cx.stepper,
        cx.gpu,
        cx.values,
    );
}
