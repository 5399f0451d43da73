//! The colours every view draws with: the Okabe–Ito palette, safe for colour-blind readers, and
//! the text colour that reads on a fill.

use egui::Color32;

/// Okabe–Ito blue: active lanes.
pub const BLUE: Color32 = Color32::from_rgb(0, 114, 178);

/// Okabe–Ito orange: highlighted lanes / the current step.
pub const ORANGE: Color32 = Color32::from_rgb(230, 159, 0);

/// Okabe–Ito vermillion: conflicts.
pub const VERMILLION: Color32 = Color32::from_rgb(213, 94, 0);

/// Okabe–Ito bluish green: conflict-free.
pub const GREEN: Color32 = Color32::from_rgb(0, 158, 115);

/// Inactive lanes.
pub const GREY: Color32 = Color32::from_gray(150);

/// Okabe–Ito sky blue.
pub const SKY: Color32 = Color32::from_rgb(86, 180, 233);

/// Okabe–Ito reddish purple.
pub const PURPLE: Color32 = Color32::from_rgb(204, 121, 167);

/// Okabe–Ito yellow.
pub const YELLOW: Color32 = Color32::from_rgb(240, 228, 66);

/// The seven Okabe–Ito colours, for series that need one colour each.
pub const PALETTE: [Color32; 7] = [BLUE, ORANGE, GREEN, VERMILLION, SKY, PURPLE, YELLOW];

/// Colour `i` of a categorical series: the palette, then the same colours darkened (so ten
/// series stay distinguishable).
pub fn series_colour(i: usize) -> Color32 {
    let c = PALETTE[i % PALETTE.len()];
    if (i / PALETTE.len()) % 2 == 1 {
        Color32::from_rgb(
            (u16::from(c.r()) * 3 / 5) as u8,
            (u16::from(c.g()) * 3 / 5) as u8,
            (u16::from(c.b()) * 3 / 5) as u8,
        )
    } else {
        c
    }
}

/// Black or white, whichever reads better on `fill`.
pub fn text_on(fill: Color32) -> Color32 {
    let lum =
        0.299 * f32::from(fill.r()) + 0.587 * f32::from(fill.g()) + 0.114 * f32::from(fill.b());
    if lum > 150.0 {
        Color32::BLACK
    } else {
        Color32::WHITE
    }
}
