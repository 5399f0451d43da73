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

/// WCAG 2 relative luminance of an opaque colour, 0 (black) ..= 1 (white).
pub fn luminance(c: Color32) -> f32 {
    let lin = |v: u8| {
        let s = f32::from(v) / 255.0;
        if s <= 0.040_45 {
            s / 12.92
        } else {
            ((s + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * lin(c.r()) + 0.7152 * lin(c.g()) + 0.0722 * lin(c.b())
}

/// WCAG 2 contrast ratio of two opaque colours, 1 ..= 21 (4.5 is the minimum for text).
pub fn contrast(a: Color32, b: Color32) -> f32 {
    let (la, lb) = (luminance(a), luminance(b));
    (la.max(lb) + 0.05) / (la.min(lb) + 0.05)
}

/// `fill` (premultiplied, possibly translucent, as `gamma_multiply` makes it) painted over the
/// opaque `bg`: the colour the reader sees.
pub fn over(fill: Color32, bg: Color32) -> Color32 {
    let keep = 1.0 - f32::from(fill.a()) / 255.0;
    let mix = |f: u8, b: u8| (f32::from(f) + f32::from(b) * keep).round().min(255.0) as u8;
    Color32::from_rgb(
        mix(fill.r(), bg.r()),
        mix(fill.g(), bg.g()),
        mix(fill.b(), bg.b()),
    )
}

/// Black or white, whichever contrasts more with `fill` (WCAG 2 contrast ratio).
pub fn text_on(fill: Color32) -> Color32 {
    if contrast(Color32::BLACK, fill) >= contrast(Color32::WHITE, fill) {
        Color32::BLACK
    } else {
        Color32::WHITE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contrast_ratios_follow_wcag() {
        // WCAG's end points: black on white is 21:1, a colour on itself 1:1.
        assert!((contrast(Color32::BLACK, Color32::WHITE) - 21.0).abs() < 1e-3);
        assert!((contrast(BLUE, BLUE) - 1.0).abs() < 1e-6);
        // By hand: BLUE (0, 114, 178) has luminance 0.7152·0.1683 + 0.0722·0.4452 = 0.1525,
        // so white on it is 1.05 / 0.2025 = 5.18.
        assert!((contrast(Color32::WHITE, BLUE) - 5.18).abs() < 0.02);
    }

    #[test]
    fn text_on_every_palette_colour_reads_at_4_5_to_1() {
        for c in PALETTE.into_iter().chain([GREY]) {
            let t = text_on(c);
            assert!(contrast(t, c) >= 4.5, "{c:?}: {}", contrast(t, c));
        }
        // Orange, vermillion and green take black: white on them is under 4.5 : 1.
        for c in [ORANGE, VERMILLION, GREEN] {
            assert_eq!(text_on(c), Color32::BLACK, "{c:?}");
            assert!(contrast(Color32::WHITE, c) < 4.5);
        }
        assert_eq!(text_on(BLUE), Color32::WHITE);
    }
}
