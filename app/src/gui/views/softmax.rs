//! Softmax backward views: the warp-per-row kernel stepped lane by lane with its register
//! budget per bucket, and the fused vs unfused byte ledger.

use warpscope_core::softmax::fusion::{FusionOutput, KernelAudit};
use warpscope_core::softmax::warp::WarpOutput;

use super::generic::format_number;
use super::widgets::{self, LedgerBar};
use crate::gui::SceneState;
use crate::i18n::tr;
use crate::trf;

/// `softmax-warp`.
pub fn show_warp(ui: &mut egui::Ui, o: &WarpOutput, state: &mut SceneState) {
    ui.label(trf!(
        ui,
        "L = {} → bucket {}, ITERATIONS = {} values of ∇y and of y per lane → {} registers per thread of {}; {} shuffle steps, {} block barriers (the forward pass needs {} reductions: max and sum).",
        "L = {} → 档位 {}，ITERATIONS = 每个线程 {} 个 ∇y 和 y → 每线程 {} 个寄存器（上限 {}）；{} 次 shuffle，{} 次块级栅栏（前向要 {} 次归约：最大值和求和）。",
        o.len, o.bucket, o.iterations, o.registers_per_thread, o.register_limit, o.shuffle_steps, o.block_barriers, o.forward_reductions
    ));
    ui.label(
        egui::RichText::new(tr(
            ui,
            "Registers per thread by bucket (the line is the 255-register limit)",
            "各档位每线程的寄存器数（竖线是 255 个寄存器的上限）",
        ))
        .strong(),
    );
    let width = ui.available_width().max(200.0);
    let rows = o.buckets.len() + 1;
    let (rect, _) = ui.allocate_exact_size(
        egui::vec2(width, 18.0 * rows as f32 + 8.0),
        egui::Sense::hover(),
    );
    let p = ui.painter_at(rect);
    let text = ui.visuals().text_color();
    let left = rect.left() + 150.0;
    let scale = (width - 220.0) / 300.0;
    for (i, b) in o
        .buckets
        .iter()
        .chain(std::iter::once(&o.past_largest))
        .enumerate()
    {
        let y = rect.top() + 18.0 * i as f32;
        let chosen = b.bucket == o.bucket;
        let label = if b.fits {
            format!("L ≤ {} (×{})", b.bucket, b.iterations)
        } else {
            format!("L = {} (×{})", b.bucket, b.iterations)
        };
        p.text(
            egui::pos2(rect.left(), y + 8.0),
            egui::Align2::LEFT_CENTER,
            label,
            egui::FontId::proportional(11.0),
            text,
        );
        let w = (b.registers_per_thread as f32).min(300.0) * scale;
        let col = if !b.fits {
            widgets::VERMILLION
        } else if chosen {
            widgets::ORANGE
        } else {
            widgets::BLUE
        };
        p.rect_filled(
            egui::Rect::from_min_size(egui::pos2(left, y + 2.0), egui::vec2(w, 13.0)),
            1.0,
            col,
        );
        p.text(
            egui::pos2(left + w + 4.0, y + 8.0),
            egui::Align2::LEFT_CENTER,
            b.registers_per_thread.to_string(),
            egui::FontId::proportional(10.0),
            text,
        );
    }
    let limit_x = left + o.register_limit as f32 * scale;
    p.line_segment(
        [
            egui::pos2(limit_x, rect.top()),
            egui::pos2(limit_x, rect.bottom()),
        ],
        egui::Stroke::new(1.5, widgets::VERMILLION),
    );
    ui.label(trf!(
        ui,
        "One row simulated: Σ∇y·y = {:.6} (f64 reference {:.6}); max |∇x error| {:.1e}.",
        "模拟一行：Σ∇y·y = {:.6}（f64 参考值 {:.6}）；最大 |∇x 误差| {:.1e}。",
        o.dot,
        o.dot_reference,
        o.max_abs_error
    ));
    ui.separator();
    ui.horizontal(|ui| {
        ui.label(tr(ui, "Trace:", "轨迹："));
        let backward = tr(ui, "backward (one reduction)", "反向（一次归约）");
        let forward = tr(ui, "forward (max, then sum)", "前向（先最大值，再求和）");
        if ui
            .radio_value(&mut state.view.sequential, false, backward)
            .changed()
            | ui.radio_value(&mut state.view.sequential, true, forward)
                .changed()
        {
            state.stepper.pos = 0;
        }
    });
    let trace = if state.view.sequential {
        &o.forward_trace
    } else {
        &o.trace
    };
    let recordable = !state.view.sequential;
    super::recorded::show(ui, "softmax-warp", trace, recordable, state);
}

fn bar(name: &str, kernels: &[KernelAudit], f: impl Fn(&KernelAudit) -> f64) -> LedgerBar {
    LedgerBar {
        name: name.to_owned(),
        parts: kernels.iter().map(|k| (k.name.clone(), f(k))).collect(),
    }
}

/// `softmax-fusion`.
pub fn show_fusion(ui: &mut egui::Ui, o: &FusionOutput) {
    ui.label(trf!(
        ui,
        "Unfused: {} kernels, {} score-tensor equivalents of traffic; fused: {} kernel, {}. Modelled on {}: {} µs → {} µs, {:.2}× faster.",
        "未融合：{} 个内核，读写量相当于 {} 个分数张量；融合：{} 个内核，{} 个。在 {} 上的模型：{} µs → {} µs，快 {:.2} 倍。",
        o.unfused_launches,
        format_number(o.unfused_bytes_per_element),
        o.fused_launches,
        format_number(o.fused_bytes_per_element),
        o.device,
        format_number(o.unfused_us),
        format_number(o.fused_us),
        o.modelled_speedup
    ));
    ui.label(
        egui::RichText::new(tr(
            ui,
            "Traffic per kernel, in score-tensor equivalents",
            "每个内核的读写量，以分数张量为单位",
        ))
        .strong(),
    );
    let (unfused, fused) = (tr(ui, "unfused", "未融合"), tr(ui, "fused", "融合"));
    widgets::ledger_bars(
        ui,
        &[
            bar(unfused, &o.unfused_kernels, |k| k.score_tensors),
            bar(fused, &o.fused_kernels, |k| k.score_tensors),
        ],
        tr(ui, "× score", "× 分数张量"),
    );
    ui.label(
        egui::RichText::new(tr(
            ui,
            "Modelled time per kernel (bytes / bandwidth + launch)",
            "每个内核的模型时间（字节 / 带宽 + 发射）",
        ))
        .strong(),
    );
    widgets::ledger_bars(
        ui,
        &[
            bar(unfused, &o.unfused_kernels, |k| k.time_us),
            bar(fused, &o.fused_kernels, |k| k.time_us),
        ],
        "µs",
    );
    for (id, title, kernels) in [
        (
            "bytes-unfused",
            tr(ui, "Every byte, unfused", "每个字节：未融合"),
            &o.unfused_kernels,
        ),
        (
            "bytes-fused",
            tr(ui, "Every byte, fused", "每个字节：融合"),
            &o.fused_kernels,
        ),
    ] {
        ui.collapsing(title, |ui| {
            egui::Grid::new(id).striped(true).show(ui, |ui| {
                ui.strong(tr(ui, "kernel", "内核"));
                ui.strong(tr(ui, "reads", "读"));
                ui.strong(tr(ui, "writes", "写"));
                ui.strong(tr(ui, "bytes", "字节"));
                ui.strong("µs");
                ui.end_row();
                for k in kernels {
                    ui.label(&k.name);
                    ui.label(
                        k.reads
                            .iter()
                            .map(|a| {
                                trf!(
                                    ui,
                                    "{} ({} B/elem)",
                                    "{}（每元素 {} B）",
                                    a.tensor,
                                    a.bytes_per_element
                                )
                            })
                            .collect::<Vec<_>>()
                            .join(", "),
                    );
                    ui.label(
                        k.writes
                            .iter()
                            .map(|a| {
                                trf!(
                                    ui,
                                    "{} ({} B/elem)",
                                    "{}（每元素 {} B）",
                                    a.tensor,
                                    a.bytes_per_element
                                )
                            })
                            .collect::<Vec<_>>()
                            .join(", "),
                    );
                    ui.monospace(format_number(k.bytes_read + k.bytes_written));
                    ui.monospace(format_number(k.time_us));
                    ui.end_row();
                }
            });
        });
    }
    let e = &o.example;
    ui.label(trf!(
        ui,
        "{} × {} example (keep {}), fixed seed: fused and unfused agree to {:.1e} (tolerance {:.1e}): {}.",
        "{} × {} 的例子（保留率 {}），固定种子：融合与未融合相差 {:.1e}（容差 {:.1e}）：{}。",
        e.rows,
        e.len,
        e.keep,
        e.max_abs_diff_fused_unfused,
        e.max_tolerance,
        if e.agree {
            tr(ui, "agree", "一致")
        } else {
            tr(ui, "DISAGREE", "不一致")
        }
    ));
}
