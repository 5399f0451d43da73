//! `trainer-fp16`: FP16 storage swallowing updates smaller than half a spacing, against FP32 master
//! weights.

use crate::i18n::tr;
use crate::trf;
use crate::views::{Out, View, ViewContext};
use warpscope_core::trainer::fp16::Fp16Output;

/// The `trainer-fp16` view.
#[derive(Debug, Clone, Default)]
pub struct Fp16View;

impl View for Fp16View {
    type Scene = warpscope_core::trainer::fp16::Fp16Scene;

    fn ui(&mut self, ui: &mut egui::Ui, out: &Out<Self>, _cx: &mut ViewContext<'_>) {
        draw(ui, out);
    }
}

/// `trainer-fp16`.
fn draw(ui: &mut egui::Ui, o: &Fp16Output) {
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
        .x_axis_label(tr(ui, "Adam step", "Adam 步数"))
        .y_axis_label("γ")
        .allow_scroll(false)
        .show(ui, |plot| {
            for (i, s) in o.samples.iter().enumerate() {
                let colour = crate::widgets::series_colour(i);
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
                    egui_plot::Line::new(format!("FP16 γ → {:.3}", s.target), f16)
                        .width(2.0)
                        .color(colour),
                );
                plot.line(
                    egui_plot::Line::new(format!("FP32 γ → {:.3}", s.target), f32m)
                        .color(colour)
                        .style(egui_plot::LineStyle::dashed_loose()),
                );
            }
        });
    // The legend below the data: one colour per target, the line's style says the precision.
    ui.label(tr(
        ui,
        "solid: FP16-stored γ · dashed: FP32 master γ · colour: its target",
        "实线：FP16 存储的 γ · 虚线：FP32 主参数 γ · 颜色：它的目标",
    ));
    let legend: Vec<crate::widgets::Series> = o
        .samples
        .iter()
        .enumerate()
        .map(|(i, s)| crate::widgets::Series {
            name: format!("γ → {}", crate::widgets::format_number(f64::from(s.target))),
            colour: crate::widgets::series_colour(i),
        })
        .collect();
    crate::widgets::legend(ui, &legend);
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
