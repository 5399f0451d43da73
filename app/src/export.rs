//! Figures for slides: any scene's view as SVG (vector — text stays text, shapes stay shapes)
//! or PNG, headless, with no display and no GPU driver.
//!
//! The scene's view is drawn by the same code the window uses, into a headless egui pass; the
//! painted shapes are written as SVG elements ([`shapes_to_svg`]); PNG is that SVG rasterised on
//! the CPU with `resvg`, using the fonts the GUI embeds. Files are written atomically (a
//! temporary file in the target folder, then a rename), so a failed export never leaves a
//! half-written figure behind.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use egui::epaint::{self, ClippedShape, Shape};
use egui::{Color32, Pos2, Rect};
use warpscope_core::params::ParamValues;
use warpscope_core::scene::Scene;

use crate::gui::{SceneState, fonts, stepper, views};

/// Colour schemes for figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Theme {
    /// Light background, larger text: for projected slides.
    Slides,
    /// egui's dark theme (the window's default).
    Dark,
    /// egui's light theme.
    Light,
}

/// Language of titles and parameter captions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Lang {
    /// English.
    En,
    /// Chinese.
    Zh,
}

/// How to draw a figure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FigureOptions {
    /// Trace event to show (scenes with a stepper); `None` = the first.
    pub step: Option<usize>,
    /// Width of the figure in points (1 pt = 1 px at scale 1).
    pub width: f32,
    /// Colours and text size.
    pub theme: Theme,
    /// Caption language.
    pub lang: Lang,
    /// Put the scene title and its parameters above the view.
    pub caption: bool,
}

impl Default for FigureOptions {
    fn default() -> Self {
        FigureOptions {
            step: None,
            width: 1200.0,
            theme: Theme::Slides,
            lang: Lang::En,
            caption: true,
        }
    }
}

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The scene's parameters or computation failed.
    #[error(transparent)]
    Scene(#[from] warpscope_core::Error),
    /// The output path cannot be used.
    #[error("cannot write {path}: {reason}")]
    Write {
        /// The path asked for.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// Rasterising the SVG failed.
    #[error("could not render the PNG: {0}")]
    Render(String),
    /// The output extension is not one warpscope writes.
    #[error("unknown figure format for {0}: use .svg, .png or .gif (an animation of the stepper)")]
    Format(PathBuf),
}

/// Applies `theme` to `ctx` (the window's and the figures' colours and text sizes).
pub fn apply_theme(ctx: &egui::Context, theme: Theme) {
    // Start from egui's defaults so switching themes never compounds the text scaling.
    ctx.global_style_mut(|s| *s = egui::Style::default());
    match theme {
        Theme::Dark => ctx.set_visuals(egui::Visuals::dark()),
        Theme::Light => ctx.set_visuals(egui::Visuals::light()),
        Theme::Slides => {
            ctx.set_visuals(egui::Visuals::light());
            ctx.global_style_mut(|s| {
                for font in s.text_styles.values_mut() {
                    font.size *= 1.25;
                }
                s.visuals.widgets.noninteractive.fg_stroke.width = 1.5;
            });
        }
    }
}

/// The caption line: title and parameters.
pub fn caption(scene: &Scene, values: &ParamValues, lang: Lang, step: Option<usize>) -> String {
    let title = match lang {
        Lang::En => scene.title,
        Lang::Zh => scene.title_zh,
    };
    let params: Vec<String> = values.0.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let step = step.map_or(String::new(), |s| match lang {
        Lang::En => format!(", event {s}"),
        Lang::Zh => format!("，第 {s} 个事件"),
    });
    format!(
        "{} {} — {}{}",
        scene.section,
        title,
        params.join(", "),
        step
    )
}

/// Computes `scene` with `values` for drawing.
///
/// # Errors
/// The scene's own validation or computation error.
pub fn prepare(scene: &'static Scene, values: ParamValues) -> Result<SceneState, ExportError> {
    let mut state = SceneState::new(scene);
    state.values = values.validated(scene.params)?;
    state.compute_now();
    if let Some(err) = &state.error {
        return Err(ExportError::Scene(warpscope_core::Error::BadInput(
            err.en.clone(),
        )));
    }
    if state.computed.is_none() {
        return Err(ExportError::Render("the scene produced no result".into()));
    }
    Ok(state)
}

/// Events in the computed scene's trace (0 for scenes without a stepper).
pub fn steps(state: &SceneState) -> usize {
    state
        .computed
        .as_ref()
        .map_or(0, |c| c.timeline_len(&state.view))
}

/// Draws a prepared scene headless and returns the painted shapes, the area they cover, and the
/// background colour.
pub fn draw_state(
    state: &mut SceneState,
    opts: &FigureOptions,
) -> (Vec<ClippedShape>, Rect, Color32) {
    let Some(computed) = state.computed.clone() else {
        return (Vec::new(), Rect::NOTHING, Color32::WHITE);
    };
    if let Some(step) = opts.step {
        state.stepper.pos = step.min(steps(state).saturating_sub(1));
    }
    let ctx = egui::Context::default();
    fonts::install(&ctx);
    apply_theme(&ctx, opts.theme);
    crate::i18n::set(&ctx, opts.lang);
    // The caption names the event drawn: a step past the end shows (and says) the last one; a
    // scene without a trace has no event to name.
    let shown = opts
        .step
        .filter(|_| steps(state) > 0)
        .map(|_| state.stepper.pos);
    let text = caption(state.scene, &state.values, opts.lang, shown);
    let input = egui::RawInput {
        screen_rect: Some(Rect::from_min_size(
            Pos2::ZERO,
            egui::vec2(opts.width, 6000.0),
        )),
        ..Default::default()
    };
    let mut used = Rect::NOTHING;
    let mut shapes = Vec::new();
    // The first pass loads the fonts; the second is the figure.
    for _ in 0..2 {
        let mut output = ctx.run_ui(input.clone(), |ui| {
            stepper::set_figure_mode(ui.ctx(), true);
            egui::CentralPanel::default().show(ui, |ui| {
                used = ui
                    .scope(|ui| {
                        if opts.caption {
                            ui.add(egui::Label::new(egui::RichText::new(&text).strong()).wrap());
                            ui.separator();
                        }
                        views::show(ui, &computed, state);
                    })
                    .response
                    .rect;
            });
        });
        // No renderer consumes the font atlas here.
        output.textures_delta.clear();
        shapes = output.shapes;
    }
    let bg = ctx.global_style().visuals.panel_fill;
    (shapes, used.expand(8.0), bg)
}

/// Draws `scene` (parameters `values`) headless: [`prepare`] then [`draw_state`].
///
/// # Errors
/// The scene's own validation or computation error.
pub fn draw(
    scene: &'static Scene,
    values: ParamValues,
    opts: &FigureOptions,
) -> Result<(Vec<ClippedShape>, Rect, Color32), ExportError> {
    let mut state = prepare(scene, values)?;
    Ok(draw_state(&mut state, opts))
}

/// Most frames an animation may have.
pub const MAX_FRAMES: usize = 600;

/// An animated GIF of `scene` stepping through events `from..=to` (one frame per event) at
/// `fps` frames per second, PNG-rasterised at `scale`. Frames are padded to the largest size.
/// `on_frame(done, total)` is called after each frame is drawn (the CLI prints progress with it).
/// Frames are kept PNG-compressed until they are encoded, so memory grows by about one
/// compressed frame per event (not one full RGBA image).
///
/// # Errors
/// A scene without a stepper, an empty or too long range, rendering errors.
#[allow(clippy::too_many_arguments)] // the CLI's options, one each
pub fn animation(
    scene: &'static Scene,
    values: ParamValues,
    from: usize,
    to: Option<usize>,
    fps: u16,
    scale: f32,
    opts: &FigureOptions,
    on_frame: &mut dyn FnMut(usize, usize),
) -> Result<Vec<u8>, ExportError> {
    let mut state = prepare(scene, values)?;
    let n = steps(&state);
    if n == 0 {
        return Err(ExportError::Scene(warpscope_core::Error::invalid(
            "out",
            "gif",
            format!(
                "scene `{}` has no trace to step through; export a PNG or SVG instead",
                scene.id
            ),
        )));
    }
    let to = to.unwrap_or(n - 1).min(n - 1);
    if from > to || to - from + 1 > MAX_FRAMES {
        return Err(ExportError::Scene(warpscope_core::Error::invalid(
            "frames",
            format!("{from}..{to}"),
            format!(
                "expected a range inside 0..{} of at most {MAX_FRAMES} events",
                n - 1
            ),
        )));
    }
    let total = to - from + 1;
    let mut pngs = Vec::with_capacity(total);
    let (mut w, mut h) = (0, 0);
    for step in from..=to {
        let o = FigureOptions {
            step: Some(step),
            ..*opts
        };
        let (shapes, area, bg) = draw_state(&mut state, &o);
        let png = svg_to_png(&shapes_to_svg(&shapes, area, bg), scale)?;
        let (fw, fh) = image::ImageReader::new(std::io::Cursor::new(&png))
            .with_guessed_format()
            .map_err(|e| ExportError::Render(e.to_string()))?
            .into_dimensions()
            .map_err(|e| ExportError::Render(e.to_string()))?;
        (w, h) = (w.max(fw), h.max(fh));
        pngs.push(png);
        on_frame(step - from + 1, total);
    }
    let delay = image::Delay::from_numer_denom_ms(1000, u32::from(fps.max(1)));
    let mut out = Vec::new();
    {
        let mut enc = image::codecs::gif::GifEncoder::new_with_speed(&mut out, 10);
        enc.set_repeat(image::codecs::gif::Repeat::Infinite)
            .map_err(|e| ExportError::Render(e.to_string()))?;
        for png in pngs {
            let img = image::load_from_memory(&png)
                .map_err(|e| ExportError::Render(e.to_string()))?
                .to_rgba8();
            let mut canvas = image::RgbaImage::from_pixel(w, h, *img.get_pixel(0, 0));
            image::imageops::overlay(&mut canvas, &img, 0, 0);
            enc.encode_frame(image::Frame::from_parts(canvas, 0, 0, delay))
                .map_err(|e| ExportError::Render(e.to_string()))?;
        }
    }
    Ok(out)
}

fn colour(c: Color32) -> Option<String> {
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

fn escape(t: &str) -> String {
    t.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn points(ps: &[Pos2]) -> String {
    ps.iter()
        .map(|p| format!("{:.2},{:.2}", p.x, p.y))
        .collect::<Vec<_>>()
        .join(" ")
}

fn shape_to_svg(out: &mut String, shape: &Shape) {
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

/// The SVG of `scene` with `values`.
///
/// # Errors
/// The scene's errors.
pub fn scene_svg(
    scene: &'static Scene,
    values: ParamValues,
    opts: &FigureOptions,
) -> Result<String, ExportError> {
    let (shapes, area, bg) = draw(scene, values, opts)?;
    Ok(shapes_to_svg(&shapes, area, bg))
}

/// Rasterises `svg` at `scale` × its size with the GUI's embedded fonts (no system fonts, no GPU).
///
/// # Errors
/// [`ExportError::Render`] when the SVG does not parse or the image would be empty or over
/// 16384 pixels on a side.
pub fn svg_to_png(svg: &str, scale: f32) -> Result<Vec<u8>, ExportError> {
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
    let tree =
        resvg::usvg::Tree::from_str(svg, &opt).map_err(|e| ExportError::Render(e.to_string()))?;
    let size = tree.size();
    let (w, h) = (
        (size.width() * scale).ceil() as u32,
        (size.height() * scale).ceil() as u32,
    );
    if w == 0 || h == 0 || w > 16384 || h > 16384 {
        return Err(ExportError::Render(format!(
            "a {w} × {h} pixel image is outside 1..=16384 per side; lower --scale"
        )));
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

/// Writes `bytes` to `path` atomically: a temporary file beside it, then a rename. When `path`
/// is a symbolic link (to a link, …) the file it finally names is replaced — the temporary file
/// is made beside that target and renamed over it — so the link stays a link and its target is
/// what changes.
///
/// # Errors
/// [`ExportError::Write`] naming the path and the reason (missing folder, no permission, …).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), ExportError> {
    let err = |reason: String| ExportError::Write {
        path: path.to_owned(),
        reason,
    };
    let target = link_target(path).map_err(err)?;
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => PathBuf::from("."),
    };
    if !dir.is_dir() {
        return Err(err(format!("the folder {} does not exist", dir.display())));
    }
    if target.is_dir() {
        return Err(err(
            "that is a folder; give a file name (e.g. fig.png), or use `export --all --out DIR`"
                .into(),
        ));
    }
    // The temporary file's own name means nothing to the user: say the folder and the reason.
    let mut tmp = tempfile::NamedTempFile::new_in(&dir).map_err(|e| {
        err(format!(
            "cannot create a file in {}: {}",
            dir.display(),
            e.kind()
        ))
    })?;
    std::io::Write::write_all(&mut tmp, bytes).map_err(|e| err(e.to_string()))?;
    // A figure is an ordinary document: readable by others, like any file the user saves.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644))
            .map_err(|e| err(e.to_string()))?;
    }
    tmp.persist(&target).map_err(|e| err(e.error.to_string()))?;
    Ok(())
}

/// The path a write to `path` should replace: `path` itself unless it is a symbolic link, else
/// the file the chain of links finally names (which need not exist yet: a dangling link
/// creates its target). A loop of links is refused.
fn link_target(path: &Path) -> Result<PathBuf, String> {
    let mut current = path.to_owned();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&current) {
            Ok(m) if m.file_type().is_symlink() => {
                let next = std::fs::read_link(&current)
                    .map_err(|e| format!("cannot read the link {}: {e}", current.display()))?;
                current = if next.is_absolute() {
                    next
                } else {
                    current
                        .parent()
                        .map_or_else(|| next.clone(), |d| d.join(&next))
                };
            }
            _ => return Ok(current),
        }
    }
    Err(format!(
        "{} is a loop of symbolic links (more than 40 deep)",
        path.display()
    ))
}

/// Exports `scene` to `out` (`.svg` or `.png`, PNG at `scale`) and returns the written path.
///
/// # Errors
/// A bad extension, the scene's errors, rendering or writing failures.
pub fn export(
    scene: &'static Scene,
    values: ParamValues,
    out: &Path,
    scale: f32,
    opts: &FigureOptions,
) -> Result<PathBuf, ExportError> {
    let ext = out
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let svg = match ext.as_deref() {
        Some("svg") | Some("png") => scene_svg(scene, values, opts)?,
        _ if out.is_dir() => {
            return Err(ExportError::Write {
                path: out.to_owned(),
                reason: "that is a folder; give a file name (e.g. fig.png), or use \
                         `export --all --out DIR`"
                    .into(),
            });
        }
        _ => return Err(ExportError::Format(out.to_owned())),
    };
    let bytes = if ext.as_deref() == Some("png") {
        svg_to_png(&svg, scale)?
    } else {
        svg.into_bytes()
    };
    write_atomically(out, &bytes)?;
    Ok(out.canonicalize().unwrap_or_else(|_| out.to_owned()))
}
