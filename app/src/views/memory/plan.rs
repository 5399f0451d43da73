//! `memory-plan`: the greedy static plan as a Gantt chart.

use super::{blh, g, mib, plot_base, shape_line, tensor_colour};
use crate::i18n::tr;
use crate::trf;
use crate::views::{Out, View, ViewContext};
use crate::widgets::format_number;
use crate::widgets::{self, GanttBar, GanttRow, LedgerBar, mib_text};
use egui_plot::{HLine, Legend, Line, Points, Polygon, Text, VLine};
use warpscope_core::memory::arena::{ArenaPlan, Planner};
use warpscope_core::memory::plan::PlanOutput;
use warpscope_core::memory::plan::PlanRun;

/// The `memory-plan` view.
#[derive(Debug, Clone, Default)]
pub struct PlanView;

impl View for PlanView {
    type Scene = warpscope_core::memory::plan::PlanScene;

    fn ui(&mut self, ui: &mut egui::Ui, out: &Out<Self>, _cx: &mut ViewContext<'_>) {
        match out {
            PlanRun::Lecture(o) => draw(ui, o),
            PlanRun::Input(a) => draw_arena(ui, a),
        }
    }
}

/// The user's tensors: offset (bytes) against op, one rectangle per tensor.
fn draw_arena(ui: &mut egui::Ui, a: &ArenaPlan) {
    let planner = match a.planner {
        Planner::CreationOrder => tr(ui, "creation order (the lecture's)", "按创建顺序（讲义的）"),
        Planner::GreedyBySize => tr(ui, "greedy by size (TFLite's)", "按大小贪心（TFLite 的）"),
    };
    let verdict = if a.total_bytes == a.lower_bound_peak_live {
        tr(ui, "the plan reaches the lower bound", "规划正好达到下界").to_owned()
    } else {
        trf!(
            ui,
            "{} above the lower bound",
            "比下界多 {}",
            widgets::bytes_text(a.total_bytes - a.lower_bound_peak_live)
        )
    };
    ui.label(
        egui::RichText::new(trf!(
            ui,
            "{} tensors, planner {planner}: arena {} ({} B); lower bound = the peak of live bytes {} ({} B) — {verdict}.",
            "{} 个张量，规划算法 {planner}：总共 {}（{} B）；下界 = 活着的字节数的峰值 {}（{} B）— {verdict}。",
            a.placements.len(),
            widgets::bytes_text(a.total_bytes),
            a.total_bytes,
            widgets::bytes_text(a.lower_bound_peak_live),
            a.lower_bound_peak_live
        ))
        .strong(),
    );
    if !a.touching.is_empty() {
        let pairs: Vec<String> = a
            .touching
            .iter()
            .take(6)
            .map(|t| format!("{} → {} (op {})", t.input, t.output, t.op))
            .collect();
        ui.label(trf!(
            ui,
            "Lifetimes are closed: an op reads its input while it writes its output, so these pairs are alive together at one op and get separate bytes (a half-open planner would let them share): {}",
            "生命周期是闭区间：op 一边读输入一边写输出，下面这些成对的张量在同一个 op 上都活着，各占各的字节（按半开区间规划会让它们共用）：{}",
            pairs.join(", ")
        ));
    }
    ui.label(
        egui::RichText::new(tr(
            ui,
            "The arena: x = op (lifetimes closed at both ends), y = offset in bytes, one box per tensor",
            "显存池：横轴 = op（生命周期两端都算），纵轴 = 偏移（字节），每个张量一个方框",
        ))
        .strong(),
    );
    let total = a.total_bytes as f64;
    let arena_label = tr(ui, "arena", "总大小").to_owned();
    let labelled = a.placements.len() <= 64;
    plot_base("memory-plan-arena", 300.0)
        .x_axis_label("op")
        .y_axis_label(tr(ui, "offset (bytes)", "偏移（字节）"))
        .include_y(0.0)
        .include_y(total * 1.05)
        .show(ui, |pu| {
            for (k, t) in a.placements.iter().enumerate() {
                let (x0, x1) = (t.first_op as f64 - 0.45, t.last_op as f64 + 0.45);
                let (y0, y1) = (t.offset as f64, (t.offset + t.size_bytes) as f64);
                let c = widgets::series_colour(k);
                pu.polygon(
                    Polygon::new(t.name.clone(), vec![[x0, y0], [x1, y0], [x1, y1], [x0, y1]])
                        .fill_color(c.gamma_multiply(0.55))
                        .stroke(egui::Stroke::new(1.0, c)),
                );
                // Names inside the boxes while they can be read; hover names them beyond.
                if labelled {
                    pu.text(Text::new(
                        t.name.clone(),
                        [(x0 + x1) / 2.0, (y0 + y1) / 2.0].into(),
                        t.name.clone(),
                    ));
                }
            }
            pu.hline(HLine::new(arena_label, total).color(widgets::VERMILLION));
        });
}

/// `memory-plan`.
fn draw(ui: &mut egui::Ui, o: &PlanOutput) {
    let s = &o.shape;
    let sizes: Vec<String> = o.blocks_blh.iter().map(|b| format_number(*b)).collect();
    let blh_bytes = s.blh() * s.dtype.bytes();
    ui.label(trf!(
        ui,
        "{}: 1 BLH = {}. Memory in MiB = 2²⁰ bytes.",
        "{}：1 BLH = {}。显存以 MiB 计，1 MiB = 2²⁰ 字节。",
        shape_line(s),
        mib_text(blh_bytes)
    ));
    let verdict = if o.at_lower_bound {
        tr(ui, "the plan reaches the lower bound", "规划正好达到下界").to_owned()
    } else {
        trf!(
            ui,
            "the plan is {} above the lower bound",
            "规划比下界多 {}",
            mib_text(o.total_bytes.saturating_sub(o.lower_bound_bytes))
        )
    };
    ui.label(
        egui::RichText::new(trf!(
            ui,
            "Greedy plan: {} blocks of {} BLH = {} = {}; lower bound 3BLH + max{{BL²N, 3BLH}} = {} = {} — {verdict}.",
            "贪心规划：{} 块，{} BLH = {} = {}；下界 3BLH + max{{BL²N, 3BLH}} = {} = {} — {verdict}。",
            o.blocks.len(),
            sizes.join(" + "),
            blh(o.total_blh),
            mib_text(o.total_bytes),
            blh(o.lower_bound_blh),
            mib_text(o.lower_bound_bytes),
        ))
        .strong(),
    );
    ui.add_space(4.0);
    ui.label(
        egui::RichText::new(if crate::widgets::stepper::figure_mode(ui.ctx()) {
            tr(
                ui,
                "The plan: one row per block, bars = the tensors it holds over the ten steps",
                "规划：每块一行，横条 = 这块在十个步骤里先后存放的张量",
            )
        } else {
            tr(
                ui,
                "The plan: one row per block, bars = the tensors it holds over the ten steps (hover for sizes)",
                "规划：每块一行，横条 = 这块在十个步骤里先后存放的张量（悬停看大小）",
            )
        })
        .strong(),
    );
    let rows: Vec<GanttRow> = o
        .blocks
        .iter()
        .map(|b| GanttRow {
            label: trf!(
                ui,
                "block {} · {} · {:.2} MiB",
                "块 {} · {} · {:.2} MiB",
                b.index,
                blh(b.size_blh),
                mib(b.bytes)
            ),
            bars: b
                .tensors
                .iter()
                .map(|t| GanttBar {
                    name: g(t.name),
                    first: t.start_step,
                    last: t.end_step,
                    colour: tensor_colour(t.name),
                    hover: trf!(
                        ui,
                        "{}: {} = {} ({} B), steps {}–{}, in block {} ({})",
                        "{}：{} = {}（{} B），第 {}–{} 步，在块 {} 里（{}）",
                        g(t.name),
                        blh(t.size_blh),
                        mib_text(t.bytes),
                        t.bytes,
                        t.start_step,
                        t.end_step,
                        b.index,
                        mib_text(b.bytes)
                    ),
                })
                .collect(),
        })
        .collect();
    widgets::gantt(ui, &rows, o.steps, &[]);
    if o.arena.planner == Planner::GreedyBySize {
        ui.label(trf!(
            ui,
            "The same ten tensors in one arena by greedy by size (TFLite's, parameter planner): {} against the lower bound {}.",
            "同样这十个张量按大小贪心（TFLite 的，参数 planner）放进一整块显存池：{}，下界 {}。",
            mib_text(o.arena.total_bytes),
            mib_text(o.arena.lower_bound_peak_live)
        ));
    }
    ui.add_space(6.0);
    ui.label(
        egui::RichText::new(tr(
            ui,
            "Total of the blocks vs the lower bound, MiB",
            "各块之和与下界，MiB",
        ))
        .strong(),
    );
    let bl2n_blh = s.bl2n_in_blh();
    widgets::ledger_bars(
        ui,
        &[
            LedgerBar {
                name: tr(ui, "plan", "规划").to_owned(),
                parts: o
                    .blocks
                    .iter()
                    .map(|b| (trf!(ui, "block {}", "块 {}", b.index), mib(b.bytes)))
                    .collect(),
            },
            LedgerBar {
                name: tr(ui, "lower bound", "下界").to_owned(),
                parts: vec![
                    ("3BLH".to_owned(), 3.0 * mib(blh_bytes)),
                    (
                        if bl2n_blh >= 3.0 { "BL²N" } else { "3BLH" }.to_owned(),
                        bl2n_blh.max(3.0) * mib(blh_bytes),
                    ),
                ],
            },
        ],
        "MiB",
    );
    ui.add_space(6.0);
    let d = s.d_head().max(1);
    ui.label(egui::RichText::new(trf!(
        ui,
        "Where BL²N overtakes 3BLH: BL²N / BLH = L / d_head, so the score block dominates from L ≥ 3·d_head = {} (exercise 6). Here L = {}: {}.",
        "BL²N 何时超过 3BLH：BL²N / BLH = L / d_head，所以从 L ≥ 3·d_head = {} 起分数矩阵那一块占主导（练习 6）。这里 L = {}：{}。",
        o.crossover_len,
        s.len,
        if o.scores_dominate { format!("BL²N = {} ≥ 3BLH", blh(bl2n_blh)) } else { format!("BL²N = {} < 3BLH", blh(bl2n_blh)) }
    )).strong());
    let x_max = (o.crossover_len.max(1) as f64 * 3.0).max(s.len as f64 * 1.3);
    let n = 200;
    let scores: Vec<[f64; 2]> = (0..=n)
        .map(|i| {
            let l = x_max * f64::from(i) / f64::from(n);
            [l, l / d as f64]
        })
        .collect();
    let (cross, len) = (o.crossover_len as f64, s.len as f64);
    let this_shape = trf!(ui, "this shape: L = {}", "当前形状：L = {}", s.len);
    plot_base("memory-plan-crossover", 190.0)
        .legend(
            Legend::default()
                .position(egui_plot::Corner::LeftTop)
                .follow_insertion_order(true),
        )
        .x_axis_label(trf!(
            ui,
            "sequence length L (d_head = {d})",
            "序列长度 L（d_head = {d}）"
        ))
        .y_axis_label(tr(ui, "size (BLH)", "大小（BLH）"))
        .include_y(0.0)
        .include_y(6.0)
        .include_x(0.0)
        .show(ui, |pu| {
            pu.line(
                Line::new("BL²N = L / d_head", scores)
                    .color(widgets::VERMILLION)
                    .width(2.0),
            );
            pu.hline(HLine::new("3BLH", 3.0).color(widgets::BLUE).width(2.0));
            pu.vline(
                VLine::new(format!("L = 3·d_head = {}", o.crossover_len), cross)
                    .color(widgets::GREY)
                    .style(egui_plot::LineStyle::dashed_loose()),
            );
            pu.points(
                Points::new(this_shape, vec![[len, bl2n_blh]])
                    .radius(5.0)
                    .color(widgets::ORANGE),
            );
        });
}
