//! Letters with combining marks (x̂, Q̃ …) that survive on screen and in figures.
//!
//! egui lays text out by the base letter's font, and no font egui picks for a Latin letter has
//! the combining marks, so it drops them: "x̂" would read "x". The exporter's SVG keeps the mark
//! but its rasteriser may box it. So every string `core` computes passes through here on its way
//! to the screen: a letter + mark pair Unicode has a precomposed character for becomes that
//! character (ŷ, ñ …); any other pair (x̂ has none) is laid out as the bare letter and the mark
//! is painted over it as its spacing form (ˆ, ˜ …, in the same font, size and colour), centred on
//! the letter — shapes the window and the SVG draw alike. Where nothing can be painted over the
//! text (hover texts, plot legends, buttons) [`plain`] writes the spacing form after the letter
//! ("xˆ"), which still reads as x-hat and never as x.

use std::borrow::Cow;
use std::sync::Arc;

use egui::{Color32, FontId, Pos2, Rect, Response};

/// Letters with a precomposed form, per combining mark: (mark, bases, precomposed, spacing
/// form). `bases` and `precomposed` pair up character by character; every character here is in
/// egui's Ubuntu font or the embedded DejaVu subset.
const MARKS: &[(char, &str, &str, char)] = &[
    ('\u{300}', "aeinouwyAEINOUWY", "àèìǹòùẁỳÀÈÌǸÒÙẀỲ", '`'),
    (
        '\u{301}',
        "acegiklmnoprsuwyzACEGIKLMNOPRSUWYZ",
        "áćéǵíḱĺḿńóṕŕśúẃýźÁĆÉǴÍḰĹḾŃÓṔŔŚÚẂÝŹ",
        '´',
    ),
    (
        '\u{302}',
        "aceghijosuwyzACEGHIJOSUWYZ",
        "âĉêĝĥîĵôŝûŵŷẑÂĈÊĜĤÎĴÔŜÛŴŶẐ",
        'ˆ',
    ),
    ('\u{303}', "aeinouvyAEINOUVY", "ãẽĩñõũṽỹÃẼĨÑÕŨṼỸ", '˜'),
    ('\u{304}', "aegiouyAEGIOUY", "āēḡīōūȳĀĒḠĪŌŪȲ", '¯'),
    ('\u{306}', "aegiouAEGIOU", "ăĕğĭŏŭĂĔĞĬŎŬ", '˘'),
    (
        '\u{307}',
        "abcdefghmnoprstwxyzABCDEFGHIMNOPRSTWXYZ",
        "ȧḃċḋėḟġḣṁṅȯṗṙṡṫẇẋẏżȦḂĊḊĖḞĠḢİṀṄȮṖṘṠṪẆẊẎŻ",
        '˙',
    ),
    ('\u{308}', "aehiotuwxyAEHIOUWXY", "äëḧïöẗüẅẍÿÄËḦÏÖÜẄẌŸ", '¨'),
    ('\u{30A}', "auwyAU", "åůẘẙÅŮ", '˚'),
    (
        '\u{30C}',
        "acdeghijklnorstuzACDEGHIKLNORSTUZ",
        "ǎčďěǧȟǐǰǩľňǒřšťǔžǍČĎĚǦȞǏǨĽŇǑŘŠŤǓŽ",
        'ˇ',
    ),
];

/// Whether `c` is a combining diacritical mark (U+0300–U+036F), the marks `core` writes.
pub fn is_mark(c: char) -> bool {
    ('\u{300}'..='\u{36F}').contains(&c)
}

/// The precomposed character for `base` + `mark`, if Unicode has one (and the table above).
fn composed(base: char, mark: char) -> Option<char> {
    let (_, bases, done, _) = MARKS.iter().find(|m| m.0 == mark)?;
    let i = bases.chars().position(|b| b == base)?;
    done.chars().nth(i)
}

/// The spacing form of `mark` (ˆ for U+0302 …), if it has one in the table.
fn spacing(mark: char) -> Option<char> {
    MARKS.iter().find(|m| m.0 == mark).map(|m| m.3)
}

/// A mark to paint over a letter of [`Marked::text`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Accent {
    /// Index (in characters, not bytes) of the letter in [`Marked::text`].
    pub at: usize,
    /// What is painted: the mark's spacing form (ˆ for U+0302).
    pub mark: char,
    /// How many accents already sit on this letter (0 for the first): stacked marks go higher.
    pub stack: usize,
}

/// A string with its combining marks resolved: the text to lay out (precomposed where Unicode
/// allows, bare letters elsewhere) and the accents to paint over those letters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marked {
    /// Text without combining marks.
    pub text: String,
    /// The marks to paint, in order.
    pub accents: Vec<Accent>,
}

/// Resolves the combining marks of `s`; see the module documentation. A mark with neither a
/// precomposed form nor a spacing form is dropped (egui would drop it too).
pub fn resolve(s: &str) -> Marked {
    let mut text = String::with_capacity(s.len());
    let mut accents: Vec<Accent> = Vec::new();
    // The last character pushed, its index, and how many accents it carries.
    let mut last: Option<(char, usize, usize)> = None;
    let mut count = 0usize;
    for c in s.chars() {
        if is_mark(c)
            && let Some((base, at, stack)) = last
        {
            if stack == 0
                && let Some(p) = composed(base, c)
            {
                text.pop();
                text.push(p);
                // The precomposed letter carries one mark already.
                last = Some((p, at, 1));
            } else if let Some(mark) = spacing(c) {
                accents.push(Accent { at, mark, stack });
                last = Some((base, at, stack + 1));
            }
            continue;
        }
        if is_mark(c) {
            continue;
        }
        text.push(c);
        last = Some((c, count, 0));
        count += 1;
    }
    Marked { text, accents }
}

/// `s` for places nothing can be painted over (hover texts, plot legends, buttons): each mark
/// precomposed where Unicode allows, else its spacing form right after the letter ("xˆ").
/// Borrowed when `s` has no combining mark.
pub fn plain(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_mark) {
        return Cow::Borrowed(s);
    }
    let m = resolve(s);
    let mut out = String::with_capacity(s.len() + m.accents.len());
    let mut accents = m.accents.iter().peekable();
    for (i, c) in m.text.chars().enumerate() {
        out.push(c);
        while let Some(a) = accents.next_if(|a| a.at == i) {
            out.push(a.mark);
        }
    }
    Cow::Owned(out)
}

/// Whether a letter carries an accent for capitals (higher): capitals, digits and the
/// lower-case letters with ascenders.
fn tall(c: char) -> bool {
    c.is_uppercase() || c.is_ascii_digit() || "bdfhklt".contains(c)
}

fn drawn_id() -> egui::Id {
    egui::Id::unique("warpscope-accents-drawn")
}

/// Turns the painting of accents on or off in `ctx` (on until this is called). Off shows the
/// bare letters, laid out the same way — what egui alone draws; the GUI test renders both to
/// see what the accents add.
pub fn set_accents_drawn(ctx: &egui::Context, on: bool) {
    ctx.data_mut(|d| d.insert_temp(drawn_id(), on));
}

/// Whether `ctx` paints accents (see [`set_accents_drawn`]).
pub fn accents_drawn(ctx: &egui::Context) -> bool {
    ctx.data(|d| d.get_temp::<bool>(drawn_id())).unwrap_or(true)
}

/// Paints `accents` over the letters of `galley` drawn at `pos` (not the text itself: see
/// [`paint`]); a section without its own colour uses `fallback`.
pub fn paint_accents(
    painter: &egui::Painter,
    pos: Pos2,
    galley: &egui::Galley,
    accents: &[Accent],
    fallback: Color32,
) {
    if accents.is_empty() || !accents_drawn(painter.ctx()) {
        return;
    }
    // Each glyph is one character (egui keeps one glyph per character for its cursors); a row
    // that ends a paragraph also ends one character, the newline.
    let mut glyphs = Vec::new();
    for row in &galley.rows {
        for g in &row.row.glyphs {
            glyphs.push(Some((row.pos, g)));
        }
        if row.ends_with_newline {
            glyphs.push(None);
        }
    }
    let text = &galley.job.text;
    for a in accents {
        let Some(Some((row_pos, g))) = glyphs.get(a.at) else {
            continue;
        };
        let byte = text.char_indices().nth(a.at).map_or(0, |(b, _)| b);
        let Some(format) = format_at(galley, byte) else {
            continue;
        };
        let colour = if format.color == Color32::PLACEHOLDER {
            fallback
        } else {
            format.color
        };
        let font = format.font_id.clone();
        let accent = painter.layout_no_wrap(a.mark.to_string(), font.clone(), colour);
        let Some(ag) = accent.rows.first().and_then(|r| r.row.glyphs.first()) else {
            continue;
        };
        let raise = font.size * (if tall(g.chr) { 0.2 } else { 0.0 } + 0.3 * a.stack as f32);
        // The accent's own glyph centred on the letter's, on the same baseline.
        let letter_mid = pos.x + row_pos.x + g.pos.x + g.advance_width * 0.5;
        let accent_mid = ag.pos.x + ag.advance_width * 0.5;
        let at = Pos2::new(
            letter_mid - accent_mid,
            pos.y + row_pos.y + g.pos.y - ag.pos.y - raise,
        );
        painter.galley(at, accent, colour);
    }
}

/// The section format of the character at byte `byte` of `galley`'s text (the first section's
/// when none holds it).
fn format_at(galley: &egui::Galley, byte: usize) -> Option<&egui::TextFormat> {
    galley
        .job
        .sections
        .iter()
        .find(|s| s.byte_range.contains(&egui::text::ByteIndex(byte)))
        .or(galley.job.sections.first())
        .map(|s| &s.format)
}

/// Paints `galley` at `pos` with `accents` over their letters (see [`resolve`]); a section
/// without its own colour uses `fallback`.
///
/// Each accented letter is painted as a text of its own, and the text between as pieces, each
/// at the place the whole layout gives it: a figure's SVG writes one text element per shape,
/// and its rasteriser's glyph widths differ from egui's (∇, Σ, ·), so in one long text a letter
/// would drift away from the accent placed by egui's layout.
pub fn paint(
    painter: &egui::Painter,
    pos: Pos2,
    galley: &Arc<egui::Galley>,
    accents: &[Accent],
    fallback: Color32,
) {
    if accents.is_empty() {
        painter.galley(pos, galley.clone(), fallback);
        return;
    }
    let marked: std::collections::BTreeSet<usize> = accents.iter().map(|a| a.at).collect();
    let byte_of: Vec<usize> = galley.job.text.char_indices().map(|(b, _)| b).collect();
    // Characters before each row (a row ending a paragraph also ends its newline).
    let mut first = 0usize;
    for row in &galley.rows {
        let glyphs = &row.row.glyphs;
        let mut pieces: Vec<std::ops::Range<usize>> = Vec::new();
        let mut start = 0;
        for k in 0..glyphs.len() {
            if marked.contains(&(first + k)) {
                pieces.push(start..k);
                pieces.push(k..k + 1);
                start = k + 1;
            }
        }
        pieces.push(start..glyphs.len());
        for piece in pieces {
            let (Some(g0), Some(run)) = (glyphs.get(piece.start), glyphs.get(piece.clone())) else {
                continue;
            };
            let text: String = run.iter().map(|g| g.chr).collect();
            if text.trim().is_empty() {
                continue;
            }
            let byte = byte_of.get(first + piece.start).copied().unwrap_or(0);
            let Some(format) = format_at(galley, byte) else {
                continue;
            };
            let colour = if format.color == Color32::PLACEHOLDER {
                fallback
            } else {
                format.color
            };
            let part =
                painter.layout_job(egui::text::LayoutJob::single_section(text, format.clone()));
            let Some(p0) = part.rows.first().and_then(|r| r.row.glyphs.first()) else {
                continue;
            };
            let at = pos + row.pos.to_vec2() + (g0.pos - p0.pos);
            painter.galley(at, part, colour);
        }
        first += glyphs.len() + usize::from(row.ends_with_newline);
    }
    paint_accents(painter, pos, galley, accents, fallback);
}

/// Like [`egui::Ui::label`], with the combining marks of the text drawn ([`resolve`]). The
/// accessibility tree keeps the original text, marks included.
pub fn label(ui: &mut egui::Ui, text: impl Into<egui::RichText>) -> Response {
    let rich: egui::RichText = text.into();
    let original = rich.text().to_owned();
    if !original.chars().any(is_mark) {
        return ui.label(rich);
    }
    let m = resolve(&original);
    let job = egui::WidgetText::from(rich).into_layout_job(
        ui.style(),
        egui::FontSelection::Default,
        ui.text_valign(),
    );
    let mut job = Arc::unwrap_or_clone(job);
    if job.sections.len() != 1 {
        return ui.label(plain(&original));
    }
    job.text = m.text;
    if let Some(s) = job.sections.first_mut() {
        s.byte_range = egui::text::ByteIndex(0)..egui::text::ByteIndex(job.text.len());
    }
    job.wrap.max_width = if ui.wrap_mode() == egui::TextWrapMode::Extend {
        f32::INFINITY
    } else {
        ui.available_width()
    };
    job.halign = egui::Align::LEFT;
    let galley = ui.fonts_mut(|f| f.layout_job(job));
    let (rect, response) = ui.allocate_exact_size(galley.size(), egui::Sense::hover());
    response.widget_info(|| {
        egui::WidgetInfo::labeled(egui::accesskit::Role::Label, ui.is_enabled(), &original)
    });
    if ui.is_rect_visible(rect) {
        paint(
            ui.painter(),
            rect.min,
            &galley,
            &m.accents,
            ui.visuals().text_color(),
        );
    }
    response
}

/// Like [`egui::Ui::radio_value`], with the combining marks of `text` drawn: the button, then
/// its caption as a [`label`] (clicking either selects); the accessibility tree keeps the mark.
pub fn radio_value<V: PartialEq>(
    ui: &mut egui::Ui,
    current: &mut V,
    value: V,
    text: &str,
) -> Response {
    if !text.chars().any(is_mark) {
        return ui.radio_value(current, value, text);
    }
    ui.horizontal(|ui| {
        ui.spacing_mut().item_spacing.x = ui.spacing().icon_spacing;
        let checked = *current == value;
        let button = ui.add(egui::RadioButton::new(checked, ""));
        let caption = label(ui, text).interact(egui::Sense::click());
        let mut response = button | caption;
        if response.clicked() && !checked {
            *current = value;
            response.mark_changed();
        }
        response.widget_info(|| {
            egui::WidgetInfo::selected(
                egui::accesskit::Role::RadioButton,
                ui.is_enabled(),
                checked,
                text,
            )
        });
        response
    })
    .inner
}

/// The width (points) `text` takes when painted with [`text`] in `font`.
pub fn text_width(ui: &egui::Ui, text: &str, font: &FontId) -> f32 {
    ui.painter()
        .layout_no_wrap(resolve(text).text, font.clone(), Color32::WHITE)
        .size()
        .x
}

/// Like [`egui::Painter::text`], with the combining marks of `text` drawn; returns the rect
/// the text covers.
pub fn text(
    painter: &egui::Painter,
    pos: Pos2,
    anchor: egui::Align2,
    text: &str,
    font: FontId,
    colour: Color32,
) -> Rect {
    if !text.chars().any(is_mark) {
        return painter.text(pos, anchor, text, font, colour);
    }
    let m = resolve(text);
    let galley = painter.layout_no_wrap(m.text, font, colour);
    let rect = anchor.anchor_size(pos, galley.size());
    paint(painter, rect.min, &galley, &m.accents, colour);
    rect
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_with_a_precomposed_character_become_it() {
        // y + U+0302 is ŷ (U+0177), V + U+0303 is Ṽ (U+1E7C).
        let m = resolve("y\u{302} = V\u{303}");
        assert_eq!(m.text, "\u{177} = \u{1E7C}");
        assert!(m.accents.is_empty());
        assert_eq!(plain("y\u{302}"), "\u{177}");
    }

    #[test]
    fn x_hat_has_no_precomposed_form_and_keeps_its_hat_as_an_accent() {
        // "Σg·x̂ (saved)": x is the 4th character (index 3) once the mark is gone.
        let m = resolve("Σg·x\u{302} (saved)");
        assert_eq!(m.text, "Σg·x (saved)");
        assert_eq!(
            m.accents,
            vec![Accent {
                at: 3,
                mark: '\u{2C6}',
                stack: 0
            }]
        );
        // Written after the letter where nothing can be painted: x-hat, never plain x; the
        // space after it survives.
        assert_eq!(plain("x\u{302} (saved)"), "x\u{2C6} (saved)");
        assert_eq!(plain("∇Q\u{303}K\u{303}"), "∇Q\u{2DC}K\u{2DC}");
        // No marks: the same string, not a copy.
        assert!(matches!(plain("x"), Cow::Borrowed("x")));
    }

    #[test]
    fn stacked_and_stray_marks() {
        // A second mark on a precomposed letter is painted over it, one level up.
        let m = resolve("a\u{302}\u{303}");
        assert_eq!(m.text, "â");
        assert_eq!(m.accents[0].stack, 1);
        assert_eq!(m.accents[0].mark, '˜');
        // A mark with nothing before it, or one without a spacing form, is dropped.
        assert_eq!(resolve("\u{302}x").text, "x");
        assert_eq!(resolve("x\u{35C}").text, "x");
        assert!(resolve("x\u{35C}").accents.is_empty());
    }

    #[test]
    fn every_table_row_pairs_up() {
        for (mark, bases, done, _) in MARKS {
            assert_eq!(bases.chars().count(), done.chars().count(), "{mark:?}");
        }
    }
}
