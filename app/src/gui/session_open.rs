//! The banner's *Open session…*: a saved session (or a preset) chosen in a native file dialog
//! on its own thread, so the window never freezes; without a dialog, the message says how to
//! open one from the command line instead.

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use warpscope_core::session::Session;
use warpscope_core::text::Text;

/// A dialog answered sooner than this was not seen by anyone (rfd answers `None` at once when
/// no dialog can be shown, exactly as for a cancel).
const NO_DIALOG_WITHIN: Duration = Duration::from_millis(300);

/// The *Open session…* state: a dialog that may be open and the last message.
#[derive(Debug, Default)]
pub struct SessionOpener {
    dialog: Option<(mpsc::Receiver<Option<PathBuf>>, Instant)>,
    /// What the last attempt said, in both languages.
    pub message: Option<Text>,
}

/// Why no dialog can open a session, and what to do instead.
fn no_dialog() -> Text {
    Text::new(
        "No file dialog here: open a session with `warpscope gui --preset FILE.json`.".into(),
        "这里没有文件对话框：用 `warpscope gui --preset FILE.json` 打开会话。".into(),
    )
}

impl SessionOpener {
    /// Whether the dialog is open.
    pub fn busy(&self) -> bool {
        self.dialog.is_some()
    }

    /// Opens the dialog (when `dialogs` allows one and one can be shown).
    pub fn open(&mut self, ctx: &egui::Context, dialogs: bool, folder: PathBuf) {
        if !(dialogs && super::save::dialog_available()) {
            self.message = Some(no_dialog());
            return;
        }
        let (tx, rx) = mpsc::channel();
        let ctx = ctx.clone();
        let start_in = std::path::absolute(&folder).unwrap_or(folder);
        let spawned = std::thread::Builder::new()
            .name("session dialog".into())
            .spawn(move || {
                let mut dialog = rfd::FileDialog::new()
                    .set_title("Open a warpscope session")
                    .add_filter("warpscope session", &["json"])
                    .add_filter("All files", &["*"]);
                if start_in.is_dir() {
                    dialog = dialog.set_directory(&start_in);
                }
                let _ = tx.send(dialog.pick_file());
                ctx.request_repaint();
            });
        match spawned {
            Ok(_) => self.dialog = Some((rx, Instant::now())),
            Err(e) => {
                self.message = Some(Text::new(
                    format!("Could not open the file dialog: {e}"),
                    format!("无法打开文件对话框：{e}"),
                ))
            }
        }
    }

    /// The session chosen in a dialog that closed, read and checked; a file that is not a
    /// session leaves the window as it is and says why.
    pub fn poll(&mut self) -> Option<Session> {
        let (rx, started) = self.dialog.as_ref()?;
        let answer = match rx.try_recv() {
            Err(mpsc::TryRecvError::Empty) => return None,
            Ok(a) => a,
            Err(mpsc::TryRecvError::Disconnected) => None,
        };
        let quick = started.elapsed() < NO_DIALOG_WITHIN;
        self.dialog = None;
        match answer {
            Some(path) => self.read(&path),
            None => {
                self.message = Some(if quick {
                    no_dialog()
                } else {
                    Text::new(
                        "Cancelled: no session opened".into(),
                        "已取消：没有打开会话".into(),
                    )
                });
                None
            }
        }
    }

    /// Reads the session at `path`; on failure keeps the message.
    pub fn read(&mut self, path: &std::path::Path) -> Option<Session> {
        match warpscope_core::presets::read(path) {
            Ok(s) => {
                let p = path.display();
                self.message = Some(Text::new(format!("Opened {p}"), format!("已打开 {p}")));
                Some(s)
            }
            Err(e) => {
                self.message = Some(Text::new(
                    format!("Not opened: {e}"),
                    format!("没有打开：{e}"),
                ));
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_is_not_a_session_is_refused_with_its_reason() {
        let dir = std::env::temp_dir().join(format!("warpscope-sopen-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let bad = dir.join("bad.json");
        std::fs::write(&bad, b"{\"scene\": \"no-such-scene\"}").expect("write");
        let mut o = SessionOpener::default();
        assert!(o.read(&bad).is_none());
        let m = o.message.clone().expect("a message");
        assert!(
            m.en.starts_with("Not opened") && m.en.contains("no-such-scene"),
            "{}",
            m.en
        );
        let good = dir.join("good.json");
        std::fs::write(&good, b"{\"scene\": \"banks\", \"params\": {\"pad\": 1}}").expect("write");
        let s = o.read(&good).expect("a session");
        assert_eq!(
            (s.scene.as_str(), s.params.int("pad").ok()),
            ("banks", Some(1))
        );
        // Without a dialog the message says how to open one instead.
        o.open(&egui::Context::default(), false, dir.clone());
        assert!(!o.busy());
        assert!(o.message.expect("said").en.contains("--preset"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
