#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Figures in the Slides theme read from the back of a lecture hall: no text under 12 px per
//! 1200 px of width in any scene's export, in either language, at either width; and a figure
//! never shows the window's controls.

use warpscope::export::{FigureOptions, Lang, Theme, scene_svg};

/// `(font size, text)` of every `<text>` element of `svg`, and the SVG's width.
fn texts(svg: &str) -> (f32, Vec<(f32, String)>) {
    let attr = |tag: &str, name: &str| -> Option<f32> {
        let at = tag.find(&format!("{name}=\""))? + name.len() + 2;
        let end = tag[at..].find('"')? + at;
        tag[at..end].parse().ok()
    };
    let head_end = svg.find('>').unwrap();
    let width = attr(&svg[..head_end], "width").expect("the svg has a width");
    let mut out = Vec::new();
    let mut rest = svg;
    while let Some(start) = rest.find("<text") {
        let tag_end = rest[start..].find('>').unwrap() + start;
        let tag = &rest[start..tag_end];
        let close = rest[tag_end..].find("</text>").unwrap() + tag_end;
        let body = &rest[tag_end + 1..close];
        if let Some(size) = attr(tag, "font-size") {
            out.push((size, body.to_owned()));
        }
        rest = &rest[close..];
    }
    (width, out)
}

#[test]
fn no_slide_figure_has_text_under_12_px_per_1200_px() {
    let mut small = Vec::new();
    for lang in [Lang::En, Lang::Zh] {
        for width in [1200.0, 1024.0] {
            for s in warpscope_core::scene::scenes() {
                let opts = FigureOptions {
                    theme: Theme::Slides,
                    lang,
                    width,
                    ..Default::default()
                };
                let svg = scene_svg(s, s.defaults(), &opts).unwrap();
                let (w, texts) = texts(&svg);
                assert!(!texts.is_empty(), "{}: no text at all", s.id);
                for (size, body) in texts {
                    // 12 px in a 1200 px figure, scaled with the figure's width.
                    if size * 1200.0 / w < 11.99 {
                        small.push(format!("{} ({lang:?}, {width}): {size} px {body:?}", s.id));
                    }
                }
            }
        }
    }
    assert!(
        small.is_empty(),
        "{} texts too small:\n{}",
        small.len(),
        small.join("\n")
    );
}

#[test]
fn a_figure_shows_no_control_of_the_window() {
    const WIDGETS: &[&str] = &[
        "Lecture defaults",
        "Run on GPU",
        "Step event",
        "Export PNG",
        "Save session",
        "Open session",
        "Figure only",
        "Apply",
    ];
    for s in warpscope_core::scene::scenes() {
        let svg = scene_svg(s, s.defaults(), &FigureOptions::default()).unwrap();
        let (_, texts) = texts(&svg);
        for (_, body) in texts {
            for w in WIDGETS {
                assert!(!body.contains(w), "{}: {w:?} in the figure", s.id);
            }
        }
    }
}
