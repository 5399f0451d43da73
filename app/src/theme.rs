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

/// Applies `theme` to `ctx` (the window's and the figures' colours and text sizes).
pub fn apply_theme(ctx: &egui::Context, theme: Theme) {
    // Start from egui's defaults so switching themes never compounds the text scaling.
    ctx.global_style_mut(|s| *s = egui::Style::default());
    match theme {
        Theme::Dark => ctx.set_visuals(egui::Visuals::dark()),
        Theme::Light => ctx.set_visuals(egui::Visuals::light()),
        Theme::Slides => {
            ctx.set_visuals(egui::Visuals::light());
            ctx.global_style_mut(|s| {
                for font in s.text_styles.values_mut() {
                    font.size *= 1.25;
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
