//! The kernel lab's view drawn from a hand-made result: the parts hold together without the
//! simulator, and the stepper, the workgroup and the warnings answer clicks.

// Test code: a failed expectation is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::sync::Arc;

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use warpscope_core::lab::examples::EXAMPLES;
use warpscope_core::lab::output::{
    Counters, LabOutput, LineCounters, Totals, Warning, WarningKind,
};
use warpscope_core::lab::scene::KernelLabScene;
use warpscope_core::params::ParamValues;
use warpscope_core::scene::SceneDef;
use warpscope_core::simt::shuffle::{ShuffleMode, Source};
use warpscope_core::simt::trace::{Event, Lane, Metrics, Origin, WarpTrace};
use warpscope_core::simt::{EventKind, Trace};
use warpscope_core::text::Text;

use super::workgroup::{WarpState, states};
use super::{KernelLabView, LabShown};
use crate::views::{View, ViewContext};
use crate::widgets::gpu::GpuPanel;
use crate::widgets::stepper::Stepper;

const LANES: u32 = 32;

fn event(seq: u64, kind: EventKind, value: impl Fn(u32) -> Option<f64>) -> Event {
    Event {
        seq,
        kind,
        label: Default::default(),
        level: None,
        lanes: (0..LANES)
            .map(|l| Lane {
                active: true,
                address: Some(u64::from(l) * 4),
                value: value(l),
                source: None,
            })
            .collect(),
        line: None,
        metrics: Metrics {
            wavefronts: Some(1),
            ideal_wavefronts: Some(1),
            conflict_degree: Some(1),
            sectors: None,
            ideal_sectors: None,
            contention: None,
        },
    }
}

/// Four warps: each loads and stores to shared memory (warp 0 runs until it blocks at barrier 1,
/// then warp 1, …); warp 0 passes the barrier and sums by a butterfly of five xor shuffles,
/// then the others pass it.
pub(super) fn fixture() -> LabShown {
    let mut seq = 0;
    let mut next = || {
        seq += 1;
        seq - 1
    };
    let mut warps: Vec<WarpTrace> = (0..4)
        .map(|w| WarpTrace {
            warp: w,
            events: Vec::new(),
        })
        .collect();
    for (w, wt) in warps.iter_mut().enumerate() {
        let base = w as f64 * 32.0;
        wt.events
            .push(event(next(), EventKind::GlobalLoad { width: 4 }, |l| {
                Some(base + f64::from(l))
            }));
        wt.events
            .push(event(next(), EventKind::SharedStore { width: 4 }, |l| {
                Some(base + f64::from(l))
            }));
    }
    // As core records them: a warp's barrier when it passes it, warp 0 first.
    warps[0]
        .events
        .push(event(next(), EventKind::Barrier { index: 1 }, |_| None));
    let mut held: Vec<f64> = (0..LANES).map(f64::from).collect();
    for mask in [16u32, 8, 4, 2, 1] {
        let mut e = event(
            next(),
            EventKind::Shuffle {
                mode: ShuffleMode::Xor,
                arg: mask,
            },
            |_| None,
        );
        for (l, lane) in e.lanes.iter_mut().enumerate() {
            let src = l as u32 ^ mask;
            lane.value = Some(held[src as usize]);
            lane.source = Some(Source::Lane(src));
            lane.address = None;
        }
        held = (0..LANES as usize)
            .map(|l| held[l] + held[l ^ mask as usize])
            .collect();
        warps[0].events.push(e);
    }
    for wt in warps.iter_mut().skip(1) {
        wt.events
            .push(event(next(), EventKind::Barrier { index: 1 }, |_| None));
    }
    let counters = |f: fn(&mut Counters)| {
        let mut c = Counters::default();
        f(&mut c);
        c
    };
    let lines = vec![
        LineCounters {
            line: 12,
            counters: counters(|c| {
                c.warp_instructions = 32;
                c.shared_requests = 8;
                c.shared_wavefronts = 8;
                c.shared_ideal_wavefronts = 8;
                c.global_requests = 8;
                c.global_sectors = 32;
                c.global_ideal_sectors = 32;
            }),
        },
        LineCounters {
            line: 16,
            counters: counters(|c| {
                c.warp_instructions = 120;
                c.divergent_branches = 4;
            }),
        },
        LineCounters {
            line: 17,
            counters: counters(|c| {
                c.warp_instructions = 96;
                c.shared_requests = 96;
                c.shared_wavefronts = 192;
                c.shared_ideal_wavefronts = 96;
            }),
        },
    ];
    let source = EXAMPLES.first().map_or("", |e| e.source).to_owned();
    LabShown {
        name: EXAMPLES.first().map_or("", |e| e.name).to_owned(),
        source: Arc::from(source),
        dispatch: warpscope_core::lab::dispatch::Dispatch::from_json(
            &serde_json::from_str(EXAMPLES[0].input).unwrap(),
        )
        .unwrap(),
        out: LabOutput {
            entry: "main".into(),
            workgroup_size: [128, 1, 1],
            subgroup_size: LANES,
            warps_per_workgroup: 128 / LANES,
            buffers: BTreeMap::new(),
            lines,
            totals: Totals {
                counters: Counters::default(),
                barriers: 1,
                lane_instructions: 4096,
                warps: 4,
            },
            warnings: vec![Warning {
                kind: WarningKind::Race,
                line: 17,
                message: Text::new(
                    "warps 0 and 1 touch partial[32] between barriers 1 and 2".into(),
                    "线程束 0 和 1 在屏障 1 与 2 之间访问 partial[32]".into(),
                ),
            }],
            events: 17,
            trace: Trace {
                kernel: "main".into(),
                origin: Origin::Simulated,
                warp_size: LANES,
                block_threads: 128,
                warps,
            },
        },
    }
}

/// `name`'s bundled example simulated with warps of `subgroup` lanes.
pub(super) fn example(name: &str, subgroup: &str) -> LabShown {
    let scene = warpscope_core::scene::find("kernel-lab").unwrap();
    let mut v = scene.defaults();
    v.set(scene.params, "source", name).unwrap();
    v.set(scene.params, "subgroup_size", subgroup).unwrap();
    <KernelLabScene as SceneDef>::run(&v.validated(scene.params).unwrap()).unwrap()
}

#[test]
fn the_default_example_runs_and_its_events_name_their_lines() {
    let shown = example("reduce-shared", "32");
    let o = &shown.out;
    assert!(!o.lines.is_empty());
    let tl = o.trace.timeline();
    assert_eq!(tl.len(), o.events);
    // Every event the stepper walks names a line of the source.
    let n = shown.source.lines().count() as u32;
    for &(w, i) in &tl {
        let line = super::event_line(&o.trace.warps[w].events[i]).unwrap();
        assert!((1..=n).contains(&line));
    }
}

#[test]
fn warps_wait_at_the_barrier_until_one_passes_it() {
    let o = fixture().out;
    let tl = o.trace.timeline();
    // Warp 1 loads (event 2): warp 0 waits at barrier 1, warps 2 and 3 have not started.
    let s = states(&o.trace, &tl, 2);
    assert!(matches!(s[0], WarpState::Waiting { index: 1, .. }));
    assert!(matches!(s[1], WarpState::Current { .. }));
    assert_eq!(s[2], WarpState::NotStarted);
    // Warp 0 passes it (event 8): the others are released and wait their turn.
    let s = states(&o.trace, &tl, 8);
    assert!(matches!(s[0], WarpState::Current { .. }));
    assert!(matches!(s[3], WarpState::Released { index: 1, .. }));
    // The last event: everyone else is done.
    let s = states(&o.trace, &tl, 16);
    assert!(matches!(s[3], WarpState::Current { .. }));
    assert_eq!(&s[..3], &[WarpState::Done; 3]);
}

#[test]
fn a_barrier_in_the_default_example_holds_every_warp_until_one_passes() {
    let shown = example("reduce-shared", "32");
    let o = &shown.out;
    let tl = o.trace.timeline();
    // The last store before the first barrier: the seven other warps wait at it (line 13).
    let last_store = tl
        .iter()
        .position(|&(w, i)| matches!(o.trace.warps[w].events[i].kind, EventKind::Barrier { .. }))
        .unwrap()
        - 1;
    let s = states(&o.trace, &tl, last_store);
    let waiting = s
        .iter()
        .filter(|w| {
            matches!(
                w,
                WarpState::Waiting {
                    index: 1,
                    line: Some(13)
                }
            )
        })
        .count();
    assert_eq!(waiting, s.len() - 1);
    // One event later warp 0 passes it: the rest are released, none waits.
    let s = states(&o.trace, &tl, last_store + 1);
    assert!(s.iter().all(|w| !matches!(w, WarpState::Waiting { .. })));
}

/// A harness drawing the view on `shown` with its own stepper.
fn harness(shown: LabShown) -> Harness<'static, (KernelLabView, Stepper, GpuPanel, bool)> {
    Harness::builder()
        .with_size(egui::vec2(1024.0, 1800.0))
        .build_ui_state(
        move |ui, (view, stepper, gpu, fonts): &mut (KernelLabView, Stepper, GpuPanel, bool)| {
            if !*fonts {
                crate::fonts::install(ui.ctx());
                *fonts = true;
            }
            let values = ParamValues::default();
            let mut cx = ViewContext {
                stepper,
                gpu,
                values: &values,
                set_values: Vec::new(),
            };
            view.ui(ui, &shown, &mut cx);
        },
        (
            KernelLabView::default(),
            Stepper::default(),
            GpuPanel::default(),
            false,
        ),
    )
}

#[test]
fn stepping_moves_the_event_the_lanes_and_the_workgroup() {
    let mut h = harness(fixture());
    h.run();
    h.get_by_label_contains("Event 0 of 17: warp 0, ld.global.b32");
    h.get_by_label_contains("Workgroup: 4 warps, none waiting");
    for _ in 0..2 {
        h.get_by_label("Step event >").click();
        h.run();
    }
    h.get_by_label_contains("Event 2 of 17: warp 1, ld.global.b32");
    h.get_by_label_contains("Workgroup: 1 of 4 warps wait at barrier #1");
    // Past the barrier, warp 0's butterfly: the third of its five shuffles.
    h.state_mut().1.pos = 11;
    h.run();
    h.get_by_label_contains("Event 11 of 17: warp 0, shfl.bfly 4");
    h.get_by_label_contains("Butterfly of warp 0");
    // The race warning is a button to its line.
    h.get_by_label_contains("line 17 · race").click();
    h.run();
    assert_eq!(h.state().0.selected_line, Some(17));
}

#[test]
fn the_gpu_panel_runs_the_same_source_and_matches_the_simulation() {
    if warpscope_kernels::DeviceContext::open().is_err() {
        assert!(
            !warpscope_kernels::adapter_required(),
            "CI must provide an adapter"
        );
        eprintln!("skipped: no GPU adapter");
        return;
    }
    let shown = example("reduce-shared", "32");
    let slot = super::gpu::GpuSlot::default();
    slot.start(&shown, &egui::Context::default(), true);
    match slot.state(&shown.source) {
        super::gpu::GpuState::Done(Ok(run)) => assert!(run.1.passed, "{:?}", run.1),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_recorded_pane_records_on_the_adapter_and_steps_on_its_own() {
    let dev = match warpscope_kernels::DeviceContext::open() {
        Ok(d) if d.report.subgroups => d,
        other => {
            assert!(
                !warpscope_kernels::adapter_required(),
                "CI must provide an adapter with subgroups (lavapipe)"
            );
            eprintln!("skipped: no GPU adapter with subgroups ({:?})", other.err());
            return;
        }
    };
    // The shared-memory tree reduction at the subgroup size the adapter runs when it has one
    // (lavapipe: 8): its per-line wavefronts are the same recorded as simulated.
    let (lo, hi) = (dev.report.subgroup_min_size, dev.report.subgroup_max_size);
    let size = if lo == hi { lo } else { 32 };
    let shown = example("reduce-shared", &size.to_string());
    let mut h = harness(shown);
    h.run();
    h.get_by_label("Recorded on this GPU");
    h.get_by_label("Record on GPU").click();
    h.step();
    // The recording runs on a background thread: the window keeps drawing meanwhile.
    let mut waited = 0;
    while h.query_by_label_contains("records,").is_none() {
        assert!(
            h.query_by_label_contains("No recording").is_none(),
            "the recording failed"
        );
        assert!(waited < 1200, "the recording did not finish in 2 minutes");
        std::thread::sleep(std::time::Duration::from_millis(100));
        waited += 1;
        // The spinner repaints without end while the recording runs: one frame at a time.
        h.step();
    }
    h.run();
    // Four workgroups of 256 (reduce_shared.json): every record fits, nothing changes.
    h.get_by_label_contains("0 dropped; buffers equal the plain run's");
    if lo == hi {
        h.get_by_label_contains(&format!("subgroups of {lo} lanes"));
        assert!(
            h.query_by_label_contains("differs at subgroup size")
                .is_none(),
            "reduce-shared's lines count the same recorded and simulated"
        );
        assert!(
            h.query_all_by_label("same").count() >= 4,
            "lines 12, 16, 21 …"
        );
    }
    // Two steppers now: the simulation's and the recording's; the recording's steps alone.
    assert_eq!(h.query_all_by_label("Step event >").count(), 2);
    h.query_all_by_label("Step event >").last().unwrap().click();
    h.run();
    assert_eq!(h.state().0.recorded.stepper.pos, 1);
    assert_eq!(h.state().1.pos, 0, "the simulation's stepper did not move");
}
