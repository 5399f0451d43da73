//! The bank playground: each warp request's banks, wavefronts and conflict degree.

use warpscope_core::banks::BanksOutput;

use crate::i18n::tr;
use crate::trf;
use crate::views::{Out, View, ViewContext};
use crate::widgets;

/// The `banks` view and its state.
#[derive(Debug, Clone, Default)]
pub struct BanksView {
    /// The request drawn.
    pub request: usize,
}

impl View for BanksView {
    type Scene = warpscope_core::banks::BanksScene;

    fn ui(&mut self, ui: &mut egui::Ui, out: &Out<Self>, _cx: &mut ViewContext<'_>) {
        draw(ui, out, self);
    }
}

/// Draws the scene.
fn draw(ui: &mut egui::Ui, b: &BanksOutput, view: &mut BanksView) {
    if b.from_input {
        ui.label(
            egui::RichText::new(trf!(
                ui,
                "Your input: one warp request of {}-byte elements, the byte address of each of the 32 lanes given; bank = (byte address / 4) mod 32.",
                "你的输入：一次线程束请求，元素 {} 字节，给出 32 个线程各自的字节地址；bank = (字节地址 / 4) mod 32。",
                b.elem_bytes
            ))
            .strong(),
        );
    }
    egui::Grid::new("banks-summary")
        .num_columns(2)
        .striped(true)
        .show(ui, |ui| {
            ui.label(tr(ui, "worst conflict degree", "最坏的冲突路数"));
            ui.strong(trf!(ui, "{}-way", "{} 路", b.conflict_degree));
            ui.end_row();
            ui.label(tr(
                ui,
                "wavefronts of the worst request (ideal)",
                "最坏请求的轮数（理想）",
            ));
            ui.strong(format!("{} ({})", b.wavefronts, b.ideal_wavefronts));
            ui.end_row();
            ui.label(tr(
                ui,
                "requests to read the array once",
                "把数组读一遍要几次请求",
            ));
            ui.label(b.requests.to_string());
            ui.end_row();
            ui.label(tr(
                ui,
                "wavefronts per request, averaged over all requests",
                "每次请求的平均轮数（所有请求）",
            ));
            ui.label(trf!(
                ui,
                "{:.2} (ideal {:.2})",
                "{:.2}（理想 {:.2}）",
                b.avg_wavefronts_per_request,
                b.total_ideal_wavefronts as f64 / f64::from(b.requests.max(1))
            ));
            ui.end_row();
        });
    if b.shown.is_empty() {
        return;
    }
    let last = b.shown.len() - 1;
    view.request = view.request.min(last);
    if !crate::widgets::stepper::figure_mode(ui.ctx()) {
        ui.add(egui::Slider::new(&mut view.request, 0..=last).text(tr(
            ui,
            "warp request",
            "线程束请求",
        )));
    }
    let r = &b.shown[view.request];
    ui.label(trf!(
        ui,
        "Request {}: {} wavefront(s), ideal {}, conflict degree {} — lanes grouped {} at a time",
        "请求 {}：{} 轮，理想 {}，{} 路冲突 — 每 {} 个线程一组",
        view.request,
        r.cost.wavefronts,
        r.cost.ideal_wavefronts,
        r.cost.conflict_degree,
        r.cost.group_lanes
    ));
    widgets::bank_grid(ui, &r.cost, 32);
    if !crate::widgets::stepper::figure_mode(ui.ctx()) {
        ui.collapsing(
            tr(ui, "Elements each lane reads", "每个线程读的元素"),
            |ui| {
                egui::Grid::new("lanes").striped(true).show(ui, |ui| {
                    ui.strong(tr(ui, "lane", "线程"));
                    ui.strong(if b.from_input {
                        tr(
                            ui,
                            "element index (address / size)",
                            "元素序号（地址 / 大小）",
                        )
                    } else {
                        tr(ui, "element [row][col]", "元素 [行][列]")
                    });
                    ui.strong(tr(ui, "byte address", "字节地址"));
                    ui.strong("bank");
                    ui.end_row();
                    for (l, ((i, j), a)) in r.elements.iter().zip(&r.addresses).enumerate() {
                        ui.label(l.to_string());
                        ui.monospace(if b.from_input {
                            j.to_string()
                        } else {
                            format!("[{i}][{j}]")
                        });
                        ui.monospace(a.to_string());
                        ui.monospace(r.cost.lane_bank[l].map_or("—".into(), |b| b.to_string()));
                        ui.end_row();
                    }
                });
            },
        );
    }
}
