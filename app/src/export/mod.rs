//! Figures for slides: any scene's view as SVG (vector — text stays text, shapes stay shapes)
//! or PNG, headless, with no display and no GPU driver.
//!
//! The scene's view is drawn by the same code the window uses, into a headless egui pass; the
//! painted shapes are written as SVG elements ([`svg::shapes_to_svg`]); PNG is that SVG rasterised
//! on the CPU with `resvg`, using the fonts the GUI embeds ([`svg::svg_to_png`]); an animation
//! (APNG or GIF, [`AnimationFormat`]) is one frame per stepper event ([`animation`]). Files are
//! written atomically ([`write`]), so a failed export never leaves a half-written figure behind.

pub mod animation;
mod apng;
pub mod deck;
pub mod svg;
pub mod write;

pub use crate::i18n::Lang;
pub use crate::theme::{Theme, apply_theme};
pub use animation::{AnimationFormat, MAX_FRAMES, animation};
pub use deck::deck_html;
pub use svg::{shapes_to_svg, svg_to_png};
pub use write::write_atomically;

use crate::fonts;
use crate::views;
use crate::widgets::gpu::GpuPanel;
use crate::widgets::stepper::{self, Stepper};
use egui::epaint::ClippedShape;
use egui::{Color32, Pos2, Rect};
use std::path::{Path, PathBuf};
use warpscope_core::params::ParamValues;
use warpscope_core::scene::{Input, Scene};

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
    /// SVG only: text as outlines in the embedded fonts ([`svg::outline_text`]), so the figure
    /// looks the same where those fonts are missing.
    pub outline_text: bool,
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
            outline_text: false,
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

/// The caption line: the section, the title, whether the figure is of the user's own input,
/// every parameter by its label (in the scene's order) and the event shown.
pub fn caption(
    scene: &Scene,
    values: &ParamValues,
    input: bool,
    lang: Lang,
    step: Option<usize>,
) -> String {
    let title = match lang {
        Lang::En => scene.title.en,
        Lang::Zh => scene.title.zh,
    };
    // Each parameter by its readable label (with its unit), in the scene's own order; for an
    // input, only those that still apply to it.
    let applies = |name: &str| !input || scene.input.is_none_or(|i| i.params.contains(&name));
    let params: Vec<String> = scene
        .params
        .iter()
        .filter(|p| applies(p.name))
        .filter_map(|p| {
            let v = values.0.get(p.name)?;
            let label = match lang {
                Lang::En => p.label.en,
                Lang::Zh => p.label.zh,
            };
            Some(format!("{label} = {v}"))
        })
        .collect();
    let step = step.map_or(String::new(), |s| match lang {
        Lang::En => format!(", event {s}"),
        Lang::Zh => format!("，第 {s} 个事件"),
    });
    let given = match lang {
        Lang::En => "your input",
        Lang::Zh => "你的输入",
    };
    let parts: Vec<String> = input
        .then(|| given.to_owned())
        .into_iter()
        .chain(params)
        .collect();
    format!("{} {} — {}{}", scene.section, title, parts.join(", "), step)
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
    /// The user's own input the result was computed on, if any.
    pub input: Option<Input>,
    /// The view's result.
    pub output: views::Output,
    /// The view and its state.
    pub view: Box<dyn views::AnyView>,
    /// The event drawn.
    pub stepper: Stepper,
    /// An empty GPU panel (figures show no real-GPU run).
    pub gpu: GpuPanel,
}

/// Computes `scene` with `values` (and the user's `input`, if any) for drawing.
///
/// # Errors
/// The scene's own validation or computation error, or its refusal of the input.
pub fn prepare(
    scene: &'static Scene,
    values: ParamValues,
    input: Option<Input>,
) -> Result<Prepared, ExportError> {
    let values = values.validated(scene.params)?;
    let entry = views::entry(scene.id);
    let output = entry.compute(scene, values.clone(), input.as_deref())?;
    Ok(Prepared {
        scene,
        values,
        input,
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
    let text = caption(
        state.scene,
        &state.values,
        state.input.is_some(),
        opts.lang,
        shown,
    );
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
            stepper::set_event_placed(ui.ctx(), opts.step.is_some());
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
                            set_values: Vec::new(),
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
    let mut state = prepare(scene, values, None)?;
    Ok(draw_state(&mut state, opts))
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
    Ok(prepared_svg(&mut prepare(scene, values, None)?, opts))
}

/// The SVG of a prepared scene (its view in the state it is in).
pub fn prepared_svg(state: &mut Prepared, opts: &FigureOptions) -> String {
    prepared_svg_fitted(state, opts).0
}

/// [`prepared_svg`], and for a `slide` figure that had to shrink to fit the slide, a note saying
/// by how much ([`SLIDE_SHRINK_NOTE`]).
fn prepared_svg_fitted(state: &mut Prepared, opts: &FigureOptions) -> (String, Option<String>) {
    let opts = FigureOptions {
        width: if opts.slide { SLIDE_WIDTH } else { opts.width },
        ..*opts
    };
    let (shapes, area, bg) = draw_state(state, &opts);
    if !opts.slide {
        return (shapes_to_svg(&shapes, area, bg), None);
    }
    // Grow the drawn area to 16 : 9 around its centre, then show it at the slide's pixel size.
    let (w, h) = SLIDE_PX;
    let canvas = slide_canvas(area);
    let svg = shapes_to_svg(&shapes, canvas, bg);
    // Text on a slide that fits is 1.5× its point size in pixels (1920 px for 1280 points).
    let share = w / canvas.width() / (w / SLIDE_WIDTH);
    let note = (share < SLIDE_SHRINK_NOTE).then(|| {
        format!(
            "note: the figure is {:.0} points tall, more than a 16 : 9 slide {SLIDE_WIDTH:.0} points \
             wide holds ({:.0}); it was scaled to fit, so its text is {:.0} % of a slide figure's. \
             Without --slide it keeps its text size (a tall image to crop); --figure leaves out \
             the caption.",
            area.height(),
            SLIDE_WIDTH * h / w,
            100.0 * share
        )
    });
    let svg = svg.replacen(
        &format!(
            "width=\"{:.0}\" height=\"{:.0}\"",
            canvas.width(),
            canvas.height()
        ),
        &format!("width=\"{w:.0}\" height=\"{h:.0}\""),
        1,
    );
    (svg, note)
}

/// `area` grown to 16 : 9 ([`SLIDE_PX`]) around its centre: the canvas of a slide figure.
pub(crate) fn slide_canvas(area: Rect) -> Rect {
    let aspect = SLIDE_PX.0 / SLIDE_PX.1;
    if area.width() / area.height() < aspect {
        Rect::from_center_size(
            area.center(),
            egui::vec2(area.height() * aspect, area.height()),
        )
    } else {
        Rect::from_center_size(
            area.center(),
            egui::vec2(area.width(), area.width() / aspect),
        )
    }
}

/// A `slide` figure scaled to under this share of a fitting figure's text size gets a note
/// ([`export_noted`]): under 80 %, its smallest labels (12 points) fall below 14 of 1080 pixels.
pub const SLIDE_SHRINK_NOTE: f32 = 0.8;

/// [`export`], and a note for the user where the figure is not what they may expect (a `slide`
/// figure shrunk to fit, [`SLIDE_SHRINK_NOTE`]).
///
/// # Errors
/// As [`export`].
pub fn export_noted(
    scene: &'static Scene,
    values: ParamValues,
    input: Option<Input>,
    out: &Path,
    scale: f32,
    opts: &FigureOptions,
) -> Result<(PathBuf, Option<String>), ExportError> {
    check_figure_path(out)?;
    write_prepared(&mut prepare(scene, values, input)?, out, scale, opts)
}

/// Exports `scene` to `out` (`.svg` or `.png`, PNG at `scale`) and returns the written path.
///
/// # Errors
/// A bad extension, the scene's errors, rendering or writing failures.
pub fn export(
    scene: &'static Scene,
    values: ParamValues,
    input: Option<Input>,
    out: &Path,
    scale: f32,
    opts: &FigureOptions,
) -> Result<PathBuf, ExportError> {
    export_noted(scene, values, input, out, scale, opts).map(|(p, _)| p)
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
    write_prepared(state, out, scale, opts).map(|(p, _)| p)
}

/// [`export_prepared`], with [`prepared_svg_fitted`]'s note.
fn write_prepared(
    state: &mut Prepared,
    out: &Path,
    scale: f32,
    opts: &FigureOptions,
) -> Result<(PathBuf, Option<String>), ExportError> {
    let ext = check_figure_path(out)?;
    let (svg, note) = prepared_svg_fitted(state, opts);
    let bytes = if ext == "png" {
        // A slide's SVG is already at its pixel size.
        svg_to_png(&svg, if opts.slide { 1.0 } else { scale })?
    } else if opts.outline_text {
        svg::outline_text(&svg)?.into_bytes()
    } else {
        svg.into_bytes()
    };
    write_atomically(out, &bytes)?;
    Ok((out.canonicalize().unwrap_or_else(|_| out.to_owned()), note))
}

#[cfg(test)]
mod tests {
    use super::animation::{frame_svg, quantise};
    use super::*;
    use egui::epaint::Shape;

    #[test]
    fn a_lower_scale_is_advised_only_above_1x() {
        let m = |w, h, scale| svg::out_of_size(w, h, scale).to_string();
        assert_eq!(
            m(83962.0, 1496.0, 1.0),
            "could not render the PNG: a 83962 × 1496 pixel image is outside 1..=16384 per side; \
             the figure is too large for a PNG even at --scale 1: export it as .svg"
        );
        assert!(m(20000.0, 100.0, 2.0).ends_with("; lower --scale"));
        assert!(m(0.0, 100.0, 1.0).ends_with("; the figure is empty"));
    }

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
        let c = caption(r, &r.defaults(), false, Lang::En, Some(6));
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
