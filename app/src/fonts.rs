//! The embedded fonts, added as fallbacks after egui's own so no label renders as empty boxes:
//! a subset of Noto Sans CJK SC (SIL OFL 1.1, `assets/fonts/OFL.txt`) for Chinese and the
//! lecture's symbols (∇ Σ ⊙ → ≤ μ σ …), then a subset of DejaVu Sans
//! (`assets/fonts/DejaVu-LICENSE.txt`) for technical symbols Noto lacks (⌈ ⌉ …).
//! Regenerate both with `assets/fonts/subset.sh`.

/// Noto Sans CJK SC subset (~0.85 MB).
pub const NOTO_SC_SUBSET: &[u8] = include_bytes!("../../assets/fonts/NotoSansSC-warpscope.otf");

/// DejaVu Sans subset (~0.24 MB).
pub const DEJAVU_SUBSET: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans-warpscope.ttf");

/// Adds the fonts to `ctx`, in fallback order.
pub fn install(ctx: &egui::Context) {
    for (name, bytes) in [
        ("noto-sans-sc-warpscope", NOTO_SC_SUBSET),
        ("dejavu-sans-warpscope", DEJAVU_SUBSET),
    ] {
        let families = [egui::FontFamily::Proportional, egui::FontFamily::Monospace]
            .into_iter()
            .map(|family| egui::epaint::text::InsertFontFamily {
                family,
                priority: egui::epaint::text::FontPriority::Lowest,
            })
            .collect();
        ctx.add_font(egui::epaint::text::FontInsert::new(
            name,
            egui::FontData::from_static(bytes),
            families,
        ));
    }
}
