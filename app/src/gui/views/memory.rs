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
    ui.label(format!(
        "{}: 1 BLH = {}, BL²N = {} = {} (L / d_head). Memory in MiB = 2²⁰ bytes.",
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
    ui.label(
        egui::RichText::new(format!(
            "Lower bound 3BLH + max{{BL²N, 3BLH}} = {} = {}. Peaks: step {p1} holds 3BLH + BL²N = {}, step {p2} holds 6BLH = {}; {}.",
            blh(o.lower_bound_blh),
            mib_text(o.lower_bound_bytes),
            blh(live_at(p1)),
            blh(live_at(p2)),
            if o.scores_dominate {
                format!("BL²N ≥ 3BLH here (L = {} ≥ 3·d_head = {}), so step {p1} sets the bound", s.len, o.crossover_len)
            } else {
                format!("BL²N < 3BLH here (L = {} < 3·d_head = {}), so step {p2} sets the bound", s.len, o.crossover_len)
            }
        ))
        .strong(),
    );
    ui.add_space(4.0);
    ui.label(
        egui::RichText::new(format!(
            "Live temporaries per step, in BLH (1 BLH = {}); ∇out is an input, not a temporary",
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
                    format!(
                        "{name} at step {}: {} = {}",
                        b.argument,
                        blh(b.value),
                        mib_text(bytes)
                    )
                })),
        );
    }
    let peaks: Vec<(usize, String)> = vec![
        (p1, "peak: 3BLH + BL²N".to_owned()),
        (p2, "peak: 6BLH".to_owned()),
    ];
    let line_col = ui.visuals().text_color().gamma_multiply(0.7);
    plot_base("memory-lifetimes-plot", 300.0)
        .legend(
            Legend::default()
                .position(egui_plot::Corner::RightTop)
                .follow_insertion_order(true),
        )
        .x_axis_label("step")
        .y_axis_label("live temporaries (BLH)")
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
                HLine::new(format!("lower bound {}", blh(bound)), bound)
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
    ui.label(egui::RichText::new("The ten steps of self-attention backward").strong());
    egui::Grid::new("memory-steps")
        .striped(true)
        .num_columns(6)
        .show(ui, |ui| {
            for h in [
                "step",
                "reads",
                "creates",
                "dies after",
                "live (BLH / MiB)",
                "what it computes",
            ] {
                ui.strong(h);
            }
            ui.end_row();
            for st in &o.steps {
                let mark = if st.step == p1 || st.step == p2 {
                    " (peak)"
                } else {
                    ""
                };
                if mark.is_empty() {
                    ui.label(st.step.to_string());
                } else {
                    ui.colored_label(widgets::VERMILLION, format!("{}{mark}", st.step));
                }
                ui.label(g(&st.inputs.join(", ")));
                let creates = if st.in_place.is_empty() {
                    g(&st.creates.join(", "))
                } else {
                    format!("{} (in place)", g(&st.in_place.join(", ")))
                };
                ui.label(creates);
                ui.label(g(&st.frees_after.join(", ")));
                ui.monospace(format!(
                    "{} / {:.2}",
                    format_number(st.live_blh),
                    mib(st.live_bytes)
                ));
                ui.add(egui::Label::new(g(st.what)).wrap());
                ui.end_row();
            }
        });
    ui.collapsing("The ten temporaries", |ui| {
        egui::Grid::new("memory-tensors")
            .striped(true)
            .show(ui, |ui| {
                for h in ["tensor", "size", "MiB", "alive in steps", "what"] {
                    ui.strong(h);
                }
                ui.end_row();
                for t in &o.tensors {
                    ui.colored_label(tensor_colour(t.name), g(t.name));
                    ui.label(blh(t.size_blh));
                    ui.monospace(format!("{:.2}", mib(t.bytes)));
                    ui.label(format!("{}–{}", t.created_step, t.last_use_step));
                    ui.label(g(t.what));
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
    ui.label(format!(
        "{}: 1 BLH = {}. Memory in MiB = 2²⁰ bytes.",
        shape_line(s),
        mib_text(blh_bytes)
    ));
    let verdict = if o.at_lower_bound {
        "the plan reaches the lower bound".to_owned()
    } else {
        format!(
            "the plan is {} above the lower bound",
            mib_text(o.total_bytes.saturating_sub(o.lower_bound_bytes))
        )
    };
    ui.label(
        egui::RichText::new(format!(
            "Greedy plan: {} blocks of {} BLH = {} = {}; lower bound 3BLH + max{{BL²N, 3BLH}} = {} = {} — {verdict}.",
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
    ui.label(egui::RichText::new("The plan: one row per block, bars = the tensors it holds over the ten steps (hover for sizes)").strong());
    let rows: Vec<GanttRow> = o
        .blocks
        .iter()
        .map(|b| GanttRow {
            label: format!(
                "block {} · {} · {:.2} MiB",
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
                    hover: format!(
                        "{}: {} = {} ({} B), steps {}–{}, in block {} ({})",
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
    ui.label(egui::RichText::new("Total of the blocks vs the lower bound, MiB").strong());
    let bl2n_blh = s.bl2n_in_blh();
    widgets::ledger_bars(
        ui,
        &[
            LedgerBar {
                name: "plan".to_owned(),
                parts: o
                    .blocks
                    .iter()
                    .map(|b| (format!("block {}", b.index), mib(b.bytes)))
                    .collect(),
            },
            LedgerBar {
                name: "lower bound".to_owned(),
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
    ui.label(egui::RichText::new(format!(
        "Where BL²N overtakes 3BLH: BL²N / BLH = L / d_head, so the score block dominates from L ≥ 3·d_head = {} (exercise 6). Here L = {}: {}.",
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
    plot_base("memory-plan-crossover", 190.0)
        .legend(
            Legend::default()
                .position(egui_plot::Corner::LeftTop)
                .follow_insertion_order(true),
        )
        .x_axis_label(format!("sequence length L (d_head = {d})"))
        .y_axis_label("size (BLH)")
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
                Points::new(format!("this shape: L = {}", s.len), vec![[len, bl2n_blh]])
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
            ui.label("reserved by the caching allocator, peak (final)");
            ui.strong(format!(
                "{:.1} MiB ({:.1} MiB)",
                o.reserved_peak_mib, o.reserved_final_mib
            ));
            ui.end_row();
            ui.label("the largest single batch needs");
            ui.strong(format!(
                "{:.1} MiB (batch {}, L = {}{})",
                o.needed_peak_mib,
                o.largest_batch,
                o.largest_batch_len,
                largest.map_or(String::new(), |b| format!(", {} sequences", b.seqs))
            ));
            ui.end_row();
            ui.label("reserved peak / largest need");
            ui.strong(format!("{:.2}×", o.reserved_over_needed));
            ui.end_row();
            ui.label("allocated peak (rounded blocks)");
            ui.label(format!("{:.1} MiB", o.allocated_peak_mib));
            ui.end_row();
            ui.label("LightSeq2: one allocation at the largest shape");
            ui.label(format!(
                "{:.1} MiB, flat; on average {:.0}% of it idle at a batch's peak",
                o.preallocated_mib,
                100.0 * o.preallocated_mean_idle_share
            ));
            ui.end_row();
            ui.label("segments cudaMalloc'ed (released on a full device)");
            ui.label(format!("{} ({})", o.segments_created, o.segments_released));
            ui.end_row();
            ui.label("allocator events simulated");
            ui.label(o.events.to_string());
            ui.end_row();
        });
    if let Some(oom) = &o.oom {
        ui.colored_label(
            ui.visuals().error_fg_color,
            format!("Out of memory — the run stopped: {oom}"),
        );
    }
    let n = o.timeline.len();
    if n == 0 {
        ui.label("No batch was simulated.");
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
    ui.label(egui::RichText::new("Over the run, MiB (2²⁰ bytes): reserved at each batch's end, allocated and needed at its peak").strong());
    let sel = view.batch as f64;
    let series = |f: &dyn Fn(&allocator::BatchRecord) -> f64| -> Vec<[f64; 2]> {
        o.timeline.iter().map(|b| [b.batch as f64, f(b)]).collect()
    };
    plot_base("memory-allocator-plot", 260.0)
        .legend(
            Legend::default()
                .position(egui_plot::Corner::LeftBottom)
                .follow_insertion_order(true),
        )
        .x_axis_label("batch")
        .y_axis_label("MiB")
        .include_y(0.0)
        .include_y(o.reserved_peak_mib.max(o.preallocated_mib) * 1.08)
        .show(ui, |pu| {
            pu.line(
                Line::new("reserved (caching allocator)", series(&|b| b.reserved_mib))
                    .color(widgets::VERMILLION)
                    .width(2.0),
            );
            pu.line(
                Line::new(
                    "allocated (rounded blocks, batch peak)",
                    series(&|b| b.allocated_peak_mib),
                )
                .color(widgets::BLUE),
            );
            pu.line(
                Line::new(
                    "needed (bytes asked for, batch peak)",
                    series(&|b| b.needed_mib),
                )
                .color(widgets::GREEN),
            );
            pu.hline(
                HLine::new(
                    format!("LightSeq2 preallocated ({:.0} MiB)", o.preallocated_mib),
                    o.preallocated_mib,
                )
                .color(widgets::PURPLE)
                .width(2.0)
                .style(egui_plot::LineStyle::dashed_dense()),
            );
            pu.vline(VLine::new("batch shown", sel).color(widgets::GREY));
        });
    ui.horizontal(|ui| {
        let play = if view.playing { "Pause" } else { "Play" };
        if ui
            .button(play)
            .on_hover_text("Animate the segment map batch by batch")
            .clicked()
        {
            if !view.playing && view.batch >= last {
                view.batch = 0;
            }
            view.playing = !view.playing;
            view.carry = 0.0;
        }
        if ui.button("<").on_hover_text("previous batch").clicked() {
            view.batch = view.batch.saturating_sub(1);
            view.playing = false;
        }
        if ui.button(">").on_hover_text("next batch").clicked() {
            view.batch = (view.batch + 1).min(last);
            view.playing = false;
        }
        let l = ui.label("batch shown");
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
        egui::RichText::new(format!(
            "Batch {bi}: L = {}, {} sequences ({} tokens), needs {:.1} MiB. Segment map at its allocated peak: {} segments, {} reserved = {} asked for + {} rounding loss + {} cached free; LightSeq2 would leave {:.0}% of its {:.1} MiB idle.",
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
fn generation_hints(o: &SnapshotOutput) -> Vec<String> {
    let mut h = Vec::new();
    if o.layout == "list" {
        h.push(
            "a bare list of segments (torch.cuda.memory_snapshot()): no trace, no settings"
                .to_owned(),
        );
    }
    if o.blocks_have_addresses {
        h.push("blocks carry their own addresses (the layout after PyTorch 2.0)".to_owned());
    } else {
        h.push("blocks carry no addresses (PyTorch 2.0 or older layout; addresses derived from the segment)".to_owned());
    }
    if o.allocator_settings.is_empty() {
        h.push(
            "no allocator_settings recorded (older PyTorch, or not a _snapshot() dict)".to_owned(),
        );
    } else {
        h.push(format!(
            "allocator_settings recorded ({} entries; newer PyTorch)",
            o.allocator_settings.len()
        ));
    }
    if o.private_pool_segments > 0 {
        h.push(format!(
            "{} segments in private (CUDA-graph) pools",
            o.private_pool_segments
        ));
    }
    h.push(format!("pickle protocol {}", o.protocol));
    h
}

fn join_counts(m: &std::collections::BTreeMap<String, usize>) -> String {
    if m.is_empty() {
        return "none".to_owned();
    }
    m.iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `memory-snapshot`.
pub fn show_snapshot(ui: &mut egui::Ui, o: &SnapshotOutput) {
    ui.label(format!("File: {}. Memory in MiB = 2²⁰ bytes.", o.path));
    egui::Grid::new("snapshot-figures")
        .num_columns(2)
        .striped(true)
        .show(ui, |ui| {
            ui.label("segments");
            ui.strong(o.segments.to_string());
            ui.end_row();
            ui.label("blocks");
            ui.label(format!(
                "{} ({})",
                o.blocks,
                join_counts(&o.blocks_by_state)
            ));
            ui.end_row();
            ui.label("reserved (Σ segment total_size)");
            ui.strong(format!(
                "{:.2} MiB ({} B)",
                o.reserved_mib, o.reserved_bytes
            ));
            ui.end_row();
            ui.label("allocated (Σ segment allocated_size)");
            ui.strong(format!(
                "{:.2} MiB ({} B)",
                o.allocated_mib, o.allocated_bytes
            ));
            ui.end_row();
            ui.label("internal fragmentation (size − requested, active blocks)");
            ui.label(mib_text(o.internal_fragmentation_bytes));
            ui.end_row();
            ui.label("external fragmentation (cached free blocks)");
            ui.label(format!(
                "{}; the largest free block is {}",
                mib_text(o.external_fragmentation_bytes),
                mib_text(o.largest_free_block_bytes)
            ));
            ui.end_row();
            ui.label("trace events");
            ui.label(format!(
                "{} ({})",
                o.trace_events,
                join_counts(&o.trace_actions)
            ));
            ui.end_row();
        });
    ui.add(
        egui::Label::new(format!(
            "What the file says about the PyTorch that wrote it: {}.",
            generation_hints(o).join("; ")
        ))
        .wrap(),
    );
    if !o.allocator_settings.is_empty() {
        ui.add(
            egui::Label::new(format!(
                "Allocator settings as recorded: {}.",
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
        egui::RichText::new(
            "Replay of the trace (alloc and free_completed, in order) through the simulator",
        )
        .strong(),
    );
    egui::Grid::new("snapshot-replay")
        .num_columns(2)
        .striped(true)
        .show(ui, |ui| {
            ui.label("reserved, peak (final)");
            ui.strong(format!(
                "{} ({})",
                mib_text(o.replay_reserved_peak_bytes),
                mib_text(o.replay_reserved_final_bytes)
            ));
            ui.end_row();
            ui.label("allocated, peak");
            ui.label(mib_text(o.replay_allocated_peak_bytes));
            ui.end_row();
            ui.label("LightSeq2-style: one allocation of the peak live bytes");
            ui.label(mib_text(o.replay_preallocated_bytes));
            ui.end_row();
            ui.label("segments the replay creates");
            ui.label(o.replay_segments.len().to_string());
            ui.end_row();
            ui.label("recreates the file's segments one for one?");
            match o.segments_match {
                Some(true) => {
                    ui.colored_label(
                        widgets::GREEN,
                        format!("yes — all {} segments, same sizes, same order", o.segments),
                    );
                }
                Some(false) => {
                    ui.colored_label(
                        widgets::VERMILLION,
                        "no — the replayed segments differ from the file's",
                    );
                }
                None => {
                    ui.label(if o.trace_starts_empty {
                        "no claim: the trace is empty"
                    } else {
                        "no claim: the trace starts mid-run"
                    });
                }
            }
            ui.end_row();
        });
    if !o.replay_note.is_empty() {
        ui.add(egui::Label::new(egui::RichText::new(&o.replay_note).italics()).wrap());
    }
    if o.replay_unmatched_frees > 0 {
        ui.label(format!(
            "{} frees of blocks allocated before the trace began were skipped.",
            o.replay_unmatched_frees
        ));
    }
    ui.add_space(4.0);
    ui.label(egui::RichText::new("The file's segments (in file order) and their blocks").strong());
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
        egui::RichText::new(format!(
            "Reading executes nothing from the file: every pickle opcode is checked first; files over {} MiB are refused.",
            snapshot::MAX_FILE_BYTES >> 20
        ))
        .small(),
    );
}
