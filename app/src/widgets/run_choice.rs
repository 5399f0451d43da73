//! The choice between a view's two runs (e.g. the K sums together or one after the other):
//! two radio buttons in the window, and in a figure — which has no controls — the chosen run's
//! name as text.

use crate::widgets::stepper::figure_mode;

/// Draws `caption` and the choice between `off` (`*value == false`) and `on`; returns whether
/// the user changed it (never in a figure).
pub fn run_choice(ui: &mut egui::Ui, caption: &str, value: &mut bool, off: &str, on: &str) -> bool {
    ui.horizontal(|ui| {
        ui.label(caption);
        if figure_mode(ui.ctx()) {
            ui.strong(if *value { on } else { off });
            false
        } else {
            let a = ui.radio_value(value, false, off).changed();
            let b = ui.radio_value(value, true, on).changed();
            a | b
        }
    })
    .inner
}
