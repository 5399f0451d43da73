//! Recorded traces: the lecture's own shaders, instrumented by the record pass, run on the
//! adapter; their records decode into a trace whose shape follows from the shader and the
//! adapter's subgroup size (levels = log2 of it, partner lane = lane ^ mask, one barrier, one
//! `subgroupAdd` per subgroup), and whose reduced values equal f64 sums computed here. Without
//! an adapter the tests skip, except in CI (`CI` set), where they fail.

// Test and bench helpers outside #[test] functions stop on failure by design.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use warpscope_core::layernorm::syncs::SyncsParams;
use warpscope_core::simt::shuffle::Source;
use warpscope_core::simt::trace::Origin;
use warpscope_core::simt::{EventKind, Trace};
use warpscope_core::softmax::Dtype;
use warpscope_core::softmax::warp::WarpParams;
use warpscope_kernels::{DeviceContext, adapter_required, record};

fn ctx() -> Option<DeviceContext> {
    match DeviceContext::open() {
        Ok(c) if c.report.subgroups => Some(c),
        Ok(c) if !adapter_required() => {
            eprintln!("skipped: {} has no subgroups", c.report.name);
            None
        }
        Ok(c) => panic!(
            "CI must provide an adapter with subgroups: {}",
            c.report.name
        ),
        Err(e) if !adapter_required() => {
            eprintln!("skipped: no adapter ({e})");
            None
        }
        Err(e) => panic!("CI must provide a GPU adapter (lavapipe): {e}"),
    }
}

/// Shuffle events of warp `w`, as (level, xor mask).
fn shuffles(t: &Trace, w: usize) -> Vec<(u32, u32)> {
    t.warps[w]
        .events
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Shuffle { arg, .. } => Some((e.level.unwrap_or(0), arg)),
            _ => None,
        })
        .collect()
}

/// Every shuffle's lanes name their partner lane ^ mask (what the device computed).
fn partners_are_xor(t: &Trace) {
    for w in &t.warps {
        for e in &w.events {
            if let EventKind::Shuffle { arg, .. } = e.kind {
                for (l, lane) in e.lanes.iter().enumerate() {
                    if lane.active {
                        assert_eq!(
                            lane.source,
                            Some(Source::Lane(l as u32 ^ arg)),
                            "{}",
                            e.label.en
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn softmax_row_recorded_with_the_adapters_subgroup() {
    let Some(ctx) = ctx() else { return };
    for (len, dtype) in [(512, Dtype::F32), (300, Dtype::F16), (5, Dtype::F32)] {
        let p = WarpParams {
            len,
            dtype,
            device: "a100".into(),
            seed: 3,
        };
        let rec = record::softmax_warp(&ctx, &p).expect("recording");
        let t = &rec.trace;
        let n = t.warp_size;
        assert!(
            (ctx.report.subgroup_min_size..=ctx.report.subgroup_max_size).contains(&n),
            "subgroup size {n} outside the adapter's {:?}",
            (ctx.report.subgroup_min_size, ctx.report.subgroup_max_size)
        );
        assert!(n.is_power_of_two());
        assert!(matches!(&t.origin, Origin::Recorded { adapter } if *adapter == ctx.report.name));
        // One subgroup, one butterfly: log2(n) levels with masks n/2, n/4, …, 1.
        assert_eq!(t.warps.len(), 1);
        let want: Vec<(u32, u32)> = (1..=n.ilog2()).map(|k| (k, n >> k)).collect();
        assert_eq!(shuffles(t, 0), want);
        assert_eq!(rec.comparison.recorded_levels, n.ilog2());
        assert_eq!(rec.comparison.simulated_levels, 5, "log2 32");
        assert_eq!(rec.summary.barriers, 0);
        partners_are_xor(t);
        // Each lane loads ⌈len / n⌉ slots of ∇y and of y (softmax_sg.wgsl lines 61, 62), the
        // mask word of each (line 30), and reads all three again for the slots past the 32 it
        // keeps in registers (lines 80, 81 and line 30 once more); it stores ∇x once a slot.
        let slots = len.div_ceil(n);
        let again = slots.saturating_sub(32);
        let on = |line: u32, store: bool| {
            t.warps[0]
                .events
                .iter()
                .filter(|e| e.line == Some(line))
                .filter(|e| {
                    if store {
                        matches!(e.kind, EventKind::GlobalStore { .. })
                    } else {
                        matches!(e.kind, EventKind::GlobalLoad { .. })
                    }
                })
                .count() as u32
        };
        assert_eq!((on(61, false), on(62, false)), (slots, slots));
        assert_eq!((on(80, false), on(81, false)), (again, again));
        assert_eq!(on(30, false), slots + again);
        assert_eq!(on(83, true), slots);
        // A lane's ∇y at slot k is element lane + k·n: the first load is the row's first n
        // words, 4 bytes apart — ⌈4n / 32⌉ sectors.
        let first = t.warps[0]
            .events
            .iter()
            .find(|e| e.line == Some(61))
            .unwrap();
        assert_eq!(first.metrics.sectors, Some((4 * n.min(len)).div_ceil(32)));
        // The reduced value: an f64 sum of the same stored inputs, written out here.
        let core = warpscope_core::softmax::warp::run(&p).unwrap();
        let dot: f64 = core
            .dy
            .iter()
            .zip(&core.y)
            .map(|(a, b)| f64::from(*a) * f64::from(*b))
            .sum();
        let v = &rec.comparison.values[0];
        assert!(
            (v.recorded - dot).abs() < 1e-5 + 1e-4 * dot.abs(),
            "len {len}: {} vs {dot}",
            v.recorded
        );
        assert!(rec.verified);
        // After the last level (xor 1) every lane holds its own sum plus the one it received:
        // its partner received the lane's own, so the pair's received values add to the sum.
        let last = t.warps[0]
            .events
            .iter()
            .rfind(|e| matches!(e.kind, EventKind::Shuffle { .. }))
            .unwrap();
        assert_eq!(last.level, Some(n.ilog2()));
        for l in 0..n as usize {
            let (a, b) = (
                last.lanes[l].value.unwrap(),
                last.lanes[l ^ 1].value.unwrap(),
            );
            assert_eq!(f64::from(a as f32 + b as f32), v.recorded, "lane {l}");
        }
        assert_eq!(rec.dropped, 0);
        eprintln!("{}", serde_json::to_string(&rec.comparison).unwrap());
    }
}

#[test]
fn layernorm_block_recorded_with_one_barrier() {
    let Some(ctx) = ctx() else { return };
    for (rows, cols, block) in [(8, 64, 32), (3, 1000, 256)] {
        if block > ctx.device.limits().max_compute_invocations_per_workgroup {
            eprintln!("skipped block {block}: past the adapter's workgroup limit");
            continue;
        }
        let p = SyncsParams {
            rows,
            cols,
            block,
            seed: 1,
        };
        let rec = record::layernorm_syncs(&ctx, &p).expect("recording");
        let t = &rec.trace;
        let n = t.warp_size;
        assert!((ctx.report.subgroup_min_size..=ctx.report.subgroup_max_size).contains(&n));
        // block / n subgroups, each reducing (Σg, Σg·x̂) with one subgroupAdd (line 50): no
        // shuffle to see; lane 0 of each stores its partial (line 52), and after the barrier
        // every lane loads all block / n partials (line 57).
        let n_sg = block.div_ceil(n);
        assert_eq!(t.warps.len() as u32, n_sg);
        assert_eq!(rec.summary.shuffles, 0);
        for w in &t.warps {
            let at = |line: u32| w.events.iter().filter(|e| e.line == Some(line)).count();
            assert_eq!(at(50), 1, "one subgroupAdd, subgroup {}", w.warp);
            assert_eq!(at(52), 1);
            assert_eq!(at(57) as u32, n_sg);
            let store = w.events.iter().find(|e| e.line == Some(52)).unwrap();
            assert_eq!(store.lanes.iter().filter(|l| l.active).count(), 1);
        }
        assert_eq!(rec.summary.barriers, 1, "one workgroupBarrier");
        assert_eq!(
            rec.comparison.simulated_barriers, 2,
            "LightSeq blockReduce: 2"
        );
        // Every row's sums against f64 sums of the same f32 inputs, written out here.
        let (x, dy, gamma, _) = warpscope_core::layernorm::formulas::inputs(rows, cols, 1);
        let f = |v: f64| f64::from(v as f32);
        for row in 0..rows {
            let xr: Vec<f64> = x[row * cols..(row + 1) * cols]
                .iter()
                .map(|v| f(*v))
                .collect();
            let m = cols as f64;
            // μ and r as the forward saves them (f32), then x̂ in f64.
            let st = warpscope_core::layernorm::forward_row::<f32>(
                &xr.iter().map(|v| *v as f32).collect::<Vec<_>>(),
                warpscope_core::layernorm::EPS as f32,
            );
            let _ = m;
            let (mut sg, mut sgx) = (0.0, 0.0);
            for j in 0..cols {
                let g = f(gamma[j]) * f(dy[row * cols + j]);
                let xh = (xr[j] - f64::from(st.mu)) * f64::from(st.r);
                sg += g;
                sgx += g * xh;
            }
            let got = &rec.comparison.values[2 * row..2 * row + 2];
            assert!(
                (got[0].recorded - sg).abs() < 1e-4 * (1.0 + sg.abs()),
                "row {row}: {} vs {sg}",
                got[0].recorded
            );
            assert!(
                (got[1].recorded - sgx).abs() < 1e-3 * (1.0 + sgx.abs()),
                "row {row}: {} vs {sgx}",
                got[1].recorded
            );
        }
        assert!(rec.verified, "{:?}", rec.comparison.values);
        eprintln!("{}", serde_json::to_string(&rec.comparison).unwrap());
        eprintln!("{:?}", rec.checks);
    }
}
