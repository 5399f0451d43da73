//! `trainer-adam`: one parameter through Adam step by step, its trajectory in every storage
//! format with and without FP32 master weights, and the numbers that decide whether an update
//! lands (the first update against the gap in its direction) or whether Adam divides by zero
//! (ε as the state holds it).

use egui_plot::{Line, LineStyle, Plot};

use crate::i18n::{tr, zh};
use crate::trf;
use crate::views::{Out, View, ViewContext};
use crate::widgets;
use warpscope_core::trainer::precision::{AdamOutput, Format, PrecisionRun};

/// The `trainer-adam` view.
#[derive(Debug, Clone, Default)]
pub struct AdamView;

impl View for AdamView {
    type Scene = warpscope_core::trainer::precision::AdamScene;

    fn ui(&mut self, ui: &mut egui::Ui, out: &Out<Self>, _cx: &mut ViewContext<'_>) {
        draw(ui, out);
    }
}

/// A number in scientific notation with four significant digits, or ±∞ / NaN.
fn sci(x: f32) -> String {
    if x.is_nan() {
        "NaN".to_owned()
    } else if x.is_infinite() {
        if x > 0.0 { "+∞" } else { "−∞" }.to_owned()
    } else if x == 0.0 {
        "0".to_owned()
    } else {
        format!("{x:.3e}")
    }
}

/// A parameter value to eight significant digits (an f32 near 1 needs them: 0.99902344),
/// or ±∞ / NaN.
fn value(x: f32) -> String {
    if x.is_finite() {
        widgets::format_sig(f64::from(x), 8)
    } else {
        sci(x)
    }
}

/// The line's label, with where it stopped being finite.
fn line_label(ui: &egui::Ui, r: &PrecisionRun) -> String {
    let name = r.label.get(zh(ui));
    match r.non_finite_at {
        Some(t) => trf!(
            ui,
            "{name} — ±∞/NaN from step {t}",
            "{name} — 第 {t} 步起为 ±∞/NaN"
        ),
        None if r.swallowed => trf!(ui, "{name} — swallowed", "{name} — 被吞掉"),
        None => name.to_owned(),
    }
}

fn colour(r: &PrecisionRun) -> egui::Color32 {
    match (r.precision.storage, r.precision.master) {
        (Format::F32, _) => widgets::GREY,
        (Format::F16, true) => widgets::BLUE,
        (Format::F16, false) => widgets::VERMILLION,
        (Format::Bf16, true) => widgets::GREEN,
        (Format::Bf16, false) => widgets::ORANGE,
    }
}

/// `trainer-adam`.
fn draw(ui: &mut egui::Ui, o: &AdamOutput) {
    let i = &o.input;
    let p = o.precision;
    let label = p.label();
    let label = label.get(zh(ui));
    ui.label(
        egui::RichText::new(trf!(
            ui,
            "{label}: parameter {}, lr {}, β = ({}, {}), ε = {}, weight decay {}, loss scale {} (unscaled {}×), {} steps.",
            "{label}：参数 {}，学习率 {}，β = ({}, {})，ε = {}，权重衰减 {}，损失缩放 {}（除回 {} 次），{} 步。",
            i.param,
            i.lr,
            i.betas[0],
            i.betas[1],
            sci(i.eps as f32),
            i.weight_decay,
            i.loss_scale,
            i.unscale_times,
            i.steps
        ))
        .strong(),
    );
    let verdict = if let Some(t) = o.non_finite_at {
        trf!(
            ui,
            "The parameter is ±∞ or NaN from step {t} on.",
            "参数从第 {t} 步起是 ±∞ 或 NaN。"
        )
    } else if o.swallowed {
        tr(
            ui,
            "Swallowed: the update is below half the gap, so rounding gives the parameter back unchanged.",
            "被吞掉：更新量小于半个间距，舍入后参数原样不变。",
        )
        .to_owned()
    } else {
        tr(
            ui,
            "Not swallowed: the first update changed the parameter.",
            "没有被吞掉：第一步的更新改变了参数。",
        )
        .to_owned()
    };
    egui::Grid::new("trainer-adam-numbers")
        .num_columns(2)
        .striped(true)
        .show(ui, |ui| {
            let row = |ui: &mut egui::Ui, k: &str, v: String| {
                ui.label(k);
                ui.monospace(v);
                ui.end_row();
            };
            row(
                ui,
                tr(ui, "Adam's first update (before rounding)", "Adam 第一步的更新量（舍入前）"),
                sci(o.first_update),
            );
            row(
                ui,
                tr(ui, "what the first step really changed", "第一步实际改变的量"),
                sci(o.first_applied),
            );
            row(
                ui,
                &trf!(
                    ui,
                    "gap of the kept parameter ({}) to its neighbour in the update's direction (half of it)",
                    "保存的参数（{}）在更新方向上到相邻值的间距（一半）",
                    p.param_format().name()
                ),
                format!(
                    "{} ({})",
                    sci(o.gap_in_update_direction),
                    sci(o.gap_in_update_direction / 2.0)
                ),
            );
            row(
                ui,
                &trf!(ui, "{} spacing at the parameter", "{} 在参数处的间距", p.storage.name()),
                sci(o.spacing_at_param),
            );
            row(
                ui,
                tr(ui, "swallowed (first step; steps in all)", "被吞掉（第一步；总步数）"),
                format!(
                    "{} ({} / {})",
                    if o.swallowed { tr(ui, "yes", "是") } else { tr(ui, "no", "否") },
                    o.swallowed_steps,
                    o.steps.len()
                ),
            );
            row(
                ui,
                &trf!(ui, "ε as the {} state holds it", "{} 状态里存下的 ε", p.state.name()),
                sci(o.eps_in_state),
            );
            if o.skipped_steps > 0 {
                row(
                    ui,
                    tr(ui, "steps skipped (the scaled gradient overflowed)", "跳过的步数（缩放后的梯度溢出）"),
                    o.skipped_steps.to_string(),
                );
            }
        });
    ui.label(egui::RichText::new(verdict).strong());
    ui.add_space(4.0);
    ui.label(
        egui::RichText::new(trf!(
            ui,
            "The parameter after each step as the optimizer keeps it, in every storage ({} state); dashed: the FP32 master copy, thin: the copy the forward pass sees; lines that coincide lie on top of each other",
            "每步之后优化器保存的参数，各种存储格式（{} 状态）；虚线：FP32 主参数，细线：前向看到的那份；重合的线叠在一起",
            p.state.name()
        ))
        .strong(),
    );
    let labels: Vec<String> = o.comparison.iter().map(|r| line_label(ui, r)).collect();
    let copy_of = |name: &str| {
        trf!(
            ui,
            "{} copy the forward pass sees (FP32 master)",
            "前向看到的 {} 副本（有 FP32 主参数）",
            name
        )
    };
    let copies: Vec<String> = o
        .comparison
        .iter()
        .map(|r| copy_of(r.precision.storage.name()))
        .collect();
    let broke = o.non_finite_at.map(|t| {
        (
            trf!(ui, "±∞ / NaN from step {t}", "第 {t} 步起为 ±∞ / NaN"),
            f64::from(t),
        )
    });
    // The legend goes below the plot: inside it would cover the trajectories.
    let legend: Vec<widgets::Series> = o
        .comparison
        .iter()
        .zip(&labels)
        .map(|(r, name)| widgets::Series {
            name: name.clone(),
            colour: colour(r),
        })
        .collect();
    Plot::new("trainer-adam-trajectory")
        .height(280.0)
        .x_axis_label(tr(ui, "Adam step", "Adam 步数"))
        .y_axis_label(tr(ui, "parameter", "参数"))
        .include_x(0.0)
        .include_x(f64::from(i.steps))
        .allow_scroll(false)
        .allow_zoom(false)
        .allow_drag(false)
        .show(ui, |pu| {
            let points = |first: f32, xs: &[f32]| -> Vec<[f64; 2]> {
                std::iter::once([0.0, f64::from(first)])
                    .chain(
                        xs.iter()
                            .enumerate()
                            .map(|(k, &x)| [(k + 1) as f64, f64::from(x)]),
                    )
                    .filter(|q| q[1].is_finite())
                    .collect()
            };
            for ((r, name), copy) in o.comparison.iter().zip(labels).zip(copies) {
                let start = r.precision.param_format().round64(i.param);
                let pts = points(start, &r.trajectory);
                if r.precision.master {
                    let first = r.precision.storage.round(start);
                    pu.line(
                        Line::new(copy, points(first, &r.model_trajectory))
                            .color(colour(r))
                            .width(1.0),
                    );
                }
                let chosen = r.precision == p
                    || (r.precision.storage == Format::F32 && p.storage == Format::F32);
                let mut line =
                    Line::new(name, pts)
                        .color(colour(r))
                        .width(if chosen { 3.5 } else { 1.8 });
                if r.precision.master {
                    line = line.style(LineStyle::dashed_loose());
                }
                pu.line(line);
            }
            if let Some((name, t)) = broke {
                pu.vline(
                    egui_plot::VLine::new(name, t)
                        .color(widgets::VERMILLION)
                        .style(LineStyle::dashed_dense()),
                );
            }
        });
    widgets::legend(ui, &legend);
    let last = o.steps.last();
    if let Some(s) = last {
        ui.label(trf!(
            ui,
            "After step {}: gradient seen by Adam {}, m = {}, v = {}, parameter {} (the forward pass sees {}).",
            "第 {} 步之后：Adam 看到的梯度 {}，m = {}，v = {}，参数 {}（前向看到 {}）。",
            s.step,
            sci(s.grad),
            sci(s.m),
            sci(s.v),
            value(s.param),
            value(s.model_param)
        ));
    }
}
