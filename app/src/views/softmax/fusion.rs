//! `softmax-fusion`: the unfused chain against the dropout-fused kernel, byte by byte.

use crate::i18n::tr;
use crate::trf;
use crate::views::{Out, View, ViewContext};
use crate::widgets::format_number;
use crate::widgets::{self, LedgerBar};
use warpscope_core::softmax::fusion::{FusionOutput, KernelAudit};

/// The `softmax-fusion` view.
#[derive(Debug, Clone, Default)]
pub struct FusionView;

impl View for FusionView {
    type Scene = warpscope_core::softmax::fusion::FusionScene;

    fn ui(&mut self, ui: &mut egui::Ui, out: &Out<Self>, _cx: &mut ViewContext<'_>) {
        draw(ui, out);
    }
}

fn bar(
    zh: bool,
    name: &str,
    kernels: &[KernelAudit],
    f: impl Fn(&KernelAudit) -> f64,
) -> LedgerBar {
    LedgerBar {
        name: name.to_owned(),
        parts: kernels
            .iter()
            .map(|k| (k.name.get(zh).to_owned(), f(k)))
            .collect(),
    }
}

/// `softmax-fusion`.
fn draw(ui: &mut egui::Ui, o: &FusionOutput) {
    let zh = crate::i18n::zh(ui);
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
            bar(zh, unfused, &o.unfused_kernels, |k| k.score_tensors),
            bar(zh, fused, &o.fused_kernels, |k| k.score_tensors),
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
            bar(zh, unfused, &o.unfused_kernels, |k| k.time_us),
            bar(zh, fused, &o.fused_kernels, |k| k.time_us),
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
        if !crate::widgets::stepper::figure_mode(ui.ctx()) {
            ui.collapsing(title, |ui| {
                egui::Grid::new(id).striped(true).show(ui, |ui| {
                    ui.strong(tr(ui, "kernel", "内核"));
                    ui.strong(tr(ui, "reads", "读"));
                    ui.strong(tr(ui, "writes", "写"));
                    ui.strong(tr(ui, "bytes", "字节"));
                    ui.strong("µs");
                    ui.end_row();
                    for k in kernels {
                        ui.label(k.name.get(zh));
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
