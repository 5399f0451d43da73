//! Softmax backward views: the warp-per-row kernel stepped lane by lane with its register
//! budget per bucket, and the fused vs unfused byte ledger.

use warpscope_core::softmax::fusion::{FusionOutput, KernelAudit};
use warpscope_core::softmax::warp::WarpOutput;

use super::generic::format_number;
use super::widgets::{self, LedgerBar};
use crate::gui::SceneState;

/// `softmax-warp`.
pub fn show_warp(ui: &mut egui::Ui, o: &WarpOutput, state: &mut SceneState) {
    ui.label(format!(
        "L = {} → bucket {}, ITERATIONS = {} values of ∇y and of y per lane → {} registers per thread of {}; {} shuffle steps, {} block barriers (the forward pass needs {} reductions: max and sum).",
        o.len, o.bucket, o.iterations, o.registers_per_thread, o.register_limit, o.shuffle_steps, o.block_barriers, o.forward_reductions
    ));
    ui.label(
        egui::RichText::new("Registers per thread by bucket (the line is the 255-register limit)")
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
            egui::FontId::proportional(11.0),
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
            egui::FontId::proportional(10.0),
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
    ui.label(format!(
        "One row simulated: Σ∇y·y = {:.6} (f64 reference {:.6}); max |∇x error| {:.1e}.",
        o.dot, o.dot_reference, o.max_abs_error
    ));
    ui.separator();
    ui.horizontal(|ui| {
        ui.label("Trace:");
        if ui
            .radio_value(
                &mut state.view.sequential,
                false,
                "backward (one reduction)",
            )
            .changed()
            | ui.radio_value(&mut state.view.sequential, true, "forward (max, then sum)")
                .changed()
        {
            state.stepper.pos = 0;
        }
    });
    let trace = if state.view.sequential {
        &o.forward_trace
    } else {
        &o.trace
    };
    let recordable = !state.view.sequential;
    super::recorded::show(ui, "softmax-warp", trace, recordable, state);
}

fn bar(name: &str, kernels: &[KernelAudit], f: impl Fn(&KernelAudit) -> f64) -> LedgerBar {
    LedgerBar {
        name: name.to_owned(),
        parts: kernels.iter().map(|k| (k.name.clone(), f(k))).collect(),
    }
}

/// `softmax-fusion`.
pub fn show_fusion(ui: &mut egui::Ui, o: &FusionOutput) {
    ui.label(format!(
        "Unfused: {} kernels, {} score-tensor equivalents of traffic; fused: {} kernel, {}. Modelled on {}: {} µs → {} µs, {:.2}× faster.",
        o.unfused_launches,
        format_number(o.unfused_bytes_per_element),
        o.fused_launches,
        format_number(o.fused_bytes_per_element),
        o.device,
        format_number(o.unfused_us),
        format_number(o.fused_us),
        o.modelled_speedup
    ));
    ui.label(egui::RichText::new("Traffic per kernel, in score-tensor equivalents").strong());
    widgets::ledger_bars(
        ui,
        &[
            bar("unfused", &o.unfused_kernels, |k| k.score_tensors),
            bar("fused", &o.fused_kernels, |k| k.score_tensors),
        ],
        "× score",
    );
    ui.label(egui::RichText::new("Modelled time per kernel (bytes / bandwidth + launch)").strong());
    widgets::ledger_bars(
        ui,
        &[
            bar("unfused", &o.unfused_kernels, |k| k.time_us),
            bar("fused", &o.fused_kernels, |k| k.time_us),
        ],
        "µs",
    );
    for (title, kernels) in [
        ("Every byte, unfused", &o.unfused_kernels),
        ("Every byte, fused", &o.fused_kernels),
    ] {
        ui.collapsing(title, |ui| {
            egui::Grid::new(title).striped(true).show(ui, |ui| {
                ui.strong("kernel");
                ui.strong("reads");
                ui.strong("writes");
                ui.strong("bytes");
                ui.strong("µs");
                ui.end_row();
                for k in kernels {
                    ui.label(&k.name);
                    ui.label(
                        k.reads
                            .iter()
                            .map(|a| format!("{} ({} B/elem)", a.tensor, a.bytes_per_element))
                            .collect::<Vec<_>>()
                            .join(", "),
                    );
                    ui.label(
                        k.writes
                            .iter()
                            .map(|a| format!("{} ({} B/elem)", a.tensor, a.bytes_per_element))
                            .collect::<Vec<_>>()
                            .join(", "),
                    );
                    ui.monospace(format_number(k.bytes_read + k.bytes_written));
                    ui.monospace(format_number(k.time_us));
                    ui.end_row();
                }
            });
        });
    }
    let e = &o.example;
    ui.label(format!(
        "{} × {} example (keep {}), fixed seed: fused and unfused agree to {:.1e} (tolerance {:.1e}): {}.",
        e.rows,
        e.len,
        e.keep,
        e.max_abs_diff_fused_unfused,
        e.max_tolerance,
        if e.agree { "agree" } else { "DISAGREE" }
    ));
}
