//! Helpers the core's integration tests share.

use warpscope_core::params::ParamKind;
use warpscope_core::scene;

/// The English words of `zh` (a refusal's rule in Chinese): runs of 3 or more ASCII letters
/// that are not names the Chinese text keeps as they are — a parameter or option name of any
/// scene, a bundled kernel's name, a name with a digit or `_ - . @ =` in it (`f16`, `gpt2-xl`,
/// `ker_attn_softmax_bw`, `@compute`), one in capitals or camel case (`ITERATIONS`, `CUDA`,
/// `MiB`, `PyTorch`), or one of the few literal values a rule names (`true`, `null`, `oom`).
pub fn english_words(zh: &str) -> Vec<String> {
    const KEPT: &[&str] = &["true", "false", "null", "oom", "backend", "native"];
    let names: Vec<&str> = scene::scenes()
        .flat_map(|s| s.params.iter())
        .flat_map(|p| {
            let options = match &p.kind {
                ParamKind::Choice { options, .. } => options.to_vec(),
                _ => Vec::new(),
            };
            std::iter::once(p.name).chain(options)
        })
        .chain(
            warpscope_core::lab::examples::EXAMPLES
                .iter()
                .map(|e| e.name),
        )
        .chain(KEPT.iter().copied())
        .collect();
    let is_name_char = |c: char| c.is_ascii_alphanumeric() || "_-.@=".contains(c);
    zh.split(|c: char| !is_name_char(c))
        .map(|w| w.trim_matches(|c: char| ".-".contains(c)))
        .filter(|w| w.chars().filter(char::is_ascii_alphabetic).count() >= 3)
        .filter(|w| w.chars().all(|c| c.is_ascii_alphabetic()))
        .filter(|w| !w.chars().skip(1).any(|c| c.is_ascii_uppercase()))
        .filter(|w| !names.contains(w))
        .map(str::to_owned)
        .collect()
}
