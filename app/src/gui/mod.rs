//! The explorer window: a navigator with the lecture's sections, one scene at a time with its
//! parameter panel, the stepper and the scene's views. Computations run off the UI thread; the
//! last good result stays on screen while a new one is computed or when parameters are invalid.

pub mod errors;
pub mod input;
pub mod open;
pub mod params;
pub mod prefs;
pub mod save;
pub mod scene;
pub mod session_open;

pub use self::scene::SceneState;

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::OnceLock;
use std::sync::mpsc;
use std::time::Instant;

use warpscope_core::scene as registry;

pub use self::errors::{ErrorEntry, error_zh};
use crate::i18n::tr;
use crate::trf;

/// When `main` started (see [`mark_process_start`]).
static PROCESS_START: OnceLock<Instant> = OnceLock::new();

/// Records the process's start; `main` calls it first, so the first-frame time printed under
/// [`EXIT_AFTER_FIRST_FRAME`] counts from there (not from when the window was asked for).
pub fn mark_process_start() {
    let _ = PROCESS_START.set(Instant::now());
}

/// The environment variable that turns the window into its own first-frame benchmark: set to
/// `1`, the app prints on stderr the time from process start to its first frame and to the first
/// frame that draws the scene's result, then closes itself (`ViewportCommand::Close`). Used by
/// BENCHMARKS.md; nothing else reads it.
pub const EXIT_AFTER_FIRST_FRAME: &str = "WARPSCOPE_EXIT_AFTER_FIRST_FRAME";

/// Whether real GPU runs are possible, as the banner says.
#[derive(Debug, Clone, PartialEq)]
pub enum AdapterStatus {
    /// Not looked for (tests, or not yet asked).
    NotProbed,
    /// Looking (on a background thread).
    Probing,
    /// Found: its name and backend.
    Found(String),
    /// None: why.
    Missing(String),
}

/// The explorer.
pub struct WarpscopeApp {
    /// The scene on screen.
    pub selected: &'static str,
    states: HashMap<&'static str, SceneState>,
    adapter: AdapterStatus,
    adapter_rx: Option<mpsc::Receiver<AdapterStatus>>,
    /// Compute on the UI thread (tests and headless rendering want the result in the same frame).
    pub synchronous: bool,
    /// Titles and parameter labels in Chinese.
    pub zh: bool,
    /// The window's colours and text size.
    pub theme: crate::theme::Theme,
    applied_theme: Option<crate::theme::Theme>,
    fonts_installed: bool,
    export_message: Option<warpscope_core::text::Text>,
    /// Ask for the file name in a native save dialog (the window turns this on; tests leave it
    /// off so files go to the default folders deterministically).
    pub use_file_dialog: bool,
    /// Where *Export PNG* / *Export SVG* write when no dialog is used ([`FIGURE_FOLDER`]).
    pub figure_folder: std::path::PathBuf,
    /// Where *Save session* writes when no dialog is used ([`SESSION_FOLDER`]).
    pub session_folder: std::path::PathBuf,
    /// PNG export scale: 1, 2 or 3 pixels per point.
    pub png_scale: f32,
    /// Exported figures carry the caption line (title and parameters).
    pub with_caption: bool,
    dialog: Option<save::PendingDialog>,
    /// Opening snapshots: the *Open snapshot…* dialog, dropped files, the recent files.
    pub opener: open::Opener,
    /// The banner's *Open session…* dialog and its message.
    pub session_opener: session_open::SessionOpener,
    /// *Figure only*: the scene's picture alone, as a figure is exported (no navigator,
    /// parameter panel or controls; ←/→/space still step; Esc leaves it).
    pub figure_only: bool,
    /// Under [`EXIT_AFTER_FIRST_FRAME`]: frames drawn so far.
    timing_frames: Option<u64>,
    /// Where the window keeps its state between runs, and what it last wrote there
    /// ([`prefs`]; `None`: nothing is kept — tests, or no configuration folder).
    kept: Option<(std::path::PathBuf, prefs::Prefs)>,
}

impl WarpscopeApp {
    /// A window showing `scene` (the reduction scene by default), without probing for a GPU.
    pub fn new(scene: Option<&str>) -> Self {
        let selected = scene
            .and_then(|id| registry::find(id).ok())
            .map_or("reduction", |s| s.id);
        WarpscopeApp {
            selected,
            states: HashMap::new(),
            adapter: AdapterStatus::NotProbed,
            adapter_rx: None,
            synchronous: false,
            zh: false,
            theme: crate::theme::Theme::Dark,
            applied_theme: None,
            fonts_installed: false,
            export_message: None,
            use_file_dialog: false,
            figure_folder: FIGURE_FOLDER.into(),
            session_folder: SESSION_FOLDER.into(),
            png_scale: 2.0,
            with_caption: true,
            dialog: None,
            opener: open::Opener::default(),
            session_opener: session_open::SessionOpener::default(),
            figure_only: false,
            timing_frames: None,
            kept: None,
        }
    }

    /// Writes the kept state when it changed since the last write (a failed write is tried
    /// again at the next change, and never interrupts the window).
    fn keep_state(&mut self) {
        let now = self.prefs();
        if let Some((path, last)) = &mut self.kept
            && *last != now
        {
            if let Err(e) = prefs::save(path, &now) {
                eprintln!("warpscope: cannot keep the window's state: {e}");
            }
            *last = now;
        }
    }

    /// Shows the snapshot at `path` in the `memory-snapshot` scene (from the *Open snapshot…*
    /// dialog, a dropped file or the recent list): its `path` parameter set, `event` back to the
    /// last.
    pub fn open_snapshot(&mut self, path: &std::path::Path) {
        let Ok(sc) = registry::find(open::SCENE) else {
            return;
        };
        self.selected = sc.id;
        self.export_message = None;
        if let Some(st) = self.state(sc.id) {
            let ok = st
                .values
                .set(sc.params, "path", &path.to_string_lossy())
                .and_then(|()| st.values.set(sc.params, "event", "-1"));
            if ok.is_ok() {
                st.dirty = true;
            }
        }
    }

    /// Shows a saved session: its scene, parameters and stepper event, in the theme and language
    /// it was saved in (when the file names them).
    pub fn open_session(&mut self, session: warpscope_core::session::Session) {
        let Ok(sc) = registry::find(&session.scene) else {
            return;
        };
        self.selected = sc.id;
        if let Some(t) = session.theme.as_deref().and_then(crate::theme::from_name) {
            self.theme = t;
        }
        if let Some(l) = session.lang.as_deref() {
            self.zh = l == "zh";
        }
        if let Some(st) = self.state(sc.id) {
            st.values = session.params;
            st.stepper.pos = session.step.unwrap_or(0);
            st.set_input(session.input.map(std::sync::Arc::new));
        }
    }

    /// Looks for a GPU adapter on a background thread; the banner shows the outcome.
    pub fn probe_adapter(&mut self) {
        let (tx, rx) = mpsc::channel();
        let _ = std::thread::Builder::new()
            .name("adapter probe".into())
            .spawn(move || {
                let s = match warpscope_kernels::DeviceContext::open() {
                    Ok(c) => AdapterStatus::Found(format!(
                        "{} ({}, {})",
                        c.report.name, c.report.backend, c.report.device_type
                    )),
                    Err(e) => AdapterStatus::Missing(e.0),
                };
                let _ = tx.send(s);
            });
        self.adapter = AdapterStatus::Probing;
        self.adapter_rx = Some(rx);
    }

    /// The state of scene `id`, created at its lecture defaults on first use.
    pub fn state(&mut self, id: &'static str) -> Option<&mut SceneState> {
        let s = registry::find(id).ok()?;
        Some(
            self.states
                .entry(s.id)
                .or_insert_with(|| SceneState::new(s)),
        )
    }

    /// Draws the whole window into `ui`.
    pub fn show(&mut self, ui: &mut egui::Ui) {
        if !self.fonts_installed {
            crate::fonts::install(ui.ctx());
            self.fonts_installed = true;
        }
        crate::i18n::set(
            ui.ctx(),
            if self.zh {
                crate::i18n::Lang::Zh
            } else {
                crate::i18n::Lang::En
            },
        );
        if let Some(rx) = &self.adapter_rx
            && let Ok(s) = rx.try_recv()
        {
            self.adapter = s;
            self.adapter_rx = None;
        }
        if let Some(d) = &self.dialog
            && let Some(msg) = d.poll()
        {
            self.export_message = Some(msg);
            self.dialog = None;
        }
        if let Some(p) = self.opener.poll(ui.ctx()) {
            self.open_snapshot(&p);
        }
        if let Some(session) = self.session_opener.poll() {
            self.open_session(session);
        }
        // What *Open session…* said shows where saves say where their file went.
        if let Some(m) = self.session_opener.message.take() {
            self.export_message = Some(m);
        }
        if self.applied_theme != Some(self.theme) {
            crate::export::apply_theme(ui.ctx(), self.theme);
            self.applied_theme = Some(self.theme);
        }
        egui::Panel::top("banner").show(ui, |ui| self.banner(ui));
        if self.figure_only {
            if ui.input(|i| i.key_pressed(egui::Key::Escape)) {
                self.figure_only = false;
            }
            self.figure_page(ui);
            return;
        }
        egui::Panel::left("navigator")
            .default_size(230.0)
            // Wide enough that scene ids never wrap (Chinese section titles are narrower).
            .min_size(200.0)
            .show(ui, |ui| {
                egui::ScrollArea::vertical().show(ui, |ui| self.navigator(ui));
            });
        let (id, synchronous, zh, theme) = (self.selected, self.synchronous, self.zh, self.theme);
        let mut export_message = self.export_message.take();
        let mut save_clicked = None;
        let (mut png_scale, mut with_caption) = (self.png_scale, self.with_caption);
        let dialog_open = self.dialog.is_some();
        let (figure_folder, session_folder) =
            (self.figure_folder.clone(), self.session_folder.clone());
        let (mut opener, use_dialog) = (std::mem::take(&mut self.opener), self.use_file_dialog);
        let mut open_request = None;
        let Some(state) = self.state(id) else {
            self.opener = opener;
            egui::CentralPanel::default().show(ui, |ui| {
                ui.label(trf!(
                    ui,
                    "Scene `{id}` is not built yet.",
                    "场景 `{id}` 还没有做好。"
                ));
            });
            return;
        };
        if synchronous && state.dirty {
            state.compute_now();
        }
        state.poll(ui.ctx());
        egui::Panel::left("parameters")
            .exact_size(params::PANEL_WIDTH)
            .resizable(false)
            .show(ui, |ui| params::side_panel(ui, state, zh, use_dialog));
        egui::CentralPanel::default().show(ui, |ui| {
            ui.heading(format!("{} {}", state.scene.section, state.scene.title.get(zh)));
            // The export controls get their own row: beside a long title they would overlap it.
            ui.horizontal_wrapped(|ui| {
                    ui.add_enabled_ui(!dialog_open, |ui| {
                        let figure_hover = tr(
                            ui,
                            "Write this view as a figure, as shown (the window's theme — pick Slides for projected slides — and language); without a file dialog into ./warpscope-figures",
                            "把这个视图按屏幕上的样子写成图（窗口当前的主题——投影幻灯片请选 Slides——和语言）；没有文件对话框时存进 ./warpscope-figures",
                        );
                        for (label, kind) in [
                            (tr(ui, "Export PNG", "导出 PNG"), save::SaveKind::Png),
                            (tr(ui, "Export SVG", "导出 SVG"), save::SaveKind::Svg),
                        ] {
                            if ui.button(label).on_hover_text(figure_hover).clicked() {
                                save_clicked = Some(kind);
                            }
                        }
                        egui::ComboBox::from_id_salt("png-scale")
                            .width(48.0)
                            .selected_text(format!("{png_scale}×"))
                            .show_ui(ui, |ui| {
                                for s in [1.0, 2.0, 3.0] {
                                    ui.selectable_value(&mut png_scale, s, format!("{s}×"));
                                }
                            })
                            .response
                            .on_hover_text(tr(
                                ui,
                                "PNG scale: pixels per point",
                                "PNG 缩放：每个点几个像素",
                            ));
                        ui.checkbox(&mut with_caption, tr(ui, "with caption", "带图注"))
                            .on_hover_text(tr(
                                ui,
                                "Put the scene title and its parameters above exported figures",
                                "在导出的图上方加场景标题和参数",
                            ));
                        if ui
                            .button(tr(ui, "Save session", "保存会话"))
                            .on_hover_text(tr(
                                ui,
                                "Save this scene, its parameters and step (reopen with --preset FILE); without a file dialog into ./warpscope-sessions",
                                "保存这个场景、它的参数和步骤（用 --preset FILE 重新打开）；没有文件对话框时存进 ./warpscope-sessions",
                            ))
                            .clicked()
                        {
                            save_clicked = Some(save::SaveKind::Session);
                        }
                    });
                    if state.scene.id == open::SCENE {
                        open_request = opener.toolbar(ui, use_dialog);
                    }
            });
            if let Some(msg) = export_message.as_ref() {
                // Where the file went, in the window's language, as large as the controls.
                egui::Frame::group(ui.style()).show(ui, |ui| {
                    ui.label(msg.get(zh));
                });
            }
            if let Some(kernel) = crate::widgets::gpu::kernel_for(state.scene.id) {
                egui::CollapsingHeader::new(trf!(
                    ui,
                    "Real GPU run: kernel {kernel}",
                    "在真实 GPU 上运行：内核 {kernel}"
                ))
                    .default_open(state.gpu.last.is_some())
                    .show(ui, |ui| state.gpu.ui(ui, kernel, synchronous));
            }
            ui.separator();
            if state.error.is_some() && state.computed.is_some() {
                ui.colored_label(
                    ui.visuals().error_fg_color,
                    tr(
                        ui,
                        "The current parameters give no result (the message is on the left); the last good result is shown.",
                        "当前参数得不到结果（原因见左侧）；显示的是上一次成功的结果。",
                    ),
                );
            }
            egui::ScrollArea::vertical().show(ui, |ui| match state.computed.clone() {
                Some(c) => {
                    let mut cx = crate::views::ViewContext {
                        stepper: &mut state.stepper,
                        gpu: &mut state.gpu,
                        values: &state.values,
                        set_values: Vec::new(),
                    };
                    state.view.ui(ui, &c, &mut cx);
                    let asked = cx.set_values;
                    for (name, value) in asked {
                        state.values.0.insert(name.to_owned(), value);
                        state.dirty = true;
                    }
                }
                None if state.error.is_some() => {
                    ui.label(tr(ui, "No result: fix the parameter on the left.", "没有结果：请修改左侧的参数。"));
                }
                None => {
                    ui.spinner();
                }
            });
        });
        opener.track(state);
        let request = save_clicked.map(|kind| save::SaveRequest {
            kind,
            scene: state.scene,
            values: state.values.clone(),
            input: state.input.clone(),
            step: state.stepper.pos,
            opts: crate::export::FigureOptions {
                step: Some(state.stepper.pos),
                lang: if zh {
                    crate::i18n::Lang::Zh
                } else {
                    crate::i18n::Lang::En
                },
                caption: with_caption,
                // What is on screen: the window's theme (Slides for projected figures).
                theme,
                ..Default::default()
            },
            scale: png_scale,
            folder: if kind == save::SaveKind::Session {
                session_folder.clone()
            } else {
                figure_folder.clone()
            },
            shown: state.computed.clone().map(|output| save::Shown {
                output,
                view: state.view.boxed_clone(),
            }),
        });
        if let Some(req) = request {
            if self.use_file_dialog && save::dialog_available() {
                match save::PendingDialog::open(req.clone(), ui.ctx()) {
                    Ok(d) => self.dialog = Some(d),
                    Err(_) => export_message = Some(req.write_to_default_folder()),
                }
            } else {
                export_message = Some(req.write_to_default_folder());
            }
        }
        self.opener = opener;
        if let Some(p) = open_request {
            self.open_snapshot(&p);
        }
        self.png_scale = png_scale;
        self.with_caption = with_caption;
        self.export_message = export_message;
    }

    /// *Figure only*: the selected scene's title and picture, drawn as an export draws it.
    fn figure_page(&mut self, ui: &mut egui::Ui) {
        let (id, synchronous, zh) = (self.selected, self.synchronous, self.zh);
        let Some(state) = self.state(id) else {
            return;
        };
        if synchronous && state.dirty {
            state.compute_now();
        }
        state.poll(ui.ctx());
        egui::CentralPanel::default().show(ui, |ui| {
            ui.heading(format!(
                "{} {}",
                state.scene.section,
                state.scene.title.get(zh)
            ));
            ui.separator();
            let Some(c) = state.computed.clone() else {
                ui.spinner();
                return;
            };
            crate::widgets::stepper::set_figure_mode(ui.ctx(), true);
            egui::ScrollArea::vertical().show(ui, |ui| {
                let mut cx = crate::views::ViewContext {
                    stepper: &mut state.stepper,
                    gpu: &mut state.gpu,
                    values: &state.values,
                    set_values: Vec::new(),
                };
                state.view.ui(ui, &c, &mut cx);
            });
            crate::widgets::stepper::set_figure_mode(ui.ctx(), false);
        });
    }

    /// The top bar: the name, the language and theme switches, *Open session…*, *Figure
    /// only*, the GPU adapter found.
    fn banner(&mut self, ui: &mut egui::Ui) {
        // Wrapped: at 1024 points (or in Chinese) the controls take a second row instead of
        // drawing over each other.
        ui.horizontal_wrapped(|ui| {
            ui.heading("warpscope");
            ui.label(tr(
                ui,
                "· LightSeq2 training kernels, warp by warp",
                "· LightSeq2 训练内核，逐个线程束",
            ));
            let lang_label = ui.label(tr(ui, "Language", "语言")).id;
            egui::ComboBox::from_id_salt("language")
                .selected_text(if self.zh { "中文" } else { "English" })
                .show_ui(ui, |ui| {
                    ui.selectable_value(&mut self.zh, false, "English");
                    ui.selectable_value(&mut self.zh, true, "中文");
                })
                .response
                .labelled_by(lang_label)
                .on_hover_text(tr(
                    ui,
                    "Language of every label, caption and explanation (and of exported figures)",
                    "所有标签、图注和说明的语言（也用于导出的图）",
                ));
            let theme_label = ui.label(tr(ui, "Theme", "主题")).id;
            egui::ComboBox::from_id_salt("theme")
                .selected_text(theme_name(ui, self.theme))
                .show_ui(ui, |ui| {
                    for t in [
                        crate::theme::Theme::Dark,
                        crate::theme::Theme::Light,
                        crate::theme::Theme::Slides,
                    ] {
                        ui.selectable_value(&mut self.theme, t, theme_name(ui, t));
                    }
                })
                .response
                .labelled_by(theme_label)
                .on_hover_text(tr(
                    ui,
                    "Colours and text size (Slides: light, larger text)",
                    "颜色和字号（Slides：浅色背景、字更大）",
                ));
            if ui
                .add_enabled(
                    !self.session_opener.busy(),
                    egui::Button::new(tr(ui, "Open session…", "打开会话…")),
                )
                .on_hover_text(tr(
                    ui,
                    "Open a saved session or preset (.json): its scene, parameters, input, step, theme and language",
                    "打开保存的会话或预设（.json）：场景、参数、输入、步骤、主题和语言",
                ))
                .clicked()
            {
                let folder = self.session_folder.clone();
                self.session_opener
                    .open(ui.ctx(), self.use_file_dialog, folder);
            }
            ui.toggle_value(&mut self.figure_only, tr(ui, "Figure only", "只看图"))
                .on_hover_text(tr(
                    ui,
                    "Show the picture alone, as exported figures draw it (←/→/space still step; Esc returns)",
                    "只显示图，和导出的图一样（←/→/空格仍可逐步；Esc 返回）",
                ));
            match &self.adapter {
                AdapterStatus::NotProbed => {}
                AdapterStatus::Probing => {
                    ui.spinner();
                    ui.label(tr(ui, "looking for a GPU adapter…", "正在查找 GPU 适配器…"));
                }
                AdapterStatus::Found(name) => {
                    ui.label(format!("GPU: {name}"));
                }
                AdapterStatus::Missing(why) => {
                    ui.colored_label(
                        ui.visuals().warn_fg_color,
                        tr(
                            ui,
                            "Simulation only: no GPU adapter",
                            "只有模拟：没有 GPU 适配器",
                        ),
                    )
                    .on_hover_text(why);
                }
            }
        });
    }

    fn navigator(&mut self, ui: &mut egui::Ui) {
        for chapter in registry::chapters() {
            let title = chapter.title.get(self.zh);
            let scenes: Vec<&'static registry::Scene> = registry::scenes()
                .filter(|s| s.chapter == chapter)
                .collect();
            let heading = if *chapter == registry::Chapter::FOUNDATIONS {
                // The first chapter has no § of its own: it names its scenes' sections and
                // invites a first-time user in.
                let sections: Vec<&str> = scenes.iter().map(|s| s.section).collect();
                if self.zh {
                    format!("从这里开始：{title}（{}）", sections.join("、"))
                } else {
                    format!("Start here: the {title} ({})", sections.join(", "))
                }
            } else {
                format!("{} {title}", chapter.section)
            };
            ui.label(egui::RichText::new(heading).strong());
            for s in scenes {
                if ui
                    .add(
                        egui::Button::selectable(self.selected == s.id, nav_label(s, self.zh))
                            .wrap(),
                    )
                    .on_hover_text(format!("{} — {}", s.id, s.title.get(self.zh)))
                    .clicked()
                {
                    self.selected = s.id;
                    // A "saved …" note belongs to the scene it was written from.
                    self.export_message = None;
                }
            }
            ui.add_space(6.0);
        }
    }
}

/// The folder the window's "Save session" button writes into.
pub const SESSION_FOLDER: &str = "warpscope-sessions";

/// The folder the window's export buttons write into.
pub const FIGURE_FOLDER: &str = "warpscope-figures";

/// A scene as the navigator lists it: its § and its title up to the colon, or the whole title
/// when another scene's title starts the same way (the id is in the hover text).
fn nav_label(s: &registry::Scene, zh: bool) -> String {
    fn prefix(t: &str) -> &str {
        t.split([':', '：']).next().unwrap_or(t).trim()
    }
    let title = s.title.get(zh);
    let short = prefix(title);
    let shared = registry::scenes().any(|o| o.id != s.id && prefix(o.title.get(zh)) == short);
    format!("{} {}", s.section, if shared { title } else { short })
}

/// A theme's name in the window's language.
fn theme_name(ui: &egui::Ui, t: crate::theme::Theme) -> &'static str {
    use crate::theme::Theme;
    match t {
        Theme::Dark => tr(ui, "Dark", "深色"),
        Theme::Light => tr(ui, "Light", "浅色"),
        Theme::Slides => "Slides",
    }
}

impl WarpscopeApp {
    /// Under [`EXIT_AFTER_FIRST_FRAME`]: reports the first frame and the first one with the
    /// result, then closes the window.
    fn first_frame_timing(&mut self, ctx: &egui::Context) {
        let Some(frames) = self.timing_frames.as_mut() else {
            return;
        };
        *frames += 1;
        let since = PROCESS_START
            .get()
            .map_or(0.0, |t| t.elapsed().as_secs_f64() * 1e3);
        if *frames == 1 {
            eprintln!("warpscope: first frame built {since:.1} ms after process start");
        }
        let has_result = self
            .states
            .get(self.selected)
            .is_some_and(|s| s.computed.is_some() || s.error.is_some());
        if has_result {
            eprintln!(
                "warpscope: first frame with the `{}` result built {since:.1} ms after process start (frame {})",
                self.selected, *frames
            );
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            self.timing_frames = None;
        }
    }
}

impl eframe::App for WarpscopeApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        self.show(ui);
        self.first_frame_timing(ui.ctx());
        self.keep_state();
    }
}

/// Opens the window (at `scene`, or at a saved `session`); without a display, explains how to
/// work headless instead.
pub fn run(scene: Option<String>, session: Option<warpscope_core::session::Session>) -> ExitCode {
    let has_display =
        std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some();
    if !has_display && cfg!(target_os = "linux") {
        eprintln!(
            "warpscope: no display (neither DISPLAY nor WAYLAND_DISPLAY is set), so the window cannot open.\n\
             Headless, use `warpscope list` and `warpscope report SCENE --json`; or run under Xvfb:\n\
             Xvfb :99 & DISPLAY=:99 warpscope"
        );
        return ExitCode::from(1);
    }
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("warpscope")
            .with_inner_size([1400.0, 900.0]),
        renderer: eframe::Renderer::Wgpu,
        ..Default::default()
    };
    let result = eframe::run_native(
        "warpscope",
        options,
        Box::new(move |_cc| {
            // The last run's language, theme, recent files and scene; a scene or session on
            // the command line wins.
            let kept = prefs::path().map(|p| {
                let k = prefs::load(&p);
                (p, k)
            });
            let last_scene = kept.as_ref().and_then(|(_, k)| k.scene.clone());
            let mut app = WarpscopeApp::new(scene.as_deref().or(last_scene.as_deref()));
            if let Some((_, k)) = &kept {
                app.apply_prefs(k);
            }
            app.kept = kept;
            if let Some(s) = session {
                app.open_session(s);
            }
            if std::env::var_os(EXIT_AFTER_FIRST_FRAME).is_some_and(|v| v == "1") {
                app.timing_frames = Some(0);
            }
            app.probe_adapter();
            app.use_file_dialog = true;
            Ok(Box::new(app))
        }),
    );
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!(
                "warpscope: the window could not open ({e}).\n\
                 Headless, use `warpscope list` and `warpscope report SCENE --json`."
            );
            ExitCode::from(1)
        }
    }
}
