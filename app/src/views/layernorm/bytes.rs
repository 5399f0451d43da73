//! `layernorm-bytes`: the per-kernel byte and time ledgers of the autograd-style chain and the fused kernel.

use crate::i18n::tr;
use crate::trf;
use crate::views::{Out, View, ViewContext};
use crate::widgets::format_number;
use crate::widgets::{self, LedgerBar};
use warpscope_core::layernorm::bytes::{BytesOutput, Ledger};

/// The `layernorm-bytes` view.
#[derive(Debug, Clone, Default)]
pub struct BytesView;

impl View for BytesView {
    type Scene = warpscope_core::layernorm::bytes::BytesScene;

    fn ui(&mut self, ui: &mut egui::Ui, out: &Out<Self>, _cx: &mut ViewContext<'_>) {
        draw(ui, out);
    }
}

fn ledger_bar(
    zh: bool,
    name: &str,
    l: &Ledger,
    f: impl Fn(&warpscope_core::layernorm::bytes::LedgerKernel) -> f64,
) -> LedgerBar {
    LedgerBar {
        name: name.to_owned(),
        parts: l
            .kernels
            .iter()
            .map(|k| (k.name.get(zh).to_owned(), f(k)))
            .collect(),
    }
}

/// `layernorm-bytes`.
fn draw(ui: &mut egui::Ui, o: &BytesOutput) {
    let zh = crate::i18n::zh(ui);
    ui.label(trf!(
        ui,
        "One tensor is {} MB. Autograd-style: {} kernels, {} MB ({}× the tensor), {} µs. Fused: {} kernel, {} MB ({}×), {} µs. Bytes ratio {:.2}, time ratio {:.2} on {}.",
        "一个张量 {} MB。自动求导式：{} 个内核，{} MB（张量的 {} 倍），{} µs。融合：{} 个内核，{} MB（{} 倍），{} µs。字节比 {:.2}，时间比 {:.2}（{}）。",
        format_number(o.tensor_mb),
        o.autograd_launches,
        format_number(o.autograd_mb),
        format_number(o.autograd.tensor_multiple),
        format_number(o.autograd_us),
        o.fused_launches,
        format_number(o.fused_mb),
        format_number(o.fused.tensor_multiple),
        format_number(o.fused_us),
        o.ratio_mb,
        o.speedup,
        o.device.name
    ));
    ui.label(
        egui::RichText::new(tr(
            ui,
            "MB moved per kernel (1 MB = 10⁶ bytes)",
            "每个内核读写的 MB（1 MB = 10⁶ 字节）",
        ))
        .strong(),
    );
    let (autograd, fused) = (tr(ui, "autograd", "自动求导式"), tr(ui, "fused", "融合"));
    widgets::ledger_bars(
        ui,
        &[
            ledger_bar(zh, autograd, &o.autograd, |k| k.cost.bytes() / 1e6),
            ledger_bar(zh, fused, &o.fused, |k| k.cost.bytes() / 1e6),
        ],
        "MB",
    );
    ui.label(
        egui::RichText::new(tr(
            ui,
            "Modelled µs per kernel: bytes / bandwidth + 4 µs per launch",
            "每个内核的模型时间 µs：字节 / 带宽 + 每次发射 4 µs",
        ))
        .strong(),
    );
    widgets::ledger_bars(
        ui,
        &[
            ledger_bar(zh, autograd, &o.autograd, |k| k.us),
            ledger_bar(zh, fused, &o.fused, |k| k.us),
        ],
        "µs",
    );
    for (id, title, l) in [
        (
            "bytes-autograd",
            tr(ui, "Every byte, autograd-style", "每个字节：自动求导式"),
            &o.autograd,
        ),
        (
            "bytes-fused",
            tr(ui, "Every byte, fused", "每个字节：融合"),
            &o.fused,
        ),
    ] {
        if !crate::widgets::stepper::figure_mode(ui.ctx()) {
            ui.collapsing(title, |ui| {
                egui::Grid::new(id).striped(true).show(ui, |ui| {
                    ui.strong(tr(ui, "kernel", "内核"));
                    ui.strong(tr(ui, "reads", "读"));
                    ui.strong(tr(ui, "writes", "写"));
                    ui.strong("MB");
                    ui.strong("µs");
                    ui.end_row();
                    for k in &l.kernels {
                        widgets::marks::label(ui, k.name.get(zh));
                        widgets::marks::label(
                            ui,
                            k.reads
                                .iter()
                                .map(|a| {
                                    format!(
                                        "{} ({}×{} B)",
                                        a.name.get(zh),
                                        a.elements,
                                        a.elem_bytes
                                    )
                                })
                                .collect::<Vec<_>>()
                                .join(", "),
                        );
                        widgets::marks::label(
                            ui,
                            k.writes
                                .iter()
                                .map(|a| {
                                    format!(
                                        "{} ({}×{} B)",
                                        a.name.get(zh),
                                        a.elements,
                                        a.elem_bytes
                                    )
                                })
                                .collect::<Vec<_>>()
                                .join(", "),
                        );
                        ui.monospace(format_number(k.cost.bytes() / 1e6));
                        ui.monospace(format_number(k.us));
                        ui.end_row();
                    }
                });
            });
        }
    }
    let q = &o.lecture_quoted;
    ui.label(egui::RichText::new(trf!(
        ui,
        "Lecture ({}): autograd {} MB / {} µs, fused {} MB / {} µs — quoted for comparison, not used. {}",
        "讲义（{}）：自动求导式 {} MB / {} µs，融合 {} MB / {} µs — 仅供对比，计算中不使用。{}",
        crate::i18n::pick(ui, &q.source),
        q.autograd_mb,
        q.autograd_us,
        q.fused_mb,
        q.fused_us,
        crate::i18n::pick(ui, &q.note)
    ))
    .small());
}
