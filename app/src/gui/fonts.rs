//! The embedded font: a subset of Noto Sans CJK SC (SIL OFL 1.1, `assets/fonts/OFL.txt`) with
//! Chinese and the lecture's symbols (∇ Σ ⊙ → ≤ μ σ …), added as a fallback after egui's own
//! fonts so no label renders as empty boxes. Regenerate it with `assets/fonts/subset.sh`.

/// The font file (~0.85 MB).
pub const NOTO_SC_SUBSET: &[u8] = include_bytes!("../../../assets/fonts/NotoSansSC-warpscope.otf");

/// Adds the font to `ctx` (idempotent: egui ignores a font it already has under this name).
pub fn install(ctx: &egui::Context) {
    let data = egui::FontData::from_static(NOTO_SC_SUBSET);
    let families = [egui::FontFamily::Proportional, egui::FontFamily::Monospace]
        .into_iter()
        .map(|family| egui::epaint::text::InsertFontFamily {
            family,
            priority: egui::epaint::text::FontPriority::Lowest,
        })
        .collect();
    ctx.add_font(egui::epaint::text::FontInsert::new(
        "noto-sans-sc-warpscope",
        data,
        families,
    ));
}
