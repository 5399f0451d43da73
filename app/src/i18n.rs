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

/// The English words in the kernel names `core` gives (layernorm-bytes' autograd chain,
/// softmax-fusion's kernels, the dependency graphs' saved tensors), in Chinese; longer phrases
/// first, so a phrase is never half-translated by a shorter one inside it.
const TERMS_ZH: &[(&str, &str)] = &[
    ("sqrt + mean backward", "开方 + 均值反向"),
    ("mean backward + accumulate", "均值反向 + 累加"),
    ("column-tile blocks", "列分块"),
    ("dropout backward", "dropout 反向"),
    ("square backward", "平方反向"),
    ("div backward", "除法反向"),
    ("sub backward", "减法反向"),
    ("in registers", "在寄存器里"),
    ("same launch", "同一次发射"),
    ("row blocks", "行块"),
    ("(row sums)", "（行和）"),
    ("accumulate", "累加"),
    (" (saved)", "（已保存）"),
    ("(saved)", "（已保存）"),
    ("fused:", "融合："),
];

/// `name` (a kernel or tensor name as `core` writes it) with its English words in Chinese when
/// `zh`; formulas and kernel identifiers stay as they are.
pub fn terms(zh: bool, name: &str) -> String {
    if !zh {
        return name.to_owned();
    }
    TERMS_ZH
        .iter()
        .fold(name.to_owned(), |s, (en, cn)| s.replace(en, cn))
}

#[cfg(test)]
mod terms_tests {
    use super::terms;

    #[test]
    fn kernel_names_translate_phrase_by_phrase_and_keep_their_formulas() {
        assert_eq!(
            terms(true, "9 mean backward + accumulate: ∇x = ∇xc + ∇μ/m"),
            "9 均值反向 + 累加: ∇x = ∇xc + ∇μ/m"
        );
        assert_eq!(terms(true, "σ (saved)"), "σ（已保存）");
        assert_eq!(terms(false, "σ (saved)"), "σ (saved)");
    }
}
