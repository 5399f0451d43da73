//! Mixed-precision trainer views (lecture §4): the tensor census, the linked workspace and its
//! byte ledger, and FP16 storage swallowing small updates.

use warpscope_core::trainer::census::{CensusOutput, TensorKind};
use warpscope_core::trainer::fp16::Fp16Output;
use warpscope_core::trainer::workspace::{TrainerLedger, WorkspaceOutput};

use super::generic::format_number;
use super::widgets::{self, LedgerBar};
use crate::i18n::tr;
use crate::trf;

/// A tensor kind as the lecture names it.
fn kind_name(ui: &egui::Ui, k: TensorKind) -> &'static str {
    match k {
        TensorKind::Weight => tr(ui, "Weight", "权重矩阵"),
        TensorKind::Bias => tr(ui, "Bias", "偏置"),
        TensorKind::LayerNormGamma => tr(ui, "LayerNorm γ", "LayerNorm γ"),
        TensorKind::LayerNormBeta => tr(ui, "LayerNorm β", "LayerNorm β"),
        TensorKind::Embedding => tr(ui, "Embedding", "嵌入"),
    }
}

/// `trainer-census`.
pub fn show_census(ui: &mut egui::Ui, o: &CensusOutput) {
    ui.label(trf!(
        ui,
        "{} tensors, {} parameters; {} tensors ({:.0}%) have ≤ {} elements and hold {:.2}% of the parameters. Per-tensor trainer: {} launches per step.",
        "{} 个张量，{} 个参数；其中 {} 个张量（{:.0}%）不超过 {} 个元素，只占参数的 {:.2}%。逐张量的训练器：每步发射 {} 个内核。",
        o.tensors,
        o.parameters,
        o.small_tensors,
        100.0 * o.small_tensor_fraction,
        o.small_max,
        100.0 * o.small_parameter_fraction,
        o.launches_baseline
    ));
    ui.label(
        egui::RichText::new(tr(
            ui,
            "Tensors by size (elements, log₂ buckets)",
            "按大小统计的张量数（元素个数，按 log₂ 分档）",
        ))
        .strong(),
    );
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
            let kinds = b
                .by_kind
                .iter()
                .map(|(key, n)| {
                    // The histogram keys kinds by their JSON name (`layer_norm_gamma`, …).
                    let kind = warpscope_core::trainer::census::KINDS.iter().find(|k| {
                        serde_json::to_value(k)
                            .ok()
                            .as_ref()
                            .and_then(|v| v.as_str())
                            == Some(key)
                    });
                    format!("{} {n}", kind.map_or(key.as_str(), |k| kind_name(ui, *k)))
                })
                .collect::<Vec<_>>()
                .join(", ");
            hover = Some(trf!(
                ui,
                "{} tensors with {}…{} elements ({} parameters): {kinds}",
                "{} 个张量，各有 {}…{} 个元素（共 {} 个参数）：{kinds}",
                b.tensors,
                b.min_elements,
                b.min_elements.saturating_mul(2) - 1,
                b.parameters
            ));
        }
    }
    if let Some(h) = hover {
        resp.on_hover_text(h);
    }
    egui::Grid::new("census-kinds")
        .striped(true)
        .show(ui, |ui| {
            ui.strong(tr(ui, "kind", "种类"));
            ui.strong(tr(ui, "tensors", "张量数"));
            ui.strong(tr(ui, "parameters", "参数个数"));
            ui.end_row();
            for k in &o.by_kind {
                ui.label(kind_name(ui, k.kind));
                ui.monospace(k.tensors.to_string());
                ui.monospace(k.parameters.to_string());
                ui.end_row();
            }
        });
}

/// A trainer stage's name in the language of `ui` (core names them in English).
fn stage_name(ui: &egui::Ui, en: &'static str) -> &'static str {
    let zh = match en {
        "copy g → g′ (FP16 → FP32)" => "拷贝 g → g′（FP16 → FP32）",
        "Adam on the FP32 master p′ (with g′, m, v)" => {
            "在 FP32 主参数 p′ 上做 Adam（用 g′、m、v）"
        }
        "copy p′ → p (FP32 → FP16)" => "拷贝 p′ → p（FP32 → FP16）",
        "Adam on the FP16 workspace, conversion in registers" => {
            "在 FP16 workspace 上做 Adam，在寄存器里转换精度"
        }
        other => other,
    };
    tr(ui, en, zh)
}

fn stages(ui: &egui::Ui, name: &str, l: &TrainerLedger) -> LedgerBar {
    LedgerBar {
        name: name.to_owned(),
        parts: l
            .stages
            .iter()
            .map(|s| (stage_name(ui, s.stage.name).to_owned(), s.ms))
            .collect(),
    }
}

/// `trainer-workspace`.
pub fn show_workspace(ui: &mut egui::Ui, o: &WorkspaceOutput) {
    ui.label(trf!(
        ui,
        "{} on {}: per tensor with FP32 copies, {} B per parameter and {} launches = {} ms ({} ms launches + {} ms bytes); linked FP16 workspace, {} B per parameter and {} launch = {} ms ({} ms + {} ms): {:.2}× faster.",
        "{}，{} 上：逐张量、带 FP32 副本，每个参数 {} B、{} 次发射 = {} ms（发射 {} ms + 字节 {} ms）；链接成一整块 FP16 workspace，每个参数 {} B、{} 次发射 = {} ms（{} ms + {} ms）：快 {:.2} 倍。",
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
    ui.label(
        egui::RichText::new(tr(
            ui,
            "The workspace: every parameter a slice of one buffer",
            "workspace：每个参数都是一整块显存的一个片段",
        ))
        .strong(),
    );
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
            hover = Some(trf!(
                ui,
                "{} ({}): elements {}…{}",
                "{}（{}）：元素 {}…{}",
                s.name,
                kind_name(ui, s.kind),
                s.offset,
                s.offset + s.elements
            ));
        }
    }
    if let Some(h) = hover {
        resp.on_hover_text(h);
    }
    ui.label(
        egui::RichText::new(tr(
            ui,
            "green: embeddings · blue: weight matrices · orange: biases and LayerNorm γ/β (too thin to see one by one — that is the point)",
            "绿色：嵌入 · 蓝色：权重矩阵 · 橙色：偏置和 LayerNorm γ/β（细得看不清单个 — 这正是要点）",
        ))
        .small(),
    );
    ui.label(egui::RichText::new(tr(ui, "Modelled ms per stage", "各阶段的模型时间 ms")).strong());
    widgets::ledger_bars(
        ui,
        &[
            stages(ui, tr(ui, "per tensor", "逐张量"), &o.baseline),
            stages(ui, "workspace", &o.workspace),
        ],
        "ms",
    );
    ui.label(trf!(
        ui,
        "Views alias the workspace and per-tensor Adam equals one whole-buffer Adam bit for bit: {} (checked on a scaled-down instance).",
        "视图与 workspace 共享显存，逐张量 Adam 与整块 Adam 逐位相同：{}（在缩小的实例上核对）。",
        if o.bitwise_identical {
            tr(ui, "yes", "是")
        } else {
            tr(ui, "NO", "否")
        }
    ));
}

/// `trainer-fp16`.
pub fn show_fp16(ui: &mut egui::Ui, o: &Fp16Output) {
    ui.label(trf!(
        ui,
        "Mean |γ − target| after the run: FP16-stored {:.5} (targets below 1: {:.5}, above 1: {:.5}); FP32 master {:.2e}; at the start {:.5}.",
        "训练后的平均 |γ − 目标|：FP16 存储 {:.5}（目标小于 1：{:.5}，大于 1：{:.5}）；FP32 主参数 {:.2e}；开始时 {:.5}。",
        o.mean_error_fp16, o.mean_error_fp16_below, o.mean_error_fp16_above, o.mean_error_fp32_master, o.initial_mean_error
    ));
    ui.label(
        egui::RichText::new(tr(
            ui,
            "Sample γ trajectories: FP16-stored (steps) vs FP32 master (smooth)",
            "γ 的样本轨迹：FP16 存储（台阶）与 FP32 主参数（平滑）",
        ))
        .strong(),
    );
    egui_plot::Plot::new("fp16-traj")
        .height(260.0)
        .legend(egui_plot::Legend::default())
        .x_axis_label(tr(ui, "Adam step", "Adam 步数"))
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
        egui::RichText::new(tr(
            ui,
            "FP16 spacing: an update smaller than half of it is rounded away",
            "FP16 间距：小于半个间距的更新会被舍入吞掉",
        ))
        .strong(),
    );
    egui::Grid::new("fp16-spacing")
        .striped(true)
        .show(ui, |ui| {
            for (en, zh) in [
                ("value", "值"),
                ("stored as", "存成"),
                ("spacing", "间距"),
                ("half spacing", "半个间距"),
            ] {
                ui.strong(tr(ui, en, zh));
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
