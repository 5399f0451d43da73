//! `memory-allocator`: the caching allocator batch by batch (reserved vs needed vs allocated, the
//! segment map at any batch, LightSeq2's one up-front allocation).

use super::{MAP_ROWS, plot_base, sim_segments};
use crate::i18n::tr;
use crate::trf;
use crate::views::{Out, View, ViewContext};
use crate::widgets::{self, mib_text};
use egui_plot::{HLine, Legend, Line, VLine};
use warpscope_core::memory::allocator::{AllocatorResult, AllocatorRun};

use super::allocator_trace::MapCache;

/// The `memory-allocator` view and its state.
#[derive(Debug, Clone, Default)]
pub struct AllocatorView {
    /// The batch whose segment map is drawn.
    pub batch: usize,
    /// The batch animation is playing.
    pub playing: bool,
    /// Fraction of a batch accumulated while playing.
    pub carry: f32,
    /// The segment map of an input trace at the stepper's op.
    pub map_cache: MapCache,
}

impl View for AllocatorView {
    type Scene = warpscope_core::memory::allocator::AllocatorScene;

    fn events(&self, out: &Out<Self>) -> usize {
        match out {
            AllocatorResult::Workload(_) => 0,
            AllocatorResult::Trace(t) => t.output.per_step.len(),
        }
    }

    fn ui(&mut self, ui: &mut egui::Ui, out: &Out<Self>, cx: &mut ViewContext<'_>) {
        match out {
            AllocatorResult::Workload(r) => draw(ui, r, self),
            AllocatorResult::Trace(t) => {
                super::allocator_trace::draw(ui, t, &mut self.map_cache, cx)
            }
        }
    }
}

/// Batches per second while the batch animation plays.
const PLAY_RATE: f32 = 12.0;

/// `memory-allocator`.
fn draw(ui: &mut egui::Ui, r: &AllocatorRun, view: &mut AllocatorView) {
    let o = &r.summary;
    let largest = o
        .timeline
        .iter()
        .chain(o.oom_batch.iter())
        .find(|b| b.batch == o.largest_batch);
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
            match o.reserved_over_needed {
                Some(r) => ui.strong(format!("{r:.2}×")),
                None => ui.label(tr(
                    ui,
                    "— (the run ran out of memory)",
                    "—（运行中显存不足）",
                )),
            };
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
        let at = o.oom_batch.as_ref().map_or(String::new(), |b| {
            trf!(
                ui,
                " in batch {} (L = {}, {} sequences) after {} complete batches; the figures above cover the batches reached",
                "，发生在第 {} 批（L = {}，{} 个序列），此前完成了 {} 批；上面的数字只算已经跑到的批次",
                b.batch,
                b.len,
                b.seqs,
                o.batches_completed
            )
        });
        ui.colored_label(
            ui.visuals().error_fg_color,
            trf!(
                ui,
                "Out of memory — the run stopped{at}: {oom}",
                "显存不足 — 运行中止{at}：{oom}"
            ),
        );
    }
    let n = o.timeline.len();
    if n == 0 {
        ui.label(tr(
            ui,
            "No batch ran to its end, so there is no segment map to step through.",
            "没有一个批次跑完，所以没有可以逐批查看的段图。",
        ));
        return;
    }
    let last = n - 1;
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
    let series =
        |f: &dyn Fn(&warpscope_core::memory::allocator::BatchRecord) -> f64| -> Vec<[f64; 2]> {
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
    if !crate::widgets::stepper::figure_mode(ui.ctx()) {
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
                    egui::Slider::new(&mut view.batch, 0..=last)
                        .clamping(egui::SliderClamping::Always),
                )
                .labelled_by(l.id)
                .changed()
            {
                view.playing = false;
            }
        });
    }
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
