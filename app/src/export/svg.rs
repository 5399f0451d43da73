//! egui's painted shapes as SVG elements (text stays `<text>`), and SVG rasterised to PNG with
//! the GUI's embedded fonts.

use super::ExportError;
use crate::fonts;
use egui::epaint::{self, ClippedShape, Shape};
use egui::{Color32, Pos2, Rect};
use std::fmt::Write as _;

pub(super) fn colour(c: Color32) -> Option<String> {
    (c.a() > 0).then(|| {
        let [r, g, b, a] = c.to_srgba_unmultiplied();
        if a == 255 {
            format!("#{r:02x}{g:02x}{b:02x}")
        } else {
            format!("rgba({r},{g},{b},{:.3})", f32::from(a) / 255.0)
        }
    })
}

fn paint_attrs(fill: Color32, stroke: Option<(f32, Color32)>) -> String {
    let mut s = format!(
        " fill=\"{}\"",
        colour(fill).unwrap_or_else(|| "none".into())
    );
    if let Some((w, c)) = stroke
        && w > 0.0
        && let Some(c) = colour(c)
    {
        let _ = write!(s, " stroke=\"{c}\" stroke-width=\"{w:.2}\"");
    }
    s
}

/// `t` as XML character data. Markup characters become entities; a character XML 1.0 cannot
/// hold at all (controls other than tab, line feed and carriage return; U+FFFE, U+FFFF), which
/// a name read from a user's file may contain, is written as the text `\u{…}` so the document
/// stays well-formed and the reader still sees which character it was.
fn escape(t: &str) -> String {
    use std::fmt::Write as _;
    let mut s = String::with_capacity(t.len());
    for c in t.chars() {
        match c {
            '&' => s.push_str("&amp;"),
            '<' => s.push_str("&lt;"),
            '>' => s.push_str("&gt;"),
            '"' => s.push_str("&quot;"),
            c if xml_char(c) => s.push(c),
            c => {
                let _ = write!(s, "\\u{{{:x}}}", u32::from(c));
            }
        }
    }
    s
}

/// Whether XML 1.0 can hold `c` (its `Char` production; Rust's `char` already excludes the
/// surrogates).
fn xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r') || (c >= ' ' && c != '\u{fffe}' && c != '\u{ffff}')
}

fn points(ps: &[Pos2]) -> String {
    ps.iter()
        .map(|p| format!("{:.2},{:.2}", p.x, p.y))
        .collect::<Vec<_>>()
        .join(" ")
}

pub(super) fn shape_to_svg(out: &mut String, shape: &Shape) {
    match shape {
        Shape::Noop | Shape::Callback(_) => {}
        Shape::Vec(v) => v.iter().for_each(|s| shape_to_svg(out, s)),
        Shape::Circle(c) => {
            let _ = writeln!(
                out,
                "<circle cx=\"{:.2}\" cy=\"{:.2}\" r=\"{:.2}\"{}/>",
                c.center.x,
                c.center.y,
                c.radius,
                paint_attrs(c.fill, Some((c.stroke.width, c.stroke.color)))
            );
        }
        Shape::Ellipse(e) => {
            let _ = writeln!(
                out,
                "<ellipse cx=\"{:.2}\" cy=\"{:.2}\" rx=\"{:.2}\" ry=\"{:.2}\"{}/>",
                e.center.x,
                e.center.y,
                e.radius.x,
                e.radius.y,
                paint_attrs(e.fill, Some((e.stroke.width, e.stroke.color)))
            );
        }
        Shape::LineSegment { points: p, stroke } => {
            if let Some(c) = colour(stroke.color) {
                let _ = writeln!(
                    out,
                    "<line x1=\"{:.2}\" y1=\"{:.2}\" x2=\"{:.2}\" y2=\"{:.2}\" stroke=\"{c}\" stroke-width=\"{:.2}\"/>",
                    p[0].x, p[0].y, p[1].x, p[1].y, stroke.width
                );
            }
        }
        Shape::Path(p) => {
            let stroke_colour = match &p.stroke.color {
                epaint::ColorMode::Solid(c) => *c,
                epaint::ColorMode::UV(_) => Color32::GRAY,
            };
            let tag = if p.closed { "polygon" } else { "polyline" };
            let fill = if p.closed {
                p.fill
            } else {
                Color32::TRANSPARENT
            };
            let _ = writeln!(
                out,
                "<{tag} points=\"{}\"{} stroke-linejoin=\"round\"/>",
                points(&p.points),
                paint_attrs(fill, Some((p.stroke.width, stroke_colour)))
            );
        }
        Shape::Rect(r) => {
            let rr = f32::from(r.corner_radius.nw);
            let _ = writeln!(
                out,
                "<rect x=\"{:.2}\" y=\"{:.2}\" width=\"{:.2}\" height=\"{:.2}\" rx=\"{rr:.1}\"{}/>",
                r.rect.min.x,
                r.rect.min.y,
                r.rect.width(),
                r.rect.height(),
                paint_attrs(r.fill, Some((r.stroke.width, r.stroke.color)))
            );
        }
        Shape::Text(t) => text_to_svg(out, t),
        Shape::Mesh(m) => {
            // Meshes (plot fills, images) as their triangles, each with its first vertex's colour.
            for tri in m.indices.chunks_exact(3) {
                let v: Vec<&epaint::Vertex> = tri
                    .iter()
                    .filter_map(|i| m.vertices.get(*i as usize))
                    .collect();
                if v.len() == 3
                    && let Some(c) = colour(v[0].color)
                {
                    let _ = writeln!(
                        out,
                        "<polygon points=\"{}\" fill=\"{c}\"/>",
                        points(&[v[0].pos, v[1].pos, v[2].pos])
                    );
                }
            }
        }
        Shape::QuadraticBezier(q) => {
            let p = q.points;
            let _ = writeln!(
                out,
                "<path d=\"M{:.2},{:.2} Q{:.2},{:.2} {:.2},{:.2}\"{}/>",
                p[0].x,
                p[0].y,
                p[1].x,
                p[1].y,
                p[2].x,
                p[2].y,
                paint_attrs(
                    Color32::TRANSPARENT,
                    Some((q.stroke.width, solid(&q.stroke.color)))
                )
            );
        }
        Shape::CubicBezier(c) => {
            let p = c.points;
            let _ = writeln!(
                out,
                "<path d=\"M{:.2},{:.2} C{:.2},{:.2} {:.2},{:.2} {:.2},{:.2}\"{}/>",
                p[0].x,
                p[0].y,
                p[1].x,
                p[1].y,
                p[2].x,
                p[2].y,
                p[3].x,
                p[3].y,
                paint_attrs(
                    Color32::TRANSPARENT,
                    Some((c.stroke.width, solid(&c.stroke.color)))
                )
            );
        }
        Shape::Band(b) => {
            // A band: the region between its lower and upper curves.
            let mut ps: Vec<Pos2> = b.points.iter().map(|p| Pos2::new(p.x, p.y.min)).collect();
            ps.extend(b.points.iter().rev().map(|p| Pos2::new(p.x, p.y.max)));
            let _ = writeln!(
                out,
                "<polygon points=\"{}\"{}/>",
                points(&ps),
                paint_attrs(b.fill, Some((b.stroke.width, b.stroke.color)))
            );
        }
    }
}

fn solid(c: &epaint::ColorMode) -> Color32 {
    match c {
        epaint::ColorMode::Solid(c) => *c,
        epaint::ColorMode::UV(_) => Color32::GRAY,
    }
}

fn text_to_svg(out: &mut String, t: &epaint::TextShape) {
    let Some(section) = t.galley.job.sections.first() else {
        return;
    };
    let base = if section.format.color == Color32::PLACEHOLDER {
        t.fallback_color
    } else {
        section.format.color
    };
    let Some(fill) = colour(
        t.override_text_color
            .unwrap_or(base)
            .gamma_multiply(t.opacity_factor),
    ) else {
        return;
    };
    let size = section.format.font_id.size;
    // egui rotates text about its position (vertical axis titles); SVG does the same with a
    // rotate transform around that point.
    let rotated = t.angle.abs() > f32::EPSILON;
    if rotated {
        let _ = writeln!(
            out,
            "<g transform=\"rotate({:.3} {:.2} {:.2})\">",
            t.angle.to_degrees(),
            t.pos.x,
            t.pos.y
        );
    }
    for row in &t.galley.rows {
        let glyphs = &row.row.glyphs;
        let text: String = glyphs.iter().map(|g| g.chr).collect();
        if text.trim().is_empty() {
            continue;
        }
        let (Some(first), Some(last)) = (glyphs.first(), glyphs.last()) else {
            continue;
        };
        let x = t.pos.x + row.pos.x + first.pos.x;
        let y = t.pos.y + row.pos.y + first.pos.y;
        // Fast path: one font for the whole row.
        if !glyphs.iter().any(|g| is_cjk(g.chr)) {
            let length = last.pos.x + last.advance_width - first.pos.x;
            let _ = writeln!(
                out,
                "<text x=\"{x:.2}\" y=\"{y:.2}\" font-size=\"{size:.1}\" fill=\"{fill}\" textLength=\"{length:.2}\" lengthAdjust=\"spacingAndGlyphs\" xml:space=\"preserve\">{}</text>",
                escape(&text)
            );
            continue;
        }
        // Runs of CJK and of other characters, one <tspan> each, so the row stays one text
        // element (selectable as a line): resvg's per-character font fallback misses CJK
        // inside a run that starts in a Latin font, so CJK runs name the CJK font themselves.
        let _ = write!(
            out,
            "<text x=\"{x:.2}\" y=\"{y:.2}\" font-size=\"{size:.1}\" fill=\"{fill}\" xml:space=\"preserve\">"
        );
        let mut start = 0;
        while start < glyphs.len() {
            let cjk = is_cjk(glyphs[start].chr);
            // Spaces stay with the run they follow.
            let end = glyphs[start..]
                .iter()
                .position(|g| !g.chr.is_whitespace() && is_cjk(g.chr) != cjk)
                .map_or(glyphs.len(), |n| start + n);
            let run = &glyphs[start..end];
            start = end;
            let (a, z) = (&run[0], &run[run.len() - 1]);
            let rx = t.pos.x + row.pos.x + a.pos.x;
            let length = z.pos.x + z.advance_width - a.pos.x;
            let family = if cjk {
                " font-family=\"'Noto Sans CJK SC', sans-serif\""
            } else {
                ""
            };
            let run_text: String = run.iter().map(|g| g.chr).collect();
            let _ = write!(
                out,
                "<tspan x=\"{rx:.2}\"{family} textLength=\"{length:.2}\" lengthAdjust=\"spacingAndGlyphs\">{}</tspan>",
                escape(&run_text)
            );
        }
        out.push_str("</text>\n");
    }
    if rotated {
        out.push_str("</g>\n");
    }
}

/// Whether `c` is drawn from the CJK font: CJK punctuation, kana, hanzi, full-width forms.
fn is_cjk(c: char) -> bool {
    matches!(c, '\u{2E80}'..='\u{9FFF}' | '\u{F900}'..='\u{FAFF}' | '\u{FE30}'..='\u{FE4F}' | '\u{FF00}'..='\u{FFEF}')
}

/// Writes painted shapes as an SVG document cropped to `area`, on background `bg`.
pub fn shapes_to_svg(shapes: &[ClippedShape], area: Rect, bg: Color32) -> String {
    let mut body = String::new();
    for (i, cs) in shapes.iter().enumerate() {
        let c = cs.clip_rect.intersect(area);
        if !c.is_positive() {
            continue;
        }
        let _ = writeln!(
            body,
            "<clipPath id=\"c{i}\"><rect x=\"{:.2}\" y=\"{:.2}\" width=\"{:.2}\" height=\"{:.2}\"/></clipPath><g clip-path=\"url(#c{i})\">",
            c.min.x,
            c.min.y,
            c.width(),
            c.height()
        );
        shape_to_svg(&mut body, &cs.shape);
        body.push_str("</g>\n");
    }
    document(&body, area, bg)
}

/// An SVG document showing `area` of `body` (SVG elements) on background `bg`, one user unit
/// per pixel.
pub(super) fn document(body: &str, area: Rect, bg: Color32) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"{:.2} {:.2} {:.2} {:.2}\" width=\"{:.0}\" height=\"{:.0}\" font-family=\"Ubuntu, 'Noto Sans CJK SC', 'DejaVu Sans', sans-serif\">\n<rect x=\"{:.2}\" y=\"{:.2}\" width=\"100%\" height=\"100%\" fill=\"{}\"/>\n{body}</svg>\n",
        area.min.x,
        area.min.y,
        area.width(),
        area.height(),
        area.width(),
        area.height(),
        area.min.x,
        area.min.y,
        colour(bg).unwrap_or_else(|| "white".into())
    )
}

/// The SVG rasteriser's options with the fonts the GUI embeds (egui's Ubuntu, the CJK and
/// DejaVu subsets; no system fonts).
pub(super) fn raster_options() -> resvg::usvg::Options<'static> {
    let mut opt = resvg::usvg::Options::default();
    let db = opt.fontdb_mut();
    db.load_font_data(
        egui::epaint::text::FontDefinitions::default()
            .font_data
            .get("Ubuntu-Light")
            .map(|d| (*d.font).as_ref().to_vec())
            .unwrap_or_default(),
    );
    db.load_font_data(fonts::NOTO_SC_SUBSET.to_vec());
    db.load_font_data(fonts::DEJAVU_SUBSET.to_vec());
    db.set_sans_serif_family("DejaVu Sans");
    opt
}

/// Rasterises `svg` at `scale` × its size with the GUI's embedded fonts (no system fonts, no GPU).
///
/// # Errors
/// [`ExportError::Render`] when the SVG does not parse or the image would be empty or over
/// 16384 pixels on a side.
pub fn svg_to_png(svg: &str, scale: f32) -> Result<Vec<u8>, ExportError> {
    let opt = raster_options();
    let tree =
        resvg::usvg::Tree::from_str(svg, &opt).map_err(|e| ExportError::Render(e.to_string()))?;
    let size = tree.size();
    let (w, h) = (
        (size.width() * scale).ceil() as u32,
        (size.height() * scale).ceil() as u32,
    );
    if w == 0 || h == 0 || w > 16384 || h > 16384 {
        return Err(out_of_size(f64::from(w), f64::from(h), scale));
    }
    let mut pixmap = resvg::tiny_skia::Pixmap::new(w, h)
        .ok_or_else(|| ExportError::Render("out of memory for the image".into()))?;
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    pixmap
        .encode_png()
        .map_err(|e| ExportError::Render(e.to_string()))
}

/// The refusal of a `w × h`-pixel raster at `scale`: a lower `--scale` is suggested only where
/// there is one (at 1× the figure itself is too large for a PNG, and its SVG is not).
pub(super) fn out_of_size(w: f64, h: f64, scale: f32) -> ExportError {
    let advice = if scale > 1.0 {
        "lower --scale"
    } else if w < 1.0 || h < 1.0 {
        "the figure is empty"
    } else {
        "the figure is too large for a PNG even at --scale 1: export it as .svg"
    };
    ExportError::Render(format!(
        "a {w} × {h} pixel image is outside 1..=16384 per side; {advice}"
    ))
}

/// `svg` with every `<text>` drawn as outlines (paths) in the GUI's embedded fonts, as the PNG
/// rasteriser lays it out: the figure then looks the same where those fonts are not installed
/// (a slide program, another machine), at the price of a larger file whose text can no longer
/// be selected or edited.
///
/// # Errors
/// [`ExportError::Render`] when the SVG does not parse.
pub fn outline_text(svg: &str) -> Result<String, ExportError> {
    let tree = resvg::usvg::Tree::from_str(svg, &raster_options())
        .map_err(|e| ExportError::Render(e.to_string()))?;
    Ok(tree.to_string(&resvg::usvg::WriteOptions::default()))
}

#[cfg(test)]
mod outline_tests {
    use super::*;

    /// Renders `svg` at scale 1 with `opt`'s fonts: RGBA pixels and the width.
    fn render(svg: &str, opt: &resvg::usvg::Options<'_>) -> (Vec<u8>, u32) {
        let tree = resvg::usvg::Tree::from_str(svg, opt).expect("parses");
        let size = tree.size().to_int_size();
        let mut pixmap =
            resvg::tiny_skia::Pixmap::new(size.width(), size.height()).expect("non-empty");
        resvg::render(
            &tree,
            resvg::tiny_skia::Transform::identity(),
            &mut pixmap.as_mut(),
        );
        (pixmap.data().to_vec(), size.width())
    }

    /// Share of pixels whose colour differs by more than 8 of 255 in some channel.
    fn differing(a: &[u8], b: &[u8]) -> f64 {
        let n = a.len().min(b.len()) / 4;
        let diff = a
            .chunks_exact(4)
            .zip(b.chunks_exact(4))
            .filter(|(p, q)| p.iter().zip(q.iter()).any(|(x, y)| x.abs_diff(*y) > 8))
            .count();
        diff as f64 / n.max(1) as f64 + a.len().abs_diff(b.len()) as f64
    }

    #[test]
    fn outlined_text_renders_the_same_without_any_font() {
        // A real figure with English and Chinese text: memory-allocator in Chinese.
        let scene = warpscope_core::scene::find("memory-allocator").expect("registered");
        let mut state = crate::export::prepare(scene, scene.defaults(), None).expect("computes");
        let opts = crate::export::FigureOptions {
            lang: crate::i18n::Lang::Zh,
            ..Default::default()
        };
        let svg = crate::export::prepared_svg(&mut state, &opts);
        assert!(svg.contains("<text"));
        let outlined = outline_text(&svg).expect("outlines");
        assert!(!outlined.contains("<text"));
        let no_fonts = resvg::usvg::Options::default();
        let (want, _) = render(&svg, &raster_options());
        let (got, _) = render(&outlined, &no_fonts);
        // With no font at all, the outlines still draw the text as the embedded fonts do …
        assert!(differing(&want, &got) < 0.002, "{}", differing(&want, &got));
        // … where the plain SVG loses it (so the comparison can tell).
        let (bare, _) = render(&svg, &no_fonts);
        assert!(
            differing(&want, &bare) > 0.01,
            "{}",
            differing(&want, &bare)
        );
    }

    proptest::proptest! {
        /// Any text a file supplies (controls, U+FFFE, U+FFFF, NUL, markup) leaves a well-formed
        /// document that renders; text XML can hold reads back unchanged.
        #[test]
        fn any_text_stays_well_formed_xml(t in "(\\PC|[\\x00-\\x1f\u{fffe}\u{ffff}<>&\"'])*") {
            let doc = format!(
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\"><text x=\"1\" y=\"9\" xml:space=\"preserve\">{}</text></svg>",
                escape(&t)
            );
            let parsed = roxmltree::Document::parse(&doc);
            proptest::prop_assert!(parsed.is_ok(), "{:?}: {:?}", t, parsed.err());
            let xml_can_hold = t.chars().all(|c| {
                matches!(c, '\t' | '\n') || (c >= ' ' && c != '\u{fffe}' && c != '\u{ffff}')
            });
            if xml_can_hold && let Ok(d) = &parsed {
                let text: String = d.descendants().filter(|n| n.is_text()).filter_map(|n| n.text()).collect();
                proptest::prop_assert_eq!(text, t.clone());
            }
            proptest::prop_assert!(svg_to_png(&doc, 1.0).is_ok());
        }
    }

    #[test]
    fn a_control_character_is_shown_by_its_code() {
        assert_eq!(
            escape("a\u{1}b\u{0}\u{ffff}<"),
            "a\\u{1}b\\u{0}\\u{ffff}&lt;"
        );
    }
}
