//! The parameter panel's *Examples* and *Your input* sections.
//!
//! - *Examples*: the scene's bundled presets ([`warpscope_core::presets`]), each with its one
//!   sentence of what it shows; a click loads its parameters and its input.
//! - *Your input*: a JSON editor for scenes that take one (`--input FILE.json` on the command
//!   line), with *Apply*, *Example* (the scene's [`warpscope_core::scene::InputSpec::example`]),
//!   *Clear* (back to the scene's own data), *Load…* and *Save…* (a native dialog on its own
//!   thread, so the window never freezes; without one, the path typed into the field), the keys
//!   the scene takes, and what was wrong with the last text applied. A refusal by the scene (a
//!   ragged row, a NaN) shows under the editor, naming the key, and the last good picture stays.

use std::path::PathBuf;
use std::sync::{Arc, mpsc};

use warpscope_core::input::json;
use warpscope_core::scene::InputSpec;
use warpscope_core::text::Text;

use super::SceneState;
use crate::i18n::tr;

/// Which file dialog is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dialog {
    Load,
    Save,
}

/// One scene's input editor: the text being edited, the path field, the last message and a
/// file dialog that may be open.
#[derive(Debug, Default)]
pub struct InputEditor {
    /// The JSON being edited (not applied until *Apply*).
    pub text: String,
    /// The file *Load…* and *Save…* use when no dialog can be shown.
    pub path: String,
    /// What the last action said, in both languages.
    pub message: Option<Text>,
    dialog: Option<(mpsc::Receiver<Option<PathBuf>>, Dialog)>,
    /// A typed path whose existing input file *Save…* was asked to replace once: a second
    /// *Save…* to the same path replaces it.
    replace: Option<PathBuf>,
}

/// `v` as the editor shows it.
fn pretty(v: &serde_json::Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// A preset's name without its scene's prefix, spaced: `one-pass-large-mean` → `one pass large
/// mean`.
fn preset_label(scene: &str, name: &str) -> String {
    name.strip_prefix(scene)
        .map(|n| n.trim_start_matches('-'))
        .filter(|n| !n.is_empty())
        .unwrap_or(name)
        .replace(['-', '_'], " ")
}

/// Draws the *Examples* and *Your input* sections for `state`; `dialogs`: whether a native file
/// dialog may be shown (the window, not tests).
pub fn panel(ui: &mut egui::Ui, state: &mut SceneState, zh: bool, dialogs: bool) {
    examples(ui, state, zh);
    if let Some(spec) = state.scene.input {
        poll_dialog(state);
        editor(ui, state, spec, zh, dialogs);
    }
}

/// The scene's bundled presets, one button each with its note.
fn examples(ui: &mut egui::Ui, state: &mut SceneState, zh: bool) {
    let presets = warpscope_core::presets::for_scene(state.scene.id);
    if presets.is_empty() {
        return;
    }
    ui.separator();
    ui.label(egui::RichText::new(tr(ui, "Examples", "示例")).strong());
    for p in presets {
        let label = p.session.title.as_ref().map_or_else(
            || preset_label(state.scene.id, p.name),
            |t| crate::widgets::marks::plain(t.get(zh)).into_owned(),
        );
        let clicked = ui
            .button(label)
            .on_hover_text(format!("assets/presets/{}.json", p.name))
            .clicked();
        if let Some(note) = &p.session.note {
            // Wrapped in the panel's width: combining marks in their plain form (x̂ as xˆ).
            let text = crate::widgets::marks::plain(note.get(zh)).into_owned();
            ui.add(egui::Label::new(egui::RichText::new(text).small()).wrap());
        }
        if clicked {
            state.values = p.session.params.clone();
            state.dirty = true;
            state.stepper.pos = p.session.step.unwrap_or(0);
            state.editor.text = p.session.input.as_ref().map(pretty).unwrap_or_default();
            state.editor.message = None;
            state.set_input(p.session.input.clone().map(Arc::new));
        }
        ui.add_space(2.0);
    }
}

/// The JSON editor and its buttons.
fn editor(ui: &mut egui::Ui, state: &mut SceneState, spec: &InputSpec, zh: bool, dialogs: bool) {
    ui.separator();
    let header = egui::CollapsingHeader::new(tr(ui, "Your input (JSON)", "你的输入（JSON）"))
        .id_salt(("input-editor", state.scene.id))
        .default_open(true);
    header.show(ui, |ui| {
        ui.label(
            egui::RichText::new(if state.input.is_some() {
                tr(
                    ui,
                    "The picture is computed on your input.",
                    "图是用你的输入算出来的。",
                )
            } else {
                tr(
                    ui,
                    "The picture is computed on the scene's own data; Apply a JSON input to use yours.",
                    "图是用场景自己的数据算出来的；点“应用”改用你的 JSON 输入。",
                )
            })
            .small(),
        );
        // Prefilled with the example only where it fits the parameters as they are (reduction's
        // needs threads = 8: *Example* sets that too).
        if state.editor.text.is_empty() {
            if let Some(i) = state.input.as_deref() {
                state.editor.text = pretty(i);
            } else if spec.example_params.is_empty() {
                state.editor.text = spec.example.to_owned();
            }
        }
        let name = ui.label(tr(ui, "Input JSON", "输入的 JSON")).id;
        egui::ScrollArea::vertical()
            .id_salt("input-text")
            .max_height(180.0)
            .show(ui, |ui| {
                ui.add(
                    egui::TextEdit::multiline(&mut state.editor.text)
                        .hint_text(tr(
                            ui,
                            "press Example for a small valid input",
                            "点“示例输入”得到一个小的有效输入",
                        ))
                        .code_editor()
                        .desired_rows(6)
                        .desired_width(ui.available_width()),
                )
                .labelled_by(name);
            });
        let busy = state.editor.dialog.is_some();
        ui.horizontal_wrapped(|ui| {
            if ui
                .button(tr(ui, "Apply", "应用"))
                .on_hover_text(tr(ui, "Compute the scene on this input", "用这个输入计算场景"))
                .clicked()
            {
                apply_text(state);
            }
            if ui
                .button(tr(ui, "Example", "示例输入"))
                .on_hover_text(tr(ui, "Put a small valid input in the editor", "在编辑框里放一个小的有效输入"))
                .clicked()
            {
                state.editor.text = spec.example.to_owned();
                state.editor.message = None;
                // The parameters the example needs (reduction's 8 values: threads = 8).
                for (name, value) in spec.example_params {
                    if state.values.set(state.scene.params, name, value).is_ok() {
                        state.dirty = true;
                    }
                }
            }
            if ui
                .add_enabled(state.input.is_some(), egui::Button::new(tr(ui, "Clear", "清除")))
                .on_hover_text(tr(ui, "Back to the scene's own data", "回到场景自己的数据"))
                .clicked()
            {
                state.set_input(None);
                state.editor.message = None;
            }
            for (label, kind) in [
                (tr(ui, "Load…", "载入…"), Dialog::Load),
                (tr(ui, "Save…", "保存…"), Dialog::Save),
            ] {
                if ui.add_enabled(!busy, egui::Button::new(label)).clicked() {
                    if dialogs && super::save::dialog_available() {
                        open_dialog(ui.ctx(), &mut state.editor, kind);
                    } else if state.editor.path.trim().is_empty() {
                        state.editor.message = Some(Text::new(
                            "No file dialog here: type the file's path into the field below.".into(),
                            "这里没有文件对话框：在下面的输入框里输入文件路径。".into(),
                        ));
                    } else {
                        let path = warpscope_core::torch::snapshot::expand_home(
                            state.editor.path.trim(),
                        );
                        file_action(state, kind, path, false);
                    }
                }
            }
        });
        ui.add(
            egui::TextEdit::singleline(&mut state.editor.path)
                .desired_width(ui.available_width())
                .hint_text(tr(ui, "file path (Load / Save)", "文件路径（载入 / 保存）")),
        );
        if let Some(m) = &state.editor.message {
            ui.add(egui::Label::new(egui::RichText::new(m.get(zh)).small()).wrap());
        }
        ui.collapsing(tr(ui, "Keys", "键"), |ui| {
            ui.add(egui::Label::new(egui::RichText::new(spec.keys.get(zh)).small().monospace()).wrap());
        });
    });
}

/// Parses the editor's text and, when it is a JSON object, computes the scene on it.
fn apply_text(state: &mut SceneState) {
    match json::parse(state.editor.text.as_bytes()) {
        Ok(v) => {
            state.editor.message = None;
            state.set_input(Some(Arc::new(v)));
        }
        Err(e) => {
            state.editor.message = Some(Text::new(
                format!("Not applied: {e}"),
                format!("没有应用：{e}"),
            ));
        }
    }
}

/// Loads `path` into the editor and applies it, or saves the editor's text to it. An existing
/// file is replaced only when it is itself an input file (a JSON object within the size limit)
/// — a notes file or anything else is never overwritten — and, for a typed path
/// (`confirmed` false), only on a second *Save…* to the same path.
fn file_action(state: &mut SceneState, kind: Dialog, path: PathBuf, confirmed: bool) {
    let shown = path.display().to_string();
    state.editor.path = shown.clone();
    if kind == Dialog::Save && std::fs::symlink_metadata(&path).is_ok() {
        let asked = state.editor.replace.take();
        if json::read(&path).is_err() {
            state.editor.message = Some(Text::new(
                format!(
                    "Not saved: {shown} exists and is not a JSON input file; it is left as it is. Choose another name."
                ),
                format!(
                    "没有保存：{shown} 已存在，且不是 JSON 输入文件；保持原样。请换一个文件名。"
                ),
            ));
            return;
        }
        if !confirmed && asked.as_ref() != Some(&path) {
            state.editor.message = Some(Text::new(
                format!("{shown} exists: press Save… again to replace it."),
                format!("{shown} 已存在：再按一次「保存…」替换它。"),
            ));
            state.editor.replace = Some(path);
            return;
        }
    }
    state.editor.message = Some(match kind {
        Dialog::Load => match json::read(&path) {
            Ok(v) => {
                state.editor.text = pretty(&v);
                state.set_input(Some(Arc::new(v)));
                Text::new(format!("Loaded {shown}"), format!("已载入 {shown}"))
            }
            Err(e) => Text::new(format!("Not loaded: {e}"), format!("没有载入：{e}")),
        },
        Dialog::Save => {
            match crate::export::write_atomically(&path, state.editor.text.as_bytes()) {
                Ok(()) => {
                    let p = path.canonicalize().unwrap_or(path);
                    let p = p.display();
                    Text::new(format!("Saved {p}"), format!("已保存 {p}"))
                }
                Err(e) => Text::new(format!("Saving failed: {e}"), format!("保存失败：{e}")),
            }
        }
    });
}

/// Opens the Load or Save dialog on its own thread.
fn open_dialog(ctx: &egui::Context, editor: &mut InputEditor, kind: Dialog) {
    let (tx, rx) = mpsc::channel();
    let ctx = ctx.clone();
    let spawned = std::thread::Builder::new()
        .name("input dialog".into())
        .spawn(move || {
            let dialog = rfd::FileDialog::new()
                .add_filter("JSON", &["json"])
                .add_filter("All files", &["*"]);
            let answer = match kind {
                Dialog::Load => dialog.set_title("Load an input").pick_file(),
                Dialog::Save => dialog
                    .set_title("Save the input")
                    .set_file_name("input.json")
                    .save_file(),
            };
            let _ = tx.send(answer);
            ctx.request_repaint();
        });
    match spawned {
        Ok(_) => editor.dialog = Some((rx, kind)),
        Err(e) => {
            editor.message = Some(Text::new(
                format!("Could not open the file dialog: {e}"),
                format!("无法打开文件对话框：{e}"),
            ))
        }
    }
}

/// Acts on a dialog that closed.
fn poll_dialog(state: &mut SceneState) {
    let Some((rx, kind)) = &state.editor.dialog else {
        return;
    };
    let kind = *kind;
    let answer = match rx.try_recv() {
        Err(mpsc::TryRecvError::Empty) => return,
        Ok(a) => a,
        Err(mpsc::TryRecvError::Disconnected) => None,
    };
    state.editor.dialog = None;
    match answer {
        // The dialog itself asked before choosing an existing file.
        Some(path) => file_action(state, kind, path, true),
        None => {
            state.editor.message = Some(Text::new(
                "No file chosen (cancelled, or no dialog could be shown): you can type the path into the field above.".into(),
                "没有选择文件（已取消，或无法显示对话框）：也可以在上面的输入框里输入路径。".into(),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preset_labels_drop_the_scene_and_space_the_words() {
        assert_eq!(
            preset_label(
                "layernorm-formulas",
                "layernorm-formulas-one-pass-large-mean"
            ),
            "one pass large mean"
        );
        assert_eq!(preset_label("banks", "other-thing"), "other thing");
    }

    #[test]
    fn a_bad_text_is_not_applied_and_says_why() {
        let scene = warpscope_core::scene::find("banks").expect("registered");
        let mut st = SceneState::new(scene);
        st.editor.text = "{\"x\": ".into();
        apply_text(&mut st);
        assert!(st.input.is_none());
        let m = st.editor.message.as_ref().expect("a message");
        assert!(
            m.en.contains("Not applied") && m.en.contains("JSON"),
            "{}",
            m.en
        );
        st.editor.text = "{\"byte_addresses\": [0]}".into();
        apply_text(&mut st);
        assert!(st.input.is_some() && st.editor.message.is_none());
    }

    #[test]
    fn save_never_replaces_a_file_that_is_not_an_input_and_asks_before_replacing_one() {
        let dir = tempfile::tempdir().expect("temp dir");
        let scene = warpscope_core::scene::find("banks").expect("registered");
        let mut st = SceneState::new(scene);
        st.editor.text = "{\"byte_addresses\": [0]}".into();
        // A notes file is never replaced, however often Save… is pressed.
        let notes = dir.path().join("notes.txt");
        std::fs::write(&notes, "my notes\n").expect("writes");
        for _ in 0..2 {
            file_action(&mut st, Dialog::Save, notes.clone(), false);
            assert_eq!(
                std::fs::read_to_string(&notes).expect("reads"),
                "my notes\n"
            );
        }
        assert!(
            st.editor
                .message
                .as_ref()
                .expect("says")
                .en
                .starts_with("Not saved")
        );
        // Nor through a dialog.
        file_action(&mut st, Dialog::Save, notes.clone(), true);
        assert_eq!(
            std::fs::read_to_string(&notes).expect("reads"),
            "my notes\n"
        );
        // An earlier input: the first Save… asks, the second replaces.
        let old = dir.path().join("old.json");
        std::fs::write(&old, "{\"expression\": \"lane\"}").expect("writes");
        file_action(&mut st, Dialog::Save, old.clone(), false);
        assert_eq!(
            std::fs::read_to_string(&old).expect("reads"),
            "{\"expression\": \"lane\"}"
        );
        assert!(
            st.editor
                .message
                .as_ref()
                .expect("asks")
                .en
                .contains("again to replace")
        );
        file_action(&mut st, Dialog::Save, old.clone(), false);
        assert_eq!(
            std::fs::read_to_string(&old).expect("reads"),
            st.editor.text
        );
        // A new file is written at once.
        let new = dir.path().join("new.json");
        file_action(&mut st, Dialog::Save, new.clone(), false);
        assert_eq!(
            std::fs::read_to_string(&new).expect("reads"),
            st.editor.text
        );
    }
}
