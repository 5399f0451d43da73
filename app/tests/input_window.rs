#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The window's Examples and Your input sections, *Figure only* and *Open session…*, driven
//! through the accessibility tree (no GPU needed).

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use warpscope::gui::WarpscopeApp;

fn harness(scene: &str) -> Harness<'static, WarpscopeApp> {
    let mut app = WarpscopeApp::new(Some(scene));
    app.synchronous = true;
    Harness::builder()
        .with_size(egui::vec2(1400.0, 1600.0))
        .build_ui_state(|ui, app: &mut WarpscopeApp| app.show(ui), app)
}

#[test]
fn a_preset_loads_its_input_and_clear_goes_back_to_the_scenes_own_data() {
    let mut h = harness("reduction");
    h.run();
    h.get_by_label_contains("computed on the scene's own data");
    // The bundled 48-thread example: one click sets its parameters and its values.
    h.get_by_label("a partial warp: 48 threads").click();
    h.run();
    h.run();
    let st = h.state_mut().state("reduction").expect("state");
    assert!(st.input.is_some(), "the preset's input is applied");
    assert_eq!(st.values.int("threads").ok(), Some(48));
    assert!(
        st.error.is_none(),
        "{:?}",
        st.error.as_ref().map(|e| e.message(false))
    );
    h.get_by_label_contains("computed on your input");
    h.get_by_label("Clear").click();
    h.run();
    assert!(
        h.state_mut()
            .state("reduction")
            .expect("state")
            .input
            .is_none()
    );
}

#[test]
fn a_bad_input_names_its_key_and_keeps_the_last_picture() {
    let mut h = harness("reduction");
    h.run();
    h.get_by_label("a partial warp: 48 threads").click();
    h.run();
    h.run();
    let before = h.state_mut().state("reduction").unwrap().computed.clone();
    assert!(before.is_some());
    // Three values for 48 threads: refused, naming `values`.
    let st = h.state_mut().state("reduction").unwrap();
    st.editor.text = "{\"values\": [1, 2, 3]}".into();
    // Typed text is on screen one frame later, before the click.
    h.run();
    h.get_by_label("Apply").click();
    h.run();
    h.run();
    let st = h.state_mut().state("reduction").unwrap();
    let message = st.error.as_ref().expect("refused").message(false);
    assert!(message.contains("values"), "{message}");
    assert!(std::sync::Arc::ptr_eq(
        st.computed.as_ref().unwrap(),
        before.as_ref().unwrap()
    ));
}

#[test]
fn figure_only_hides_every_control_and_esc_brings_them_back() {
    let mut h = harness("banks");
    h.run();
    h.get_by_label("Lecture defaults");
    h.get_by_label("Figure only").click();
    h.run();
    assert!(h.query_by_label("Lecture defaults").is_none());
    assert!(h.query_by_label("Export PNG").is_none());
    h.get_by_label_contains("worst conflict degree");
    h.key_press(egui::Key::Escape);
    h.run();
    h.get_by_label("Lecture defaults");
}

#[test]
fn open_session_without_a_dialog_says_how_instead() {
    let mut h = harness("banks");
    h.run();
    h.get_by_label("Open session…").click();
    h.run();
    h.get_by_label_contains("warpscope gui --preset FILE.json");
}
