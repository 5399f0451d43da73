//! The parameter panel every scene gets for free: one control per [`ParamSpec`] — a slider for
//! numbers (logarithmic where the spec says so), a drop-down for choices, a text field for text.

use warpscope_core::params::{ParamKind, ParamSpec, ParamValue, ParamValues};

use crate::i18n::tr;

/// Draws the controls; returns true when a value changed. `error` (from the last computation)
/// is shown under the control it names.
pub fn panel(
    ui: &mut egui::Ui,
    specs: &[ParamSpec],
    values: &mut ParamValues,
    error: Option<&super::ErrorEntry>,
    zh: bool,
) -> bool {
    let mut changed = false;
    let before = values.clone();
    for spec in specs {
        let current = values
            .0
            .get(spec.name)
            .cloned()
            .unwrap_or_else(|| spec.default_value());
        let mut next = current.clone();
        // Long captions wrap inside the panel's fixed width instead of widening it.
        let label = ui.add(egui::Label::new(spec.label.get(zh)).wrap()).id;
        match (&spec.kind, &mut next) {
            (ParamKind::Int { min, max, log, .. }, ParamValue::Int(v)) => {
                // Only the values the scene accepts with the other parameters as they are.
                let (lo, hi) = spec.int_range(&before).unwrap_or((*min, *max));
                ui.add(
                    egui::Slider::new(v, lo..=hi)
                        .logarithmic(*log)
                        .clamping(egui::SliderClamping::Always),
                )
                .labelled_by(label);
            }
            (ParamKind::Float { min, max, log, .. }, ParamValue::Float(v)) => {
                ui.add(
                    egui::Slider::new(v, *min..=*max)
                        .logarithmic(*log)
                        .clamping(egui::SliderClamping::Always),
                )
                .labelled_by(label);
            }
            (ParamKind::Choice { options, .. }, ParamValue::Text(v)) => {
                egui::ComboBox::from_id_salt(spec.name)
                    .width(120.0)
                    .selected_text(v.clone())
                    .show_ui(ui, |ui| {
                        for o in *options {
                            ui.selectable_value(v, (*o).to_owned(), *o);
                        }
                    })
                    .response
                    .labelled_by(label);
            }
            (ParamKind::Text { .. }, ParamValue::Text(v)) => {
                let id = ui.make_persistent_id(("text-param", spec.name));
                // The draft and the value it started from: a value set from elsewhere (a file
                // opened or dropped, a session) replaces a stale draft.
                let mut draft = ui
                    .data_mut(|d| d.get_temp::<(String, String)>(id))
                    .filter(|(_, base)| base == v)
                    .map_or_else(|| v.clone(), |(draft, _)| draft);
                let r = ui
                    .add(
                        egui::TextEdit::singleline(&mut draft)
                            // As wide as the panel, never wider: a long value scrolls inside.
                            .desired_width(ui.available_width())
                            .hint_text(spec.label.get(zh)),
                    )
                    .labelled_by(label);
                if r.lost_focus() && draft != *v {
                    *v = draft.clone();
                }
                let base = v.clone();
                ui.data_mut(|d| d.insert_temp(id, (draft, base)));
            }
            _ => {
                next = spec.default_value();
            }
        }
        if let Some(err) = error
            && err.param == spec.name
        {
            ui.colored_label(ui.visuals().error_fg_color, err.message(zh));
        }
        ui.add_space(4.0);
        if next != current {
            values.0.insert(spec.name.to_owned(), next);
            changed = true;
        }
    }
    if ui
        .button(if zh {
            "讲义默认值"
        } else {
            "Lecture defaults"
        })
        .on_hover_text(if zh {
            "把每个参数恢复成讲义里的值"
        } else {
            "Reset every parameter to the lecture's value"
        })
        .clicked()
    {
        *values = ParamValues::defaults(specs);
        changed = true;
    }
    changed
}

/// The parameter panel's width, points, margins included: fixed, so no caption, value or
/// message can widen it and squeeze the scene's picture (it would stay wide on every scene).
pub const PANEL_WIDTH: f32 = 250.0;

/// The window's parameter panel for `state`: the scene's summary, its controls with their
/// errors, the progress of a running computation with its Cancel button, then the scene's
/// examples and input editor ([`super::input`]; `dialogs`: whether a native file dialog may be
/// shown).
pub fn side_panel(ui: &mut egui::Ui, state: &mut super::SceneState, zh: bool, dialogs: bool) {
    egui::ScrollArea::vertical().show(ui, |ui| {
        ui.heading(tr(ui, "Parameters", "参数"));
        ui.label(egui::RichText::new(crate::i18n::pick(ui, &state.scene.summary)).small());
        ui.separator();
        if panel(
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
        if let Some((started, fraction)) = state.running() {
            let secs = started.elapsed().as_secs_f32();
            let mut cancel = false;
            // Wrapped: bar, time and Cancel stay inside the panel's fixed width.
            ui.horizontal_wrapped(|ui| {
                match fraction {
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
        super::input::panel(ui, state, zh, dialogs);
    });
}
