//! Opening a PyTorch memory snapshot in the window: the *Open snapshot…* button (a native file
//! dialog on its own thread, as [`super::save`] does for saving, so the window never freezes), a
//! `.pickle` dropped onto the window, the files opened recently (this session, most recent
//! first), and `warpscope FILE.pickle` ([`session_for`]). Each of them sets the `path` parameter
//! of the `memory-snapshot` scene, so the text field, sessions and `--set path=` stay the one way
//! a file is named.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use warpscope_core::params::ParamValues;

use super::SceneState;
use crate::i18n::tr;
use warpscope_core::torch::snapshot::{SnapshotRun, Source};

/// The scene a snapshot opens in.
pub const SCENE: &str = "memory-snapshot";

/// Files the recent list keeps.
pub const RECENT: usize = 8;

/// Extensions a dropped file may have to be opened as a snapshot (PyTorch's `_dump_snapshot`
/// writes `.pickle`; `.pkl` is the other common spelling).
pub const EXTENSIONS: &[&str] = &["pickle", "pkl"];

/// A dialog answered sooner than this was not seen by anyone (rfd returns `None` at once when no
/// dialog can be shown, exactly as for a cancel).
const NO_DIALOG_WITHIN: Duration = Duration::from_millis(300);

/// The window's opening state: a dialog that may be open, the recent files, the last message.
#[derive(Debug, Default)]
pub struct Opener {
    dialog: Option<(mpsc::Receiver<Option<PathBuf>>, Instant)>,
    /// Files opened with a result, most recent first (at most [`RECENT`]).
    pub recent: Vec<PathBuf>,
    /// What the last attempt said (a cancelled dialog, a dropped file that is not a pickle).
    pub message: Option<String>,
}

/// Whether `p` ends in one of [`EXTENSIONS`].
pub fn is_snapshot_name(p: &Path) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| EXTENSIONS.iter().any(|x| e.eq_ignore_ascii_case(x)))
}

/// A session that opens `file` in the `memory-snapshot` scene (for `warpscope FILE.pickle`).
pub fn session_for(file: &Path) -> warpscope_core::session::Session {
    let mut params = ParamValues::defaults(
        warpscope_core::scene::find(SCENE)
            .map(|s| s.params)
            .unwrap_or_default(),
    );
    params.0.insert(
        "path".to_owned(),
        warpscope_core::params::ParamValue::Text(file.to_string_lossy().into_owned()),
    );
    warpscope_core::session::Session {
        scene: SCENE.to_owned(),
        params,
        step: None,
        theme: None,
        lang: None,
        input: None,
        note: None,
        title: None,
    }
}

impl Opener {
    /// Puts `p` first in the recent list.
    pub fn remember(&mut self, p: &Path) {
        self.recent.retain(|q| q != p);
        self.recent.insert(0, p.to_owned());
        self.recent.truncate(RECENT);
    }

    /// The button, the recent files and the last message, for the toolbar of the
    /// `memory-snapshot` scene. Returns a file to open. `dialogs`: whether a native dialog may be
    /// shown (the window, not tests).
    pub fn toolbar(&mut self, ui: &mut egui::Ui, dialogs: bool) -> Option<PathBuf> {
        let mut open = None;
        let busy = self.dialog.is_some();
        let button = ui
            .add_enabled(
                !busy,
                egui::Button::new(tr(ui, "Open snapshot…", "打开快照…")),
            )
            .on_hover_text(tr(
                ui,
                "Open a torch.cuda.memory._snapshot() pickle (or drop one onto the window)",
                "打开一个 torch.cuda.memory._snapshot() 的 pickle（也可以把文件拖进窗口）",
            ));
        if button.clicked() {
            if dialogs && super::save::dialog_available() {
                self.open_dialog(ui.ctx());
            } else {
                self.message = Some(
                    tr(
                        ui,
                        "No file dialog here: type the path into the field on the left, or drop the file onto the window.",
                        "这里没有文件对话框：在左侧的输入框里输入路径，或把文件拖进窗口。",
                    )
                    .to_owned(),
                );
            }
        }
        if !self.recent.is_empty() {
            ui.menu_button(tr(ui, "Recent ▾", "最近打开 ▾"), |ui| {
                for p in &self.recent {
                    let name = p
                        .file_name()
                        .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into());
                    if ui
                        .button(name)
                        .on_hover_text(p.display().to_string())
                        .clicked()
                    {
                        open = Some(p.clone());
                        ui.close();
                    }
                }
            });
        }
        if let Some(m) = &self.message {
            ui.label(egui::RichText::new(m).small());
        }
        open
    }

    fn open_dialog(&mut self, ctx: &egui::Context) {
        let (tx, rx) = mpsc::channel();
        let ctx = ctx.clone();
        let start_in = self
            .recent
            .first()
            .and_then(|p| p.parent())
            .map(Path::to_owned);
        let spawned = std::thread::Builder::new()
            .name("open dialog".into())
            .spawn(move || {
                let mut dialog = rfd::FileDialog::new()
                    .set_title("Open a PyTorch memory snapshot")
                    .add_filter("PyTorch memory snapshot", EXTENSIONS)
                    .add_filter("All files", &["*"]);
                if let Some(dir) = start_in.filter(|d| d.is_dir()) {
                    dialog = dialog.set_directory(dir);
                }
                let _ = tx.send(dialog.pick_file());
                ctx.request_repaint();
            });
        match spawned {
            Ok(_) => self.dialog = Some((rx, Instant::now())),
            Err(e) => self.message = Some(format!("could not open the file dialog: {e}")),
        }
    }

    /// A file to open from a dialog that closed or from files dropped onto the window this
    /// frame; paints the drop hint while files hover over the window.
    pub fn poll(&mut self, ctx: &egui::Context) -> Option<PathBuf> {
        let zh = crate::i18n::lang(ctx) == crate::i18n::Lang::Zh;
        let mut open = None;
        if let Some((rx, started)) = &self.dialog {
            match rx.try_recv() {
                Ok(Some(p)) => {
                    open = Some(p);
                    self.dialog = None;
                }
                Ok(None) | Err(mpsc::TryRecvError::Disconnected) => {
                    self.message = Some(
                        if started.elapsed() < NO_DIALOG_WITHIN {
                            if zh {
                                "文件对话框无法显示：在左侧的输入框里输入路径，或把文件拖进窗口。"
                            } else {
                                "The file dialog could not be shown: type the path into the field on the left, or drop the file onto the window."
                            }
                        } else if zh {
                            "已取消：没有打开文件"
                        } else {
                            "Cancelled: no file opened"
                        }
                        .to_owned(),
                    );
                    self.dialog = None;
                }
                Err(mpsc::TryRecvError::Empty) => {}
            }
        }
        let (dropped, hovering) = ctx.input(|i| {
            (
                i.raw
                    .dropped_files
                    .iter()
                    .map(|f| f.path().to_owned())
                    .collect::<Vec<_>>(),
                !i.raw.hovered_files.is_empty(),
            )
        });
        if let Some(p) = dropped.first() {
            if is_snapshot_name(p) {
                open = Some(p.clone());
                self.message = None;
            } else {
                self.message = Some(if zh {
                    format!(
                        "{} 不是 .pickle 文件：只有内存快照（.pickle / .pkl）能拖进来打开",
                        p.display()
                    )
                } else {
                    format!(
                        "{} is not a .pickle: only memory snapshots (.pickle / .pkl) open by dropping",
                        p.display()
                    )
                });
            }
        }
        if hovering {
            drop_hint(ctx, zh);
        }
        open
    }

    /// Remembers the file `state` shows, once it has a result for it (a path that fails to
    /// read never enters the recent list).
    pub fn track(&mut self, state: &SceneState) {
        if state.scene.id != SCENE || state.error.is_some() || state.computing() {
            return;
        }
        let Some(run) = state
            .computed
            .as_ref()
            .and_then(|c| (**c).downcast_ref::<SnapshotRun>())
        else {
            return;
        };
        let path = state.values.text("path").unwrap_or("").trim();
        let shown = matches!(&run.output.path, Source::File(p) if p == path);
        if path.is_empty() || !shown {
            return;
        }
        let p = Path::new(path);
        if self.recent.first().map(PathBuf::as_path) != Some(p) {
            self.remember(p);
        }
    }
}

/// "Drop to open" over the whole window while files are dragged over it.
fn drop_hint(ctx: &egui::Context, zh: bool) {
    let painter = ctx.layer_painter(egui::LayerId::new(
        egui::Order::Foreground,
        egui::Id::unique("snapshot-drop-hint"),
    ));
    let rect = ctx.content_rect();
    painter.rect_filled(rect, 0.0, egui::Color32::from_black_alpha(150));
    painter.text(
        rect.center(),
        egui::Align2::CENTER_CENTER,
        if zh {
            "松开鼠标，打开这个内存快照（.pickle）"
        } else {
            "Drop a memory snapshot (.pickle) to open it"
        },
        egui::FontId::proportional(24.0),
        egui::Color32::WHITE,
    );
}
