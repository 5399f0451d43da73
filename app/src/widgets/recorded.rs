//! A scene's simulated trace beside the same reduction recorded on the GPU adapter
//! (`warpscope_kernels::record`: the lecture's shader instrumented by the record pass): the figures that differ highlighted, a one-line reason, and
//! both traces replayed with one stepper (the recorded one follows it between landmarks both
//! have: the first shuffle, the end of the butterflies, each barrier passed) or, unlinked, its
//! own.

use warpscope_core::simt::{EventKind, Trace};
use warpscope_kernels::record::{Recording, TraceComparison};

use crate::widgets;
use warpscope_core::params::ParamValues;

use crate::i18n::tr;
use crate::trf;
use crate::widgets::gpu::GpuPanel;
use crate::widgets::stepper::Stepper;

/// A landmark both traces may have: where their butterflies start, where they are all done,
/// and where each barrier has been reached by every warp (its last event).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Landmark {
    FirstShuffle,
    AfterShuffles,
    Barrier(u32),
}

/// The landmarks of `trace` with their timeline positions.
fn landmarks(trace: &Trace, timeline: &[(usize, usize)]) -> Vec<(Landmark, usize)> {
    let kind = |&(w, i): &(usize, usize)| trace.warps[w].events[i].kind;
    let is_shfl = |e: &(usize, usize)| matches!(kind(e), EventKind::Shuffle { .. });
    let mut out = Vec::new();
    if let (Some(a), Some(b)) = (
        timeline.iter().position(is_shfl),
        timeline.iter().rposition(is_shfl),
    ) {
        out.push((Landmark::FirstShuffle, a));
        if b + 1 < timeline.len() {
            out.push((Landmark::AfterShuffles, b + 1));
        }
    }
    let mut last_of: Vec<(u32, usize)> = Vec::new();
    for (p, e) in timeline.iter().enumerate() {
        if let EventKind::Barrier { index } = kind(e) {
            match last_of.iter_mut().find(|(k, _)| *k == index) {
                Some(slot) => slot.1 = p,
                None => last_of.push((index, p)),
            }
        }
    }
    out.extend(last_of.into_iter().map(|(k, p)| (Landmark::Barrier(k), p)));
    out
}

/// The position in the recorded timeline that corresponds to `pos` in the simulated one:
/// piecewise linear between landmarks both traces have (the first shuffle, the end of the
/// butterflies, each barrier passed), taken in the simulation's order and kept only while they
/// also advance in the recording; the event just before a landmark maps to the event just
/// before it.
pub fn linked_pos(
    sim: &Trace,
    sim_tl: &[(usize, usize)],
    rec: &Trace,
    rec_tl: &[(usize, usize)],
    pos: usize,
) -> usize {
    let (Some(s_end), Some(r_end)) = (sim_tl.len().checked_sub(1), rec_tl.len().checked_sub(1))
    else {
        return 0;
    };
    let rec_marks = landmarks(rec, rec_tl);
    let mut common: Vec<(usize, usize)> = landmarks(sim, sim_tl)
        .into_iter()
        .filter_map(|(k, s)| {
            rec_marks
                .iter()
                .find(|(k2, _)| *k2 == k)
                .map(|(_, r)| (s, *r))
        })
        .collect();
    common.sort_unstable();
    let mut points = vec![(0usize, 0usize)];
    for (s, r) in common {
        let &(ps, pr) = points.last().unwrap_or(&(0, 0));
        if s > ps && r > pr {
            if s - 1 > ps {
                points.push((s - 1, r - 1));
            }
            points.push((s, r));
        }
    }
    if let Some(&(ps, pr)) = points.last()
        && s_end > ps
        && r_end >= pr
    {
        points.push((s_end, r_end));
    }
    let pos = pos.min(s_end);
    for w in points.windows(2) {
        let ((s0, r0), (s1, r1)) = (w[0], w[1]);
        if (s0..=s1).contains(&pos) {
            let frac = if s1 > s0 {
                (pos - s0) as f64 / (s1 - s0) as f64
            } else {
                0.0
            };
            return (r0 + (frac * (r1 - r0) as f64).round() as usize).min(r_end);
        }
    }
    points.last().map_or(0, |&(_, r)| r.min(r_end))
}

/// The trace `sim` of scene `scene`, with the recording beside it when there is one for the
/// current parameters and `recordable` (the trace shown is the one the recording records).
/// Starts the recording when "Run on GPU" was pressed.
pub fn show(
    ui: &mut egui::Ui,
    scene: &'static str,
    sim: &Trace,
    recordable: bool,
    stepper: &mut Stepper,
    gpu: &mut GpuPanel,
    values_now: &ParamValues,
) {
    if gpu.take_record_request() {
        gpu.start_recording(scene, values_now.clone(), ui.ctx());
    }
    gpu.poll_recording(ui.ctx());
    if gpu.recording_running() {
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label(tr(
                ui,
                "recording the reduction on the adapter…",
                "正在 GPU 上实录归约…",
            ));
        });
    }
    let current = match &gpu.recording {
        Some((values, Ok(rec))) if recordable && values == values_now => Some(rec.clone()),
        Some((values, Ok(_))) if recordable && values != values_now => {
            ui.label(
                egui::RichText::new(tr(
                    ui,
                    "The recording was made with other parameters; press Run on GPU again to record these.",
                    "实录用的是其他参数；再按一次 Run on GPU 以实录当前参数。",
                ))
                .small(),
            );
            None
        }
        Some((_, Err(e))) => {
            ui.colored_label(
                ui.visuals().warn_fg_color,
                trf!(ui, "No recording: {}", "没有实录：{}", e),
            );
            None
        }
        _ => None,
    };
    let Some(rec) = current else {
        crate::widgets::trace::show(ui, sim, stepper);
        return;
    };
    differences(ui, &rec);
    let sim_tl = sim.timeline();
    let rec_tl = rec.trace.timeline();
    stepper.ui(ui, sim, &sim_tl);
    ui.checkbox(
        &mut gpu.unlinked,
        tr(
            ui,
            "step the recorded replay on its own",
            "实录回放单独步进",
        ),
    );
    let linked = linked_pos(sim, &sim_tl, &rec.trace, &rec_tl, stepper.pos);
    let (sim_w, rec_n) = (sim.warp_size, rec.trace.warp_size);
    let adapter = rec.adapter.name.clone();
    let unlinked = gpu.unlinked;
    let simulated = |ui: &mut egui::Ui| {
        ui.label(
            egui::RichText::new(trf!(
                ui,
                "simulated ({}-lane warps)",
                "模拟（{} 线程的线程束）",
                sim_w
            ))
            .strong()
            .color(widgets::BLUE),
        );
        crate::widgets::trace::body(ui, sim, &sim_tl, stepper.pos);
    };
    let recorded = |ui: &mut egui::Ui, gpu: &mut GpuPanel| {
        ui.label(
            egui::RichText::new(trf!(
                ui,
                "recorded on {} (subgroup {})",
                "实录于 {}（子组 {}）",
                adapter,
                rec_n
            ))
            .strong()
            .color(widgets::VERMILLION),
        );
        let pos = if unlinked {
            gpu.rec_stepper.ui(ui, &rec.trace, &rec_tl);
            gpu.rec_stepper.pos
        } else {
            ui.label(
                egui::RichText::new(trf!(
                    ui,
                    "event {} of {}, at the same phase as the simulation",
                    "第 {} / {} 个事件，与模拟处于同一阶段",
                    linked,
                    rec_tl.len()
                ))
                .small(),
            );
            linked
        };
        crate::widgets::trace::body(ui, &rec.trace, &rec_tl, pos);
    };
    // Side by side only where each pane keeps room for a warp's lanes; stacked otherwise.
    if ui.available_width() >= SIDE_BY_SIDE_WIDTH {
        ui.columns(2, |cols| {
            simulated(&mut cols[0]);
            recorded(&mut cols[1], gpu);
        });
    } else {
        simulated(ui);
        ui.separator();
        recorded(ui, gpu);
    }
}

/// Narrower than this (points), the simulated and recorded panes stack instead of sharing the
/// width: side by side, each 32-lane pane then keeps at least ~22 points a lane.
pub const SIDE_BY_SIDE_WIDTH: f32 = 1500.0;

/// The comparison table: each figure simulated vs recorded, differing ones highlighted, and why.
fn differences(ui: &mut egui::Ui, rec: &Recording) {
    let c: &TraceComparison = &rec.comparison;
    let hot = widgets::VERMILLION;
    egui::Frame::group(ui.style())
        .stroke(egui::Stroke::new(
            1.5,
            if c.differs() { hot } else { widgets::GREEN },
        ))
        .show(ui, |ui| {
            ui.label(
                egui::RichText::new(trf!(
                    ui,
                    "Simulated vs recorded on {}: {}",
                    "模拟 vs 实录（{}）：{}",
                    rec.adapter.name,
                    if c.differs() {
                        tr(ui, "they differ (highlighted)", "有差异（高亮）")
                    } else {
                        tr(ui, "the same shape", "形状相同")
                    }
                ))
                .strong(),
            );
            ui.label(explanation(ui, rec));
            egui::Grid::new("recorded-vs-simulated")
                .striped(true)
                .show(ui, |ui| {
                    ui.strong("");
                    ui.strong(trf!(
                        ui,
                        "simulated ({}-lane warps)",
                        "模拟（{} 线程的线程束）",
                        c.simulated_warp_size
                    ));
                    ui.strong(trf!(
                        ui,
                        "recorded (subgroup {})",
                        "实录（子组 {}）",
                        c.recorded_subgroup_size
                    ));
                    ui.end_row();
                    let row = |ui: &mut egui::Ui, name: &str, s: String, r: String| {
                        let differ = s != r;
                        ui.label(name);
                        ui.monospace(s);
                        if differ {
                            ui.label(egui::RichText::new(r).monospace().strong().color(hot));
                        } else {
                            ui.monospace(r);
                        }
                        ui.end_row();
                    };
                    let rows = [
                        (
                            tr(
                                ui,
                                "lanes per warp / subgroup",
                                "每个线程束 / 子组的 lane 数",
                            ),
                            c.simulated_warp_size.to_string(),
                            c.recorded_subgroup_size.to_string(),
                        ),
                        (
                            tr(ui, "warps / subgroups in the block", "块内线程束 / 子组数"),
                            c.simulated_warps.to_string(),
                            c.recorded_subgroups.to_string(),
                        ),
                        (
                            tr(ui, "butterfly levels per reduction", "每次归约的蝶形级数"),
                            c.simulated_levels.to_string(),
                            c.recorded_levels.to_string(),
                        ),
                        (
                            tr(ui, "shuffle instructions", "shuffle 指令数"),
                            c.simulated_shuffles.to_string(),
                            c.recorded_shuffles.to_string(),
                        ),
                        (
                            tr(ui, "barriers", "栅栏数"),
                            c.simulated_barriers.to_string(),
                            c.recorded_barriers.to_string(),
                        ),
                        (
                            tr(
                                ui,
                                "events (warp-wide instructions)",
                                "事件（线程束级指令）",
                            ),
                            c.simulated_events.to_string(),
                            c.recorded_events.to_string(),
                        ),
                    ];
                    for (name, s, r) in rows {
                        row(ui, name, s, r);
                    }
                    for v in c.values.iter().take(4) {
                        crate::widgets::marks::label(ui, &v.name);
                        ui.monospace(format!("{:.7}", v.simulated));
                        let text = format!(
                            "{:.7} (Δ {:+.1e}; f64 {:.7} ± {:.0e})",
                            v.recorded, v.recorded_minus_simulated, v.reference, v.tolerance
                        );
                        if v.recorded_ok {
                            ui.monospace(text);
                        } else {
                            ui.label(egui::RichText::new(text).monospace().strong().color(hot));
                        }
                        ui.end_row();
                    }
                });
            let ok = c.values.iter().filter(|v| v.recorded_ok).count();
            ui.label(
                egui::RichText::new(trf!(
                    ui,
                    "{} of {} reduced values within f32 tolerance of the f64 sum. {}",
                    "{} / {} 个归约结果与 f64 求和之差在 f32 容差内。{}",
                    ok,
                    c.values.len(),
                    rec.checks.join(" · ")
                ))
                .small(),
            );
        });
}

/// One line: why the recorded trace has another shape.
fn explanation(ui: &egui::Ui, rec: &Recording) -> String {
    let c = &rec.comparison;
    let n = c.recorded_subgroup_size.max(1);
    let mut s = if c.recorded_shuffles == 0 && c.simulated_shuffles > 0 {
        // The lecture's shader calls subgroupAdd: the hardware reduces, nothing to step through.
        trf!(
            ui,
            "{} runs subgroups of {} lanes; the lecture's shader reduces each with one subgroupAdd, the hardware's own reduction, so there are no shuffle levels to record (the simulated butterfly has {})",
            "{} 的子组有 {} 个线程；课程的着色器对每个子组只用一次 subgroupAdd（硬件自己的归约），因此没有可以记录的 shuffle 级（模拟的蝶形归约有 {} 级）",
            rec.adapter.name,
            n,
            c.simulated_levels
        )
    } else if n == c.simulated_warp_size {
        trf!(
            ui,
            "{} runs {}-lane subgroups like CUDA warps: the same {} butterfly levels; values differ only by summation order",
            "{} 的子组有 {} 个线程，与 CUDA 线程束相同：蝶形级数同为 {}；数值只因求和顺序不同而略有差异",
            rec.adapter.name,
            n,
            c.recorded_levels
        )
    } else {
        trf!(
            ui,
            "{} runs subgroups of {} lanes, not {}: each butterfly has log2 {} = {} levels instead of {}",
            "{} 的子组是 {} 个线程而不是 {}：每次蝶形归约只有 log2 {} = {} 级而不是 {} 级",
            rec.adapter.name,
            n,
            c.simulated_warp_size,
            n,
            c.recorded_levels,
            c.simulated_levels
        )
    };
    if c.recorded_barriers != c.simulated_barriers {
        s += &trf!(
            ui,
            "; the block's {} subgroups meet in shared memory after {} barrier (every invocation adds the partials), where the simulated blockReduce uses {} (warp 0 reduces, then broadcasts).",
            "；块内 {} 个子组的部分和经共享内存在 {} 次栅栏后汇合（每个线程自己相加），模拟的 blockReduce 用 {} 次（线程束 0 归约后再广播）。",
            c.recorded_subgroups,
            c.recorded_barriers,
            c.simulated_barriers
        );
    } else if c.recorded_subgroups != c.simulated_warps {
        s += &trf!(
            ui,
            "; {} subgroups where the simulation has {} warps.",
            "；{} 个子组，模拟中为 {} 个线程束。",
            c.recorded_subgroups,
            c.simulated_warps
        );
    } else {
        s += ".";
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use warpscope_core::simt::shuffle::ShuffleMode;
    use warpscope_core::simt::{Block, BlockShape, Mask};

    /// A one-warp trace: `pre` computes, `levels` shuffles, `post` computes.
    fn trace(width: u32, pre: usize, levels: usize, post: usize) -> Trace {
        let mut b = Block::new("t", BlockShape::new(width, width).unwrap());
        let v = vec![1.0f32; width as usize];
        for _ in 0..pre {
            b.compute(0, &[1.0], Mask::first(width), "pre", Some(0));
        }
        for k in 0..levels {
            b.shfl(
                0,
                ShuffleMode::Xor,
                1 << k,
                &v,
                Mask::first(width),
                "s",
                Some(1),
            );
        }
        for _ in 0..post {
            b.compute(0, &[1.0], Mask::first(width), "post", None);
        }
        b.finish()
    }

    #[test]
    fn linking_keeps_the_phase() {
        let sim = trace(32, 4, 5, 2);
        let rec = trace(8, 16, 3, 8);
        let (st, rt) = (sim.timeline(), rec.timeline());
        // Start, start of the butterfly, end of the butterfly, end: the same landmarks.
        assert_eq!(linked_pos(&sim, &st, &rec, &rt, 0), 0);
        assert_eq!(linked_pos(&sim, &st, &rec, &rt, 3), 15);
        assert_eq!(linked_pos(&sim, &st, &rec, &rt, 4), 16);
        assert_eq!(linked_pos(&sim, &st, &rec, &rt, 8), 18);
        assert_eq!(linked_pos(&sim, &st, &rec, &rt, 9), 19);
        assert_eq!(linked_pos(&sim, &st, &rec, &rt, 10), 26);
        // Half-way through the 5 levels is half-way through the 3.
        assert_eq!(linked_pos(&sim, &st, &rec, &rt, 6), 17);
    }

    #[test]
    fn a_barrier_maps_to_the_barrier_even_when_the_orders_differ() {
        // Simulated: shuffles, barrier, more shuffles (warp 0's second stage), end.
        let mut b = Block::new("sim", BlockShape::new(32, 32).unwrap());
        let v = vec![1.0f32; 32];
        for k in 0..3 {
            b.shfl(
                0,
                ShuffleMode::Xor,
                1 << k,
                &v,
                Mask::first(32),
                "s",
                Some(1),
            );
        }
        b.barrier("bar");
        for k in 0..3 {
            b.shfl(
                0,
                ShuffleMode::Xor,
                1 << k,
                &v,
                Mask::first(32),
                "s",
                Some(1),
            );
        }
        b.compute(0, &[1.0], Mask::first(32), "post", None);
        let sim = b.finish();
        // Recorded: two subgroups' shuffles, then both reach the barrier, then partial loads.
        let mut b = Block::new("rec", BlockShape::new(16, 8).unwrap());
        let v = vec![1.0f32; 8];
        for w in 0..2 {
            for k in 0..3 {
                b.shfl(
                    w,
                    ShuffleMode::Xor,
                    1 << k,
                    &v,
                    Mask::first(8),
                    "s",
                    Some(1),
                );
            }
        }
        b.barrier("bar");
        for w in 0..2 {
            b.compute(w, &[1.0], Mask::first(8), "post", None);
        }
        let rec = b.finish();
        let (st, rt) = (sim.timeline(), rec.timeline());
        // The simulated barrier (position 3) is the recorded one passed (position 7: the
        // second subgroup's arrival), though the simulation shuffles again after it.
        assert_eq!(linked_pos(&sim, &st, &rec, &rt, 3), 7);
        assert_eq!(linked_pos(&sim, &st, &rec, &rt, 0), 0);
        assert_eq!(linked_pos(&sim, &st, &rec, &rt, st.len() - 1), rt.len() - 1);
        // Monotone: stepping forward never steps the recording back.
        let mapped: Vec<usize> = (0..st.len())
            .map(|p| linked_pos(&sim, &st, &rec, &rt, p))
            .collect();
        assert!(mapped.windows(2).all(|w| w[0] <= w[1]), "{mapped:?}");
    }
}
