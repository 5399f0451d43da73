//! The window's *Export PNG*, *Export SVG* and *Save session*: a native save dialog (rfd: the
//! XDG desktop portal, or zenity) on its own thread so the window never freezes, or — when no
//! dialog can be shown (no portal, no zenity, no display: tests and CI) — the default folders.
//! Either way the message says exactly where the file went.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use warpscope_core::params::ParamValues;
use warpscope_core::scene::{Input, Scene};

use warpscope_core::text::Text;

use crate::export::FigureOptions;
use crate::i18n::Lang;

/// What a save button writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SaveKind {
    /// The view as a PNG figure.
    Png,
    /// The view as an SVG figure.
    Svg,
    /// The scene, its parameters and step as a session file.
    Session,
}

impl SaveKind {
    /// The file extension.
    pub fn ext(self) -> &'static str {
        match self {
            SaveKind::Png => "png",
            SaveKind::Svg => "svg",
            SaveKind::Session => "json",
        }
    }
}

/// The result on screen and its view, in the state it was in (run shown, zoom, batch …).
pub struct Shown {
    /// The view's result.
    pub output: crate::views::Output,
    /// The view.
    pub view: Box<dyn crate::views::AnyView>,
}

impl Clone for Shown {
    fn clone(&self) -> Self {
        Shown {
            output: self.output.clone(),
            view: self.view.boxed_clone(),
        }
    }
}

/// Everything a save needs, taken when the button is clicked: the dialog may stay open while
/// the user moves a slider, and the file must hold what was on screen at the click.
#[derive(Clone)]
pub struct SaveRequest {
    /// What to write.
    pub kind: SaveKind,
    /// The scene shown.
    pub scene: &'static Scene,
    /// Its parameters.
    pub values: ParamValues,
    /// The user's input the scene was computed on, if any.
    pub input: Option<Input>,
    /// The stepper's event.
    pub step: usize,
    /// Figure options (theme, language, caption).
    pub opts: FigureOptions,
    /// PNG scale (1×, 2×, 3×).
    pub scale: f32,
    /// The folder used when no dialog is shown.
    pub folder: PathBuf,
    /// What the window showed; `None` computes the scene afresh at the view's first state.
    pub shown: Option<Shown>,
}

impl SaveRequest {
    /// The file name offered: the scene, the parameters that differ from the lecture's and the
    /// event ([`crate::export::file_stem`]), e.g. `banks-pad1.png`.
    pub fn file_name(&self) -> String {
        format!(
            "{}.{}",
            crate::export::file_stem(self.scene, &self.values, Some(self.step)),
            self.kind.ext()
        )
    }

    /// Writes into the default folder (created if missing) and says where the file went, in
    /// both languages (the notice follows the window's language after it is shown).
    pub fn write_to_default_folder(&self) -> Text {
        if let Err(e) = std::fs::create_dir_all(&self.folder) {
            let f = self.folder.display();
            return Text::new(
                format!("Could not create the folder {f}: {e}"),
                format!("无法创建文件夹 {f}：{e}"),
            );
        }
        // The same view saved twice shares a name: never overwrite an earlier file.
        let first = self.folder.join(self.file_name());
        let stem = first
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let ext = self.kind.ext();
        let path = std::iter::once(first.clone())
            .chain((2..1000).map(|n| self.folder.join(format!("{stem}-{n}.{ext}"))))
            .find(|p| !p.exists())
            .unwrap_or(first);
        self.write(&path)
    }

    /// Writes to `path` and says where the file went (or why it did not), in both languages.
    pub fn write(&self, path: &Path) -> Text {
        match self.kind {
            SaveKind::Session => {
                let session = warpscope_core::session::Session {
                    scene: self.scene.id.to_owned(),
                    params: self.values.clone(),
                    step: Some(self.step),
                    // The window's look, so reopening the session shows it as saved.
                    theme: Some(crate::theme::name(self.opts.theme).to_owned()),
                    lang: Some(
                        match self.opts.lang {
                            Lang::En => "en",
                            Lang::Zh => "zh",
                        }
                        .to_owned(),
                    ),
                    input: self.input.as_deref().cloned(),
                    note: None,
                    title: None,
                };
                match crate::export::write_atomically(path, session.to_json().as_bytes()) {
                    Ok(()) => {
                        let p = path.canonicalize().unwrap_or_else(|_| path.to_owned());
                        let p = p.display();
                        Text::new(
                            format!("Saved {p} — reopen with `warpscope gui --preset {p}`"),
                            format!("已保存 {p} — 用 `warpscope gui --preset {p}` 重新打开"),
                        )
                    }
                    Err(e) => Text::new(format!("Saving failed: {e}"), format!("保存失败：{e}")),
                }
            }
            SaveKind::Png | SaveKind::Svg => {
                // A name typed in the dialog without the extension still gets the format asked for.
                let path = if path.extension().is_none() {
                    path.with_extension(self.kind.ext())
                } else {
                    path.to_owned()
                };
                let written = match &self.shown {
                    Some(shown) => {
                        let mut state = crate::export::Prepared {
                            scene: self.scene,
                            values: self.values.clone(),
                            input: self.input.clone(),
                            output: shown.output.clone(),
                            view: shown.view.boxed_clone(),
                            stepper: crate::widgets::stepper::Stepper::default(),
                            gpu: crate::widgets::gpu::GpuPanel::default(),
                        };
                        crate::export::export_prepared(&mut state, &path, self.scale, &self.opts)
                    }
                    None => crate::export::export(
                        self.scene,
                        self.values.clone(),
                        self.input.clone(),
                        &path,
                        self.scale,
                        &self.opts,
                    ),
                };
                match written {
                    Ok(p) => Text::new(
                        format!("Saved {}", p.display()),
                        format!("已保存 {}", p.display()),
                    ),
                    Err(e) => Text::new(format!("Export failed: {e}"), format!("导出失败：{e}")),
                }
            }
        }
    }
}

/// Whether a save dialog can plausibly be shown: rfd's portal backend needs a D-Bus session
/// bus, its fallback needs zenity on the PATH.
pub fn dialog_available() -> bool {
    if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some() {
        return true;
    }
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join("zenity").is_file()))
}

/// A dialog answered sooner than this was not seen by anyone: rfd returns `None` at once when
/// neither the portal nor zenity answers, exactly as for a cancel, so only the time tells them
/// apart.
const NO_DIALOG_WITHIN: Duration = Duration::from_millis(300);

/// A save dialog open on its own thread.
pub struct PendingDialog {
    rx: mpsc::Receiver<Option<PathBuf>>,
    started: Instant,
    request: SaveRequest,
}

impl PendingDialog {
    /// Opens the save dialog for `request` on a background thread; `ctx` is repainted when it
    /// closes.
    ///
    /// # Errors
    /// The thread could not be started (the message to show).
    pub fn open(request: SaveRequest, ctx: &egui::Context) -> Result<Self, String> {
        let (tx, rx) = mpsc::channel();
        let ctx = ctx.clone();
        let (name, folder, ext) = (
            request.file_name(),
            request.folder.clone(),
            request.kind.ext(),
        );
        let start_in = std::path::absolute(&folder).unwrap_or(folder);
        std::thread::Builder::new()
            .name("save dialog".into())
            .spawn(move || {
                let mut dialog = rfd::FileDialog::new()
                    .set_file_name(name)
                    .add_filter(ext.to_uppercase(), &[ext]);
                if start_in.is_dir() {
                    dialog = dialog.set_directory(&start_in);
                }
                let _ = tx.send(dialog.save_file());
                ctx.request_repaint();
            })
            .map_err(|e| format!("could not open the save dialog: {e}"))?;
        Ok(PendingDialog {
            rx,
            started: Instant::now(),
            request,
        })
    }

    /// The message once the dialog has closed and the file is written (`None` while it is
    /// open). A dialog that could not be shown falls back to the default folder.
    pub fn poll(&self) -> Option<Text> {
        let answer = match self.rx.try_recv() {
            Ok(a) => a,
            Err(mpsc::TryRecvError::Empty) => return None,
            Err(mpsc::TryRecvError::Disconnected) => None,
        };
        Some(match answer {
            Some(path) => self.request.write(&path),
            None if self.started.elapsed() < NO_DIALOG_WITHIN => {
                self.request.write_to_default_folder()
            }
            None => Text::new(
                "Cancelled: nothing was written".to_owned(),
                "已取消：没有写入文件".to_owned(),
            ),
        })
    }
}
