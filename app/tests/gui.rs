//! GUI tests through the accessibility tree (no GPU needed) and image snapshots rendered on a
//! real wgpu adapter (lavapipe in CI; skipped with the reason elsewhere when there is none).

use egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use warpscope::gui::WarpscopeApp;

fn harness(scene: &str) -> Harness<'static, WarpscopeApp> {
    let mut app = WarpscopeApp::new(Some(scene));
    app.synchronous = true;
    Harness::builder()
        .with_size(egui::vec2(1400.0, 900.0))
        .build_ui_state(|ui, app: &mut WarpscopeApp| app.show(ui), app)
}

fn pos(h: &mut Harness<'_, WarpscopeApp>) -> usize {
    h.state_mut()
        .state("reduction")
        .map_or(usize::MAX, |s| s.stepper.pos)
}

#[test]
fn reductions_scene_moves_a_slider_and_steps() {
    let mut h = harness("reduction");
    h.run();
    // The lecture default: 256 threads, 2 values → 2 vs 4 barriers.
    h.get_by_label_contains("K values together (2 barriers)");
    h.get_by_label_contains("one after the other (4 barriers)");
    // Move the "values reduced per thread" slider to 3: the sequential run now needs 6.
    h.get_by_role_and_label(Role::Slider, "values reduced per thread (K)")
        .set_value_accesskit(3.0);
    h.run();
    h.get_by_label_contains("one after the other (6 barriers)");
    assert_eq!(pos(&mut h), 0);
    h.get_by_label("Step event >").click();
    h.run();
    h.get_by_label("Step event >").click();
    h.run();
    assert_eq!(pos(&mut h), 2);
    h.get_by_label("< Back").click();
    h.run();
    assert_eq!(pos(&mut h), 1);
    // → on the keyboard steps too.
    h.key_press(egui::Key::ArrowRight);
    h.run();
    assert_eq!(pos(&mut h), 2);
    // Jump to the first barrier: the event shown is a bar.sync.
    h.get_by_label("Next barrier >|").click();
    h.run();
    h.get_by_label_contains("bar.sync #1");
    // Step warp leaves warp 0.
    h.get_by_label("|< Restart").click();
    h.run();
    h.get_by_label("Step warp >>").click();
    h.run();
    h.get_by_label_contains("warp 1 ·");
}

#[test]
fn invalid_parameter_shows_the_message_and_keeps_the_result() {
    let mut h = harness("reduction");
    h.run();
    // 16 warps of 8 lanes cannot be reduced by one warp: the message names the rule.
    h.get_by_role_and_label(Role::ComboBox, "warp width (lanes)")
        .click();
    h.run();
    h.get_by_label("8").click();
    h.run();
    h.get_by_label_contains("expected at most 64");
    // The last good result (warp 32) is still drawn.
    h.get_by_label_contains("K values together (2 barriers)");
}

#[test]
fn navigator_lists_unbuilt_scenes_honestly() {
    let mut h = harness("banks");
    h.run();
    h.get_by_label_contains("worst conflict degree");
    h.get_by_label_contains("32-way");
    for id in warpscope::gui::CHAPTERS.iter().flat_map(|c| c.2.iter()) {
        if warpscope_core::scene::find(id).is_err() {
            h.get_by_label(&format!("{id} (not built yet)"));
        }
    }
}

/// Whether a wgpu adapter exists; in CI its absence is a failure, elsewhere a skip.
fn adapter_or_skip() -> bool {
    let instance =
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let found = !pollster_block(instance.enumerate_adapters(wgpu::Backends::all())).is_empty();
    if !found {
        assert!(
            !warpscope_kernels::adapter_required(),
            "CI must provide a GPU adapter (lavapipe) for image snapshots"
        );
        eprintln!("skipped: no adapter (no Vulkan/GL driver), image snapshot not rendered");
    }
    found
}

fn pollster_block<F: std::future::Future>(f: F) -> F::Output {
    pollster::block_on(f)
}

#[test]
fn reductions_scene_snapshot() {
    if !adapter_or_skip() {
        return;
    }
    let mut app = WarpscopeApp::new(Some("reduction"));
    app.synchronous = true;
    let mut h = Harness::builder()
        .with_size(egui::vec2(1400.0, 900.0))
        .wgpu()
        .build_ui_state(|ui, app: &mut WarpscopeApp| app.show(ui), app);
    h.run();
    // Stop mid-butterfly: the first three levels of warp 0's first sum are filled.
    for _ in 0..6 {
        h.get_by_label("Step event >").click();
        h.run();
    }
    h.snapshot("reduction");
}

#[test]
fn banks_scene_snapshot() {
    if !adapter_or_skip() {
        return;
    }
    let mut app = WarpscopeApp::new(Some("banks"));
    app.synchronous = true;
    let mut h = Harness::builder()
        .with_size(egui::vec2(1400.0, 900.0))
        .wgpu()
        .build_ui_state(|ui, app: &mut WarpscopeApp| app.show(ui), app);
    h.run();
    h.snapshot("banks");
}

#[test]
fn every_scene_opens_and_draws_its_result() {
    for s in warpscope_core::scene::scenes() {
        let mut h = harness(s.id);
        h.run();
        let state = h.state_mut().state(s.id).expect("registered");
        assert!(state.error.is_none(), "{}: {:?}", s.id, state.error);
        assert!(state.computed.is_some(), "{}", s.id);
    }
}

/// Renders `scene` at its defaults after `steps` clicks on "Step event >" and compares it with
/// the checked-in snapshot.
fn snapshot_scene(scene: &str, steps: usize) {
    if !adapter_or_skip() {
        return;
    }
    let mut app = WarpscopeApp::new(Some(scene));
    app.synchronous = true;
    let mut h = Harness::builder()
        .with_size(egui::vec2(1400.0, 900.0))
        .wgpu()
        .build_ui_state(|ui, app: &mut WarpscopeApp| app.show(ui), app);
    h.run();
    for _ in 0..steps {
        h.get_by_label("Step event >").click();
        h.run();
    }
    h.snapshot(scene);
}

#[test]
fn softmax_warp_snapshot() {
    snapshot_scene("softmax-warp", 4);
}

#[test]
fn softmax_fusion_snapshot() {
    snapshot_scene("softmax-fusion", 0);
}

#[test]
fn snapshot_layernorm_syncs() {
    snapshot_scene("layernorm-syncs", 8);
}

#[test]
fn snapshot_layernorm_bytes() {
    snapshot_scene("layernorm-bytes", 0);
}

#[test]
fn snapshot_layernorm_error() {
    snapshot_scene("layernorm-error", 0);
}

#[test]
fn snapshot_layernorm_dgamma() {
    snapshot_scene("layernorm-dgamma", 40);
}

#[test]
fn snapshot_trainer_census() {
    snapshot_scene("trainer-census", 0);
}

#[test]
fn snapshot_trainer_workspace() {
    snapshot_scene("trainer-workspace", 0);
}

#[test]
fn snapshot_trainer_fp16() {
    snapshot_scene("trainer-fp16", 0);
}
