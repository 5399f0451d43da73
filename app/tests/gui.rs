//! GUI tests through the accessibility tree (no GPU needed) and image snapshots rendered on a
//! real wgpu adapter (lavapipe in CI; skipped with the reason elsewhere when there is none).

// Test code: a failed expectation is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

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
    // The same error reads in Chinese once the window switches language (picked when drawn,
    // not when the error arrived), with the scene's own rule in core's Chinese wording.
    h.get_by_role_and_label(Role::ComboBox, "Language").click();
    h.run();
    h.get_by_label("中文").click();
    h.run();
    h.get_by_label_contains("无效：应不大于 64：");
    h.get_by_label_contains("参数 `");
}

#[test]
fn navigator_lists_every_scene_under_its_chapter() {
    let mut h = harness("banks");
    h.run();
    h.get_by_label_contains("worst conflict degree");
    h.get_by_label_contains("32-way");
    for c in warpscope_core::scene::chapters() {
        if c.section != "Foundations" {
            // §9's heading and its one scene read the same.
            let heading = format!("{} {}", c.section, c.title.en);
            assert!(h.query_all_by_label(&heading).next().is_some(), "{heading}");
        }
    }
    h.get_by_label("Start here: the warp-level model (§2.2, §2.4)");
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
fn every_scene_opens_and_draws_its_result() {
    for s in warpscope_core::scene::scenes() {
        let mut h = harness(s.id);
        h.run();
        let state = h.state_mut().state(s.id).expect("registered");
        assert!(state.error.is_none(), "{}: {:?}", s.id, state.error);
        assert!(state.computed.is_some(), "{}", s.id);
    }
}

// ---------------------------------------------------------------------------------------------
// The kernel lab.

#[test]
fn kernel_lab_steps_lights_the_line_and_picks_an_example() {
    let mut h = harness("kernel-lab");
    h.run();
    // The default example's first event: warp 0 loads its element on line 12.
    h.get_by_label_contains("▶ warp 0 · ld.global.b32 · line 12: partial[tid] = input[gid.x];");
    h.get_by_label_contains("Event 0 of ");
    // Warp 0 passes the first barrier (line 13) once every warp has stored: none waits now.
    h.get_by_label("Next barrier >|").click();
    h.run();
    h.get_by_label_contains("▶ warp 0 · bar.sync #1 · line 13: workgroupBarrier();");
    h.get_by_label_contains("Workgroup: 8 warps, none waiting at a barrier");
    // One event back: warp 7's store, the other seven warps waiting at that barrier.
    h.get_by_label("< Back").click();
    h.run();
    h.get_by_label_contains("▶ warp 7 · st.shared.b32 · line 12:");
    h.get_by_label_contains("Workgroup: 7 of 8 warps wait at barrier #1 (line 13)");
    h.get_by_label_contains("Shared-memory request: 1 wavefront(s), ideal 1");
    // The example picker sets the `source` parameter; the window recomputes.
    h.get_by_role_and_label(Role::ComboBox, "Example:").click();
    h.run();
    h.get_by_label("dgamma-32").click();
    h.run();
    h.run();
    let source = h
        .state_mut()
        .state("kernel-lab")
        .map(|s| s.values.text("source").unwrap_or("").to_owned());
    assert_eq!(source.as_deref(), Some("dgamma-32"));
    h.get_by_label_contains("The lecture's ∇γ tile stores partials as buf[y][x]");
}

// ---------------------------------------------------------------------------------------------
// Lab D: memory.

/// The allocator view's state: (batch drawn, playing).
fn allocator_state(h: &mut Harness<'_, WarpscopeApp>) -> (usize, bool) {
    h.state_mut()
        .state("memory-allocator")
        .and_then(|s| {
            s.view
                .as_any()
                .downcast_ref::<warpscope::views::memory::allocator::AllocatorView>()
                .map(|v| (v.batch, v.playing))
        })
        .unwrap_or_default()
}

#[test]
fn memory_lifetimes_shows_the_bound_and_follows_the_length_slider() {
    let mut h = harness("memory-lifetimes");
    h.run();
    // Lecture case: BL²N = 8 BLH, bound 11 BLH = 176 MiB, peaks at steps 6 and 7.
    h.get_by_label_contains("Lower bound 3BLH + max{BL²N, 3BLH} = 11 BLH = 176 MiB");
    h.get_by_label_contains("step 6 holds 3BLH + BL²N = 11 BLH, step 7 holds 6BLH = 6 BLH");
    h.get_by_label("6 (peak)");
    h.get_by_label("7 (peak)");
    // L = 128 < 3·d_head = 192: the score tensor no longer dominates, the bound is 6 BLH.
    h.get_by_role_and_label(Role::Slider, "sequence length L (tokens)")
        .set_value_accesskit(128.0);
    h.run();
    h.get_by_label_contains("Lower bound 3BLH + max{BL²N, 3BLH} = 6 BLH");
    h.get_by_label_contains("BL²N < 3BLH here (L = 128 < 3·d_head = 192)");
}

#[test]
fn memory_plan_reaches_the_bound_and_follows_the_dtype() {
    let mut h = harness("memory-plan");
    h.run();
    h.get_by_label_contains("= 11 BLH = 176 MiB; lower bound 3BLH + max{BL²N, 3BLH} = 11 BLH = 176 MiB — the plan reaches the lower bound");
    h.get_by_label_contains("3·d_head = 192 (exercise 6). Here L = 512: BL²N = 8 BLH ≥ 3BLH");
    // f32 doubles every byte; the plan in BLH does not change.
    h.get_by_role_and_label(Role::ComboBox, "element type")
        .click();
    h.run();
    h.get_by_label("f32").click();
    h.run();
    h.get_by_label_contains("= 11 BLH = 352 MiB; lower bound");
}

#[test]
fn memory_allocator_batch_slider_moves_the_segment_map() {
    let mut h = harness("memory-allocator");
    h.run();
    h.get_by_label_contains("reserved peak / largest need");
    h.get_by_label_contains("Batch 0: L = ");
    h.get_by_role_and_label(Role::Slider, "batch shown")
        .set_value_accesskit(150.0);
    h.run();
    assert_eq!(allocator_state(&mut h).0, 150);
    h.get_by_label_contains("Batch 150: L = ");
    h.get_by_label(">").click();
    h.run();
    h.get_by_label_contains("Batch 151: L = ");
    // Play animates (a frame at a time here), Pause stops.
    h.get_by_label("Play").click();
    h.step();
    h.step();
    assert!(allocator_state(&mut h).1);
    h.get_by_label("Pause").click();
    h.step();
    h.step();
    assert!(!allocator_state(&mut h).1);
}

fn type_path(h: &mut Harness<'_, WarpscopeApp>, path: &str) {
    let field = h.get_by_role_and_label(
        Role::TextInput,
        "snapshot pickle (empty: the built-in mini fixture)",
    );
    field.focus();
    h.run();
    h.get_by_role_and_label(
        Role::TextInput,
        "snapshot pickle (empty: the built-in mini fixture)",
    )
    .type_text(path);
    h.run();
    h.key_press(egui::Key::Enter);
    h.run();
}

#[test]
fn memory_snapshot_reads_the_fixture_and_reports_a_bad_path_by_the_field() {
    let mut h = harness("memory-snapshot");
    h.run();
    // The built-in fixture: 14 segments, 402 MiB reserved, replay recreates the segments.
    h.get_by_label_contains("421,527,552 B");
    h.get_by_label("yes — all 14 segments, same sizes, same order");
    type_path(&mut h, "/nonexistent/snapshot.pickle");
    h.get_by_label_contains("cannot open snapshot `/nonexistent/snapshot.pickle`");
    h.get_by_label_contains("the last good result is shown");
    // A real run whose trace starts mid-run: no claim, and its 216 segments one row each (the
    // rows scroll instead of aggregating three segments per row).
    let mut h = harness("memory-snapshot");
    h.run();
    type_path(
        &mut h,
        "../core/tests/data/snapshots/torch2.11-cs336-a2.pickle",
    );
    assert!(
        h.state_mut()
            .state("memory-snapshot")
            .is_some_and(|s| s.error.is_none())
    );
    h.get_by_label(
        "yes — all 216 segments, same sizes, replayed from the state rebuilt at the first event",
    );
    h.get_by_label_contains("216 segments, one row each: scroll the rows.");
}

fn wgpu_harness(scene: &str) -> Option<Harness<'static, WarpscopeApp>> {
    if !adapter_or_skip() {
        return None;
    }
    let mut app = WarpscopeApp::new(Some(scene));
    app.synchronous = true;
    let mut h = Harness::builder()
        .with_size(egui::vec2(1400.0, 900.0))
        .wgpu()
        .build_ui_state(|ui, app: &mut WarpscopeApp| app.show(ui), app);
    h.run();
    Some(h)
}

#[test]
fn memory_allocator_snapshot() {
    let Some(mut h) = wgpu_harness("memory-allocator") else {
        return;
    };
    // A batch late in the run: the cache is full of segments the batch only partly uses.
    h.get_by_role_and_label(Role::Slider, "batch shown")
        .set_value_accesskit(250.0);
    h.run();
    h.snapshot("memory-allocator");
}

#[test]
fn memory_snapshot_real_file_snapshot() {
    let Some(mut h) = wgpu_harness("memory-snapshot") else {
        return;
    };
    type_path(
        &mut h,
        "../core/tests/data/snapshots/torch2.11-cs336-a2.pickle",
    );
    h.snapshot("memory-snapshot-cs336");
}

#[test]
fn run_on_gpu_beside_the_simulation() {
    if !adapter_or_skip() {
        return;
    }
    let mut h = harness("softmax-fusion");
    h.run();
    h.get_by_label_contains("Real GPU run: kernel softmax-bw")
        .click();
    h.run();
    h.get_by_label("Run on GPU").click();
    h.run();
    h.run();
    // Both variants verified against core on the adapter, timed, with their ratio.
    h.get_by_label_contains("matches core within tolerance");
    h.get_by_label_contains("the time,");
}

#[test]
fn language_and_theme_switch_at_runtime() {
    let mut h = harness("banks");
    h.run();
    h.get_by_role_and_label(Role::ComboBox, "Language").click();
    h.run();
    h.get_by_label("中文").click();
    h.run();
    // Titles and parameter labels now in Chinese (the lecture is bilingual).
    h.get_by_label_contains("bank 实验场：共享内存冲突");
    h.get_by_role_and_label(Role::Slider, "行数");
    h.get_by_label("§2 LayerNorm 反向");
    h.get_by_role_and_label(Role::ComboBox, "主题").click();
    h.run();
    h.get_by_label("Slides").click();
    h.run();
    assert_eq!(h.state().theme, warpscope::export::Theme::Slides);
    assert!(!h.ctx.global_style().visuals.dark_mode, "slides are light");
}

/// `scene` in a window `height` points tall on the wgpu adapter, with its GPU panel opened and
/// `kernel` run. `None` (after checking the window says why) when there is no adapter, or it has
/// no subgroups and so no recording.
fn recorded(
    scene: &str,
    kernel: &str,
    height: f32,
) -> Option<(
    Harness<'static, WarpscopeApp>,
    warpscope_kernels::DeviceContext,
)> {
    if !adapter_or_skip() {
        return None;
    }
    let dev = match warpscope_kernels::DeviceContext::open() {
        Ok(d) => d,
        Err(e) => panic!("an adapter was enumerated but does not open: {e}"),
    };
    let mut app = WarpscopeApp::new(Some(scene));
    app.synchronous = true;
    let mut h = Harness::builder()
        .with_size(egui::vec2(1400.0, height))
        .wgpu()
        .build_ui_state(|ui, app: &mut WarpscopeApp| app.show(ui), app);
    h.run();
    h.get_by_label_contains(&format!("Real GPU run: kernel {kernel}"))
        .click();
    h.run();
    h.get_by_label("Run on GPU").click();
    h.run();
    h.run();
    if !dev.report.subgroups {
        // GL and other adapters without subgroups: said, not drawn.
        h.get_by_label_contains("No recording:");
        return None;
    }
    Some((h, dev))
}

#[test]
fn run_on_gpu_records_the_warp_beside_the_simulation() {
    // Tall enough to show both butterflies under the comparison.
    let Some((mut h, dev)) = recorded("softmax-warp", "softmax-bw", 1250.0) else {
        return;
    };
    // The recorded trace is labelled with the adapter and the subgroup size it reports
    // (lavapipe: 8; a GPU that may vary its subgroup size is checked against its range).
    let (lo, hi) = (dev.report.subgroup_min_size, dev.report.subgroup_max_size);
    let n = (lo..=hi)
        .filter(|n| n.is_power_of_two())
        .find(|n| {
            h.query_by_label(&format!("recorded on {} (subgroup {n})", dev.report.name))
                .is_some()
        })
        .expect("a label `recorded on <adapter> (subgroup N)` with N in the adapter's range");
    assert!(
        h.query_all_by_label("simulated (32-lane warps)").count() >= 1,
        "the simulated column is labelled"
    );
    // The one-line reason names the level counts: log2 n against log2 32 = 5.
    if n != 32 {
        h.get_by_label_contains(&format!(
            "each butterfly has log2 {n} = {} levels instead of 5",
            n.ilog2()
        ));
    }
    // Step into the butterfly (the simulation's starts after 16 slots × 3 events at L = 512):
    // both replays move with the one stepper.
    for _ in 0..52 {
        h.get_by_label("Step event >").click();
        h.run();
    }
    h.get_by_label_contains("at the same phase as the simulation");
    // Close the run's panel (its timings vary run to run) and keep the picture.
    h.get_by_label_contains("Real GPU run: kernel softmax-bw")
        .click();
    h.run();
    h.snapshot("softmax-warp-recorded");
    // Another row length: the recording no longer matches the simulation, and says so.
    h.get_by_role_and_label(Role::Slider, "row length L")
        .set_value_accesskit(64.0);
    h.run();
    h.get_by_label_contains("made with other parameters");
    assert!(h.query_by_label_contains("at the same phase").is_none());
}

#[test]
fn run_on_gpu_records_the_layernorm_block_with_one_barrier() {
    let Some((mut h, dev)) = recorded("layernorm-syncs", "layernorm-bw", 1500.0) else {
        return;
    };
    let n = dev.report.subgroup_max_size;
    if dev.report.subgroup_min_size != n {
        eprintln!("the adapter may vary its subgroup size; the label is checked by the other test");
        return;
    }
    h.get_by_label(&format!("recorded on {} (subgroup {n})", dev.report.name));
    // The default block is 32 threads: 32 / n subgroups meeting after one barrier, where the
    // simulated blockReduce needs two.
    if n < 32 {
        h.get_by_label_contains(&format!(
            "the block's {} subgroups meet in shared memory after 1 barrier",
            32 / n
        ));
    }
    // Jump to the simulation's first barrier: the recorded replay is past its butterflies too.
    h.get_by_label("Next barrier >|").click();
    h.run();
    h.get_by_label_contains("Real GPU run: kernel layernorm-bw")
        .click();
    h.run();
    h.snapshot("layernorm-syncs-recorded");
}

#[test]
fn recorded_view_speaks_chinese() {
    if !adapter_or_skip() {
        return;
    }
    let dev = match warpscope_kernels::DeviceContext::open() {
        Ok(d) if d.report.subgroups && d.report.subgroup_min_size == d.report.subgroup_max_size => {
            d
        }
        Ok(_) => return, // no subgroups, or a varying size: the English tests cover it
        Err(e) => panic!("an adapter was enumerated but does not open: {e}"),
    };
    let mut h = harness("layernorm-syncs");
    h.run();
    h.get_by_role_and_label(Role::ComboBox, "Language").click();
    h.run();
    h.get_by_label("中文").click();
    h.run();
    h.get_by_label_contains("内核 layernorm-bw").click();
    h.run();
    h.get_by_label("在 GPU 上运行").click();
    h.run();
    h.run();
    // Every glyph of the recorded view is in the embedded CJK subset (kittest panics otherwise).
    let n = dev.report.subgroup_max_size;
    h.get_by_label(&format!("实录于 {}（子组 {n}）", dev.report.name));
    assert!(
        h.query_all_by_label_contains("栅栏数").count() >= 1,
        "the barriers row"
    );
    h.get_by_label("下一个栅栏 >|").click();
    h.run();
}

// ---------------------------------------------------------------------------------------------
// Both languages, the Slides theme, and the save buttons.

#[test]
fn chinese_reaches_the_view_bodies_and_the_stepper() {
    let mut h = harness("reduction");
    h.state_mut().zh = true;
    h.run();
    // The explanation, the table header, the stepper's buttons and the trace view.
    h.get_by_label_contains("K 个值一起归约（2 次栅栏）");
    h.get_by_label("f64 参考值");
    h.get_by_label("下一个事件 >").click();
    h.run();
    assert_eq!(pos(&mut h), 1);
    h.get_by_label_contains("线程束 0 的各个线程");
    h.get_by_label_contains("K 个值一起归约只要一对栅栏");
    let mut h = harness("banks");
    h.state_mut().zh = true;
    h.run();
    h.get_by_label("最坏的冲突路数");
    h.get_by_label("32 路");
}

#[test]
fn export_buttons_without_a_dialog_write_into_the_default_folders_and_say_where() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut h = harness("banks");
    h.state_mut().figure_folder = dir.path().join("figures");
    h.state_mut().session_folder = dir.path().join("sessions");
    assert!(!h.state().use_file_dialog, "tests never open a dialog");
    h.run();
    h.get_by_label("Export SVG").click();
    h.run();
    let written: Vec<_> = std::fs::read_dir(dir.path().join("figures"))
        .expect("folder created")
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(written.len(), 1, "{written:?}");
    let name = written[0]
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("");
    // The lecture's parameters at the first event: the scene's id alone.
    assert_eq!(name, "banks.svg");
    h.get_by_label_contains(&format!(
        "Saved {}",
        written[0].canonicalize().expect("exists").display()
    ));
    // In Chinese, at 1× without the caption: the message and the figure follow the window.
    h.state_mut().zh = true;
    h.state_mut().png_scale = 1.0;
    h.state_mut().with_caption = false;
    h.run();
    h.get_by_label("导出 SVG").click();
    h.run();
    let svg = std::fs::read_dir(dir.path().join("figures"))
        .expect("folder")
        .flatten()
        .map(|e| e.path())
        .find(|p| p != &written[0])
        .expect("a second figure");
    // The same view again: a new name, the first file kept.
    assert_eq!(
        svg.file_name().and_then(|n| n.to_str()),
        Some("banks-2.svg")
    );
    let text = std::fs::read_to_string(&svg).expect("svg");
    assert!(
        text.contains("最坏的冲突路数"),
        "the figure is in the window's language"
    );
    assert!(!text.contains("bank 实验场"), "no caption when unticked");
    h.get_by_label_contains("已保存 ");
    h.get_by_label("保存会话").click();
    h.run();
    let sessions: Vec<_> = std::fs::read_dir(dir.path().join("sessions"))
        .expect("session folder created")
        .flatten()
        .collect();
    assert_eq!(sessions.len(), 1);
    h.get_by_label_contains("warpscope gui --preset");
}

#[test]
fn snapshot_timeline_scrubs_and_zooms_event_by_event() {
    // The bundled mini fixture: 50 trace events; event 2 is a 20 MiB segment_alloc (its
    // third event, read with Python's pickle: segment_alloc 20971520).
    let mut h = harness("memory-snapshot");
    h.run();
    // The file opens on its last event (its own segments); Home goes to the first.
    h.get_by_label_contains("Event 49 of 50:");
    h.key_press(egui::Key::Home);
    h.run();
    h.get_by_label_contains("Event 0 of 50:");
    h.key_press(egui::Key::ArrowRight);
    h.run();
    h.key_press(egui::Key::ArrowRight);
    h.run();
    h.get_by_label_contains("Event 2 of 50: segment_alloc of 20 MiB");
    // Zoom ×4 around event 2: a quarter of 50 is under the 16-event minimum, so events 0..16.
    h.get_by_label("Zoom in ×4").click();
    h.run();
    let zoom = |h: &mut Harness<'_, WarpscopeApp>| {
        h.state_mut().state("memory-snapshot").and_then(|s| {
            s.view
                .as_any()
                .downcast_ref::<warpscope::views::memory::snapshot::SnapshotView>()
                .and_then(|v| v.timeline.zoom)
        })
    };
    assert_eq!(zoom(&mut h), Some((0, 16)));
    h.get_by_label_contains("every one of the 16 events drawn");
    // End: the last event of the shown range.
    h.key_press(egui::Key::End);
    h.run();
    h.get_by_label_contains("Event 15 of 50:");
    h.get_by_label("Whole trace").click();
    h.run();
    assert_eq!(zoom(&mut h), None);
}

// ---------------------------------------------------------------------------------------------
// Image snapshots of every scene, from the scene registry: the window's default size in the
// dark theme, slides in both languages, and the small window in the other theme/language pairs.

/// Whether `scene`'s results are times measured on this CPU: its digits change from run to run
/// (even which explanation applies), so only its layout is compared.
fn measured(scene: &str) -> bool {
    warpscope_core::scene::find(scene)
        .is_ok_and(|s| s.cost == warpscope_core::scene::Cost::Measured)
}

/// How far a snapshot may differ: a measured scene's digits change from run to run.
fn tolerance(scene: &str) -> egui_kittest::SnapshotOptions {
    if measured(scene) {
        egui_kittest::SnapshotOptions::new().max_failed_pixels(20_000)
    } else {
        egui_kittest::SnapshotOptions::default()
    }
}

/// What a snapshot leaves out: a measured scene's chart and sentences below its headline; that
/// part is masked and the window around it compared.
fn measured_area(
    h: &Harness<'_, WarpscopeApp>,
    scene: &str,
    size: (f32, f32),
) -> Option<egui::Rect> {
    if !measured(scene) {
        return None;
    }
    let chart = h
        .query_all_by_label_contains("Time per step, measured")
        .chain(h.query_all_by_label_contains("每步时间，实测"))
        .next()?
        .rect();
    Some(egui::Rect::from_min_max(
        chart.left_top(),
        egui::pos2(size.0, size.1),
    ))
}

/// The scenes `WARPSCOPE_SNAPSHOT_SCENES` names (comma-separated ids), or every scene when it
/// is unset: `UPDATE_SNAPSHOTS=1 WARPSCOPE_SNAPSHOT_SCENES=kernel-lab` writes one new scene's
/// images without rendering (or rewriting) the others.
fn snapshot_scenes() -> Vec<&'static warpscope_core::scene::Scene> {
    let only = std::env::var("WARPSCOPE_SNAPSHOT_SCENES").ok();
    warpscope_core::scene::scenes()
        .filter(|s| {
            only.as_deref()
                .is_none_or(|o| o.split(',').any(|id| id.trim() == s.id))
        })
        .collect()
}

/// Renders every registered scene at `size` in `theme` and language `zh`, at its featured
/// event (stepped with the "Step event >" button when `click`, else set directly), and compares
/// each with `snapshots/<folder>/<scene>.png`; all differences are reported together.
fn snapshot_every_scene(
    folder: &str,
    size: (f32, f32),
    theme: warpscope::export::Theme,
    zh: bool,
    click: bool,
) {
    if !adapter_or_skip() {
        return;
    }
    let mut results = egui_kittest::SnapshotResults::new();
    for scene in snapshot_scenes() {
        let mut app = WarpscopeApp::new(Some(scene.id));
        app.synchronous = true;
        app.zh = zh;
        app.theme = theme;
        let mut h = Harness::builder()
            .with_size(egui::vec2(size.0, size.1))
            .wgpu()
            .build_ui_state(|ui, app: &mut WarpscopeApp| app.show(ui), app);
        h.run();
        let step = scene.featured.event();
        if click {
            for _ in 0..step {
                h.get_by_label("Step event >").click();
                h.run();
            }
        } else if step > 0 {
            if let Some(s) = h.state_mut().state(scene.id) {
                s.stepper.pos = step;
            }
            h.run();
        }
        if let Some(r) = measured_area(&h, scene.id, size) {
            h.mask(r);
        }
        h.snapshot_options(format!("{folder}/{}", scene.id), &tolerance(scene.id));
        results.extend(h.take_snapshot_results());
    }
}

#[test]
fn snapshots_dark_english_at_1400() {
    snapshot_every_scene(
        "dark-en",
        (1400.0, 900.0),
        warpscope::export::Theme::Dark,
        false,
        true,
    );
}

#[test]
fn snapshots_slides_english() {
    snapshot_every_scene(
        "slides-en",
        (1280.0, 800.0),
        warpscope::export::Theme::Slides,
        false,
        false,
    );
}

#[test]
fn snapshots_slides_chinese() {
    snapshot_every_scene(
        "slides-zh",
        (1280.0, 800.0),
        warpscope::export::Theme::Slides,
        true,
        false,
    );
}

#[test]
fn snapshots_small_window_dark_chinese() {
    snapshot_every_scene(
        "small/dark-zh",
        (1024.0, 700.0),
        warpscope::export::Theme::Dark,
        true,
        false,
    );
}

#[test]
fn snapshots_small_window_light_english() {
    snapshot_every_scene(
        "small/light-en",
        (1024.0, 700.0),
        warpscope::export::Theme::Light,
        false,
        false,
    );
}

#[test]
fn snapshots_small_window_light_chinese() {
    snapshot_every_scene(
        "small/light-zh",
        (1024.0, 700.0),
        warpscope::export::Theme::Light,
        true,
        false,
    );
}

#[test]
fn a_window_export_draws_the_run_and_event_on_screen() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut h = harness("reduction");
    h.state_mut().figure_folder = dir.path().join("figures");
    h.run();
    // The lecture's K = 2 values one after the other: 2K = 4 barriers.
    h.get_by_label("one after the other (4 barriers)").click();
    h.run();
    h.get_by_label("Step event >").click();
    h.run();
    h.get_by_label("Export SVG").click();
    h.run();
    let svg = std::fs::read_dir(dir.path().join("figures"))
        .expect("folder created")
        .flatten()
        .map(|e| e.path())
        .next()
        .expect("a figure");
    // Named after the event shown; the run shown is named, not offered as radio buttons.
    assert_eq!(
        svg.file_name().and_then(|n| n.to_str()),
        Some("reduction-e1.svg")
    );
    let text = std::fs::read_to_string(&svg).expect("svg");
    assert!(
        text.contains("one after the other (4 barriers)"),
        "the run on screen"
    );
    assert!(
        !text.contains("K values together (2 barriers)"),
        "no radio buttons"
    );
    assert!(text.contains("event 1 of"), "the event on screen");
}

#[test]
fn a_session_reopens_in_the_theme_and_language_it_was_saved_in() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut app = WarpscopeApp::new(Some("banks"));
    app.synchronous = true;
    app.zh = true;
    app.theme = warpscope::export::Theme::Slides;
    app.session_folder = dir.path().to_owned();
    let mut h = Harness::builder()
        .with_size(egui::vec2(1400.0, 900.0))
        .build_ui_state(|ui, app: &mut WarpscopeApp| app.show(ui), app);
    h.run();
    h.get_by_label("保存会话").click();
    h.run();
    let file = std::fs::read_dir(dir.path())
        .expect("folder")
        .flatten()
        .map(|e| e.path())
        .next()
        .expect("a session file");
    let session = warpscope_core::session::Session::read(&file).expect("reads back");
    assert_eq!(session.theme.as_deref(), Some("slides"));
    assert_eq!(session.lang.as_deref(), Some("zh"));
    // A window in the dark theme and English opens it as it was saved.
    let mut other = WarpscopeApp::new(None);
    assert!(!other.zh);
    other.open_session(session);
    assert_eq!(other.selected, "banks");
    assert_eq!(other.theme, warpscope::export::Theme::Slides);
    assert!(other.zh);
}
