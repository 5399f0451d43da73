//! `trainer-workspace`: one linked workspace, its views, and the per-tensor vs whole-buffer byte
//! ledger.

use super::census::kind_name;
use crate::i18n::tr;
use crate::trf;
use crate::views::{Out, View, ViewContext};
use crate::widgets::format_number;
use crate::widgets::{self, LedgerBar};
use warpscope_core::trainer::workspace::{TrainerLedger, WorkspaceOutput};

/// The `trainer-workspace` view.
#[derive(Debug, Clone, Default)]
pub struct WorkspaceView;

impl View for WorkspaceView {
    type Scene = warpscope_core::trainer::workspace::WorkspaceScene;

    fn ui(&mut self, ui: &mut egui::Ui, out: &Out<Self>, _cx: &mut ViewContext<'_>) {
        draw(ui, out);
    }
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
fn draw(ui: &mut egui::Ui, o: &WorkspaceOutput) {
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
