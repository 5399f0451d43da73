//! The memory-snapshot scene in the window (issue 17): the block map follows the cursor and is
//! computed once per event, a file opened (button, drop, recent list, `warpscope FILE.pickle`)
//! shows its own state — never the previous file's — and problems of the file are on screen.
//! Through the accessibility tree; no GPU needed.

// Test code: a failed expectation is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use warpscope::gui::WarpscopeApp;
use warpscope::views::memory::snapshot::SnapshotView;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../core/tests/data/snapshots")
        .join(name)
}

fn harness(scene: &str) -> Harness<'static, WarpscopeApp> {
    let mut app = WarpscopeApp::new(Some(scene));
    app.synchronous = true;
    Harness::builder()
        .with_size(egui::vec2(1400.0, 900.0))
        .build_ui_state(|ui, app: &mut WarpscopeApp| app.show(ui), app)
}

/// (stepper position, map states computed so far, the shown state's event and segment count).
fn shown(h: &mut Harness<'_, WarpscopeApp>) -> (usize, usize, Option<(usize, usize)>) {
    let st = h.state_mut().state("memory-snapshot").unwrap();
    let pos = st.stepper.pos;
    let v = st.view.as_any().downcast_ref::<SnapshotView>().unwrap();
    (
        pos,
        v.map.cache.computed,
        v.map.cache.state().map(|s| (s.index, s.segments.len())),
    )
}

#[derive(Debug)]
struct Dropped(PathBuf);

impl egui::DroppedFile for Dropped {
    fn path(&self) -> &Path {
        &self.0
    }
    fn bytes(&self) -> Result<Vec<u8>, String> {
        std::fs::read(&self.0).map_err(|e| e.to_string())
    }
}

fn drop_file(h: &mut Harness<'_, WarpscopeApp>, p: &Path) {
    h.input_mut()
        .dropped_files
        .push(Arc::new(Dropped(p.to_owned())));
    h.run();
}

#[test]
fn the_block_map_follows_the_cursor_and_idle_frames_compute_nothing() {
    let mut h = harness("reduction");
    h.run();
    let cs336 = data("torch2.11-cs336-a2.pickle");
    h.state_mut().open_snapshot(&cs336);
    h.run();
    // A newly opened file shows its own final state: the last of its 5,163 events, 216 segments.
    let (pos, computed, state) = shown(&mut h);
    assert_eq!(pos, 5162);
    assert_eq!(state, Some((5162, 216)));
    h.get_by_label_contains("the last event: the file's own segments");
    // Idle frames reuse the state.
    for _ in 0..5 {
        h.step();
    }
    assert_eq!(shown(&mut h).1, computed);
    // One event back: one new state, the map at that event.
    h.key_press(egui::Key::ArrowLeft);
    h.run();
    let (pos, c2, state) = shown(&mut h);
    assert_eq!((pos, state.map(|s| s.0)), (5161, Some(5161)));
    assert_eq!(c2, computed + 1);
    h.get_by_label_contains("Segments and blocks right after event 5161 (free_requested)");
    // Scrubbing back to event 0 of the mid-run trace: the map shows the state rebuilt there.
    h.key_press(egui::Key::Home);
    h.run();
    assert_eq!(shown(&mut h).2, Some((0, 216)));
    // Playing moves the cursor and the map with it.
    h.state_mut()
        .state("memory-snapshot")
        .unwrap()
        .stepper
        .speed = 2000.0;
    h.get_by_label("Play").click();
    for _ in 0..4 {
        h.step();
    }
    h.get_by_label("Pause").click();
    h.run();
    let (pos, _, state) = shown(&mut h);
    assert!(pos > 0, "playing moved the cursor");
    assert_eq!(state.map(|s| s.0), Some(pos));
}

#[test]
fn a_dropped_file_replaces_the_previous_files_state_and_joins_the_recent_list() {
    let mut h = harness("banks");
    h.run();
    let cs336 = data("torch2.11-cs336-a2.pickle");
    drop_file(&mut h, &cs336);
    assert_eq!(h.state().selected, "memory-snapshot");
    assert_eq!(shown(&mut h).2, Some((5162, 216)));
    // The path field shows the file (its draft follows a value set from outside).
    let field = h.get_by_role_and_label(
        Role::TextInput,
        "snapshot pickle (empty: the built-in mini fixture)",
    );
    assert_eq!(field.value().as_deref(), Some(cs336.to_str().unwrap()));
    let mini = data("torch2.11-mini-fixture.pickle");
    drop_file(&mut h, &mini);
    // Never the previous file's state: the mini fixture's 14 segments at its last event.
    assert_eq!(shown(&mut h).2, Some((49, 14)));
    // Its problems are on screen, not drawn as if fine.
    h.get_by_label_contains("parts of it are not what PyTorch's allocator writes");
    h.get_by_label_contains("24 trace events cannot be undone");
    // Both files are in the recent list, the latest first; reopening from it works.
    assert_eq!(h.state().opener.recent, vec![mini.clone(), cs336.clone()]);
    h.get_by_label("Recent ▾").click();
    h.run();
    h.get_by_label("torch2.11-cs336-a2.pickle").click();
    h.run();
    assert_eq!(shown(&mut h).2, Some((5162, 216)));
    // A file that is not a pickle is refused with a message; nothing changes.
    drop_file(&mut h, Path::new("/tmp/notes.txt"));
    h.get_by_label_contains("is not a .pickle");
    assert_eq!(shown(&mut h).2, Some((5162, 216)));
    // Without a dialog (tests), the button says how else to open a file.
    h.get_by_label("Open snapshot…").click();
    h.run();
    h.get_by_label_contains("No file dialog here");
}

#[test]
fn an_event_out_of_range_is_named_under_its_control() {
    let mut h = harness("memory-snapshot");
    h.run();
    let st = h.state_mut().state("memory-snapshot").unwrap();
    let scene = st.scene;
    st.values.set(scene.params, "event", "50").unwrap();
    st.values.set(scene.params, "path", "").unwrap();
    h.state_mut()
        .state("memory-snapshot")
        .unwrap()
        .compute_now();
    h.run();
    h.get_by_label_contains("its last is event 49");
    // `event=12` opens the window at event 12.
    let st = h.state_mut().state("memory-snapshot").unwrap();
    st.values.set(scene.params, "event", "12").unwrap();
    st.compute_now();
    h.run();
    assert_eq!(shown(&mut h).2.map(|s| s.0), Some(12));
}

#[test]
fn a_session_reopens_at_its_step_and_a_new_file_at_its_last_event() {
    let cs336 = data("torch2.11-cs336-a2.pickle");
    let mut session = warpscope::gui::open::session_for(&cs336);
    session.step = Some(2000);
    let mut h = harness("reduction");
    h.state_mut().open_session(session);
    h.run();
    assert_eq!(shown(&mut h).2, Some((2000, 216)));
    // Another file (typed, dropped or opened): its own last event.
    h.state_mut()
        .open_snapshot(&data("torch2.11-mini-fixture.pickle"));
    h.run();
    assert_eq!(shown(&mut h).2, Some((49, 14)));
}

fn view_mut<'a>(h: &'a mut Harness<'_, WarpscopeApp>) -> &'a mut SnapshotView {
    h.state_mut()
        .state("memory-snapshot")
        .unwrap()
        .view
        .as_any_mut()
        .downcast_mut::<SnapshotView>()
        .unwrap()
}

#[test]
fn frames_of_the_cursor_event_and_the_search_by_address_and_by_frame_text() {
    let mut h = harness("reduction");
    h.run();
    h.state_mut()
        .open_snapshot(&data("torch2.11-cs336-a2.pickle"));
    h.run();
    h.state_mut().state("memory-snapshot").unwrap().stepper.pos = 100;
    h.run();
    // Event 100 (Python's `pickle.load`: alloc at 0xcdb9aec00, 10 frames, the innermost
    // `forward` at model.py line 101, then 6 frames in the .venv's site-packages).
    h.get_by_label_contains("Event 100 of 5163: alloc");
    h.get_by_label("forward (cs336_basics/model.py:101)");
    h.get_by_label_contains("6 library frames");
    // By frame text: 45 of the file's 54 distinct non-empty stacks mention model.py (counted
    // with Python over blocks and events).
    view_mut(&mut h).search.query = "model.py".into();
    h.run();
    h.get_by_label_contains("45 of 54 distinct stacks mention it");
    // By address: the 9 trace events at 0xcdb9aec00 and the block holding it, with its stack.
    view_mut(&mut h).search.query = "0xcdb9aec00".into();
    h.run();
    h.get_by_label_contains("0xcdb9aec00: 9 trace events at this address");
    h.get_by_label_contains("Block 0xcdb9aec00 (");
    h.get_by_label("event 100").click();
    h.run();
    assert_eq!(shown(&mut h).0, 100);
}
