//! The view every scene has until it gets its own: the result as a table of keys and values
//! (numbers, short lists), with the full JSON below.

use crate::views::{View, ViewContext};
use crate::widgets::format_number;
use warpscope_core::Error;
use warpscope_core::params::ParamValues;
use warpscope_core::scene::Scene;

/// The generic table: any scene without a view of its own.
#[derive(Debug, Clone, Default)]
pub struct GenericView;

impl View for GenericView {
    const SCENE: &'static str = "";
    type Output = serde_json::Value;

    fn compute(scene: &'static Scene, values: &ParamValues) -> Result<Self::Output, Error> {
        Ok(scene.report(values.clone())?.result)
    }

    fn compute_input(
        scene: &'static Scene,
        values: &ParamValues,
        input: &serde_json::Value,
    ) -> Result<Self::Output, Error> {
        Ok(scene.report_with(values.clone(), Some(input))?.result)
    }

    fn ui(&mut self, ui: &mut egui::Ui, out: &Self::Output, _cx: &mut ViewContext<'_>) {
        draw(ui, out);
    }
}

/// Draws a JSON result as a two-column table.
fn draw(ui: &mut egui::Ui, result: &serde_json::Value) {
    ui.label(
        egui::RichText::new(crate::i18n::tr(
            ui,
            "This scene has no picture yet; its computed result:",
            "这个场景还没有图，下面是它的计算结果：",
        ))
        .italics(),
    );
    if let serde_json::Value::Object(map) = result {
        egui::Grid::new("result-table")
            .striped(true)
            .num_columns(2)
            .show(ui, |ui| {
                let zh = crate::i18n::zh(ui);
                for (k, v) in map {
                    match key_zh(k).filter(|_| zh) {
                        // The JSON key stays one hover away (it is what `report --json` prints).
                        Some(label) => {
                            ui.label(label).on_hover_text(k);
                        }
                        None => {
                            ui.monospace(k);
                        }
                    }
                    crate::widgets::marks::label(ui, short(v));
                    ui.end_row();
                }
            });
    }
    ui.collapsing("JSON", |ui| {
        let text = serde_json::to_string_pretty(result).unwrap_or_default();
        crate::widgets::marks::label(ui, egui::RichText::new(text).monospace());
    });
}

/// The Chinese label of a result key of the scenes this table draws (layernorm-formulas,
/// softmax-formula, softmax-saved, trainer-timing), in the lecture's terms; `None` for a key it
/// does not know, which the table then shows as it is.
fn key_zh(key: &str) -> Option<&'static str> {
    Some(match key {
        // layernorm-formulas
        "by_dtype" => "按精度",
        "dbeta" => "∇β",
        "dbeta_reference" => "∇β（参考值）",
        "dgamma" => "∇γ",
        "dgamma_reference" => "∇γ（参考值）",
        "dtype" => "精度",
        "first_row" => "第 0 行（完整）",
        "max_abs_diff_hw4" => "HW4 写法与参考值的最大绝对差",
        "max_abs_diff_slides" => "slides 写法与参考值的最大绝对差",
        "mu" => "每行保存的 μ",
        "r" => "每行保存的 r = 1/σ",
        "row_sums_hw4" => "每行 Σ∇x（HW4 写法）",
        "row_sums_reference" => "每行 Σ∇x（参考值）",
        // softmax-formula
        "flops_formula_per_row" => "每行 FLOPs（公式）",
        "flops_jacobian_per_row" => "每行 FLOPs（雅可比矩阵）",
        "jacobian_bytes_f64" => "雅可比矩阵的字节数（f64）",
        "max_abs_diff_jacobian" => "公式与雅可比矩阵的最大绝对差",
        "max_abs_diff_jacobian_f32" => "公式与雅可比矩阵的最大绝对差（f32）",
        "max_abs_dx" => "最大 |∇x|",
        "max_abs_error_f32_formula" => "f32 公式的最大绝对误差",
        "max_abs_error_f32_jacobian" => "f32 雅可比矩阵的最大绝对误差",
        "max_abs_row_sum_f32" => "最大 |每行 Σ∇x|（f32）",
        "max_abs_row_sum_f64" => "最大 |每行 Σ∇x|（f64）",
        "reductions_per_row" => "每行的归约次数",
        "row_sums_f32" => "每行 Σ∇x（f32）",
        "row_sums_f64" => "每行 Σ∇x（f64）",
        // softmax-saved
        "bitmask_bytes" => "位掩码的字节数",
        "elements" => "分数矩阵的元素个数",
        "lse_bytes" => "logsumexp 的字节数",
        "mask_bytes" => "字节掩码的字节数",
        "schemes" => "保存方案",
        "seed_bytes" => "只存随机种子的字节数",
        "sweep" => "扫描",
        "y_bytes" => "y 的字节数",
        // trainer-timing
        "bitwise_identical" => "结果逐位相同",
        "bytes_per_step" => "每步读写的字节数",
        "copy" => "同样字节数的纯拷贝",
        "model" => "模型",
        "overhead_resolved" => "每次调用的开销可测出",
        "parameters" => "参数个数",
        "per_call_overhead_us" => "每次调用的开销（µs）",
        "per_tensor" => "逐张量",
        "ratio" => "逐张量 / 整块（中位数之比）",
        "release_build" => "release 构建",
        "runs" => "运行次数",
        "tensors" => "张量个数",
        "whole_buffer" => "整块 workspace",
        _ => return None,
    })
}

/// A value in at most ~120 characters.
fn short(v: &serde_json::Value) -> String {
    let s = match v {
        serde_json::Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() => format_number(f),
            _ => n.to_string(),
        },
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if s.chars().count() > 120 {
        format!("{}…", s.chars().take(120).collect::<String>())
    } else {
        s
    }
}
