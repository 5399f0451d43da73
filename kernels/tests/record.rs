//! Recorded traces: the instrumented reductions run on the adapter, their records decode into a
//! trace whose shape follows from the adapter's subgroup size (levels = log2 of it, partner lane
//! = lane ^ mask, one barrier), and whose reduced values equal f64 sums computed here. Without an
//! adapter the tests skip, except in CI (`CI` set), where they fail.

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
        // Each lane loads ⌈len / n⌉ slots of ∇y and of y.
        let loads = t.warps[0]
            .events
            .iter()
            .filter(|e| matches!(e.kind, EventKind::GlobalLoad { .. }))
            .count();
        assert_eq!(loads as u32, 2 * len.div_ceil(n));
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
        // After the last level every active lane holds the same sum.
        let last = t.warps[0]
            .events
            .iter()
            .rfind(|e| e.kind == EventKind::Compute && e.level == Some(n.ilog2()))
            .unwrap();
        assert!(last.lanes.iter().all(|l| l.value == Some(v.recorded)));
        eprintln!("{}", serde_json::to_string(&rec.comparison).unwrap());
    }
}

#[test]
fn layernorm_block_recorded_with_one_barrier() {
    let Some(ctx) = ctx() else { return };
    for (rows, cols, block) in [(8, 64, 32), (3, 1000, 256)] {
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
        // block / n subgroups, each a butterfly of log2(n) levels for Σg and for Σg·x̂.
        assert_eq!(t.warps.len() as u32, block.div_ceil(n));
        for w in 0..t.warps.len() {
            // Σg's butterfly, then Σg·x̂'s.
            let one: Vec<(u32, u32)> = (1..=n.ilog2()).map(|k| (k, n >> k)).collect();
            let want = [one.clone(), one].concat();
            assert_eq!(shuffles(t, w), want, "subgroup {w}");
        }
        partners_are_xor(t);
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

#[test]
fn record_buffer_decodes_by_hand() {
    // Two lanes of subgroup 0 at step 4, a shuffle xor 1; one lane of subgroup 1 at step 0.
    let rec = |ticket: u32,
               step: u32,
               op: u32,
               level: u32,
               arg: u32,
               sg: u32,
               lane: u32,
               addr: u32,
               v: f32| {
        vec![
            ticket + 1,
            step,
            op | (level << 8),
            arg,
            0,
            sg | (2 << 16),
            lane,
            addr,
            v.to_bits(),
        ]
    };
    let mut words = Vec::new();
    words.extend(rec(5, 4, 5, 1, 1, 0, 0, 1, 2.0));
    words.extend(rec(6, 4, 5, 1, 1, 0, 1, 0, 3.0));
    words.extend([0; record::REC_WORDS]); // an empty slot
    words.extend(rec(1, 0, 1, 255, 0, 1, 1, 64, 7.5));
    let recs = record::parse(&words, "t").unwrap();
    assert_eq!(recs.len(), 3);
    assert_eq!(recs[2].level, None);
    assert_eq!(recs[2].address, Some(64));
    let describe = |r: &record::Record, _n: u32| match r.op {
        record::Op::ShuffleXor => (
            EventKind::Shuffle {
                mode: warpscope_core::simt::shuffle::ShuffleMode::Xor,
                arg: r.arg,
            },
            "s".to_owned(),
        ),
        _ => (EventKind::GlobalLoad { width: 4 }, "l".to_owned()),
    };
    let t = record::build_trace(&recs, 0, "t", "hand", 4, &describe).unwrap();
    assert_eq!(t.warp_size, 2);
    assert_eq!(t.warps.len(), 2);
    // Subgroup 1's load has the earlier ticket, so it comes first in the timeline.
    assert_eq!(t.timeline(), vec![(1, 0), (0, 0)]);
    let s = &t.warps[0].events[0];
    assert_eq!(s.lanes[0].source, Some(Source::Lane(1)));
    assert_eq!(s.lanes[1].value, Some(3.0));
    let l = &t.warps[1].events[0];
    assert!(!l.lanes[0].active && l.lanes[1].active);
    assert_eq!(l.metrics.sectors, Some(1));
    // Lanes that disagree on the subgroup size cannot be one warp width: an error.
    let mut mixed = rec(0, 0, 1, 255, 0, 0, 0, 0, 1.0);
    let mut other = rec(1, 0, 1, 255, 0, 0, 1, 4, 1.0);
    other[5] = 4 << 16;
    mixed.extend(other);
    let recs = record::parse(&mixed, "t").unwrap();
    let e = record::build_trace(&recs, 0, "t", "hand", 4, &describe).unwrap_err();
    assert!(e.to_string().contains("subgroup size"), "{e}");
    // No records for the workgroup: an error naming it.
    assert!(record::build_trace(&recs, 3, "t", "hand", 4, &describe).is_err());
    // A bad op code is an error, not a panic.
    let mut bad = rec(0, 0, 99, 0, 0, 0, 0, 0, 0.0);
    assert!(record::parse(&bad, "t").is_err());
    bad[0] = 0;
    assert!(record::parse(&bad, "t").unwrap().is_empty());
}
