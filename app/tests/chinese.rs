//! A Chinese figure speaks Chinese: every scene drawn as `export --lang zh` draws it (the same
//! `export::draw`, in process, at the figure's own event) paints no English word outside a short
//! list of identifiers, units and the field's terms. Text in a code listing (monospace: the
//! kernel lab's WGSL) is code and is not read.

// Test code: a failed expectation is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use egui::FontFamily;
use egui::epaint::{ClippedShape, Shape};
use warpscope::export::{FigureOptions, Lang};

/// Scenes left out, each with why.
const EXCEPTIONS: &[&str] = &[];

/// Words a Chinese figure keeps in English, compared in lower case. Acronyms and names with a
/// capital inside (GEMM, BLH, MiB, FLOPs, LayerNorm, PyTorch, cudaMalloc), identifiers (with
/// `_ . :: - @`, or a digit), function calls and indexing (`max(`, `grad[`, `[tid]`) are
/// recognised by their form and need no entry.
const ALLOWED: &[&str] = &[
    // The field's terms, as the lecture's Chinese text uses them.
    "softmax",
    "token",
    "dropout",
    "warp",
    "lane",
    "bank",
    "shuffle",
    "tile",
    "workspace",
    "logit",
    "logits",
    "slides",
    "transformer",
    // Shuffle modes (`xor 16`, `down 1`: CUDA's `__shfl_xor_sync`, `__shfl_down_sync`).
    "xor",
    "down",
    // Names: Adam, Apex, the labs (Lab A … E), GPT-2 large, the kernel lab's entry point `main`.
    "adam",
    "apex",
    "lab",
    "large",
    "main",
    // Symbols in formulas: ∇out, ∇var, ∇logp, mask ⊙ ∇out, M / keep, max|∇x|, log-sum-exp's lse,
    // pad in `buf[32][32+pad]`.
    "out",
    "var",
    "logp",
    "mask",
    "keep",
    "max",
    "sum",
    "exp",
    "log",
    "lse",
    "pad",
    // Parameter values, shown as the command line takes them (`--set pattern=column`).
    "column",
    "tiled",
    "auto",
    "false",
    "true",
    "file",
    // PyTorch's own names for what its allocator does and keeps (trace actions `alloc`, `oom`;
    // block state `inactive`), and the snapshot's file format.
    "alloc",
    "oom",
    "inactive",
    "pickle",
];

/// The English words of `text` that are neither allowed nor recognised as identifiers.
fn english_words(text: &str) -> Vec<String> {
    // A path (`crate::cost`, a frame's `misc/attention.py`) is one identifier.
    let chars: Vec<char> = text.replace("::", ".").chars().collect();
    let joins = |c: char| matches!(c, '_' | '.' | ':' | '-' | '@' | '\'' | '/');
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_alphanumeric() && chars[i] != '_' {
            i += 1;
            continue;
        }
        // A token: letters, digits and the characters that join an identifier's parts.
        let start = i;
        while i < chars.len()
            && (chars[i].is_ascii_alphanumeric()
                || chars[i] == '_'
                || (joins(chars[i]) && chars.get(i + 1).is_some_and(char::is_ascii_alphanumeric)))
        {
            i += 1;
        }
        let token: String = chars[start..i].iter().collect();
        let before = start.checked_sub(1).map(|j| chars[j]);
        let after = chars.get(i).copied();
        let identifier = token.chars().any(|c| c.is_ascii_digit() || joins(c))
            || token.chars().skip(1).any(|c| c.is_ascii_uppercase())
            || before.is_some_and(|c| matches!(c, '.' | '@' | '`' | '[' | '<'))
            || after.is_some_and(|c| matches!(c, '(' | '[' | ']' | '<' | '>' | '`'));
        let word = token.chars().all(|c| c.is_ascii_alphabetic()) && token.len() >= 3;
        if word && !identifier && !ALLOWED.contains(&token.to_lowercase().as_str()) {
            out.push(token);
        }
    }
    out
}

/// Every text painted outside monospace sections, one string per section.
fn painted_prose(shapes: &[ClippedShape]) -> Vec<String> {
    fn walk(s: &Shape, out: &mut Vec<String>) {
        match s {
            Shape::Vec(v) => v.iter().for_each(|s| walk(s, out)),
            Shape::Text(t) => {
                let job = &t.galley.job;
                for section in &job.sections {
                    if section.format.font_id.family == FontFamily::Monospace {
                        continue;
                    }
                    let range = section.byte_range.start.0..section.byte_range.end.0;
                    if let Some(text) = job.text.get(range) {
                        out.push(text.to_owned());
                    }
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    for ClippedShape { shape, .. } in shapes {
        walk(shape, &mut out);
    }
    out
}

#[test]
fn the_word_list_tells_english_from_identifiers() {
    // Worked by hand: prose words are caught, identifiers, acronyms, calls and terms are not.
    assert_eq!(
        english_words("load x, columns of iteration 0"),
        ["load", "columns", "iteration"]
    );
    assert_eq!(
        english_words("ker_ln_bw_dinp (block 0) ld.global.b32 crate::cost"),
        ["block"]
    );
    assert!(english_words("GEMM 177 ms，BLH，MiB，LayerNorm，cudaMalloc，gpt2-large").is_empty());
    assert!(english_words("∇s = expand(∇σ/(2σ))/m，grad[0·32]，max(1024, 192)").is_empty());
    assert!(english_words("softmax 反向，xor 16，token 数").is_empty());
}

#[test]
fn every_chinese_figure_is_worded_in_chinese() {
    let opts = FigureOptions {
        lang: Lang::Zh,
        ..FigureOptions::default()
    };
    let mut found = Vec::new();
    for s in warpscope_core::scene::scenes() {
        if EXCEPTIONS.contains(&s.id) {
            continue;
        }
        let (shapes, _, _) = warpscope::export::draw(s, s.defaults(), &opts)
            .unwrap_or_else(|e| panic!("{}: {e}", s.id));
        for text in painted_prose(&shapes) {
            let words = english_words(&text);
            if !words.is_empty() {
                found.push(format!("{}: {words:?} in {text:?}", s.id));
            }
        }
    }
    assert!(
        found.is_empty(),
        "English on Chinese figures:\n{}",
        found.join("\n")
    );
}
