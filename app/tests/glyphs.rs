//! No missing glyphs anywhere: every character of the app's and core's Rust sources outside
//! comment lines (so every label, explanation and lecture symbol they can draw, in both
//! languages) is covered by one of
//! the fonts the window and the exporter use — egui's defaults, then the embedded Noto Sans CJK
//! SC and DejaVu Sans subsets (`assets/fonts/subset.sh` regenerates them from the same sources).

// Test code: a failed expectation is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use skrifa::MetadataProvider;

fn sources() -> Vec<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    let mut todo = vec![root.join("src"), root.join("../core/src")];
    while let Some(dir) = todo.pop() {
        let entries = std::fs::read_dir(&dir).expect("source folder readable");
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_character_of_the_sources_has_a_glyph() {
    let defaults = egui::FontDefinitions::default();
    let mut fonts: Vec<(String, Vec<u8>)> = defaults
        .font_data
        .iter()
        .map(|(name, data)| (name.clone(), (*data.font).as_ref().to_vec()))
        .collect();
    fonts.push((
        "noto-sans-sc-warpscope".into(),
        warpscope::fonts::NOTO_SC_SUBSET.to_vec(),
    ));
    fonts.push((
        "dejavu-sans-warpscope".into(),
        warpscope::fonts::DEJAVU_SUBSET.to_vec(),
    ));
    let parsed: Vec<(String, skrifa::FontRef<'_>)> = fonts
        .iter()
        .map(|(n, b)| {
            (
                n.clone(),
                skrifa::FontRef::new(b).unwrap_or_else(|e| panic!("font {n} parses: {e}")),
            )
        })
        .collect();
    let files = sources();
    assert!(files.len() > 40, "found the sources: {}", files.len());
    let mut missing = std::collections::BTreeMap::<char, String>::new();
    let mut hanzi = 0usize;
    for f in &files {
        let text = std::fs::read_to_string(f).expect("UTF-8 source");
        // Comment lines are never drawn (they cite the lecture's ⏱ and the like); every other
        // line may hold a string a view draws.
        let drawn = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .flat_map(str::chars);
        for c in drawn {
            if c.is_control() {
                continue;
            }
            if ('\u{4e00}'..='\u{9fff}').contains(&c) {
                hanzi += 1;
            }
            if !parsed
                .iter()
                .any(|(_, font)| font.charmap().map(c).is_some())
            {
                missing.entry(c).or_insert_with(|| f.display().to_string());
            }
        }
    }
    assert!(
        hanzi > 1000,
        "the sources hold the Chinese strings ({hanzi} hanzi)"
    );
    assert!(
        missing.is_empty(),
        "characters no embedded font covers (run assets/fonts/subset.sh): {:?}",
        missing
            .iter()
            .map(|(c, f)| format!("{c} U+{:04X} in {f}", u32::from(*c)))
            .collect::<Vec<_>>()
    );
}
