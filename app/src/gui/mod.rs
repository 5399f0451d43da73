//! The explorer window: a navigator with the lecture's sections, one scene at a time with its
//! parameter panel, the stepper and the scene's views. Computations run off the UI thread; the
//! last good result stays on screen while a new one is computed or when parameters are invalid.

pub mod errors;
pub mod fonts;
pub mod gpu;
pub mod params;
pub mod save;
pub mod stepper;
pub mod views;

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::mpsc;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use warpscope_core::Error;
use warpscope_core::params::ParamValues;
use warpscope_core::scene::{self, Scene};

use self::errors::error_entry;
pub use self::errors::{ErrorEntry, error_zh, expected_zh};
use self::stepper::Stepper;
use self::views::Computed;
use crate::i18n::tr;
use crate::trf;

/// The lecture's chapters as the navigator shows them, with the scenes each will hold
/// (SCENES.md). Ids not in the registry yet are listed as "not built yet".
pub const CHAPTERS: &[(&str, &str, &str, &[&str])] = &[
    (
        "Foundations",
        "warp-level model",
        "线程束模型",
        &["reduction", "banks"],
    ),
    (
        "§2",
        "LayerNorm backward",
        "LayerNorm 反向",
        &[
            "layernorm-formulas",
            "layernorm-syncs",
            "layernorm-bytes",
            "layernorm-error",
            "layernorm-dgamma",
        ],
    ),
    (
        "§3",
        "Softmax backward",
        "softmax 反向",
        &[
            "softmax-formula",
            "softmax-warp",
            "softmax-fusion",
            "softmax-saved",
        ],
    ),
    (
        "§4",
        "Mixed-precision trainer",
        "混合精度训练器",
        &["trainer-census", "trainer-workspace", "trainer-fp16"],
    ),
    (
        "§5",
        "Memory",
        "显存管理",
        &[
            "memory-lifetimes",
            "memory-plan",
            "memory-allocator",
            "memory-snapshot",
        ],
    ),
    ("§6", "The whole step", "一整步训练", &["step-ledger"]),
    ("§9", "Exercises", "练习", &["exercises"]),
];

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

struct Job {
    rx: mpsc::Receiver<Result<Computed, Error>>,
    started: Instant,
    progress: Arc<warpscope_core::progress::Progress>,
    values: ParamValues,
}

/// Results kept per scene, so moving a slider back to a value it had recently shows that result
/// at once instead of recomputing it.
const RECENT_RESULTS: usize = 4;

/// One scene's state in the window.
pub struct SceneState {
    /// The registry entry.
    pub scene: &'static Scene,
    /// Current parameter values (may be invalid; the error says why).
    pub values: ParamValues,
    /// The last good result.
    pub computed: Option<Arc<Computed>>,
    /// The last error, in both languages.
    pub error: Option<ErrorEntry>,
    /// Where the stepper stands.
    pub stepper: Stepper,
    /// Per-view choices (which variant, which request, …).
    pub view: views::ViewState,
    /// The real-GPU run of this scene's kernel, if it has one.
    pub gpu: gpu::GpuPanel,
    job: Option<Job>,
    dirty: bool,
    /// The last [`RECENT_RESULTS`] results with the values that produced them, newest last.
    recent: std::collections::VecDeque<(ParamValues, Arc<Computed>)>,
}

impl SceneState {
    /// A scene at its lecture defaults, not yet computed.
    pub fn new(scene: &'static Scene) -> Self {
        SceneState {
            scene,
            values: scene.defaults(),
            computed: None,
            error: None,
            stepper: Stepper::default(),
            view: views::ViewState::default(),
            gpu: gpu::GpuPanel::default(),
            job: None,
            dirty: true,
            recent: std::collections::VecDeque::new(),
        }
    }

    /// Starts a computation when parameters changed and none is running; collects a finished one.
    fn poll(&mut self, ctx: &egui::Context) {
        if let Some(job) = &self.job {
            match job.rx.try_recv() {
                Ok(Ok(c)) => {
                    let c = Arc::new(c);
                    if let Some(done) = self.job.take() {
                        self.remember(done.values, c.clone());
                    }
                    self.show_result(c);
                }
                Ok(Err(Error::Cancelled)) => self.job = None,
                Ok(Err(e)) => {
                    self.error = Some(error_entry(self.scene, &e));
                    self.job = None;
                }
                Err(mpsc::TryRecvError::Empty) => {
                    ctx.request_repaint_after(std::time::Duration::from_millis(30))
                }
                Err(mpsc::TryRecvError::Disconnected) => {
                    self.error = Some(ErrorEntry::general(
                        "the computation stopped unexpectedly",
                        "计算意外中止",
                    ));
                    self.job = None;
                }
            }
        }
        if self.dirty {
            // A newer value supersedes the running computation: stop it at its next progress
            // report instead of waiting for a result nobody will look at.
            if let Some(old) = self.job.take() {
                old.progress.cancel();
            }
            self.dirty = false;
            // Range errors are known at once: show them now, and drop a stale one as soon as the
            // values are valid again (not when the new result arrives).
            if let Err(e) = self.values.clone().validated(self.scene.params) {
                self.error = Some(error_entry(self.scene, &e));
                return;
            }
            self.error = None;
            if let Some(c) = self.recalled() {
                self.show_result(c);
                return;
            }
            let (tx, rx) = mpsc::channel();
            let (scene, values, ctx2) = (self.scene, self.values.clone(), ctx.clone());
            let progress = warpscope_core::progress::Progress::new();
            let p2 = progress.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("compute {}", scene.id))
                .spawn(move || {
                    let r = warpscope_core::progress::scope(p2, || views::compute(scene, values));
                    let _ = tx.send(r);
                    ctx2.request_repaint();
                });
            match spawned {
                Ok(_) => {
                    self.job = Some(Job {
                        rx,
                        started: Instant::now(),
                        progress,
                        values: self.values.clone(),
                    })
                }
                Err(e) => {
                    self.error = Some(ErrorEntry::general(
                        format!("could not start the computation: {e}"),
                        format!("无法开始计算：{e}"),
                    ))
                }
            }
        }
    }

    /// A recent result for the current values. Scenes that read a file are never recalled: the
    /// file may have changed since.
    fn recalled(&self) -> Option<Arc<Computed>> {
        let reads_file = self
            .scene
            .params
            .iter()
            .any(|p| matches!(p.kind, warpscope_core::params::ParamKind::Text { .. }));
        if reads_file {
            return None;
        }
        self.recent
            .iter()
            .find(|(v, _)| *v == self.values)
            .map(|(_, c)| c.clone())
    }

    fn remember(&mut self, values: ParamValues, c: Arc<Computed>) {
        self.recent.retain(|(v, _)| *v != values);
        if self.recent.len() == RECENT_RESULTS {
            self.recent.pop_front();
        }
        self.recent.push_back((values, c));
    }

    fn show_result(&mut self, c: Arc<Computed>) {
        let len = c.timeline_len(&self.view);
        self.computed = Some(c);
        self.error = None;
        self.stepper.pos = self.stepper.pos.min(len.saturating_sub(1));
    }

    /// Stops the running computation (the last result stays on screen).
    pub fn cancel(&mut self) {
        if let Some(job) = self.job.take() {
            job.progress.cancel();
        }
    }

    /// Whether a computation is running off the UI thread.
    pub fn computing(&self) -> bool {
        self.job.is_some()
    }

    /// Computes synchronously (tests and headless export).
    pub fn compute_now(&mut self) {
        self.dirty = false;
        self.cancel();
        if let Some(c) = self.recalled() {
            self.show_result(c);
            return;
        }
        match views::compute(self.scene, self.values.clone()) {
            Ok(c) => {
                let c = Arc::new(c);
                self.remember(self.values.clone(), c.clone());
                self.show_result(c);
            }
            Err(e) => self.error = Some(error_entry(self.scene, &e)),
        }
    }
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
    pub theme: crate::export::Theme,
    applied_theme: Option<crate::export::Theme>,
    fonts_installed: bool,
    export_message: Option<String>,
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
    /// Under [`EXIT_AFTER_FIRST_FRAME`]: frames drawn so far.
    timing_frames: Option<u64>,
}

impl WarpscopeApp {
    /// A window showing `scene` (the reduction scene by default), without probing for a GPU.
    pub fn new(scene: Option<&str>) -> Self {
        let selected = scene
            .and_then(|id| scene::find(id).ok())
            .map_or("reduction", |s| s.id);
        WarpscopeApp {
            selected,
            states: HashMap::new(),
            adapter: AdapterStatus::NotProbed,
            adapter_rx: None,
            synchronous: false,
            zh: false,
            theme: crate::export::Theme::Dark,
            applied_theme: None,
            fonts_installed: false,
            export_message: None,
            use_file_dialog: false,
            figure_folder: FIGURE_FOLDER.into(),
            session_folder: SESSION_FOLDER.into(),
            png_scale: 2.0,
            with_caption: true,
            dialog: None,
            timing_frames: None,
        }
    }

    /// Shows a saved session: its scene, parameters and stepper event.
    pub fn open_session(&mut self, session: warpscope_core::session::Session) {
        let Ok(sc) = scene::find(&session.scene) else {
            return;
        };
        self.selected = sc.id;
        if let Some(st) = self.state(sc.id) {
            st.values = session.params;
            st.stepper.pos = session.step.unwrap_or(0);
            st.dirty = true;
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
        let s = scene::find(id).ok()?;
        Some(
            self.states
                .entry(s.id)
                .or_insert_with(|| SceneState::new(s)),
        )
    }

    /// Draws the whole window into `ui`.
    pub fn show(&mut self, ui: &mut egui::Ui) {
        if !self.fonts_installed {
            fonts::install(ui.ctx());
            self.fonts_installed = true;
        }
        crate::i18n::set(
            ui.ctx(),
            if self.zh {
                crate::export::Lang::Zh
            } else {
                crate::export::Lang::En
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
        egui::Panel::top("banner").show(ui, |ui| {
            ui.horizontal(|ui| {
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
                            crate::export::Theme::Dark,
                            crate::export::Theme::Light,
                            crate::export::Theme::Slides,
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
                ui.with_layout(
                    egui::Layout::right_to_left(egui::Align::Center),
                    |ui| match &self.adapter {
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
                                tr(ui, "Simulation only: no GPU adapter", "只有模拟：没有 GPU 适配器"),
                            )
                            .on_hover_text(why);
                        }
                    },
                );
            });
        });
        egui::Panel::left("navigator")
            .default_size(230.0)
            // Wide enough that scene ids never wrap (Chinese section titles are narrower).
            .min_size(200.0)
            .show(ui, |ui| {
                egui::ScrollArea::vertical().show(ui, |ui| self.navigator(ui));
            });
        if self.applied_theme != Some(self.theme) {
            crate::export::apply_theme(ui.ctx(), self.theme);
            self.applied_theme = Some(self.theme);
        }
        let (id, synchronous, zh, theme) = (self.selected, self.synchronous, self.zh, self.theme);
        let mut export_message = self.export_message.take();
        let mut save_clicked = None;
        let (mut png_scale, mut with_caption) = (self.png_scale, self.with_caption);
        let dialog_open = self.dialog.is_some();
        let (figure_folder, session_folder) =
            (self.figure_folder.clone(), self.session_folder.clone());
        let Some(state) = self.state(id) else {
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
            .default_size(250.0)
            .show(ui, |ui| {
                egui::ScrollArea::vertical().show(ui, |ui| {
                    ui.heading(tr(ui, "Parameters", "参数"));
                    ui.label(
                        egui::RichText::new(tr(ui, state.scene.summary, state.scene.summary_zh))
                            .small(),
                    );
                    ui.separator();
                    if params::panel(
                        ui,
                        state.scene.params,
                        &mut state.values,
                        state.error.as_ref(),
                        zh,
                    ) {
                        state.dirty = true;
                    }
                    if let Some(err) = &state.error
                        && !state.scene.params.iter().any(|p| p.name == err.param)
                    {
                        ui.colored_label(ui.visuals().error_fg_color, err.message(zh));
                    }
                    if let Some(job) = &state.job {
                        let secs = job.started.elapsed().as_secs_f32();
                        let mut cancel = false;
                        ui.horizontal(|ui| {
                            match job.progress.fraction() {
                                Some(f) => {
                                    ui.add(
                                        egui::ProgressBar::new(f)
                                            .desired_width(120.0)
                                            .show_percentage(),
                                    );
                                }
                                None => {
                                    ui.spinner();
                                }
                            }
                            ui.label(crate::trf!(
                                ui,
                                "computing… {:.1} s",
                                "计算中… {:.1} 秒",
                                secs
                            ));
                            cancel = ui
                                .button(crate::i18n::tr(ui, "Cancel", "取消"))
                                .on_hover_text(crate::i18n::tr(
                                    ui,
                                    "Stop this computation and keep the last result on screen",
                                    "停止这次计算，屏幕上保留上一次的结果",
                                ))
                                .clicked();
                        });
                        if cancel {
                            state.cancel();
                        }
                    }
                });
            });
        egui::CentralPanel::default().show(ui, |ui| {
            ui.heading(format!("{} {}", state.scene.section, if zh { state.scene.title_zh } else { state.scene.title }));
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
            });
            if let Some(msg) = export_message.as_ref() {
                ui.label(egui::RichText::new(msg).small());
            }
            if let Some(kernel) = gpu::kernel_for(state.scene.id) {
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
                Some(c) => views::show(ui, &c, state),
                None if state.error.is_some() => {
                    ui.label(tr(ui, "No result: fix the parameter on the left.", "没有结果：请修改左侧的参数。"));
                }
                None => {
                    ui.spinner();
                }
            });
        });
        let request = save_clicked.map(|kind| save::SaveRequest {
            kind,
            scene: state.scene,
            values: state.values.clone(),
            step: state.stepper.pos,
            opts: crate::export::FigureOptions {
                step: Some(state.stepper.pos),
                lang: if zh {
                    crate::export::Lang::Zh
                } else {
                    crate::export::Lang::En
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
        self.png_scale = png_scale;
        self.with_caption = with_caption;
        self.export_message = export_message;
    }

    fn navigator(&mut self, ui: &mut egui::Ui) {
        for (section, title, title_zh, ids) in CHAPTERS {
            let title = if self.zh { title_zh } else { title };
            let shown = match *section {
                "Foundations" if self.zh => "基础",
                s => s,
            };
            ui.label(egui::RichText::new(format!("{shown} {title}")).strong());
            let extra: Vec<&'static str> = scene::scenes()
                .filter(|s| {
                    s.section.starts_with(section)
                        && !ids.contains(&s.id)
                        && !CHAPTERS.iter().any(|c| c.3.contains(&s.id))
                })
                .map(|s| s.id)
                .collect();
            for id in ids.iter().copied().chain(extra) {
                match scene::find(id) {
                    Ok(s) => {
                        if ui
                            .selectable_label(self.selected == s.id, s.id)
                            .on_hover_text(if self.zh { s.title_zh } else { s.title })
                            .clicked()
                        {
                            self.selected = s.id;
                            // A "saved …" note belongs to the scene it was written from.
                            self.export_message = None;
                        }
                    }
                    Err(_) => {
                        ui.add_enabled(
                            false,
                            egui::Button::selectable(
                                false,
                                trf!(ui, "{id} (not built yet)", "{id}（还没做好）"),
                            ),
                        );
                    }
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

/// A theme's name in the window's language.
fn theme_name(ui: &egui::Ui, t: crate::export::Theme) -> &'static str {
    use crate::export::Theme;
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
            let mut app = WarpscopeApp::new(scene.as_deref());
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_newer_value_cancels_the_running_computation_and_cancel_keeps_the_last_result() {
        let ctx = egui::Context::default();
        let scene = scene::find("memory-allocator").expect("registered");
        let mut st = SceneState::new(scene);
        st.compute_now();
        assert!(st.computed.is_some(), "{:?}", st.error);
        let before = st.computed.clone();
        // The largest run (seconds, not milliseconds) so no job finishes between two polls.
        let top = scene
            .params
            .iter()
            .find(|p| p.name == "batches")
            .expect("batches");
        let max = match top.kind {
            warpscope_core::params::ParamKind::Int { max, .. } => max,
            _ => panic!("batches is an integer"),
        };
        st.values
            .set(scene.params, "batches", &max.to_string())
            .expect("in range");
        st.dirty = true;
        st.poll(&ctx);
        let first = st.job.as_ref().expect("a job runs").progress.clone();
        st.dirty = true;
        st.poll(&ctx);
        assert!(first.is_cancelled(), "the superseded job was not cancelled");
        let second = st.job.as_ref().expect("the new job runs").progress.clone();
        assert!(!second.is_cancelled());
        st.cancel();
        assert!(second.is_cancelled() && !st.computing());
        assert!(Arc::ptr_eq(
            st.computed.as_ref().expect("kept"),
            before.as_ref().expect("had one")
        ));
        // Back to the defaults: the earlier result is shown at once, with no new job.
        st.values = scene.defaults();
        st.dirty = true;
        st.poll(&ctx);
        assert!(!st.computing(), "the defaults were recomputed");
        assert!(Arc::ptr_eq(
            st.computed.as_ref().expect("recalled"),
            before.as_ref().expect("had one")
        ));
    }
}
