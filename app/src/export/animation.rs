//! Animations of the stepper, GIF or APNG: one frame per trace event, drawn in order,
//! rasterised and compressed on every core, at most [`MAX_FRAMES`]. A `slide` animation is
//! 1920 × 1080 like a slide figure: every frame on one 16 : 9 canvas around all of them.

use super::svg::{document, raster_options, shape_to_svg};
use super::{
    ExportError, FigureOptions, SLIDE_PX, SLIDE_WIDTH, draw_state, prepare, slide_canvas, steps,
};
use egui::epaint::{self, ClippedShape, Shape};
use egui::{Color32, Rect};
use std::fmt::Write as _;
use warpscope_core::error::Expected;
use warpscope_core::params::ParamValues;
use warpscope_core::scene::{Input, Scene};

/// Most frames an animation may have.
pub const MAX_FRAMES: usize = 600;

/// The file format of an animation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnimationFormat {
    /// An animated GIF: at most 256 colours a frame, every frame whole.
    Gif,
    /// An animated PNG (APNG): full colour, each frame only the rectangle that changed.
    Apng,
}

/// One drawn frame: its SVG text, its background, and where its top-left corner lies on the
/// animation's canvas (points, before `scale`).
pub(super) struct Frame {
    /// The frame as SVG.
    pub svg: String,
    /// Its background colour (the canvas around it is filled with it too).
    pub bg: Color32,
    /// Its offset on the canvas in points.
    pub offset: (f32, f32),
}

/// An animation of `scene` stepping through events `from..=to` (one frame per event; `to`
/// `None` = to the last event) at `fps` frames per second, as a GIF or an APNG (`format`),
/// rasterised at `scale`. Frames are padded to the largest size; a `slide` animation
/// ([`FigureOptions::slide`]) is [`SLIDE_PX`], every frame on one 16 : 9 canvas around all of
/// them (`scale` is then ignored, as for a slide figure).
///
/// The frames are drawn in order (the stepper is stateful), then rasterised and compressed in
/// parallel on every core, and written in order. `on_frame(done, total)` is called as frames
/// are written (the CLI prints progress with it). Memory holds the frames' SVG text and the
/// file written so far, not one RGBA image per event.
///
/// # Errors
/// A scene without a stepper; a range that is empty, reaches past the last event (the message
/// names it) or is longer than [`MAX_FRAMES`]; rendering errors.
#[allow(clippy::too_many_arguments)] // the CLI's options, one each
pub fn animation(
    scene: &'static Scene,
    values: ParamValues,
    input: Option<Input>,
    from: usize,
    to: Option<usize>,
    fps: u16,
    scale: f32,
    opts: &FigureOptions,
    format: AnimationFormat,
    on_frame: &mut dyn FnMut(usize, usize),
) -> Result<Vec<u8>, ExportError> {
    let mut state = prepare(scene, values, input)?;
    let n = steps(&state);
    let (from, to) = frame_range(scene, n, from, to)?;
    let total = to - from + 1;
    // 1. Draw every frame (in order: the stepper is stateful) as SVG text; the canvas is the
    //    largest frame, or for a slide the 16 : 9 rectangle around every frame.
    let mut frames = Vec::with_capacity(total);
    let mut areas = Vec::with_capacity(total);
    let (mut w, mut h) = (0u32, 0u32);
    for step in from..=to {
        let o = FigureOptions {
            step: Some(step),
            width: if opts.slide { SLIDE_WIDTH } else { opts.width },
            ..*opts
        };
        let (shapes, area, bg) = draw_state(&mut state, &o);
        if !opts.slide {
            let (fw, fh) = pixel_size(area, scale)?;
            (w, h) = (w.max(fw), h.max(fh));
        }
        areas.push(area);
        frames.push(Frame {
            svg: frame_svg(&shapes, area, bg),
            bg,
            offset: (0.0, 0.0),
        });
    }
    let scale = if opts.slide {
        let all = areas.iter().fold(Rect::NOTHING, |u, a| u.union(*a));
        let canvas = slide_canvas(all);
        for (f, a) in frames.iter_mut().zip(&areas) {
            f.offset = (a.min.x - canvas.min.x, a.min.y - canvas.min.y);
        }
        (w, h) = (SLIDE_PX.0 as u32, SLIDE_PX.1 as u32);
        SLIDE_PX.0 / canvas.width()
    } else {
        scale
    };
    // 2. Rasterise and compress in parallel, writing in order.
    match format {
        AnimationFormat::Gif => {
            // In hundredths of a second, as the `image` crate rounds it (down).
            let delay = ((1000 / u32::from(fps.max(1))) / 10) as u16;
            encode_frames(&frames, (w, h), scale, delay, on_frame)
        }
        AnimationFormat::Apng => super::apng::encode(&frames, (w, h), scale, fps, on_frame),
    }
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
    let refuse = |expected: Expected| {
        Err(ExportError::Scene(warpscope_core::Error::invalid(
            "frames", &shown, expected,
        )))
    };
    if n == 0 {
        return Err(ExportError::Scene(warpscope_core::Error::invalid(
            "out",
            "gif",
            Expected::custom(
                format!(
                    "scene `{}` has no trace to step through; export a PNG or SVG instead",
                    scene.id
                ),
                format!(
                    "场景 `{}` 没有可逐步播放的轨迹；请改为导出 PNG 或 SVG",
                    scene.id
                ),
            ),
        )));
    }
    let last = n - 1;
    let to_given = to.is_some();
    let to = to.unwrap_or(last);
    if from > last || to > last {
        return refuse(Expected::custom(
            format!(
                "expected events in 0..={last}: scene `{}` has {n} trace events, the last is \
                 {last}",
                scene.id
            ),
            format!(
                "事件应在 0..={last} 之间：场景 `{}` 有 {n} 个轨迹事件，最后一个是 {last}",
                scene.id
            ),
        ));
    }
    if from > to {
        return refuse(Expected::custom(
            format!("expected FROM ≤ TO, e.g. {to}..{from}"),
            format!("应为 FROM ≤ TO，例如 {to}..{from}"),
        ));
    }
    let count = to - from + 1;
    if count > MAX_FRAMES {
        let end = from + MAX_FRAMES - 1;
        return refuse(if to_given {
            Expected::custom(
                format!(
                    "{count} events are more frames than an animation may have; expected at \
                     most {MAX_FRAMES}, e.g. --frames {from}..{end}"
                ),
                format!(
                    "{count} 个事件超出了一段动画可有的帧数；应不多于 {MAX_FRAMES}，\
                     例如 --frames {from}..{end}"
                ),
            )
        } else {
            Expected::custom(
                format!(
                    "the trace from event {from} to its end has {count} events, more frames \
                     than an animation may have; expected at most {MAX_FRAMES}: give --frames \
                     {from}..{end}"
                ),
                format!(
                    "从事件 {from} 到末尾的轨迹有 {count} 个事件，超出了一段动画可有的帧数；\
                     应不多于 {MAX_FRAMES}：请给出 --frames {from}..{end}"
                ),
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
        return Err(super::svg::out_of_size(f64::from(w), f64::from(h), scale));
    }
    Ok((w as u32, h as u32))
}

/// [`shapes_to_svg`] for an animation frame, cheaper to rasterise: a shape that lies inside its
/// clip rectangle is drawn unclipped, a plain rectangle is cut to its clip, and consecutive
/// shapes with the same clip rectangle share one clip group (a clip group costs resvg a
/// full-size layer: with one per shape, about 8× the frame's time).
pub(super) fn frame_svg(shapes: &[ClippedShape], area: Rect, bg: Color32) -> String {
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
    document(&body, area, bg)
}

/// Rasterises, quantises and LZW-compresses `frames` (SVG text and background) on every core,
/// each onto a `size` canvas filled with its background, and writes them in order as they come
/// (a frame waits only for the ones before it) as a looping GIF, `delay` hundredths of a second
/// each.
fn encode_frames(
    frames: &[Frame],
    size: (u32, u32),
    scale: f32,
    delay: u16,
    on_frame: &mut dyn FnMut(usize, usize),
) -> Result<Vec<u8>, ExportError> {
    let gif_err = |e: gif::EncodingError| ExportError::Render(e.to_string());
    let total = frames.len();
    let opt = raster_options();
    let mut enc =
        gif::Encoder::new(Vec::new(), size.0 as u16, size.1 as u16, &[]).map_err(gif_err)?;
    enc.set_repeat(gif::Repeat::Infinite).map_err(gif_err)?;
    let mut written = 0;
    in_order(
        total,
        |i, pixmap| {
            let frame = frames
                .get(i)
                .ok_or_else(|| ExportError::Render(format!("frame {i} of {total} is missing")))?;
            encode_frame(frame, size, scale, &opt, pixmap)
        },
        |mut f| {
            f.delay = delay;
            enc.write_lzw_pre_encoded_frame(&f).map_err(gif_err)?;
            written += 1;
            on_frame(written, total);
            Ok(())
        },
    )?;
    enc.into_inner().map_err(gif_err)
}

/// Draws frames `0..total` on every core (`draw(i, pixmap)`, each worker reusing its pixmap)
/// and hands each to `take` in index order as soon as the frames before it are taken, so an
/// encoder writes while the other frames are still drawn. The first error, of a frame or of
/// `take`, stops the workers and is returned.
///
/// # Errors
/// The first error of `draw` or `take`; [`ExportError::Render`] when fewer than `total` frames
/// were taken.
pub(super) fn in_order<T: Send>(
    total: usize,
    draw: impl Fn(usize, &mut Option<resvg::tiny_skia::Pixmap>) -> Result<T, ExportError> + Sync,
    mut take: impl FnMut(T) -> Result<(), ExportError>,
) -> Result<(), ExportError> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let workers = std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .clamp(1, total.max(1));
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let mut result = Ok(());
    let mut taken = 0;
    std::thread::scope(|scope| {
        // Bounded: a worker waits while the frames drawn ahead of `take` fill it.
        let (tx, rx) = std::sync::mpsc::sync_channel(workers);
        for _ in 0..workers {
            let tx = tx.clone();
            let (draw, next, failed) = (&draw, &next, &failed);
            scope.spawn(move || {
                let mut pixmap = None;
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= total || failed.load(Ordering::Relaxed) {
                        break;
                    }
                    let r = draw(i, &mut pixmap);
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
            while let Some(f) = waiting.remove(&taken) {
                if let Err(e) = take(f) {
                    failed.store(true, Ordering::Relaxed);
                    result = Err(e);
                    break;
                }
                taken += 1;
            }
        }
    });
    result?;
    if taken != total {
        return Err(ExportError::Render(format!(
            "{} of {total} frames were not drawn",
            total - taken
        )));
    }
    Ok(())
}

/// Rasterises `frame` onto a `size` canvas of its background colour at `scale`, placed at its
/// offset; the pixmap is reused between frames.
pub(super) fn rasterise<'p>(
    frame: &Frame,
    (w, h): (u32, u32),
    scale: f32,
    opt: &resvg::usvg::Options<'_>,
    pixmap: &'p mut Option<resvg::tiny_skia::Pixmap>,
) -> Result<&'p resvg::tiny_skia::Pixmap, ExportError> {
    let tree = resvg::usvg::Tree::from_str(&frame.svg, opt)
        .map_err(|e| ExportError::Render(e.to_string()))?;
    if pixmap.is_none() {
        *pixmap = resvg::tiny_skia::Pixmap::new(w, h);
    }
    let pm = pixmap
        .as_mut()
        .ok_or_else(|| ExportError::Render("out of memory for the image".into()))?;
    let [r, g, b, _] = frame.bg.to_srgba_unmultiplied();
    pm.fill(resvg::tiny_skia::Color::from_rgba8(r, g, b, 255));
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::from_row(
            scale,
            0.0,
            0.0,
            scale,
            frame.offset.0 * scale,
            frame.offset.1 * scale,
        ),
        &mut pm.as_mut(),
    );
    Ok(pm)
}

/// One frame: rasterised ([`rasterise`]), its colours reduced to a palette, LZW-compressed.
fn encode_frame(
    frame: &Frame,
    (w, h): (u32, u32),
    scale: f32,
    opt: &resvg::usvg::Options<'_>,
    pixmap: &mut Option<resvg::tiny_skia::Pixmap>,
) -> Result<gif::Frame<'static>, ExportError> {
    let pm = rasterise(frame, (w, h), scale, opt, pixmap)?;
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
pub(super) fn quantise(rgba: &[u8]) -> (Vec<u8>, Vec<u8>) {
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
