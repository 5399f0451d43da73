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

use crate::fonts;
pub use crate::i18n::Lang;
pub use crate::theme::{Theme, apply_theme};
use crate::views;
use crate::widgets::gpu::GpuPanel;
use crate::widgets::stepper::{self, Stepper};

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
    /// A 16 : 9 slide: the figure centred on a [`SLIDE_PX`] canvas (scaled to fit) instead of
    /// cropped to what it draws; drawn [`SLIDE_WIDTH`] points wide.
    pub slide: bool,
}

/// The pixel size of a `slide` figure: full HD, 16 : 9.
pub const SLIDE_PX: (f32, f32) = (1920.0, 1080.0);

/// The width in points a `slide` figure is laid out at (its text then reads as on a 1280-point
/// wide slide, scaled 1.5× to [`SLIDE_PX`]).
pub const SLIDE_WIDTH: f32 = 1280.0;

impl Default for FigureOptions {
    fn default() -> Self {
        FigureOptions {
            step: None,
            width: 1200.0,
            theme: Theme::Slides,
            lang: Lang::En,
            caption: true,
            slide: false,
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

/// The caption line: the section, the title, every parameter by its label (in the scene's
/// order) and the event shown.
pub fn caption(scene: &Scene, values: &ParamValues, lang: Lang, step: Option<usize>) -> String {
    let title = match lang {
        Lang::En => scene.title.en,
        Lang::Zh => scene.title.zh,
    };
    // Each parameter by its readable label (with its unit), in the scene's own order.
    let params: Vec<String> = scene
        .params
        .iter()
        .filter_map(|p| {
            let v = values.0.get(p.name)?;
            let label = match lang {
                Lang::En => p.label,
                Lang::Zh => p.label_zh,
            };
            Some(format!("{label} = {v}"))
        })
        .collect();
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

/// A file name stem for a figure or session of `scene`: the id, then each parameter that
/// differs from the lecture default as `name` + value (e.g. `banks-pad1`, `memory-snapshot-
/// pathcs336.pickle` keeps only the file's name), then `-e<N>` for a stepper event past the
/// first. Only ASCII letters, digits, `.`, `_` and `-` are kept; at most 80 characters.
pub fn file_stem(scene: &Scene, values: &ParamValues, event: Option<usize>) -> String {
    let defaults = scene.defaults();
    let mut stem = scene.id.to_owned();
    for p in scene.params {
        let (Some(v), d) = (values.0.get(p.name), defaults.0.get(p.name)) else {
            continue;
        };
        if Some(v) == d {
            continue;
        }
        let shown = v.to_string();
        // A path says too much: its file name is enough to tell figures apart.
        let shown = Path::new(&shown)
            .file_name()
            .map_or(shown.clone(), |n| n.to_string_lossy().into_owned());
        stem.push('-');
        stem.push_str(p.name);
        stem.push_str(&shown);
    }
    if let Some(e) = event.filter(|&e| e > 0) {
        stem.push_str(&format!("-e{e}"));
    }
    let clean: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .take(80)
        .collect();
    clean
}

/// A scene computed for drawing headless: its result, its view at the view's initial state,
/// and a stepper of its own.
pub struct Prepared {
    /// The scene.
    pub scene: &'static Scene,
    /// The validated parameter values.
    pub values: ParamValues,
    /// The view's result.
    pub output: views::Output,
    /// The view and its state.
    pub view: Box<dyn views::AnyView>,
    /// The event drawn.
    pub stepper: Stepper,
    /// An empty GPU panel (figures show no real-GPU run).
    pub gpu: GpuPanel,
}

/// Computes `scene` with `values` for drawing.
///
/// # Errors
/// The scene's own validation or computation error.
pub fn prepare(scene: &'static Scene, values: ParamValues) -> Result<Prepared, ExportError> {
    let values = values.validated(scene.params)?;
    let entry = views::entry(scene.id);
    let output = entry.compute(scene, values.clone())?;
    Ok(Prepared {
        scene,
        values,
        output,
        view: entry.make(),
        stepper: Stepper::default(),
        gpu: GpuPanel::default(),
    })
}

/// Events in the prepared scene's trace (0 for scenes without a stepper).
pub fn steps(state: &Prepared) -> usize {
    state.view.events(&state.output)
}

/// Draws a prepared scene headless and returns the painted shapes, the area they cover, and the
/// background colour.
pub fn draw_state(
    state: &mut Prepared,
    opts: &FigureOptions,
) -> (Vec<ClippedShape>, Rect, Color32) {
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
                        let mut cx = views::ViewContext {
                            stepper: &mut state.stepper,
                            gpu: &mut state.gpu,
                            values: &state.values,
                        };
                        state.view.ui(ui, &state.output, &mut cx);
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

/// An animated GIF of `scene` stepping through events `from..=to` (one frame per event; `to`
/// `None` = to the last event) at `fps` frames per second, rasterised at `scale`. Frames are
/// padded to the largest size.
///
/// The frames are drawn in order (the stepper is stateful), then rasterised, quantised and
/// LZW-compressed in parallel on every core, and written in order. `on_frame(done, total)` is
/// called as frames are written (the CLI prints progress with it). Memory holds the frames' SVG
/// text and the GIF written so far, not one RGBA image per event.
///
/// # Errors
/// A scene without a stepper; a range that is empty, reaches past the last event (the message
/// names it) or is longer than [`MAX_FRAMES`]; rendering errors.
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
    let (from, to) = frame_range(scene, n, from, to)?;
    let total = to - from + 1;
    // 1. Draw every frame (in order: the stepper is stateful) as SVG text; the canvas is the
    //    largest frame.
    let mut frames = Vec::with_capacity(total);
    let (mut w, mut h) = (0u32, 0u32);
    for step in from..=to {
        let o = FigureOptions {
            step: Some(step),
            ..*opts
        };
        let (shapes, area, bg) = draw_state(&mut state, &o);
        let (fw, fh) = pixel_size(area, scale)?;
        (w, h) = (w.max(fw), h.max(fh));
        frames.push((frame_svg(&shapes, area, bg), bg));
    }
    // 2. Rasterise, quantise and compress in parallel, writing in order.
    // In hundredths of a second, as the `image` crate rounds it (down).
    let delay = ((1000 / u32::from(fps.max(1))) / 10) as u16;
    encode_frames(&frames, (w, h), scale, delay, on_frame)
}

/// Checks the events `from..=to` (`to` `None` = to the end) against a trace of `n` events:
/// nothing is cut or clamped silently.
fn frame_range(
    scene: &Scene,
    n: usize,
    from: usize,
    to: Option<usize>,
) -> Result<(usize, usize), ExportError> {
    let shown = format!("{from}..{}", to.map_or(String::new(), |t| t.to_string()));
    let refuse = |expected: String| {
        Err(ExportError::Scene(warpscope_core::Error::invalid(
            "frames", &shown, expected,
        )))
    };
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
    let last = n - 1;
    let to_given = to.is_some();
    let to = to.unwrap_or(last);
    if from > last || to > last {
        return refuse(format!(
            "expected events in 0..={last}: scene `{}` has {n} trace events, the last is {last}",
            scene.id
        ));
    }
    if from > to {
        return refuse(format!("expected FROM ≤ TO, e.g. {to}..{from}"));
    }
    let count = to - from + 1;
    if count > MAX_FRAMES {
        let end = from + MAX_FRAMES - 1;
        return refuse(if to_given {
            format!(
                "{count} events are more frames than an animation may have; expected at most \
                 {MAX_FRAMES}, e.g. --frames {from}..{end}"
            )
        } else {
            format!(
                "the trace from event {from} to its end has {count} events, more frames than \
                 an animation may have; expected at most {MAX_FRAMES}: give --frames \
                 {from}..{end}"
            )
        });
    }
    Ok((from, to))
}

/// The pixel size of a figure covering `area` at `scale`: the SVG's whole-point size (as its
/// `width` and `height` spell it) times `scale`, rounded up, as [`svg_to_png`] sizes it.
fn pixel_size(area: Rect, scale: f32) -> Result<(u32, u32), ExportError> {
    let points = |v: f32| format!("{v:.0}").parse::<f32>().unwrap_or(v);
    let (w, h) = (
        (points(area.width()) * scale).ceil(),
        (points(area.height()) * scale).ceil(),
    );
    if !(w >= 1.0 && h >= 1.0 && w <= 16384.0 && h <= 16384.0) {
        return Err(ExportError::Render(format!(
            "a {w} × {h} pixel image is outside 1..=16384 per side; lower --scale"
        )));
    }
    Ok((w as u32, h as u32))
}

/// [`shapes_to_svg`] for an animation frame, cheaper to rasterise: a shape that lies inside its
/// clip rectangle is drawn unclipped, a plain rectangle is cut to its clip, and consecutive
/// shapes with the same clip rectangle share one clip group (a clip group costs resvg a
/// full-size layer: with one per shape, about 8× the frame's time).
fn frame_svg(shapes: &[ClippedShape], area: Rect, bg: Color32) -> String {
    let mut body = String::new();
    let mut open: Option<Rect> = None;
    let mut groups = 0;
    for cs in shapes {
        let c = cs.clip_rect.intersect(area);
        if !c.is_positive() {
            continue;
        }
        // A plain rectangle (a panel's fill) is cut to its clip instead; a shape that draws
        // nothing, or lies inside its clip, needs none.
        let shape = match &cs.shape {
            Shape::Rect(r)
                if r.corner_radius == epaint::CornerRadius::ZERO
                    && (r.stroke.width <= 0.0 || r.stroke.color.a() == 0) =>
            {
                let mut r = r.clone();
                r.rect = r.rect.intersect(c);
                if !r.rect.is_positive() {
                    continue;
                }
                std::borrow::Cow::Owned(Shape::Rect(r))
            }
            other => std::borrow::Cow::Borrowed(other),
        };
        let bounds = shape.visual_bounding_rect();
        let inside = bounds.is_negative() || c.contains_rect(bounds);
        let wanted = (!inside).then_some(c);
        if wanted != open {
            if open.is_some() {
                body.push_str("</g>\n");
            }
            if let Some(c) = wanted {
                let _ = writeln!(
                    body,
                    "<clipPath id=\"c{groups}\"><rect x=\"{:.2}\" y=\"{:.2}\" width=\"{:.2}\" height=\"{:.2}\"/></clipPath><g clip-path=\"url(#c{groups})\">",
                    c.min.x,
                    c.min.y,
                    c.width(),
                    c.height()
                );
                groups += 1;
            }
            open = wanted;
        }
        shape_to_svg(&mut body, &shape);
    }
    if open.is_some() {
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

/// The SVG rasteriser's options with the GUI's embedded fonts, built once per animation.
fn raster_options() -> resvg::usvg::Options<'static> {
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

/// Rasterises, quantises and LZW-compresses `frames` (SVG text and background) on every core,
/// each onto a `size` canvas filled with its background, and writes them in order as they come
/// (a frame waits only for the ones before it) as a looping GIF, `delay` hundredths of a second
/// each.
fn encode_frames(
    frames: &[(String, Color32)],
    size: (u32, u32),
    scale: f32,
    delay: u16,
    on_frame: &mut dyn FnMut(usize, usize),
) -> Result<Vec<u8>, ExportError> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let gif_err = |e: gif::EncodingError| ExportError::Render(e.to_string());
    let total = frames.len();
    let workers = std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .clamp(1, total.max(1));
    let opt = raster_options();
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let mut enc =
        gif::Encoder::new(Vec::new(), size.0 as u16, size.1 as u16, &[]).map_err(gif_err)?;
    enc.set_repeat(gif::Repeat::Infinite).map_err(gif_err)?;
    let mut result = Ok(());
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::channel();
        for _ in 0..workers {
            let tx = tx.clone();
            let (opt, next, failed) = (&opt, &next, &failed);
            scope.spawn(move || {
                let mut pixmap = None;
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= total || failed.load(Ordering::Relaxed) {
                        break;
                    }
                    let Some((svg, bg)) = frames.get(i) else {
                        break;
                    };
                    let r = encode_frame(svg, *bg, size, scale, opt, &mut pixmap);
                    if r.is_err() {
                        failed.store(true, Ordering::Relaxed);
                    }
                    if tx.send((i, r)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let mut waiting = std::collections::BTreeMap::new();
        let mut written = 0;
        for (i, r) in rx {
            if result.is_err() {
                continue;
            }
            match r {
                Ok(f) => {
                    waiting.insert(i, f);
                }
                Err(e) => {
                    failed.store(true, Ordering::Relaxed);
                    result = Err(e);
                    continue;
                }
            }
            while let Some(mut f) = waiting.remove(&written) {
                f.delay = delay;
                if let Err(e) = enc.write_lzw_pre_encoded_frame(&f) {
                    failed.store(true, Ordering::Relaxed);
                    result = Err(gif_err(e));
                    break;
                }
                written += 1;
                on_frame(written, total);
            }
        }
        if result.is_ok() && written != total {
            result = Err(ExportError::Render(format!(
                "{} of {total} frames were not drawn",
                total - written
            )));
        }
    });
    result?;
    enc.into_inner().map_err(gif_err)
}

/// One frame: the SVG rasterised onto a `size` canvas of its background colour (the pixmap is
/// reused between frames), its colours reduced to a palette, LZW-compressed.
fn encode_frame(
    svg: &str,
    bg: Color32,
    (w, h): (u32, u32),
    scale: f32,
    opt: &resvg::usvg::Options<'_>,
    pixmap: &mut Option<resvg::tiny_skia::Pixmap>,
) -> Result<gif::Frame<'static>, ExportError> {
    let tree =
        resvg::usvg::Tree::from_str(svg, opt).map_err(|e| ExportError::Render(e.to_string()))?;
    if pixmap.is_none() {
        *pixmap = resvg::tiny_skia::Pixmap::new(w, h);
    }
    let pm = pixmap
        .as_mut()
        .ok_or_else(|| ExportError::Render("out of memory for the image".into()))?;
    let [r, g, b, _] = bg.to_srgba_unmultiplied();
    pm.fill(resvg::tiny_skia::Color::from_rgba8(r, g, b, 255));
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::from_scale(scale, scale),
        &mut pm.as_mut(),
    );
    let (palette, indices) = quantise(pm.data());
    let mut frame = gif::Frame {
        width: w as u16,
        height: h as u16,
        palette: Some(palette),
        buffer: std::borrow::Cow::Owned(indices),
        ..gif::Frame::default()
    };
    frame.make_lzw_pre_encoded();
    // The compressed data is far smaller than the buffer reserved for it.
    if let std::borrow::Cow::Owned(b) = &mut frame.buffer {
        b.shrink_to_fit();
    }
    Ok(frame)
}

/// Reduces opaque RGBA pixels to at most 256 colours: every colour when there are that few,
/// else the 256 most frequent (a figure's flat fills, kept exact) with each other colour (the
/// anti-aliased edges between them) mapped to the nearest of those. Answers the palette
/// (`r, g, b, …`) and one index per pixel.
fn quantise(rgba: &[u8]) -> (Vec<u8>, Vec<u8>) {
    use std::collections::HashMap;
    let key = |p: &[u8]| u32::from_le_bytes([p[0], p[1], p[2], 0]);
    let mut counts: HashMap<u32, u32> = HashMap::new();
    let mut last = (u32::MAX, 0u32);
    for p in rgba.chunks_exact(4) {
        let k = key(p);
        if k == last.0 {
            last.1 += 1;
        } else {
            if last.1 > 0 {
                *counts.entry(last.0).or_default() += last.1;
            }
            last = (k, 1);
        }
    }
    if last.1 > 0 {
        *counts.entry(last.0).or_default() += last.1;
    }
    let mut by_count: Vec<(u32, u32)> = counts.into_iter().collect();
    by_count.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let kept: Vec<u32> = by_count.iter().take(256).map(|&(k, _)| k).collect();
    let rgb = |k: u32| {
        let [r, g, b, _] = k.to_le_bytes();
        [i32::from(r), i32::from(g), i32::from(b)]
    };
    let mut index: HashMap<u32, u8> = HashMap::with_capacity(by_count.len());
    for (i, &k) in kept.iter().enumerate() {
        index.insert(k, i as u8);
    }
    for &(k, _) in by_count.iter().skip(256) {
        let [r, g, b] = rgb(k);
        let nearest = kept
            .iter()
            .enumerate()
            .min_by_key(|(_, q)| {
                let [qr, qg, qb] = rgb(**q);
                // Weighted as the eye weighs them (green most, blue least).
                3 * (r - qr).pow(2) + 4 * (g - qg).pow(2) + 2 * (b - qb).pow(2)
            })
            .map_or(0, |(i, _)| i as u8);
        index.insert(k, nearest);
    }
    let palette = kept.iter().flat_map(|&k| rgb(k).map(|c| c as u8)).collect();
    let mut indices = Vec::with_capacity(rgba.len() / 4);
    let mut last = (u32::MAX, 0u8);
    for p in rgba.chunks_exact(4) {
        let k = key(p);
        if k != last.0 {
            last = (k, index.get(&k).copied().unwrap_or(0));
        }
        indices.push(last.1);
    }
    (palette, indices)
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
    Ok(prepared_svg(&mut prepare(scene, values)?, opts))
}

/// The SVG of a prepared scene (its view in the state it is in).
pub fn prepared_svg(state: &mut Prepared, opts: &FigureOptions) -> String {
    let opts = FigureOptions {
        width: if opts.slide { SLIDE_WIDTH } else { opts.width },
        ..*opts
    };
    let (shapes, area, bg) = draw_state(state, &opts);
    if !opts.slide {
        return shapes_to_svg(&shapes, area, bg);
    }
    // Grow the drawn area to 16 : 9 around its centre, then show it at the slide's pixel size.
    let (w, h) = SLIDE_PX;
    let aspect = w / h;
    let canvas = if area.width() / area.height() < aspect {
        Rect::from_center_size(
            area.center(),
            egui::vec2(area.height() * aspect, area.height()),
        )
    } else {
        Rect::from_center_size(
            area.center(),
            egui::vec2(area.width(), area.width() / aspect),
        )
    };
    let svg = shapes_to_svg(&shapes, canvas, bg);
    svg.replacen(
        &format!(
            "width=\"{:.0}\" height=\"{:.0}\"",
            canvas.width(),
            canvas.height()
        ),
        &format!("width=\"{w:.0}\" height=\"{h:.0}\""),
        1,
    )
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
    check_figure_path(out)?;
    export_prepared(&mut prepare(scene, values)?, out, scale, opts)
}

/// A figure path's extension, lower-cased, when it is one [`export_prepared`] writes.
///
/// # Errors
/// A folder or an unknown extension.
fn check_figure_path(out: &Path) -> Result<String, ExportError> {
    let ext = out
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("svg") | Some("png") => Ok(ext.unwrap_or_default()),
        _ if out.is_dir() => Err(ExportError::Write {
            path: out.to_owned(),
            reason: "that is a folder; give a file name (e.g. fig.png), or use \
                     `export --all --out DIR`"
                .into(),
        }),
        _ => Err(ExportError::Format(out.to_owned())),
    }
}

/// Exports a prepared scene — its view in the state it is in, e.g. the window's zoom or the
/// run it shows — to `out` (`.svg` or `.png`, PNG at `scale`); returns the written path.
///
/// # Errors
/// A bad extension, rendering or writing failures.
pub fn export_prepared(
    state: &mut Prepared,
    out: &Path,
    scale: f32,
    opts: &FigureOptions,
) -> Result<PathBuf, ExportError> {
    let ext = check_figure_path(out)?;
    let svg = prepared_svg(state, opts);
    let bytes = if ext == "png" {
        // A slide's SVG is already at its pixel size.
        svg_to_png(&svg, if opts.slide { 1.0 } else { scale })?
    } else {
        svg.into_bytes()
    };
    write_atomically(out, &bytes)?;
    Ok(out.canonicalize().unwrap_or_else(|_| out.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_name_names_what_differs_from_the_lecture() {
        let banks = warpscope_core::scene::find("banks").expect("registered");
        let mut v = banks.defaults();
        assert_eq!(file_stem(banks, &v, Some(0)), "banks");
        v.set(banks.params, "pad", "1").expect("in range");
        assert_eq!(file_stem(banks, &v, None), "banks-pad1");
        let snap = warpscope_core::scene::find("memory-snapshot").expect("registered");
        let mut v = snap.defaults();
        v.set(snap.params, "path", "/home/me/runs/oom dump.pickle")
            .expect("any text");
        // Only the file's name, and the space made safe.
        assert_eq!(
            file_stem(snap, &v, Some(3)),
            "memory-snapshot-pathoom_dump.pickle-e3"
        );
    }

    #[test]
    fn a_caption_names_each_parameter_by_its_label() {
        let r = warpscope_core::scene::find("reduction").expect("registered");
        let c = caption(r, &r.defaults(), Lang::En, Some(6));
        assert!(c.contains("threads per block = 256"), "{c}");
        assert!(c.ends_with(", event 6"), "{c}");
        assert!(!c.contains("threads=256"), "{c}");
    }

    fn clipped(shape: Shape, clip: Rect) -> ClippedShape {
        ClippedShape {
            clip_rect: clip,
            shape,
            transform_after_tessellation: egui::emath::TSTransform::IDENTITY,
        }
    }

    #[test]
    fn frame_svg_clips_only_what_crosses_its_clip() {
        let area = Rect::from_min_size(Pos2::ZERO, egui::vec2(100.0, 50.0));
        let inner = Rect::from_min_size(Pos2::new(10.0, 10.0), egui::vec2(20.0, 20.0));
        let panel = Shape::rect_filled(
            Rect::from_min_size(Pos2::ZERO, egui::vec2(100.0, 6000.0)),
            0.0,
            Color32::WHITE,
        );
        let small = Shape::rect_filled(inner.shrink(2.0), 2.0, Color32::RED);
        let line = Shape::line_segment(
            [Pos2::new(0.0, 20.0), Pos2::new(100.0, 20.0)],
            egui::Stroke::new(1.0, Color32::BLACK),
        );
        let svg = frame_svg(
            &[
                clipped(panel, area),
                clipped(small, inner),
                clipped(line.clone(), inner),
                clipped(line, inner),
            ],
            area,
            Color32::WHITE,
        );
        // The panel is cut to the figure, the small rectangle needs no clip, and the two lines
        // crossing the same clip share one group.
        assert_eq!(svg.matches("<clipPath").count(), 1, "{svg}");
        assert!(svg.contains("height=\"50.00\""), "{svg}");
        assert!(!svg.contains("6000"), "{svg}");
        assert_eq!(svg.matches("<line").count(), 2);
        assert!(roxmltree::Document::parse(&svg).is_ok());
    }

    #[test]
    fn quantise_keeps_flat_colours_exact_and_maps_the_rest_nearest() {
        // 300 distinct colours: 2 flat ones (many pixels) and 298 single-pixel greys.
        let mut rgba = Vec::new();
        for _ in 0..1000 {
            rgba.extend_from_slice(&[255, 0, 0, 255]);
            rgba.extend_from_slice(&[0, 0, 255, 255]);
        }
        for g in 0..298u32 {
            let v = (g % 256) as u8;
            rgba.extend_from_slice(&[v, v, (g / 256) as u8, 255]);
        }
        let (palette, indices) = quantise(&rgba);
        assert!(palette.len() <= 256 * 3);
        assert_eq!(indices.len(), rgba.len() / 4);
        let colour_of = |i: usize| &palette[indices[i] as usize * 3..indices[i] as usize * 3 + 3];
        assert_eq!(colour_of(0), [255, 0, 0]);
        assert_eq!(colour_of(1), [0, 0, 255]);
        // Every pixel maps to a palette colour within a small distance of its own.
        for (i, p) in rgba.chunks_exact(4).enumerate() {
            let q = colour_of(i);
            let d: i32 = (0..3)
                .map(|k| (i32::from(p[k]) - i32::from(q[k])).abs())
                .sum();
            assert!(d <= 8, "pixel {i}: {p:?} → {q:?}");
        }
    }
}
