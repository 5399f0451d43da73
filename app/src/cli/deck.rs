//! `warpscope deck`: a deck file (or the bundled lecture deck) written as one offline HTML page.

use std::process::ExitCode;

use super::fail;

/// `warpscope deck [DECK.json] --out FILE.html`: the deck (or the bundled one) as one HTML page.
pub(super) fn write_deck(deck: Option<&std::path::Path>, out: &std::path::Path) -> ExitCode {
    use crate::export::{ExportError, deck_html, write_atomically};
    use warpscope_core::deck::Deck;
    let ext = out
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("html" | "htm") => {}
        Some("pdf") => {
            return fail(
                2,
                "a PDF deck is not written yet: give --out FILE.html (one offline page; a \
                 browser prints it to PDF), or export each figure as SVG",
            );
        }
        _ => {
            return fail(
                2,
                &format!(
                    "--out {}: a deck is written as one HTML page; give a file ending in .html",
                    out.display()
                ),
            );
        }
    }
    let deck = match deck.map_or_else(Deck::bundled, Deck::read) {
        Ok(d) => d,
        Err(e) => return fail(2, &e.to_string()),
    };
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut progress = |done: usize, total: usize| {
        if terminal {
            eprint!("\rwarpscope: figure {done}/{total}");
            if done == total {
                eprintln!();
            }
        }
    };
    let html = match deck_html(&deck, &mut progress) {
        Ok(h) => h,
        Err(e @ ExportError::Scene(_)) => return fail(2, &e.to_string()),
        Err(e) => return fail(1, &e.to_string()),
    };
    match write_atomically(out, html.as_bytes()) {
        Ok(()) => {
            say!(
                "wrote {} ({} slides)",
                out.canonicalize()
                    .unwrap_or_else(|_| out.to_owned())
                    .display(),
                deck.slides.len()
            );
            ExitCode::SUCCESS
        }
        Err(e) => fail(1, &e.to_string()),
    }
}
