//! The command line: `warpscope [gui]`, `warpscope list`, `warpscope report SCENE --set k=v
//! --json`, `warpscope adapter`. Exit status 0 on success, 2 for an invalid parameter or
//! unknown scene (the message names the parameter and its valid range), 1 for anything else.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use warpscope_core::params::{ParamKind, ParamValues};
use warpscope_core::scene;

mod source;
pub use source::{Resolved, Source, report, report_from, resolve};
use source::{gui_session, input_help};

/// `println!` that survives a closed pipe: `warpscope report … --json | head` ends quietly with
/// status 0, as Unix tools do, instead of panicking on the broken pipe.
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::cli::emit_line(format_args!($($arg)*))
    };
}

mod deck;
mod lab;

/// Writes one line to stdout (see [`say!`]); any other write error ends the program with status 1.
#[doc(hidden)]
pub fn emit_line(args: std::fmt::Arguments<'_>) {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    if let Err(e) = out
        .write_fmt(args)
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush())
    {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("warpscope: cannot write to standard output: {e}");
        std::process::exit(1);
    }
}

/// warpscope — step through GPU training kernels warp by warp (lecture: LightSeq2 training).
#[derive(Debug, Parser)]
#[command(
    name = "warpscope",
    version,
    about,
    long_about = None,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// What to do; with none, the explorer window opens.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// A PyTorch memory snapshot to open the window on (scene `memory-snapshot`), e.g.
    /// `warpscope run.pickle`.
    #[arg(value_name = "FILE.pickle")]
    pub file: Option<std::path::PathBuf>,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Open the explorer window (the default).
    Gui {
        /// Scene to open first (an id from `warpscope list`).
        #[arg(long)]
        scene: Option<String>,
        /// Open a saved session file (scene, parameters, step).
        #[arg(long, value_name = "FILE")]
        preset: Option<std::path::PathBuf>,
        /// Your own data for the scene, a JSON object (keys: README, or the window's Input
        /// panel); scenes that take one: `warpscope list --long`.
        #[arg(long, value_name = "FILE.json")]
        input: Option<std::path::PathBuf>,
    },
    /// Print every scene id, one per line.
    List {
        /// Also print each scene's lecture section and title.
        #[arg(long)]
        long: bool,
        /// Print the scenes and their parameters as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Compute one scene and print its result.
    Report {
        /// The scene id (see `warpscope list`); optional with --preset.
        scene: Option<String>,
        /// Start from a saved session file (scene, parameters, step); --set still applies.
        #[arg(long, value_name = "FILE")]
        preset: Option<std::path::PathBuf>,
        /// Your own data for the scene, a JSON object (keys: README, or the window's Input
        /// panel); scenes that take one: `warpscope list --long`.
        #[arg(long, value_name = "FILE.json")]
        input: Option<std::path::PathBuf>,
        /// Set a parameter, e.g. `--set threads=256` (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Print `{"scene", "params", "result"}` as JSON (the default prints the same, pretty).
        #[arg(long)]
        json: bool,
    },
    /// Write a scene's figure as SVG or PNG (no display or GPU needed).
    Export {
        /// The scene id; omit with --all or --preset.
        scene: Option<String>,
        /// Start from a saved session file (scene, parameters, step); --set and --step still apply.
        #[arg(long, value_name = "FILE")]
        preset: Option<std::path::PathBuf>,
        /// Your own data for the scene, a JSON object (keys: README, or the window's Input
        /// panel); scenes that take one: `warpscope list --long`.
        #[arg(long, value_name = "FILE.json")]
        input: Option<std::path::PathBuf>,
        /// Export every scene at its lecture preset into the folder --out.
        #[arg(long)]
        all: bool,
        /// Set a parameter, e.g. `--set pad=1` (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Trace event to show, for scenes with a stepper.
        #[arg(long)]
        step: Option<usize>,
        /// Output file (`.svg`, `.png`; an animation of the stepper: `.apng`, `.png` with
        /// --frames, or `.gif`), or the folder with --all.
        #[arg(long)]
        out: std::path::PathBuf,
        /// PNG scale: 1, 2 or 3 pixels per point.
        #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(1..=3))]
        scale: u8,
        /// Colours and text size [default: the preset's, else slides].
        #[arg(long, value_enum)]
        theme: Option<crate::export::Theme>,
        /// Caption language [default: the preset's, else en].
        #[arg(long, value_enum)]
        lang: Option<crate::export::Lang>,
        /// A 16 : 9 slide: the figure centred on a 1920 × 1080 canvas (PNG, APNG and GIF pixels;
        /// --scale is ignored).
        #[arg(long)]
        slide: bool,
        /// Leave out the caption (title and parameters).
        #[arg(long)]
        no_caption: bool,
        /// SVG: text drawn as outlines in warpscope's own fonts, so the figure looks the same on a
        /// machine or in a slide program without them (a larger file; its text can no longer be
        /// selected or edited). PNG and GIF always carry their text as pixels.
        #[arg(long)]
        outline_text: bool,
        /// The scene's picture alone, for pasting into a slide: no caption line (a figure never
        /// shows controls — no buttons, sliders or stepper — with or without this).
        #[arg(long)]
        figure: bool,
        /// Animation (`.png`/`.apng` as APNG, or `.gif`): the events to show, `FROM..TO` or
        /// `FROM..` (one frame per event).
        #[arg(long, value_name = "FROM..TO")]
        frames: Option<String>,
        /// Animation (APNG or GIF): frames per second.
        #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=60))]
        fps: u16,
        /// With --all: the format of each file.
        #[arg(long, default_value = "png", value_parser = ["png", "svg"])]
        format: String,
    },
    /// Write a deck (a lecture as slides of scenes) as one self-contained, offline HTML page:
    /// each slide's figures as inline SVG in both languages, ← → to step, L to switch language.
    Deck {
        /// The deck file (JSON; README, "Decks"); without one, the bundled lecture deck.
        #[arg(value_name = "DECK.json")]
        deck: Option<std::path::PathBuf>,
        /// The output file: `.html`.
        #[arg(long)]
        out: std::path::PathBuf,
    },
    /// Run one of the lecture's kernels on the GPU adapter (WGSL on wgpu): verify both variants
    /// against core and time them. `kernel-lab` runs your own WGSL kernel
    /// (`--set source=K.wgsl --input D.json`, or a bundled example: `--set source=histogram`)
    /// and compares its buffers with the simulation.
    Run {
        /// Kernel name; `warpscope run --list` prints them.
        kernel: Option<String>,
        /// `kernel-lab` only: the dispatch, a JSON object `{"workgroups": [x, y, z],
        /// "buffers": {"G:B": {"type", "data" | "len", "fill"}}, "seed", "overrides"}`.
        #[arg(long, value_name = "FILE.json")]
        input: Option<std::path::PathBuf>,
        /// Print the kernel names.
        #[arg(long)]
        list: bool,
        /// Set a shape or option, e.g. `--set rows=512`, `--set runs=20` (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Print the result as one JSON object (the default prints it pretty).
        #[arg(long)]
        json: bool,
        /// Record the reduction instead (`softmax-bw` → scene `softmax-warp`, `layernorm-bw` →
        /// `layernorm-syncs`): the instrumented kernel's records decoded into a trace, compared
        /// with the scene's simulation. `--set` then takes the scene's parameters (e.g.
        /// `--set len=256`); `--trace` adds the decoded trace itself.
        #[arg(long)]
        record: bool,
        /// With `--record`: include the decoded trace (every event, lane by lane).
        #[arg(long, requires = "record")]
        trace: bool,
    },
    /// Describe the GPU adapter warpscope would use for real runs (also `warpscope gpu`).
    #[command(alias = "gpu")]
    Adapter,
}

/// Runs the CLI with the process's arguments.
pub fn main() -> ExitCode {
    use clap::{CommandFactory as _, FromArgMatches as _};
    let help = input_help();
    let command = Cli::command()
        .mut_subcommand("report", |c| c.after_long_help(help.clone()))
        .mut_subcommand("export", |c| c.after_long_help(help.clone()))
        .mut_subcommand("gui", |c| c.after_long_help(help.clone()));
    let cli = match Cli::from_arg_matches(&command.get_matches()) {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    match cli.command {
        None => match cli.file {
            Some(f) => open_snapshot(&f),
            None => crate::gui::run(None, None),
        },
        Some(Command::Gui {
            scene,
            preset,
            input,
        }) => match gui_session(scene.as_deref(), preset.as_deref(), input.as_deref()) {
            Ok((scene, session)) => crate::gui::run(scene, session),
            Err(e) => fail(2, &e.to_string()),
        },
        Some(Command::List { long, json }) => list(long, json),
        Some(Command::Report {
            scene,
            preset,
            input,
            set,
            json,
        }) => match report_from(Source {
            scene: scene.as_deref(),
            preset: preset.as_deref(),
            input: input.as_deref(),
            set: &set,
        }) {
            Ok(r) => {
                let text = if json {
                    serde_json::to_string(&r)
                } else {
                    serde_json::to_string_pretty(&r)
                };
                match text {
                    Ok(t) => {
                        say!("{t}");
                        ExitCode::SUCCESS
                    }
                    Err(e) => fail(1, &format!("could not print the result: {e}")),
                }
            }
            Err(e) => fail(2, &e.to_string()),
        },
        Some(Command::Export {
            scene,
            preset,
            input,
            all,
            set,
            step,
            out,
            scale,
            theme,
            lang,
            no_caption,
            outline_text,
            figure,
            slide,
            frames,
            fps,
            format,
        }) => {
            let src = Source {
                scene: scene.as_deref(),
                preset: preset.as_deref(),
                input: input.as_deref(),
                set: &set,
            };
            let style = Style { theme, lang };
            let opts = crate::export::FigureOptions {
                step,
                theme: theme.unwrap_or(crate::export::Theme::Slides),
                lang: lang.unwrap_or(crate::export::Lang::En),
                caption: !(no_caption || figure),
                slide,
                outline_text,
                ..Default::default()
            };
            let ext = out
                .extension()
                .and_then(|e| e.to_str())
                .map(str::to_ascii_lowercase);
            // `.gif` and `.apng` always animate; a `.png` does with --frames.
            let animation = match ext.as_deref() {
                Some("gif") => Some(crate::export::AnimationFormat::Gif),
                Some("apng") => Some(crate::export::AnimationFormat::Apng),
                Some("png") if frames.is_some() => Some(crate::export::AnimationFormat::Apng),
                _ => None,
            };
            if let Some(format) = animation {
                if let Some(step) = step {
                    return fail(
                        2,
                        &format!(
                            "--step {step} shows one event in a PNG or SVG; an animation (.gif, \
                             .apng, or .png with --frames) shows a range of events: use --frames \
                             FROM..TO"
                        ),
                    );
                }
                if all {
                    return fail(
                        2,
                        "--all writes one figure per scene into a folder; an animation (GIF, APNG) \
                         is of one scene: name the scene",
                    );
                }
                animate(
                    src,
                    &out,
                    f32::from(scale),
                    &opts,
                    style,
                    frames.as_deref(),
                    fps,
                    format,
                )
            } else if frames.is_some() {
                fail(
                    2,
                    "--frames animates a trace: give an --out ending in .png or .apng (APNG, full \
                     colour) or .gif (an SVG is one step: use --step N)",
                )
            } else {
                export(src, all, &out, f32::from(scale), &opts, style, &format)
            }
        }
        Some(Command::Deck { deck, out }) => deck::write_deck(deck.as_deref(), &out),
        Some(Command::Run {
            kernel,
            input,
            list,
            set,
            json,
            record,
            trace,
        }) => {
            // The lab is its own path, beside the kernel registry rather than in it.
            if kernel.as_deref() == Some(lab::KERNEL) && !list {
                lab::run(&set, input.as_deref(), json, record)
            } else if input.is_some() {
                fail(
                    2,
                    &format!("--input goes with `warpscope run {}` only", lab::KERNEL),
                )
            } else if record {
                run_record(kernel.as_deref(), &set, json, trace)
            } else {
                run(kernel.as_deref(), list, &set, json)
            }
        }
        Some(Command::Adapter) => match warpscope_kernels::DeviceContext::open() {
            Ok(ctx) => {
                say!(
                    "{}",
                    serde_json::to_string_pretty(&ctx.report).unwrap_or_default()
                );
                ExitCode::SUCCESS
            }
            Err(e) => fail(1, &e.to_string()),
        },
    }
}

/// `warpscope FILE.pickle`: the window on that snapshot (`~` expanded); a path that is not a
/// file is refused here, with status 2, before any window opens.
fn open_snapshot(file: &std::path::Path) -> ExitCode {
    let path = warpscope_core::torch::snapshot::expand_home(&file.to_string_lossy());
    if !path.is_file() {
        // Name what is there: a folder or a device is not "no file".
        let what = match std::fs::metadata(&path) {
            Err(_) => "no snapshot file at",
            Ok(m) if m.is_dir() => "a folder, not a snapshot file:",
            Ok(_) => "not a regular file (a device, FIFO or socket):",
        };
        return fail(
            2,
            &format!(
                "{what} {} (warpscope FILE.pickle opens a torch.cuda.memory._snapshot() pickle; `warpscope --help` lists the subcommands)",
                path.display()
            ),
        );
    }
    let session = crate::gui::open::session_for(&path);
    crate::gui::run(Some(session.scene.clone()), Some(session))
}

/// Prints `message` (bounded: never more than a few lines, whatever it quotes) and answers `code`.
fn fail(code: u8, message: &str) -> ExitCode {
    eprintln!("warpscope: {}", warpscope_core::error::bounded(message));
    ExitCode::from(code)
}

fn list(long: bool, json: bool) -> ExitCode {
    if json {
        let all: Vec<_> = scene::scenes()
            .map(|s| {
                let params: Vec<_> = s
                    .params
                    .iter()
                    .map(|p| {
                        // `range_open`: whether each end of a numeric range is itself refused
                        // (`[true, false]` is `(min, max]`).
                        let (range, open) = match &p.kind {
                            ParamKind::Int { min, max, .. } => {
                                (serde_json::json!([min, max]), serde_json::json!([false, false]))
                            }
                            ParamKind::Float {
                                min,
                                max,
                                min_open,
                                max_open,
                                ..
                            } => (
                                serde_json::json!([min, max]),
                                serde_json::json!([min_open, max_open]),
                            ),
                            ParamKind::Choice { options, .. } => {
                                (serde_json::json!(options), serde_json::Value::Null)
                            }
                            ParamKind::Text { .. } => {
                                (serde_json::Value::Null, serde_json::Value::Null)
                            }
                        };
                        serde_json::json!({"name": p.name, "label": p.label, "default": p.default_value(), "range": range, "range_open": open})
                    })
                    .collect();
                let presets: Vec<&str> = warpscope_core::presets::for_scene(s.id)
                    .iter()
                    .map(|p| p.name)
                    .collect();
                serde_json::json!({"id": s.id, "section": s.section, "title": s.title, "summary": s.summary, "params": params, "input": s.input.map(|i| i.keys), "presets": presets})
            })
            .collect();
        say!("{}", serde_json::Value::Array(all));
    } else {
        for s in scene::scenes() {
            if long {
                let input = if s.input.is_some() { "  [--input]" } else { "" };
                say!("{:<22} {:<6} {}{input}", s.id, s.section, s.title.en);
                for p in warpscope_core::presets::for_scene(s.id) {
                    let note = p.session.note.as_ref().map_or("", |n| n.en.as_str());
                    say!("    --preset {:<40} {note}", p.name);
                }
            } else {
                say!("{}", s.id);
            }
        }
    }
    ExitCode::SUCCESS
}

#[allow(clippy::too_many_arguments)] // the subcommand's options, one each
fn export(
    src: Source<'_>,
    all: bool,
    out: &std::path::Path,
    scale: f32,
    opts: &crate::export::FigureOptions,
    style: Style,
    format: &str,
) -> ExitCode {
    use crate::export::{ExportError, export as write_figure};
    let code = |e: &ExportError| match e {
        ExportError::Scene(_) | ExportError::Format(_) => 2,
        _ => 1,
    };
    if all {
        if src.scene.is_some()
            || src.preset.is_some()
            || src.input.is_some()
            || !src.set.is_empty()
            || opts.step.is_some()
        {
            return fail(
                2,
                "--all exports every scene at its lecture preset: give no scene, --preset, \
                 --input, --set or --step",
            );
        }
        if let Err(e) = std::fs::create_dir_all(out) {
            return fail(
                1,
                &format!("cannot create the folder {}: {e}", out.display()),
            );
        }
        let mut failed = 0;
        for s in scene::scenes() {
            let path = out.join(format!("{}.{format}", s.id));
            match write_figure(s, s.defaults(), None, &path, scale, opts) {
                Ok(p) => say!("{}", p.display()),
                Err(e) => {
                    failed += 1;
                    eprintln!("warpscope: {}: {e}", s.id);
                }
            }
        }
        return if failed == 0 {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        };
    }
    let r = match resolve(src) {
        Ok(r) => r,
        Err(e) => return fail(2, &e.to_string()),
    };
    let opts = style.apply(opts, &r);
    let Resolved {
        scene: s,
        values,
        step,
        input,
        ..
    } = r;
    if let Err((status, message)) = check_step(s, &values, input.clone(), opts.step, step) {
        return fail(status, &message);
    }
    let opts = crate::export::FigureOptions {
        step: opts.step.or(step),
        ..opts
    };
    match crate::export::export_noted(s, values, input, out, scale, &opts) {
        Ok((p, note)) => {
            say!("wrote {}", p.display());
            if let Some(note) = note {
                eprintln!("warpscope: {note}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(code(&e), &e.to_string()),
    }
}

/// Checks the event a figure is to show against the scene's trace: `--step` (`explicit`) on a
/// scene without a trace, or a step past the last event (from `--step` or the preset), is
/// refused naming the last event — never clamped or ignored. A preset's step on a scene without
/// a trace (the window saves one for every scene) is ignored.
///
/// # Errors
/// The exit status and the message to print.
fn check_step(
    s: &'static scene::Scene,
    values: &ParamValues,
    input: Option<scene::Input>,
    explicit: Option<usize>,
    preset: Option<usize>,
) -> Result<(), (u8, String)> {
    use crate::export::ExportError;
    let Some(step) = explicit.or(preset) else {
        return Ok(());
    };
    let state = crate::export::prepare(s, values.clone(), input).map_err(|e| {
        let status = match e {
            ExportError::Scene(_) | ExportError::Format(_) => 2,
            _ => 1,
        };
        (status, e.to_string())
    })?;
    let n = crate::export::steps(&state);
    let source = if explicit.is_some() {
        format!("--step {step}")
    } else {
        format!("the preset's step {step}")
    };
    let refuse = |message: String| Err((2, message));
    match n {
        0 if explicit.is_some() => refuse(format!(
            "{source}: scene `{}` has no trace to step through (its figure is one view); leave \
             out --step",
            s.id
        )),
        0 => Ok(()),
        n if step >= n => refuse(format!(
            "{source} is past the end of the trace: scene `{}` has {n} events, 0..={}; the last \
             is {}",
            s.id,
            n - 1,
            n - 1
        )),
        _ => Ok(()),
    }
}

fn run(kernel: Option<&str>, list: bool, set: &[String], json: bool) -> ExitCode {
    use warpscope_kernels::{
        DeviceContext, KernelError, RunOptions, kernel_info, kernel_names, run_kernel_with,
    };
    if list {
        for k in kernel_names() {
            say!("{k}");
        }
        say!("{}", lab::KERNEL);
        return ExitCode::SUCCESS;
    }
    let Some(name) = kernel else {
        return fail(2, &format!("name a kernel: {}", kernel_names().join(", ")));
    };
    let info = match kernel_info(name) {
        Ok(i) => i,
        Err(e) => return fail(2, &e.to_string()),
    };
    let mut opts = RunOptions::default();
    for a in set {
        if let Err(e) = opts.set(a) {
            return fail(2, &e.to_string());
        }
    }
    // Every option is checked before the adapter is opened: a bad value is the user's to fix
    // (status 2) whether or not a GPU is present.
    if let Err(e) = opts.resolve(info) {
        return fail(2, &e.to_string());
    }
    let ctx = match DeviceContext::open() {
        Ok(c) => c,
        Err(e) => return fail(1, &e.to_string()),
    };
    match run_kernel_with(name, &ctx, &opts) {
        Ok(r) => {
            // ±∞ and NaN as the strings README promises, not `null`.
            let v = warpscope_core::input::nonfinite::to_value(&r).unwrap_or_default();
            let text = if json {
                serde_json::to_string(&v)
            } else {
                serde_json::to_string_pretty(&v)
            };
            say!("{}", text.unwrap_or_default());
            if r.verified {
                ExitCode::SUCCESS
            } else {
                eprintln!(
                    "warpscope: {name} did not match core within tolerance on {}",
                    ctx.report.name
                );
                ExitCode::from(1)
            }
        }
        Err(e @ (KernelError::InvalidOption { .. } | KernelError::UnknownKernel { .. })) => {
            fail(2, &e.to_string())
        }
        Err(e) => fail(1, &e.to_string()),
    }
}

/// `warpscope run KERNEL --record`: the recorded scene's reduction on the adapter, decoded.
fn run_record(kernel: Option<&str>, set: &[String], json: bool, with_trace: bool) -> ExitCode {
    use warpscope_kernels::record::{RECORDED_SCENES, record_scene, scene_for_kernel};
    use warpscope_kernels::{DeviceContext, KernelError};
    let with_recording: Vec<&str> = warpscope_kernels::kernel_names()
        .into_iter()
        .filter(|k| scene_for_kernel(k).is_some_and(|s| RECORDED_SCENES.contains(&s)))
        .collect();
    let Some(scene_id) = kernel.and_then(scene_for_kernel) else {
        return fail(
            2,
            &format!(
                "--record: `{}` has no recorded variant; kernels with one: {}",
                kernel.unwrap_or(""),
                with_recording.join(", ")
            ),
        );
    };
    let (s, values) = match resolve(Source {
        scene: Some(scene_id),
        set,
        ..Source::default()
    }) {
        Ok(r) => (r.scene, r.values),
        Err(e) => {
            return fail(
                2,
                &format!("{e} (with --record, --set takes the parameters of scene `{scene_id}`)"),
            );
        }
    };
    let ctx = match DeviceContext::open() {
        Ok(c) => c,
        Err(e) => return fail(1, &e.to_string()),
    };
    match record_scene(&ctx, s.id, &values) {
        Ok(r) => {
            let mut v = warpscope_core::input::nonfinite::to_value(&r).unwrap_or_default();
            if with_trace && let Some(o) = v.as_object_mut() {
                o.insert(
                    "trace".to_owned(),
                    warpscope_core::input::nonfinite::to_value(&r.trace).unwrap_or_default(),
                );
            }
            let text = if json {
                serde_json::to_string(&v)
            } else {
                serde_json::to_string_pretty(&v)
            };
            say!("{}", text.unwrap_or_default());
            if r.verified {
                ExitCode::SUCCESS
            } else {
                eprintln!(
                    "warpscope: the recorded {scene_id} reduction did not match the f64 sums on {}",
                    ctx.report.name
                );
                ExitCode::from(1)
            }
        }
        Err(e @ (KernelError::InvalidOption { .. } | KernelError::Core { .. })) => {
            fail(2, &e.to_string())
        }
        Err(e) => fail(1, &e.to_string()),
    }
}

/// `--frames FROM..TO` or `FROM..` (events, `TO` included).
///
/// # Errors
/// The message to print (exit status 2), showing the text as given.
fn parse_frames(text: &str) -> Result<(usize, Option<usize>), String> {
    let bad = || {
        format!(
            "--frames {}: expected FROM..TO or FROM.. with whole event numbers, e.g. 0..40",
            warpscope_core::error::shorten(text)
        )
    };
    let (a, b) = text.split_once("..").ok_or_else(bad)?;
    let from = a.trim().parse::<usize>().map_err(|_| bad())?;
    let to = match b.trim() {
        "" => None,
        b => Some(b.parse::<usize>().map_err(|_| bad())?),
    };
    Ok((from, to))
}

/// The theme and language `export` was given (`None`: not given, so a preset's own apply).
#[derive(Clone, Copy)]
struct Style {
    theme: Option<crate::export::Theme>,
    lang: Option<crate::export::Lang>,
}

impl Style {
    /// `opts` with the theme and language a preset saved where the command line gave none, so
    /// a preset reproduces the figure as it was saved.
    fn apply(
        self,
        opts: &crate::export::FigureOptions,
        r: &Resolved,
    ) -> crate::export::FigureOptions {
        crate::export::FigureOptions {
            theme: self.theme.or(r.theme).unwrap_or(opts.theme),
            lang: self.lang.or(r.lang).unwrap_or(opts.lang),
            ..*opts
        }
    }
}

#[allow(clippy::too_many_arguments)] // the subcommand's options, one each
fn animate(
    src: Source<'_>,
    out: &std::path::Path,
    scale: f32,
    opts: &crate::export::FigureOptions,
    style: Style,
    frames: Option<&str>,
    fps: u16,
    format: crate::export::AnimationFormat,
) -> ExitCode {
    use crate::export::{ExportError, animation, write_atomically};
    let r = match resolve(src) {
        Ok(r) => r,
        Err(e) => return fail(2, &e.to_string()),
    };
    let opts = &style.apply(opts, &r);
    let Resolved {
        scene: s,
        values,
        input,
        ..
    } = r;
    let (from, to) = match frames.map(parse_frames).transpose() {
        Ok(r) => r.unwrap_or((0, None)),
        Err(message) => return fail(2, &message),
    };
    // Long animations take a while: say how far, on one stderr line (a terminal), or at each
    // quarter (a log).
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut progress = |done: usize, total: usize| {
        if total < 20 {
            return;
        }
        if terminal {
            eprint!("\rwarpscope: frame {done}/{total}");
            if done == total {
                eprintln!();
            }
        } else if done * 4 / total != (done - 1) * 4 / total {
            eprintln!("warpscope: frame {done}/{total}");
        }
    };
    let bytes = match animation(
        s,
        values,
        input,
        from,
        to,
        fps,
        scale,
        opts,
        format,
        &mut progress,
    ) {
        Ok(b) => b,
        Err(e @ ExportError::Scene(_)) => return fail(2, &e.to_string()),
        Err(e) => return fail(1, &e.to_string()),
    };
    match write_atomically(out, &bytes) {
        Ok(()) => {
            say!(
                "wrote {}",
                out.canonicalize()
                    .unwrap_or_else(|_| out.to_owned())
                    .display()
            );
            ExitCode::SUCCESS
        }
        Err(e) => fail(1, &e.to_string()),
    }
}
