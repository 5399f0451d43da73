//! Mixed-precision trainer views (lecture §4): the tensor census, the linked workspace and its
//! byte ledger, and FP16 storage swallowing small updates.

use warpscope_core::trainer::census::CensusOutput;
use warpscope_core::trainer::fp16::Fp16Output;
use warpscope_core::trainer::workspace::{TrainerLedger, WorkspaceOutput};

use super::generic::format_number;
use super::widgets::{self, LedgerBar};

/// `trainer-census`.
pub fn show_census(ui: &mut egui::Ui, o: &CensusOutput) {
    ui.label(format!(
        "{} tensors, {} parameters; {} tensors ({:.0}%) have ≤ {} elements and hold {:.2}% of the parameters. Per-tensor trainer: {} launches per step.",
        o.tensors,
        o.parameters,
        o.small_tensors,
        100.0 * o.small_tensor_fraction,
        o.small_max,
        100.0 * o.small_parameter_fraction,
        o.launches_baseline
    ));
    ui.label(egui::RichText::new("Tensors by size (elements, log₂ buckets)").strong());
    let width = ui.available_width().max(200.0);
    let max = o
        .histogram
        .iter()
        .map(|b| b.tensors)
        .max()
        .unwrap_or(1)
        .max(1);
    let (rect, resp) = ui.allocate_exact_size(egui::vec2(width, 200.0), egui::Sense::hover());
    let p = ui.painter_at(rect);
    let n = o.histogram.len().max(1);
    let bw = width / n as f32;
    let text = ui.visuals().text_color();
    let mut hover = None;
    for (i, b) in o.histogram.iter().enumerate() {
        let h = 160.0 * b.tensors as f32 / max as f32;
        let r = egui::Rect::from_min_max(
            egui::pos2(rect.left() + i as f32 * bw + 2.0, rect.top() + 170.0 - h),
            egui::pos2(rect.left() + (i + 1) as f32 * bw - 2.0, rect.top() + 170.0),
        );
        let small = b.min_elements <= o.small_max;
        p.rect_filled(
            r,
            1.0,
            if small {
                widgets::ORANGE
            } else {
                widgets::BLUE
            },
        );
        p.text(
            r.center_top() - egui::vec2(0.0, 7.0),
            egui::Align2::CENTER_CENTER,
            b.tensors.to_string(),
            egui::FontId::proportional(10.0),
            text,
        );
        p.text(
            egui::pos2(r.center().x, rect.top() + 185.0),
            egui::Align2::CENTER_CENTER,
            format!("2^{}", b.log2),
            egui::FontId::proportional(9.5),
            text,
        );
        if resp
            .hover_pos()
            .is_some_and(|h| h.x >= r.left() && h.x <= r.right())
        {
            hover = Some(format!(
                "{} tensors with {}…{} elements ({} parameters): {:?}",
                b.tensors,
                b.min_elements,
                b.min_elements.saturating_mul(2) - 1,
                b.parameters,
                b.by_kind
            ));
        }
    }
    if let Some(h) = hover {
        resp.on_hover_text(h);
    }
    egui::Grid::new("census-kinds")
        .striped(true)
        .show(ui, |ui| {
            ui.strong("kind");
            ui.strong("tensors");
            ui.strong("parameters");
            ui.end_row();
            for k in &o.by_kind {
                ui.label(format!("{:?}", k.kind));
                ui.monospace(k.tensors.to_string());
                ui.monospace(k.parameters.to_string());
                ui.end_row();
            }
        });
}

fn stages(name: &str, l: &TrainerLedger) -> LedgerBar {
    LedgerBar {
        name: name.to_owned(),
        parts: l
            .stages
            .iter()
            .map(|s| (s.stage.name.to_owned(), s.ms))
            .collect(),
    }
}

/// `trainer-workspace`.
pub fn show_workspace(ui: &mut egui::Ui, o: &WorkspaceOutput) {
    ui.label(format!(
        "{} on {}: per tensor with FP32 copies, {} B per parameter and {} launches = {} ms ({} ms launches + {} ms bytes); linked FP16 workspace, {} B per parameter and {} launch = {} ms ({} ms + {} ms): {:.2}× faster.",
        o.model,
        o.device,
        o.bytes_per_param_baseline,
        o.launches_baseline,
        format_number(o.baseline_ms),
        format_number(o.baseline_launch_ms),
        format_number(o.baseline_bytes_ms),
        o.bytes_per_param_workspace,
        o.launches_workspace,
        format_number(o.workspace_ms),
        format_number(o.workspace_launch_ms),
        format_number(o.workspace_bytes_ms),
        o.speedup
    ));
    ui.label(egui::RichText::new("The workspace: every parameter a slice of one buffer").strong());
    let width = ui.available_width().max(200.0);
    let total = o
        .segments
        .iter()
        .map(|s| s.offset + s.elements)
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let (rect, resp) = ui.allocate_exact_size(egui::vec2(width, 34.0), egui::Sense::hover());
    let p = ui.painter_at(rect);
    let mut hover = None;
    for (i, s) in o.segments.iter().enumerate() {
        let x0 = rect.left() + (s.offset as f64 / total) as f32 * width;
        let x1 = rect.left() + ((s.offset + s.elements) as f64 / total) as f32 * width;
        let r = egui::Rect::from_min_max(
            egui::pos2(x0, rect.top()),
            egui::pos2(x1.max(x0 + 0.5), rect.bottom()),
        );
        let col = match format!("{:?}", s.kind).as_str() {
            "Embedding" => widgets::GREEN,
            "Weight" => {
                if i % 2 == 0 {
                    widgets::BLUE
                } else {
                    widgets::BLUE.gamma_multiply(0.75)
                }
            }
            _ => widgets::ORANGE,
        };
        p.rect_filled(r, 0.0, col);
        if resp
            .hover_pos()
            .is_some_and(|h| h.x >= r.left() && h.x <= r.right())
        {
            hover = Some(format!(
                "{} ({:?}): elements {}…{}",
                s.name,
                s.kind,
                s.offset,
                s.offset + s.elements
            ));
        }
    }
    if let Some(h) = hover {
        resp.on_hover_text(h);
    }
    ui.label(egui::RichText::new("green: embeddings · blue: weight matrices · orange: biases and LayerNorm γ/β (too thin to see one by one — that is the point)").small());
    ui.label(egui::RichText::new("Modelled ms per stage").strong());
    widgets::ledger_bars(
        ui,
        &[
            stages("per tensor", &o.baseline),
            stages("workspace", &o.workspace),
        ],
        "ms",
    );
    ui.label(format!(
        "Views alias the workspace and per-tensor Adam equals one whole-buffer Adam bit for bit: {} (checked on a scaled-down instance).",
        if o.bitwise_identical { "yes" } else { "NO" }
    ));
}

/// `trainer-fp16`.
pub fn show_fp16(ui: &mut egui::Ui, o: &Fp16Output) {
    ui.label(format!(
        "Mean |γ − target| after the run: FP16-stored {:.5} (targets below 1: {:.5}, above 1: {:.5}); FP32 master {:.2e}; at the start {:.5}.",
        o.mean_error_fp16, o.mean_error_fp16_below, o.mean_error_fp16_above, o.mean_error_fp32_master, o.initial_mean_error
    ));
    ui.label(
        egui::RichText::new("Sample γ trajectories: FP16-stored (steps) vs FP32 master (smooth)")
            .strong(),
    );
    egui_plot::Plot::new("fp16-traj")
        .height(260.0)
        .legend(egui_plot::Legend::default())
        .x_axis_label("Adam step")
        .y_axis_label("γ")
        .allow_scroll(false)
        .show(ui, |plot| {
            for s in &o.samples {
                let f16: Vec<[f64; 2]> = s
                    .steps
                    .iter()
                    .zip(&s.fp16)
                    .map(|(t, v)| [f64::from(*t), f64::from(*v)])
                    .collect();
                let f32m: Vec<[f64; 2]> = s
                    .steps
                    .iter()
                    .zip(&s.fp32_master)
                    .map(|(t, v)| [f64::from(*t), f64::from(*v)])
                    .collect();
                plot.line(
                    egui_plot::Line::new(format!("FP16 γ → {:.3}", s.target), f16).width(2.0),
                );
                plot.line(
                    egui_plot::Line::new(format!("FP32 γ → {:.3}", s.target), f32m)
                        .style(egui_plot::LineStyle::dashed_loose()),
                );
            }
        });
    ui.label(
        egui::RichText::new("FP16 spacing: an update smaller than half of it is rounded away")
            .strong(),
    );
    egui::Grid::new("fp16-spacing")
        .striped(true)
        .show(ui, |ui| {
            for h in ["value", "stored as", "spacing", "half spacing"] {
                ui.strong(h);
            }
            ui.end_row();
            for s in &o.spacing {
                ui.monospace(format!("{}", s.value));
                ui.monospace(format!("{}", s.stored));
                ui.monospace(format!("{:.3e}", s.spacing));
                ui.monospace(format!("{:.3e}", s.half_spacing));
                ui.end_row();
            }
        });
}
