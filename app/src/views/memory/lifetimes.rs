//! `memory-lifetimes`: live temporaries of self-attention backward, step by step, against the lower bound.

use super::{blh, g, mib, plot_base, shape_line, tensor_colour};
use crate::i18n::tr;
use crate::trf;
use crate::views::{Out, View, ViewContext};
use crate::widgets::format_number;
use crate::widgets::{self, mib_text};
use egui_plot::{Bar, BarChart, HLine, Legend, PlotPoint, Text};
use warpscope_core::memory::lifetimes::LifetimesOutput;

/// The `memory-lifetimes` view.
#[derive(Debug, Clone, Default)]
pub struct LifetimesView;

impl View for LifetimesView {
    type Scene = warpscope_core::memory::lifetimes::LifetimesScene;

    fn ui(&mut self, ui: &mut egui::Ui, out: &Out<Self>, _cx: &mut ViewContext<'_>) {
        draw(ui, out);
    }
}

/// `memory-lifetimes`.
fn draw(ui: &mut egui::Ui, o: &LifetimesOutput) {
    let s = &o.shape;
    ui.label(trf!(
        ui,
        "{}: 1 BLH = {}, BL²N = {} = {} (L / d_head). Memory in MiB = 2²⁰ bytes.",
        "{}：1 BLH = {}，BL²N = {} = {}（L / d_head）。显存以 MiB 计，1 MiB = 2²⁰ 字节。",
        shape_line(s),
        mib_text(o.blh_bytes),
        blh(o.bl2n_blh),
        mib_text(o.bl2n_bytes)
    ));
    let [p1, p2] = [
        o.peak_steps.first().copied().unwrap_or(0),
        o.peak_steps.get(1).copied().unwrap_or(0),
    ];
    let live_at = |step: usize| {
        o.live_per_step
            .get(step.wrapping_sub(1))
            .copied()
            .unwrap_or(0.0)
    };
    let why = if o.scores_dominate {
        trf!(
            ui,
            "BL²N ≥ 3BLH here (L = {} ≥ 3·d_head = {}), so step {p1} sets the bound",
            "这里 BL²N ≥ 3BLH（L = {} ≥ 3·d_head = {}），所以下界由第 {p1} 步决定",
            s.len,
            o.crossover_len
        )
    } else {
        trf!(
            ui,
            "BL²N < 3BLH here (L = {} < 3·d_head = {}), so step {p2} sets the bound",
            "这里 BL²N < 3BLH（L = {} < 3·d_head = {}），所以下界由第 {p2} 步决定",
            s.len,
            o.crossover_len
        )
    };
    ui.label(
        egui::RichText::new(trf!(
            ui,
            "Lower bound 3BLH + max{{BL²N, 3BLH}} = {} = {}. Peaks: step {p1} holds 3BLH + BL²N = {}, step {p2} holds 6BLH = {}; {why}.",
            "下界 3BLH + max{{BL²N, 3BLH}} = {} = {}。峰值：第 {p1} 步占 3BLH + BL²N = {}，第 {p2} 步占 6BLH = {}；{why}。",
            blh(o.lower_bound_blh),
            mib_text(o.lower_bound_bytes),
            blh(live_at(p1)),
            blh(live_at(p2)),
        ))
        .strong(),
    );
    ui.add_space(4.0);
    ui.label(
        egui::RichText::new(trf!(
            ui,
            "Live temporaries per step, in BLH (1 BLH = {}); ∇out is an input, not a temporary",
            "每一步活着的临时张量，单位 BLH（1 BLH = {}）；∇out 是输入，不算临时张量",
            mib_text(o.blh_bytes)
        ))
        .strong(),
    );
    let steps = o.steps.len();
    let bound = o.lower_bound_blh;
    let top = o
        .live_per_step
        .iter()
        .copied()
        .fold(bound, f64::max)
        .max(f64::MIN_POSITIVE);
    // Plot height in points per BLH (the plot is 300 points tall, ~40 of them axes).
    let pt_per_blh = 260.0 / (top * 1.2);
    let gap = ui.visuals().extreme_bg_color;
    let mut charts = Vec::new();
    let mut labels = Vec::new();
    let zh = crate::i18n::zh(ui);
    for (i, t) in o.tensors.iter().enumerate() {
        let colour = widgets::series_colour(i);
        let mut bars = Vec::new();
        for st in &o.steps {
            if !st.live.contains(&t.name) {
                continue;
            }
            let below: f64 = o.tensors[..i]
                .iter()
                .filter(|u| st.live.contains(&u.name))
                .map(|u| u.size_blh)
                .sum();
            bars.push(
                Bar::new(st.step as f64, t.size_blh)
                    .base_offset(below)
                    .width(0.72)
                    .fill(colour)
                    .stroke(egui::Stroke::new(1.0, gap))
                    .name(g(t.name)),
            );
            if t.size_blh * pt_per_blh >= 14.0 {
                labels.push(
                    Text::new(
                        "",
                        PlotPoint::new(st.step as f64, below + t.size_blh / 2.0),
                        egui::RichText::new(g(t.name))
                            .size(crate::theme::label_size(ui.ctx(), 11.5)),
                    )
                    .color(widgets::text_on(colour)),
                );
            }
        }
        let (name, bytes) = (g(t.name), t.bytes);
        charts.push(
            // Unnamed: the tensors are named inside their bars and on hover, not in the legend.
            BarChart::new("", bars)
                .id(("memory-lifetimes-tensor", i))
                .color(colour)
                .element_formatter(Box::new(move |b: &Bar, _: &BarChart| {
                    let (step, size, bytes) = (b.argument, blh(b.value), mib_text(bytes));
                    if zh {
                        format!("{name} 在第 {step} 步：{size} = {bytes}")
                    } else {
                        format!("{name} at step {step}: {size} = {bytes}")
                    }
                })),
        );
    }
    let peaks: Vec<(usize, String)> = vec![
        (
            p1,
            tr(ui, "peak: 3BLH + BL²N", "峰值：3BLH + BL²N").to_owned(),
        ),
        (p2, tr(ui, "peak: 6BLH", "峰值：6BLH").to_owned()),
    ];
    let line_col = ui.visuals().text_color().gamma_multiply(0.7);
    let bound_name = trf!(ui, "lower bound {}", "下界 {}", blh(bound));
    let peak_size = crate::theme::label_size(ui.ctx(), 12.5);
    plot_base("memory-lifetimes-plot", 300.0)
        .legend(
            Legend::default()
                .position(egui_plot::Corner::RightTop)
                .follow_insertion_order(true),
        )
        .x_axis_label(tr(ui, "step", "步"))
        .y_axis_label(tr(ui, "live temporaries (BLH)", "活着的临时张量（BLH）"))
        .include_x(0.4)
        .include_x(steps as f64 + 0.6)
        .include_y(0.0)
        .include_y(top * 1.2)
        .show(ui, |pu| {
            for c in charts {
                pu.bar_chart(c.allow_hover(true));
            }
            for l in labels {
                pu.text(l);
            }
            pu.hline(
                HLine::new(bound_name, bound)
                    .color(line_col)
                    .style(egui_plot::LineStyle::dashed_loose()),
            );
            for (step, label) in peaks {
                if step == 0 {
                    continue;
                }
                pu.text(
                    Text::new(
                        "",
                        PlotPoint::new(step as f64, live_at(step) + top * 0.06),
                        egui::RichText::new(label).size(peak_size).strong(),
                    )
                    .color(widgets::VERMILLION),
                );
            }
        });
    ui.add_space(6.0);
    ui.label(
        egui::RichText::new(tr(
            ui,
            "The ten steps of self-attention backward",
            "自注意力反向的十个步骤",
        ))
        .strong(),
    );
    egui::Grid::new("memory-steps")
        .striped(true)
        .num_columns(6)
        .show(ui, |ui| {
            for (en, zh) in [
                ("step", "步"),
                ("reads", "读"),
                ("creates", "产生"),
                ("dies after", "在此步后释放"),
                ("live (BLH / MiB)", "活着的（BLH / MiB）"),
                ("what it computes", "计算什么"),
            ] {
                ui.strong(tr(ui, en, zh));
            }
            ui.end_row();
            for st in &o.steps {
                let mark = if st.step == p1 || st.step == p2 {
                    tr(ui, " (peak)", "（峰值）")
                } else {
                    ""
                };
                if mark.is_empty() {
                    ui.label(st.step.to_string());
                } else {
                    ui.colored_label(widgets::VERMILLION, format!("{}{mark}", st.step));
                }
                // Tensor names are symbols; the one input named in words reads in Chinese too.
                let inputs: Vec<&str> = st
                    .inputs
                    .iter()
                    .map(|&i| match i {
                        "dropout mask" => tr(ui, i, "dropout 掩码"),
                        other => other,
                    })
                    .collect();
                ui.label(g(&inputs.join(", ")));
                let creates = if st.in_place.is_empty() {
                    g(&st.creates.join(", "))
                } else {
                    trf!(
                        ui,
                        "{} (in place)",
                        "{}（原地）",
                        g(&st.in_place.join(", "))
                    )
                };
                ui.label(creates);
                ui.label(g(&st.frees_after.join(", ")));
                ui.monospace(format!(
                    "{} / {:.2}",
                    format_number(st.live_blh),
                    mib(st.live_bytes)
                ));
                ui.add(egui::Label::new(g(crate::i18n::pick(ui, &st.what))).wrap());
                ui.end_row();
            }
        });
    if !crate::widgets::stepper::figure_mode(ui.ctx()) {
        ui.collapsing(tr(ui, "The ten temporaries", "十个临时张量"), |ui| {
            egui::Grid::new("memory-tensors")
                .striped(true)
                .show(ui, |ui| {
                    for (en, zh) in [
                        ("tensor", "张量"),
                        ("size", "大小"),
                        ("MiB", "MiB"),
                        ("alive in steps", "活在哪几步"),
                        ("what", "是什么"),
                    ] {
                        ui.strong(tr(ui, en, zh));
                    }
                    ui.end_row();
                    for t in &o.tensors {
                        ui.colored_label(tensor_colour(t.name), g(t.name));
                        ui.label(blh(t.size_blh));
                        ui.monospace(format!("{:.2}", mib(t.bytes)));
                        ui.label(format!("{}–{}", t.created_step, t.last_use_step));
                        ui.label(g(crate::i18n::pick(ui, &t.what)));
                        ui.end_row();
                    }
                });
        });
    }
}
