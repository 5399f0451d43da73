//! A definition list: names in a column as wide as the widest (at most 30% of the width), each
//! text wrapping in the width left, so a long formula never pushes the picture past the right
//! edge of a small window. Texts may hold combining marks (x̂).

use super::marks;

/// Draws `rows` as (name, text): the name in bold, the text beside it.
pub fn definitions(ui: &mut egui::Ui, rows: &[(&str, &str)]) {
    let font = egui::TextStyle::Body.resolve(ui.style());
    let name_w = rows
        .iter()
        .map(|(name, _)| {
            ui.painter()
                .layout_no_wrap((*name).to_owned(), font.clone(), egui::Color32::WHITE)
                .size()
                .x
        })
        .fold(0.0, f32::max)
        .min(ui.available_width() * 0.3)
        + 12.0;
    for (name, text) in rows {
        ui.horizontal_top(|ui| {
            ui.allocate_ui(egui::vec2(name_w, 0.0), |ui| {
                ui.set_width(name_w);
                ui.add(egui::Label::new(egui::RichText::new(*name).strong()).wrap());
            });
            ui.vertical(|ui| {
                marks::label(ui, *text);
            });
        });
        ui.add_space(2.0);
    }
}
