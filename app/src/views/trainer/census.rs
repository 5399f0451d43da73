//! `trainer-census`: the parameter tensors of a model by kind, and their size histogram.

use crate::i18n::tr;
use crate::trf;
use crate::views::{Out, View, ViewContext};
use crate::widgets;
use warpscope_core::trainer::census::{CensusOutput, TensorKind};

/// The `trainer-census` view.
#[derive(Debug, Clone, Default)]
pub struct CensusView;

impl View for CensusView {
    type Scene = warpscope_core::trainer::census::CensusScene;

    fn ui(&mut self, ui: &mut egui::Ui, out: &Out<Self>, _cx: &mut ViewContext<'_>) {
        draw(ui, out);
    }
}

/// A tensor kind as the lecture names it.
pub(super) fn kind_name(ui: &egui::Ui, k: TensorKind) -> &'static str {
    match k {
        TensorKind::Weight => tr(ui, "Weight", "权重矩阵"),
        TensorKind::Bias => tr(ui, "Bias", "偏置"),
        TensorKind::LayerNormGamma => tr(ui, "LayerNorm γ", "LayerNorm γ"),
        TensorKind::LayerNormBeta => tr(ui, "LayerNorm β", "LayerNorm β"),
        TensorKind::Embedding => tr(ui, "Embedding", "嵌入"),
    }
}

/// `trainer-census`.
fn draw(ui: &mut egui::Ui, o: &CensusOutput) {
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
        // The tallest bar leaves room above it for its count at the theme's label size.
        let room = crate::theme::label_size(ui.ctx(), 10.0) + 4.0;
        let h = (170.0 - room) * b.tensors as f32 / max as f32;
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
            r.center_top() - egui::vec2(0.0, 2.0),
            egui::Align2::CENTER_BOTTOM,
            b.tensors.to_string(),
            crate::theme::label_font(ui.ctx(), 10.0),
            text,
        );
        p.text(
            egui::pos2(r.center().x, rect.top() + 185.0),
            egui::Align2::CENTER_CENTER,
            format!("2^{}", b.log2),
            crate::theme::label_font(ui.ctx(), 9.5),
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
    widgets::legend(
        ui,
        &[
            widgets::Series {
                name: trf!(
                    ui,
                    "small tensors (≤ {} elements)",
                    "小张量（不超过 {} 个元素）",
                    o.small_max
                ),
                colour: widgets::ORANGE,
            },
            widgets::Series {
                name: tr(ui, "larger tensors", "更大的张量").to_owned(),
                colour: widgets::BLUE,
            },
        ],
    );
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
