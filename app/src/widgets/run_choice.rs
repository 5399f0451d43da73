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
            crate::widgets::marks::label(
                ui,
                egui::RichText::new(if *value { on } else { off }).strong(),
            );
            false
        } else {
            // Captions may carry combining marks (x̂): the marks widget paints them.
            let a = crate::widgets::marks::radio_value(ui, value, false, off).changed();
            let b = crate::widgets::marks::radio_value(ui, value, true, on).changed();
            a | b
        }
    })
    .inner
}
