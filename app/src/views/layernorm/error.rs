//! `layernorm-error`: the f32 error of both backward forms against f64 as the row mean grows.

use crate::i18n::tr;
use crate::views::{Out, View, ViewContext};
use crate::widgets;
use crate::widgets::format_number;
use warpscope_core::layernorm::numerics::ErrorOutput;

/// The `layernorm-error` view.
#[derive(Debug, Clone, Default)]
pub struct ErrorView;

impl View for ErrorView {
    type Scene = warpscope_core::layernorm::numerics::ErrorScene;

    fn ui(&mut self, ui: &mut egui::Ui, out: &Out<Self>, _cx: &mut ViewContext<'_>) {
        draw(ui, out);
    }
}

/// `layernorm-error`.
fn draw(ui: &mut egui::Ui, o: &ErrorOutput) {
    let pts = |v: &[f64]| {
        o.means
            .iter()
            .zip(v)
            .map(|(m, e)| [*m, *e])
            .collect::<Vec<_>>()
    };
    ui.label(
        egui::RichText::new(tr(
            ui,
            "Max relative error of ∇x vs f64, as the row mean grows (rows ~ N(mean, 1))",
            "∇x 与 f64 相比的最大相对误差，随行均值增大（每行 ~ N(均值, 1)）",
        ))
        .strong(),
    );
    widgets::log_log_plot(
        ui,
        "ln-error",
        &[
            (
                tr(ui, "HW4 form (x̂ first)", "HW4 写法（先求 x̂）"),
                pts(&o.rel_error_hw4),
            ),
            (
                tr(ui, "slides/paper form (raw x)", "slides/论文写法（原始 x）"),
                pts(&o.rel_error_slides),
            ),
        ],
        tr(ui, "row mean", "行均值"),
        tr(ui, "max relative error", "最大相对误差"),
    );
    ui.label(
        egui::RichText::new(tr(
            ui,
            "Forward variance beside it: E[x²]−E[x]² (one pass) vs two passes",
            "对照前向方差：E[x²]−E[x]²（一遍）与两遍",
        ))
        .strong(),
    );
    widgets::log_log_plot(
        ui,
        "ln-var",
        &[
            (
                tr(ui, "one pass E[x²]−E[x]²", "一遍 E[x²]−E[x]²"),
                pts(&o.rel_error_var_one_pass),
            ),
            (tr(ui, "two passes", "两遍"), pts(&o.rel_error_var_two_pass)),
        ],
        tr(ui, "row mean", "行均值"),
        tr(ui, "relative error of var", "方差的相对误差"),
    );
    egui::Grid::new("ln-error-table")
        .striped(true)
        .show(ui, |ui| {
            for h in [
                tr(ui, "mean", "均值"),
                "HW4",
                "slides",
                "slides / HW4",
                tr(ui, "rows with var ≤ 0", "方差 ≤ 0 的行数"),
            ] {
                ui.strong(h);
            }
            ui.end_row();
            for i in 0..o.means.len() {
                ui.monospace(format_number(o.means[i]));
                ui.monospace(format!("{:.2e}", o.rel_error_hw4[i]));
                ui.monospace(format!("{:.2e}", o.rel_error_slides[i]));
                ui.monospace(format!("{:.2}", o.ratio_slides_over_hw4[i]));
                ui.monospace(
                    o.nonpositive_var_rows
                        .get(i)
                        .map_or("—".into(), |n| n.to_string()),
                );
                ui.end_row();
            }
        });
    ui.label(
        egui::RichText::new(tr(
            ui,
            o.error_definition,
            "每行 max|∇x − ∇x_ref| / max|∇x_ref|（在同样存储的输入上以 f64 为参考），再对所有行取最大",
        ))
        .small(),
    );
}
