//! `cargo bench -p warpscope --bench frames` — issue 10's GUI frame benchmark: the CPU time of
//! one egui frame of each scene (layout, widgets, plots and tessellation-free painting commands;
//! no GPU rendering) through an egui_kittest harness at the window's default size.
//!
//! Each scene is computed once (synchronously) and the harness run until it settles; then one
//! `step()` — one whole frame of the window with that scene on screen — is timed. A frame that
//! keeps asking for repaints after settling would show the app is not idle; that is reported.
//!
//! `frame/memory-snapshot-250k` draws the snapshot scene with a synthetic 250,000-event trace
//! (see `warpscope_core::torch::snapshot::synthetic`); `…-scrub` moves the trace cursor every
//! frame, `…-zoom` changes the shown range of events every frame (the plot's min–max columns are
//! recomputed from all events in the range).

// Test code: a failed expectation is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use egui_kittest::Harness;
use warpscope::gui::WarpscopeApp;
use warpscope_core::scene::scenes;

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .without_plots()
}

fn harness(app: WarpscopeApp) -> Harness<'static, WarpscopeApp> {
    Harness::builder()
        .with_size(egui::vec2(1400.0, 900.0))
        .build_ui_state(|ui, app: &mut WarpscopeApp| app.show(ui), app)
}

fn settled(
    mut h: Harness<'static, WarpscopeApp>,
    id: &'static str,
    name: &str,
) -> Harness<'static, WarpscopeApp> {
    h.run();
    match h.state_mut().state(id) {
        Some(s) if s.computed.is_some() && s.error.is_none() => {}
        Some(s) => panic!("frame/{name}: no result on screen: {:?}", s.error),
        None => panic!("frame/{name}: no scene {id}"),
    }
    h.step();
    if h.ctx.has_requested_repaint() {
        eprintln!("frame/{name}: still asks for a repaint after settling (not idle)");
    }
    h
}

fn bench_frames(c: &mut Criterion) {
    let mut g = c.benchmark_group("frame");
    for s in scenes() {
        let mut app = WarpscopeApp::new(Some(s.id));
        app.synchronous = true;
        let mut h = settled(harness(app), s.id, s.id);
        g.bench_function(BenchmarkId::from_parameter(s.id), |b| {
            b.iter(|| {
                h.step();
                black_box(&h);
            })
        });
    }
    // The snapshot scene on a 250,000-event trace.
    let path = std::env::temp_dir().join("warpscope-bench-frames-250k.pickle");
    let bytes = warpscope_core::torch::snapshot::synthetic(250_000, 7, 1).expect("synthetic");
    std::fs::write(&path, bytes).expect("write synthetic snapshot");
    let mut app = WarpscopeApp::new(Some("memory-snapshot"));
    app.synchronous = true;
    if let Some(st) = app.state("memory-snapshot") {
        let params = st.scene.params;
        st.values
            .set(params, "path", path.to_str().expect("utf-8"))
            .expect("path");
    }
    let mut h = settled(harness(app), "memory-snapshot", "memory-snapshot-250k");
    g.bench_function(BenchmarkId::from_parameter("memory-snapshot-250k"), |b| {
        b.iter(|| {
            h.step();
            black_box(&h);
        })
    });
    // Scrubbing: the cursor moves every frame (the plot's columns are reused).
    let mut pos = 0usize;
    g.bench_function(
        BenchmarkId::from_parameter("memory-snapshot-250k-scrub"),
        |b| {
            b.iter(|| {
                pos = (pos + 997) % 250_000;
                if let Some(st) = h.state_mut().state("memory-snapshot") {
                    st.stepper.pos = pos;
                }
                h.step();
                black_box(&h);
            })
        },
    );
    // Zooming: the shown range changes every frame (the columns are recomputed from the events).
    let mut wide = false;
    g.bench_function(
        BenchmarkId::from_parameter("memory-snapshot-250k-zoom"),
        |b| {
            b.iter(|| {
                wide = !wide;
                if let Some(st) = h.state_mut().state("memory-snapshot")
                    && let Some(v) =
                        st.view
                            .as_any_mut()
                            .downcast_mut::<warpscope::views::memory::snapshot::SnapshotView>()
                {
                    v.timeline.zoom = if wide { None } else { Some((60_000, 122_500)) };
                }
                h.step();
                black_box(&h);
            })
        },
    );
    g.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_frames
}
criterion_main!(benches);
