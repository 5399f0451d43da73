//! The window's and the figures' colour schemes and text sizes.

/// Colour schemes for figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Theme {
    /// Light background, larger text: for projected slides.
    Slides,
    /// egui's dark theme (the window's default).
    Dark,
    /// egui's light theme.
    Light,
}

/// Smallest text (points) anything draws in the Slides theme: 12 px in a 1200-px-wide figure,
/// which still reads from the back of a lecture hall when projected.
pub const SLIDES_MIN_TEXT: f32 = 12.0;

/// How the theme scales diagram labels: `(factor, minimum points)`, kept in the context.
#[derive(Debug, Clone, Copy, PartialEq)]
struct LabelScale(f32, f32);

fn label_scale_id() -> egui::Id {
    egui::Id::unique("warpscope-label-scale")
}

/// The font for a diagram label designed at `nominal` points (in the Dark and Light themes):
/// scaled as the theme scales text, and never under [`SLIDES_MIN_TEXT`] in the Slides theme.
pub fn label_font(ctx: &egui::Context, nominal: f32) -> egui::FontId {
    egui::FontId::proportional(label_size(ctx, nominal))
}

/// [`label_font`]'s size, points.
pub fn label_size(ctx: &egui::Context, nominal: f32) -> f32 {
    let LabelScale(factor, min) = ctx
        .data(|d| d.get_temp::<LabelScale>(label_scale_id()))
        .unwrap_or(LabelScale(1.0, 0.0));
    (nominal * factor).max(min)
}

/// Applies `theme` to `ctx` (the window's and the figures' colours and text sizes).
pub fn apply_theme(ctx: &egui::Context, theme: Theme) {
    // Start from egui's defaults so switching themes never compounds the text scaling.
    ctx.global_style_mut(|s| *s = egui::Style::default());
    let scale = match theme {
        Theme::Slides => LabelScale(1.25, SLIDES_MIN_TEXT),
        Theme::Dark | Theme::Light => LabelScale(1.0, 0.0),
    };
    ctx.data_mut(|d| d.insert_temp(label_scale_id(), scale));
    match theme {
        Theme::Dark => ctx.set_visuals(egui::Visuals::dark()),
        Theme::Light => ctx.set_visuals(egui::Visuals::light()),
        Theme::Slides => {
            ctx.set_visuals(egui::Visuals::light());
            ctx.global_style_mut(|s| {
                for font in s.text_styles.values_mut() {
                    font.size = (font.size * 1.25).max(SLIDES_MIN_TEXT);
                }
                s.visuals.widgets.noninteractive.fg_stroke.width = 1.5;
            });
        }
    }
}

/// `theme` as a session file names it (`warpscope_core::session::THEMES`).
pub fn name(theme: Theme) -> &'static str {
    match theme {
        Theme::Dark => "dark",
        Theme::Light => "light",
        Theme::Slides => "slides",
    }
}

/// The theme a session file names, if it is one.
pub fn from_name(name: &str) -> Option<Theme> {
    [Theme::Dark, Theme::Light, Theme::Slides]
        .into_iter()
        .find(|&t| self::name(t) == name)
}
