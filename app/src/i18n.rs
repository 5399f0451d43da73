//! The language every label, caption and explanation is drawn in, switchable at runtime.
//!
//! The language lives in the egui context (set once per frame by the window, once per figure by
//! the exporter), so a view asks for it with [`zh`] or picks a string with [`tr`] without the
//! language being threaded through every function. The lecture is bilingual; its Chinese terms
//! are used where it gives them (warp = 线程束, bank 冲突, workspace, …).

/// Language of titles and parameter captions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Lang {
    /// English.
    En,
    /// Chinese.
    Zh,
}

impl Lang {
    /// The language a session file names (`warpscope_core::session::LANGS`), if it is one.
    pub fn from_name(name: &str) -> Option<Lang> {
        match name {
            "en" => Some(Lang::En),
            "zh" => Some(Lang::Zh),
            _ => None,
        }
    }
}

fn key() -> egui::Id {
    egui::Id::unique("warpscope-language")
}

/// Makes `lang` the language of everything drawn in `ctx` from now on.
pub fn set(ctx: &egui::Context, lang: Lang) {
    ctx.data_mut(|d| d.insert_temp(key(), lang));
}

/// The language of `ctx` (English until [`set`] is called).
pub fn lang(ctx: &egui::Context) -> Lang {
    ctx.data(|d| d.get_temp(key())).unwrap_or(Lang::En)
}

/// Whether `ui` draws in Chinese.
pub fn zh(ui: &egui::Ui) -> bool {
    lang(ui.ctx()) == Lang::Zh
}

/// `en` or `zh`, whichever is the language of `ui`.
pub fn tr<'a>(ui: &egui::Ui, en: &'a str, zh: &'a str) -> &'a str {
    if self::zh(ui) { zh } else { en }
}

/// `format!` in the language of `ui`: `trf!(ui, "{n} warps", "{n} 个线程束")`.
#[macro_export]
macro_rules! trf {
    ($ui:expr, $en:literal, $zh:literal $(, $arg:expr)* $(,)?) => {
        if $crate::i18n::zh($ui) { format!($zh $(, $arg)*) } else { format!($en $(, $arg)*) }
    };
}

/// `text` in the language of `ui` (core's bilingual texts).
pub fn pick<'a, S: AsRef<str>>(ui: &egui::Ui, text: &'a warpscope_core::text::Text<S>) -> &'a str {
    text.get(zh(ui))
}
