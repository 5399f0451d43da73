//! Editing the kernel in the window: the source in a code editor with the same highlighting;
//! *Save and run* writes it to a file (the user's own file, or a copy of a bundled example in
//! [`KERNEL_FOLDER`]) and sets the `source` parameter to that file, so the window recomputes it
//! off the UI thread like any parameter change — and keeps the last good result, with the
//! error on the left, while the text does not parse.

use std::path::PathBuf;

use warpscope_core::lab::examples::EXAMPLES;
use warpscope_core::params::ParamValue;
use warpscope_core::text::Text;

use super::LabShown;
use crate::i18n::{pick, tr};
use crate::trf;
use crate::views::ViewContext;

/// Where an edited bundled example is saved (relative to the working directory, like the
/// window's figure and session folders).
pub const KERNEL_FOLDER: &str = "warpscope-kernels";

/// The editor's state: the text being edited (none: not editing) and what the last save did.
#[derive(Debug, Clone, Default)]
pub struct Editor {
    /// The text being edited; `None` while the listing is shown instead.
    pub draft: Option<String>,
    /// What the last *Save and run* did (where it wrote, or why it could not).
    pub message: Option<Text>,
    /// The draft last checked and where it fails to parse or validate, if it does: core's
    /// parser runs once per edit, not once per frame.
    checked: Option<(String, Option<SourceProblem>)>,
}

/// Where an edited source fails to parse or validate, as core's parser says.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceProblem {
    /// 1-based line (0: naga gave no place).
    pub line: u32,
    /// The message in both languages, with the line and column.
    pub text: Text,
}

/// Where `source` fails to parse or validate (core's parser, naga).
fn check_source(source: &str) -> Option<SourceProblem> {
    warpscope_core::lab::module::parse(source)
        .err()
        .map(|e| SourceProblem {
            line: e.line,
            text: e.text(),
        })
}

/// The file an edit of `name` (the `source` parameter) is saved to: the user's own file, with
/// `~` expanded, or `KERNEL_FOLDER/NAME.wgsl` for a bundled example.
pub fn save_path(name: &str) -> PathBuf {
    if EXAMPLES.iter().any(|e| e.name == name) {
        return PathBuf::from(KERNEL_FOLDER).join(format!("{name}.wgsl"));
    }
    match (name.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(name),
    }
}

/// Writes `text` to `path` (creating its folder).
fn save(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, text)
}

/// The whole text laid out as WGSL, line by line, line `error` (1-based) underlined.
fn highlighted(
    ui: &egui::Ui,
    text: &str,
    wrap_width: f32,
    error: Option<u32>,
) -> egui::text::LayoutJob {
    let font = egui::TextStyle::Monospace.resolve(ui.style());
    let dark = ui.visuals().dark_mode;
    let plain = ui.visuals().text_color();
    let mut job = egui::text::LayoutJob::default();
    let mut in_block = false;
    for (k, line) in text.split('\n').enumerate() {
        if k > 0 {
            job.append("\n", 0.0, egui::TextFormat::simple(font.clone(), plain));
        }
        let underline = (error == Some(k as u32 + 1)).then_some(crate::widgets::VERMILLION);
        in_block =
            super::wgsl::append_line(&mut job, line, in_block, &font, dark, plain, underline);
    }
    job.wrap.max_width = wrap_width;
    job
}

/// The *Edit source* button, or the editor with *Save and run*, *Reload* and *Close*; returns
/// whether the editor is open (the listing is then not drawn).
pub fn ui(
    ui: &mut egui::Ui,
    editor: &mut Editor,
    shown: &LabShown,
    cx: &mut ViewContext<'_>,
) -> bool {
    if crate::widgets::stepper::figure_mode(ui.ctx()) {
        return false;
    }
    let path = save_path(&shown.name);
    let example = EXAMPLES.iter().any(|e| e.name == shown.name);
    let mut save_now = false;
    ui.horizontal_wrapped(|ui| {
        match editor.draft {
            None => {
                if ui
                    .button(tr(ui, "Edit source", "编辑源码"))
                    .on_hover_text(tr(
                        ui,
                        "Edit the kernel here; Save and run writes it to a file and reruns the simulation",
                        "在这里编辑内核；“保存并运行”把它写入文件并重新模拟",
                    ))
                    .clicked()
                {
                    editor.draft = Some(shown.source.to_string());
                }
            }
            Some(_) => {
                save_now = ui
                    .button(tr(ui, "Save and run", "保存并运行"))
                    .on_hover_text(trf!(
                        ui,
                        "Write the text to {} and simulate it",
                        "把文本写入 {} 并模拟",
                        path.display()
                    ))
                    .clicked();
                if ui
                    .button(tr(ui, "Close editor", "关闭编辑器"))
                    .on_hover_text(tr(
                        ui,
                        "Back to the listing with its per-line counters (unsaved edits are dropped)",
                        "回到带每行计数的源码（未保存的修改会丢弃）",
                    ))
                    .clicked()
                {
                    editor.draft = None;
                }
            }
        }
        if !example
            && ui
                .button(tr(ui, "Reload file", "重新读取文件"))
                .on_hover_text(tr(
                    ui,
                    "Read the file again (after editing it in another editor) and rerun",
                    "重新读取文件（在别的编辑器里改过之后）并重新运行",
                ))
                .clicked()
        {
            cx.set_values
                .push(("source", ParamValue::Text(shown.name.clone())));
        }
        if let Some(m) = &editor.message {
            ui.label(pick(ui, m));
        }
    });
    let Some(draft) = editor.draft.as_mut() else {
        return false;
    };
    if editor.checked.as_ref().is_none_or(|(t, _)| t != draft) {
        editor.checked = Some((draft.clone(), check_source(draft)));
    }
    let problem = editor.checked.as_ref().and_then(|(_, p)| p.clone());
    let error_line = problem.as_ref().map(|p| p.line).filter(|l| *l > 0);
    let mut layouter = |ui: &egui::Ui, text: &dyn egui::TextBuffer, wrap_width: f32| {
        let job = highlighted(ui, text.as_str(), wrap_width, error_line);
        ui.fonts_mut(|f| f.layout_job(job))
    };
    ui.add(
        egui::TextEdit::multiline(draft)
            .code_editor()
            .desired_width(f32::INFINITY)
            .desired_rows(shown.source.lines().count().clamp(8, 40))
            .layouter(&mut layouter),
    );
    if let Some(p) = &problem {
        ui.colored_label(
            ui.visuals().error_fg_color,
            egui::RichText::new(pick(ui, &p.text)).monospace(),
        );
        ui.label(
            egui::RichText::new(tr(
                ui,
                "Until it runs, the figures below are those of the last source that ran.",
                "在源码能运行之前，显示的仍是上一次成功运行的结果。",
            ))
            .small(),
        );
    }
    if save_now {
        let text = draft.clone();
        editor.message = Some(match save(&path, &text) {
            Ok(()) => {
                let p = path.display().to_string();
                cx.set_values.push(("source", ParamValue::Text(p.clone())));
                Text::new(
                    format!("Saved to {p}; simulating it."),
                    format!("已保存到 {p}；正在模拟。"),
                )
            }
            Err(e) => Text::new(
                format!("Could not save to {}: {e}", path.display()),
                format!("无法保存到 {}：{e}", path.display()),
            ),
        });
    }
    true
}
