//! The bank playground: each warp request's banks, wavefronts and conflict degree.

use warpscope_core::banks::BanksOutput;

use super::widgets;
use crate::gui::SceneState;

/// Draws the scene.
pub fn show(ui: &mut egui::Ui, b: &BanksOutput, state: &mut SceneState) {
    egui::Grid::new("banks-summary")
        .num_columns(2)
        .striped(true)
        .show(ui, |ui| {
            ui.label("worst conflict degree");
            ui.strong(format!("{}-way", b.conflict_degree));
            ui.end_row();
            ui.label("wavefronts of the worst request (ideal)");
            ui.strong(format!("{} ({})", b.wavefronts, b.ideal_wavefronts));
            ui.end_row();
            ui.label("requests to read the array once");
            ui.label(b.requests.to_string());
            ui.end_row();
            ui.label("wavefronts per request, averaged over all requests");
            ui.label(format!(
                "{:.2} (ideal {:.2})",
                b.avg_wavefronts_per_request,
                b.total_ideal_wavefronts as f64 / f64::from(b.requests.max(1))
            ));
            ui.end_row();
        });
    if b.shown.is_empty() {
        return;
    }
    let last = b.shown.len() - 1;
    state.view.request = state.view.request.min(last);
    ui.add(egui::Slider::new(&mut state.view.request, 0..=last).text("warp request"));
    let r = &b.shown[state.view.request];
    ui.label(format!(
        "Request {}: {} wavefront(s), ideal {}, conflict degree {} — lanes grouped {} at a time",
        state.view.request,
        r.cost.wavefronts,
        r.cost.ideal_wavefronts,
        r.cost.conflict_degree,
        r.cost.group_lanes
    ));
    widgets::bank_grid(ui, &r.cost, 32);
    ui.collapsing("Elements each lane reads", |ui| {
        egui::Grid::new("lanes").striped(true).show(ui, |ui| {
            ui.strong("lane");
            ui.strong("element [row][col]");
            ui.strong("byte address");
            ui.strong("bank");
            ui.end_row();
            for (l, ((i, j), a)) in r.elements.iter().zip(&r.addresses).enumerate() {
                ui.label(l.to_string());
                ui.monospace(format!("[{i}][{j}]"));
                ui.monospace(a.to_string());
                ui.monospace(r.cost.lane_bank[l].map_or("—".into(), |b| b.to_string()));
                ui.end_row();
            }
        });
    });
}
