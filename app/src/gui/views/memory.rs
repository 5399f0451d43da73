//! Lab D (lecture §5) views: live temporaries of self-attention backward per step, the static
//! plan as a Gantt chart, the caching allocator batch by batch (reserved vs needed vs allocated,
//! the segment map at any batch, LightSeq2's one up-front allocation), and real PyTorch memory
//! snapshots. Memory is shown in MiB (2²⁰ bytes) everywhere.

use egui_plot::{Bar, BarChart, HLine, Legend, Line, Plot, PlotPoint, Points, Text, VLine};
use warpscope_core::memory::allocator::{self, AllocatorOutput, Pool, SegmentView, Simulation};
use warpscope_core::memory::lifetimes::{self, LifetimesOutput};
use warpscope_core::memory::plan::PlanOutput;
use warpscope_core::memory::snapshot::{self, BlockState, SnapshotOutput};

use super::generic::format_number;
use super::widgets::{
    self, BlockUse, GanttBar, GanttRow, LedgerBar, MapBlock, MapSegment, mib_text,
};
use crate::gui::SceneState;
use crate::i18n::tr;
use crate::trf;

/// Most rows a segment map draws before it aggregates consecutive segments.
pub const MAP_ROWS: usize = 96;

/// `memory-allocator` as its view needs it: the summary the CLI prints and the whole simulated
/// run (every batch's segment map, for the batch slider).
pub struct AllocatorRun {
    /// What `warpscope report memory-allocator` prints.
    pub summary: AllocatorOutput,
    /// The simulation it summarises.
    pub sim: Simulation,
}

/// The lecture's text as the embedded fonts can draw it: egui draws no combining marks and no
/// font has Ṽ (U+1E7C) or ᵀ (U+1D40), so the fused gradient ∇Q̃∇K̃∇Ṽ (also written ∇Q̃K̃Ṽ) reads
/// "∇QKV", other tildes are dropped and ᵀ becomes ^T.
fn g(s: &str) -> String {
    s.replace(
        "\u{2207}Q\u{303}\u{2207}K\u{303}\u{2207}\u{1E7C}",
        "\u{2207}QKV",
    )
    .replace("Q\u{303}K\u{303}\u{1E7C}", "QKV")
    .replace('\u{303}', "")
    .replace('\u{1E7C}', "V")
    .replace('\u{1D40}', "^T")
}

fn mib(bytes: u64) -> f64 {
    warpscope_core::memory::mib(bytes)
}

/// "1 BLH" etc. with at most two decimals.
fn blh(x: f64) -> String {
    format!("{} BLH", format_number((x * 100.0).round() / 100.0))
}

/// The colour of lifetimes tensor `name` (the same in the bar chart and the Gantt chart).
fn tensor_colour(name: &str) -> egui::Color32 {
    widgets::series_colour(
        lifetimes::TENSORS
            .iter()
            .position(|t| t.name == name)
            .unwrap_or(0),
    )
}

fn shape_line(s: &lifetimes::AttentionShape) -> String {
    format!(
        "B = {}, L = {}, H = {}, N = {} (d_head = {}), {}",
        s.batch,
        s.len,
        s.hidden,
        s.heads,
        s.d_head(),
        serde_json::to_value(s.dtype)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default()
    )
}

fn plot_base<'a>(id: &str, height: f32) -> Plot<'a> {
    Plot::new(id.to_owned())
        .height(height)
        .allow_zoom(false)
        .allow_drag(false)
        .allow_scroll(false)
        .allow_boxed_zoom(false)
        .allow_double_click_reset(false)
}

/// `memory-lifetimes`.
pub fn show_lifetimes(ui: &mut egui::Ui, o: &LifetimesOutput) {
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
                        egui::RichText::new(g(t.name)).size(11.5),
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
                        egui::RichText::new(label).size(12.5).strong(),
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
                ui.add(egui::Label::new(g(tr(ui, st.what, st.what_zh))).wrap());
                ui.end_row();
            }
        });
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
                    ui.label(g(tr(ui, t.what, t.what_zh)));
                    ui.end_row();
                }
            });
    });
}

/// `memory-plan`.
pub fn show_plan(ui: &mut egui::Ui, o: &PlanOutput) {
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
        egui::RichText::new(tr(
            ui,
            "The plan: one row per block, bars = the tensors it holds over the ten steps (hover for sizes)",
            "规划：每块一行，横条 = 这块在十个步骤里先后存放的张量（悬停看大小）",
        ))
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

/// Segment views of the simulator as the map widget draws them.
fn sim_segments(segs: &[SegmentView]) -> Vec<MapSegment> {
    segs.iter()
        .map(|s| MapSegment {
            address: s.address,
            size: s.size,
            pool: match s.pool {
                Pool::Small => "small".to_owned(),
                Pool::Large => "large".to_owned(),
            },
            blocks: s
                .blocks
                .iter()
                .map(|b| MapBlock {
                    offset: b.offset,
                    size: b.size,
                    requested: b.requested,
                    state: if b.allocated {
                        BlockUse::Allocated
                    } else {
                        BlockUse::Free
                    },
                })
                .collect(),
        })
        .collect()
}

/// Batches per second while the batch animation plays.
const PLAY_RATE: f32 = 12.0;

/// `memory-allocator`.
pub fn show_allocator(ui: &mut egui::Ui, r: &AllocatorRun, state: &mut SceneState) {
    let o = &r.summary;
    let largest = o.timeline.get(o.largest_batch as usize);
    egui::Grid::new("allocator-summary")
        .num_columns(2)
        .striped(true)
        .show(ui, |ui| {
            ui.label(tr(
                ui,
                "reserved by the caching allocator, peak (final)",
                "缓存分配器保留的显存，峰值（最终）",
            ));
            ui.strong(format!(
                "{:.1} MiB ({:.1} MiB)",
                o.reserved_peak_mib, o.reserved_final_mib
            ));
            ui.end_row();
            ui.label(tr(
                ui,
                "the largest single batch needs",
                "最大的单个批次需要",
            ));
            let seqs = largest.map_or(String::new(), |b| {
                trf!(ui, ", {} sequences", "，{} 个序列", b.seqs)
            });
            ui.strong(trf!(
                ui,
                "{:.1} MiB (batch {}, L = {}{seqs})",
                "{:.1} MiB（第 {} 批，L = {}{seqs}）",
                o.needed_peak_mib,
                o.largest_batch,
                o.largest_batch_len,
            ));
            ui.end_row();
            ui.label(tr(
                ui,
                "reserved peak / largest need",
                "保留峰值 / 最大需求",
            ));
            ui.strong(format!("{:.2}×", o.reserved_over_needed));
            ui.end_row();
            ui.label(tr(
                ui,
                "allocated peak (rounded blocks)",
                "已分配峰值（取整后的块）",
            ));
            ui.label(format!("{:.1} MiB", o.allocated_peak_mib));
            ui.end_row();
            ui.label(tr(
                ui,
                "LightSeq2: one allocation at the largest shape",
                "LightSeq2：按最大形状一次性分配",
            ));
            ui.label(trf!(
                ui,
                "{:.1} MiB, flat; on average {:.0}% of it idle at a batch's peak",
                "{:.1} MiB，不变；在每批的峰值时平均有 {:.0}% 闲着",
                o.preallocated_mib,
                100.0 * o.preallocated_mean_idle_share
            ));
            ui.end_row();
            ui.label(tr(
                ui,
                "segments cudaMalloc'ed (released on a full device)",
                "cudaMalloc 的段数（显存满时释放的）",
            ));
            ui.label(format!("{} ({})", o.segments_created, o.segments_released));
            ui.end_row();
            ui.label(tr(ui, "allocator events simulated", "模拟的分配器事件数"));
            ui.label(o.events.to_string());
            ui.end_row();
        });
    if let Some(oom) = &o.oom {
        ui.colored_label(
            ui.visuals().error_fg_color,
            trf!(
                ui,
                "Out of memory — the run stopped: {oom}",
                "显存不足 — 运行中止：{oom}"
            ),
        );
    }
    let n = o.timeline.len();
    if n == 0 {
        ui.label(tr(ui, "No batch was simulated.", "没有模拟任何批次。"));
        return;
    }
    let last = n - 1;
    let view = &mut state.view;
    view.batch = view.batch.min(last);
    if view.playing {
        view.carry += ui.input(|i| i.stable_dt).min(0.1) * PLAY_RATE;
        let whole = view.carry.floor();
        if whole >= 1.0 {
            view.carry -= whole;
            view.batch = (view.batch + whole as usize).min(last);
        }
        if view.batch >= last {
            view.playing = false;
        } else {
            ui.ctx().request_repaint();
        }
    }
    ui.add_space(4.0);
    ui.label(
        egui::RichText::new(tr(
            ui,
            "Over the run, MiB (2²⁰ bytes): reserved at each batch's end, allocated and needed at its peak",
            "整个运行过程，MiB（2²⁰ 字节）：每批结束时保留的显存，每批峰值时已分配和需要的显存",
        ))
        .strong(),
    );
    let names = [
        tr(ui, "reserved (caching allocator)", "保留（缓存分配器）"),
        tr(
            ui,
            "allocated (rounded blocks, batch peak)",
            "已分配（取整后的块，批内峰值）",
        ),
        tr(
            ui,
            "needed (bytes asked for, batch peak)",
            "需要（申请的字节，批内峰值）",
        ),
        tr(ui, "batch shown", "当前显示的批次"),
    ];
    let prealloc = trf!(
        ui,
        "LightSeq2 preallocated ({:.0} MiB)",
        "LightSeq2 预先分配（{:.0} MiB）",
        o.preallocated_mib
    );
    let sel = view.batch as f64;
    let series = |f: &dyn Fn(&allocator::BatchRecord) -> f64| -> Vec<[f64; 2]> {
        o.timeline.iter().map(|b| [b.batch as f64, f(b)]).collect()
    };
    plot_base("memory-allocator-plot", 330.0)
        .legend(
            Legend::default()
                .position(egui_plot::Corner::LeftBottom)
                .follow_insertion_order(true),
        )
        .x_axis_label(tr(ui, "batch", "批次"))
        .y_axis_label("MiB")
        .include_y(0.0)
        .include_y(o.reserved_peak_mib.max(o.preallocated_mib) * 1.08)
        .show(ui, |pu| {
            pu.line(
                Line::new(names[0], series(&|b| b.reserved_mib))
                    .color(widgets::VERMILLION)
                    .width(2.0),
            );
            pu.line(Line::new(names[1], series(&|b| b.allocated_peak_mib)).color(widgets::BLUE));
            pu.line(Line::new(names[2], series(&|b| b.needed_mib)).color(widgets::GREEN));
            pu.hline(
                HLine::new(prealloc, o.preallocated_mib)
                    .color(widgets::PURPLE)
                    .width(2.0)
                    .style(egui_plot::LineStyle::dashed_dense()),
            );
            pu.vline(VLine::new(names[3], sel).color(widgets::GREY));
        });
    ui.horizontal(|ui| {
        let play = if view.playing {
            tr(ui, "Pause", "暂停")
        } else {
            tr(ui, "Play", "播放")
        };
        if ui
            .button(play)
            .on_hover_text(tr(
                ui,
                "Animate the segment map batch by batch",
                "逐批播放段图的变化",
            ))
            .clicked()
        {
            if !view.playing && view.batch >= last {
                view.batch = 0;
            }
            view.playing = !view.playing;
            view.carry = 0.0;
        }
        if ui
            .button("<")
            .on_hover_text(tr(ui, "previous batch", "上一批"))
            .clicked()
        {
            view.batch = view.batch.saturating_sub(1);
            view.playing = false;
        }
        if ui
            .button(">")
            .on_hover_text(tr(ui, "next batch", "下一批"))
            .clicked()
        {
            view.batch = (view.batch + 1).min(last);
            view.playing = false;
        }
        let l = ui.label(tr(ui, "batch shown", "当前显示的批次"));
        if ui
            .add(
                egui::Slider::new(&mut view.batch, 0..=last).clamping(egui::SliderClamping::Always),
            )
            .labelled_by(l.id)
            .changed()
        {
            view.playing = false;
        }
    });
    let bi = view.batch.min(last);
    let Some(b) = o.timeline.get(bi) else { return };
    let frame = r.sim.frames.get(bi).map(Vec::as_slice).unwrap_or(&[]);
    let segs = sim_segments(frame);
    let (mut used, mut rounding, mut free) = (0u64, 0u64, 0u64);
    for blk in frame.iter().flat_map(|s| &s.blocks) {
        if blk.allocated {
            used += blk.requested.min(blk.size);
            rounding += blk.size.saturating_sub(blk.requested);
        } else {
            free += blk.size;
        }
    }
    ui.label(
        egui::RichText::new(trf!(
            ui,
            "Batch {bi}: L = {}, {} sequences ({} tokens), needs {:.1} MiB. Segment map at its allocated peak: {} segments, {} reserved = {} asked for + {} rounding loss + {} cached free; LightSeq2 would leave {:.0}% of its {:.1} MiB idle.",
            "第 {bi} 批：L = {}，{} 个序列（{} 个 token），需要 {:.1} MiB。已分配峰值时的段图：{} 个段，保留 {} = 申请 {} + 取整损失 {} + 缓存中空闲 {}；LightSeq2 的 {:.0}%（共 {:.1} MiB）会闲着。",
            b.len,
            b.seqs,
            b.tokens,
            b.needed_mib,
            frame.len(),
            mib_text(used + rounding + free),
            mib_text(used),
            mib_text(rounding),
            mib_text(free),
            100.0 * b.preallocated_idle_share,
            o.preallocated_mib
        ))
        .strong(),
    );
    widgets::segment_map(ui, &segs, MAP_ROWS);
}

fn block_use(s: &BlockState) -> BlockUse {
    match s {
        BlockState::ActiveAllocated => BlockUse::Allocated,
        BlockState::ActivePendingFree => BlockUse::PendingFree,
        BlockState::Inactive | BlockState::Other(_) => BlockUse::Free,
    }
}

/// What the file's contents say about the PyTorch that wrote it.
fn generation_hints(ui: &egui::Ui, o: &SnapshotOutput) -> Vec<String> {
    let mut h = Vec::new();
    if o.layout == "list" {
        h.push(
            tr(
                ui,
                "a bare list of segments (torch.cuda.memory_snapshot()): no trace, no settings",
                "只是一串段（torch.cuda.memory_snapshot()）：没有轨迹，没有设置",
            )
            .to_owned(),
        );
    }
    if o.blocks_have_addresses {
        h.push(
            tr(
                ui,
                "blocks carry their own addresses (the layout after PyTorch 2.0)",
                "块带有自己的地址（PyTorch 2.0 之后的格式）",
            )
            .to_owned(),
        );
    } else {
        h.push(
            tr(
                ui,
                "blocks carry no addresses (PyTorch 2.0 or older layout; addresses derived from the segment)",
                "块不带地址（PyTorch 2.0 或更早的格式；地址由段推出）",
            )
            .to_owned(),
        );
    }
    if o.allocator_settings.is_empty() {
        h.push(
            tr(
                ui,
                "no allocator_settings recorded (older PyTorch, or not a _snapshot() dict)",
                "没有记录 allocator_settings（较旧的 PyTorch，或不是 _snapshot() 字典）",
            )
            .to_owned(),
        );
    } else {
        h.push(trf!(
            ui,
            "allocator_settings recorded ({} entries; newer PyTorch)",
            "记录了 allocator_settings（{} 项；较新的 PyTorch）",
            o.allocator_settings.len()
        ));
    }
    if o.private_pool_segments > 0 {
        h.push(trf!(
            ui,
            "{} segments in private (CUDA-graph) pools",
            "{} 个段在私有（CUDA graph）池里",
            o.private_pool_segments
        ));
    }
    h.push(trf!(ui, "pickle protocol {}", "pickle 协议 {}", o.protocol));
    h
}

fn join_counts(ui: &egui::Ui, m: &std::collections::BTreeMap<String, usize>) -> String {
    if m.is_empty() {
        return tr(ui, "none", "无").to_owned();
    }
    m.iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A snapshot block state in the language of `ui` (PyTorch names them in English; a state this
/// table does not know stays as the file spells it).
fn block_state_name<'a>(ui: &egui::Ui, state: &'a str) -> &'a str {
    let zh = match state {
        "active_allocated" => "已分配",
        "active_pending_free" => "等待释放",
        "inactive" => "空闲",
        _ => return state,
    };
    tr(ui, state, zh)
}

/// [`join_counts`] for block states, each state named in the language of `ui`.
fn join_states(ui: &egui::Ui, m: &std::collections::BTreeMap<String, usize>) -> String {
    if m.is_empty() {
        return tr(ui, "none", "无").to_owned();
    }
    m.iter()
        .map(|(k, v)| format!("{} {v}", block_state_name(ui, k)))
        .collect::<Vec<_>>()
        .join(if crate::i18n::zh(ui) { "，" } else { ", " })
}

/// `memory-snapshot`.
pub fn show_snapshot(ui: &mut egui::Ui, o: &SnapshotOutput) {
    ui.label(trf!(
        ui,
        "File: {}. Memory in MiB = 2²⁰ bytes.",
        "文件：{}。显存以 MiB 计，1 MiB = 2²⁰ 字节。",
        o.path
    ));
    egui::Grid::new("snapshot-figures")
        .num_columns(2)
        .striped(true)
        .show(ui, |ui| {
            ui.label(tr(ui, "segments", "段"));
            ui.strong(o.segments.to_string());
            ui.end_row();
            ui.label(tr(ui, "blocks", "块"));
            ui.label(format!(
                "{} ({})",
                o.blocks,
                join_states(ui, &o.blocks_by_state)
            ));
            ui.end_row();
            ui.label(tr(
                ui,
                "reserved (Σ segment total_size)",
                "保留（Σ 段的 total_size）",
            ));
            ui.strong(format!(
                "{:.2} MiB ({} B)",
                o.reserved_mib, o.reserved_bytes
            ));
            ui.end_row();
            ui.label(tr(
                ui,
                "allocated (Σ segment allocated_size)",
                "已分配（Σ 段的 allocated_size）",
            ));
            ui.strong(format!(
                "{:.2} MiB ({} B)",
                o.allocated_mib, o.allocated_bytes
            ));
            ui.end_row();
            ui.label(tr(
                ui,
                "internal fragmentation (size − requested, active blocks)",
                "内部碎片（大小 − 申请量，活动块）",
            ));
            ui.label(mib_text(o.internal_fragmentation_bytes));
            ui.end_row();
            ui.label(tr(
                ui,
                "external fragmentation (cached free blocks)",
                "外部碎片（缓存中的空闲块）",
            ));
            ui.label(trf!(
                ui,
                "{}; the largest free block is {}",
                "{}；最大的空闲块是 {}",
                mib_text(o.external_fragmentation_bytes),
                mib_text(o.largest_free_block_bytes)
            ));
            ui.end_row();
            ui.label(tr(ui, "trace events", "轨迹事件"));
            ui.label(format!(
                "{} ({})",
                o.trace_events,
                join_counts(ui, &o.trace_actions)
            ));
            ui.end_row();
        });
    ui.add(
        egui::Label::new(trf!(
            ui,
            "What the file says about the PyTorch that wrote it: {}.",
            "从文件看写出它的 PyTorch：{}。",
            generation_hints(ui, o).join(tr(ui, "; ", "；"))
        ))
        .wrap(),
    );
    if !o.allocator_settings.is_empty() {
        ui.add(
            egui::Label::new(trf!(
                ui,
                "Allocator settings as recorded: {}.",
                "记录下的分配器设置：{}。",
                o.allocator_settings
                    .iter()
                    .map(|(k, v)| format!("{k} = {v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
            .wrap(),
        );
    }
    ui.add_space(4.0);
    ui.label(
        egui::RichText::new(tr(
            ui,
            "Replay of the trace (alloc and free_completed, in order) through the simulator",
            "用模拟器按顺序重放轨迹（alloc 和 free_completed）",
        ))
        .strong(),
    );
    egui::Grid::new("snapshot-replay")
        .num_columns(2)
        .striped(true)
        .show(ui, |ui| {
            ui.label(tr(ui, "reserved, peak (final)", "保留，峰值（最终）"));
            ui.strong(format!(
                "{} ({})",
                mib_text(o.replay_reserved_peak_bytes),
                mib_text(o.replay_reserved_final_bytes)
            ));
            ui.end_row();
            ui.label(tr(ui, "allocated, peak", "已分配，峰值"));
            ui.label(mib_text(o.replay_allocated_peak_bytes));
            ui.end_row();
            ui.label(tr(
                ui,
                "LightSeq2-style: one allocation of the peak live bytes",
                "LightSeq2 式：按峰值活字节一次性分配",
            ));
            ui.label(mib_text(o.replay_preallocated_bytes));
            ui.end_row();
            ui.label(tr(ui, "segments the replay creates", "重放产生的段数"));
            ui.label(o.replay_segments.len().to_string());
            ui.end_row();
            ui.label(tr(
                ui,
                "recreates the file's segments one for one?",
                "是否一一重现文件里的段？",
            ));
            match o.segments_match {
                Some(true) => {
                    ui.colored_label(
                        widgets::GREEN,
                        trf!(
                            ui,
                            "yes — all {} segments, same sizes, same order",
                            "是 — 全部 {} 个段，大小相同，顺序相同",
                            o.segments
                        ),
                    );
                }
                Some(false) => {
                    ui.colored_label(
                        widgets::VERMILLION,
                        tr(
                            ui,
                            "no — the replayed segments differ from the file's",
                            "否 — 重放出的段与文件里的不同",
                        ),
                    );
                }
                None => {
                    ui.label(if o.trace_starts_empty {
                        tr(ui, "no claim: the trace is empty", "不作判断：轨迹是空的")
                    } else {
                        tr(
                            ui,
                            "no claim: the trace starts mid-run",
                            "不作判断：轨迹从运行中途开始",
                        )
                    });
                }
            }
            ui.end_row();
        });
    if !o.replay_note.is_empty() {
        let note = tr(ui, &o.replay_note, &o.replay_note_zh);
        ui.add(egui::Label::new(egui::RichText::new(note).italics()).wrap());
    }
    if o.replay_unmatched_frees > 0 {
        ui.label(trf!(
            ui,
            "{} frees of blocks allocated before the trace began were skipped.",
            "跳过了 {} 次释放（这些块在轨迹开始前就已分配）。",
            o.replay_unmatched_frees
        ));
    }
    ui.add_space(4.0);
    ui.label(
        egui::RichText::new(tr(
            ui,
            "The file's segments (in file order) and their blocks",
            "文件里的段（按文件顺序）和它们的块",
        ))
        .strong(),
    );
    let segs: Vec<MapSegment> = o
        .segment_map
        .iter()
        .map(|s| MapSegment {
            address: s.address,
            size: s.size,
            pool: if s.device == 0 {
                s.pool.clone()
            } else {
                format!("{} · cuda:{}", s.pool, s.device)
            },
            blocks: s
                .blocks
                .iter()
                .map(|b| MapBlock {
                    offset: b.offset,
                    size: b.size,
                    requested: b.requested,
                    state: block_use(&b.state),
                })
                .collect(),
        })
        .collect();
    widgets::segment_map(ui, &segs, MAP_ROWS);
    ui.label(
        egui::RichText::new(trf!(
            ui,
            "Reading executes nothing from the file: every pickle opcode is checked first; files over {} MiB are refused.",
            "读取时不执行文件里的任何东西：每个 pickle 操作码都先检查；超过 {} MiB 的文件拒绝读取。",
            snapshot::MAX_FILE_BYTES >> 20
        ))
        .small(),
    );
}
