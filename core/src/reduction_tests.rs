//! Tests of the reduction scene (`reduction.rs`).

use super::*;

fn params(threads: u32, values: u32, warp: u32) -> ReductionParams {
    ReductionParams {
        threads,
        values,
        warp,
        seed: 7,
        op: ReduceOp::Sum,
    }
}

#[test]
fn barriers_two_versus_two_k() {
    let o = run(&params(256, 2, 32)).unwrap();
    assert_eq!(o.block_barriers_together, 2);
    assert_eq!(o.block_barriers_sequential, 4);
    let o = run(&params(1024, 5, 32)).unwrap();
    assert_eq!(
        (o.block_barriers_together, o.block_barriers_sequential),
        (2, 10)
    );
}

#[test]
fn sums_match_the_f64_reference() {
    for (t, k, w) in [
        (256, 2, 32),
        (1024, 8, 32),
        (64, 3, 8),
        (16, 1, 4),
        (4096 / 64, 2, 64),
    ] {
        let o = run(&params(t, k, w)).unwrap();
        for (s, r) in o.sums.iter().zip(&o.reference_sums) {
            // f32 summation of ≤ 1024 values in [−1, 1): error well under 1e-4.
            assert!((f64::from(*s) - r).abs() < 1e-4, "{s} vs {r}");
        }
        assert_eq!(o.sums.len(), k as usize);
    }
}

#[test]
fn integers_sum_exactly() {
    // With inputs replaced by small integers the f32 tree is exact: check the kernel's
    // plumbing (every partial reaches the right slot) independently of rounding.
    let shape = BlockShape::new(128, 32).unwrap();
    let inputs = vec![
        (0..128).map(|t| t as f32).collect::<Vec<_>>(),
        vec![1.0; 128],
    ];
    let mut b = Block::new("t", shape);
    let s = block_reduce(&mut b, &inputs, &[0, 1], 32).unwrap();
    assert_eq!(s, vec![8128.0, 128.0], "0+…+127 = 8128");
}

#[test]
fn trace_costs_are_as_the_rules_say() {
    let o = run(&params(256, 1, 32)).unwrap();
    let s = o.summary_together;
    // 8 warps × 5 shuffles, plus warp 0's second-stage 5.
    assert_eq!(s.shuffles, 8 * 5 + 5);
    // Every request here is conflict-free: lane-0 stores, a row load, broadcast reads.
    assert_eq!(s.shared_wavefronts, s.shared_ideal_wavefronts);
    let json = serde_json::to_string(&o.trace_together).unwrap();
    let back: Trace = serde_json::from_str(&json).unwrap();
    assert!(
        back == o.trace_together,
        "trace JSON round trip changed the trace"
    );
}

#[test]
fn a_partial_last_warp_sums_only_the_threads_that_exist() {
    // 48 threads = one full warp of 32 and a warp of 16: every one of the 48 values counted
    // once, the 16 missing lanes adding 0.
    let o = run(&params(48, 1, 32)).unwrap();
    assert_eq!(o.warps, 2);
    assert_eq!(o.inputs[0].len(), 48);
    let exact: f64 = o.inputs[0].iter().map(|x| f64::from(*x)).sum();
    assert!(
        (f64::from(o.sums[0]) - exact).abs() < 1e-5,
        "{} vs {exact}",
        o.sums[0]
    );
    assert_eq!(o.block_barriers_together, 2);
    // A block of one thread: the butterfly adds 31 zeros to its value.
    let one = run(&params(1, 1, 32)).unwrap();
    assert_eq!(one.sums[0], one.inputs[0][0]);
}

fn preset(name: &str) -> (ReductionParams, Vec<Vec<f32>>) {
    let p = crate::presets::find(name).unwrap();
    let v = p.session.params.validated(SCENE.params).unwrap();
    let rp = ReductionParams::from_values(&v).unwrap();
    let inputs = read_values(p.session.input.as_ref().unwrap(), rp.threads).unwrap();
    (rp, inputs)
}

#[test]
fn the_partial_warp_preset_sums_its_48_values_exactly() {
    let (p, inputs) = preset("reduction-partial-warp-48");
    assert_eq!((p.threads, p.op), (48, ReduceOp::Sum));
    let o = run_on(&p, inputs).unwrap();
    // 1 + 2 + … + 48 = 48·49/2 = 1176, exact in f32 (integers below 2²⁴).
    assert_eq!(o.sums, vec![1176.0]);
    assert_eq!(o.sums_sequential, vec![1176.0]);
    assert_eq!(o.reference_sums, vec![1176.0]);
    // 16 missing lanes in warp 1, and 30 of warp 0's lanes in the second stage (2 warps).
    assert_eq!(o.identity_lanes, 16 + 30);
    assert_eq!(o.sums_zero_identity, o.sums, "0 is the sum's identity");
}

#[test]
fn a_max_needs_minus_infinity_in_the_empty_lanes() {
    let (p, inputs) = preset("reduction-max-wrong-identity");
    assert_eq!(p.op, ReduceOp::Max);
    // Every value is negative; the largest is the first, −0.5 (by construction of the file:
    // −(t mod 7 + 1)/2 − ⌊t/7⌋).
    assert!(inputs[0].iter().all(|&v| v < 0.0));
    assert_eq!(inputs[0][0], -0.5);
    let o = run_on(&p, inputs).unwrap();
    assert_eq!(o.sums, vec![-0.5]);
    assert_eq!(o.reference_sums, vec![-0.5]);
    assert_eq!(o.identity, f32::NEG_INFINITY);
    // With 0 in the 24 missing lanes the butterfly's answer is 0, a value no thread holds.
    assert_eq!(o.sums_zero_identity, vec![0.0]);
    let json = serde_json::to_value(&o).unwrap();
    assert_eq!(json["identity"], "-inf");
    assert_eq!(json["op"], "max");
}

#[test]
fn max_of_seeded_values_matches_the_exact_maximum() {
    for (t, w) in [(1, 32), (33, 32), (256, 32), (1000, 32), (64, 8)] {
        let o = run(&ReductionParams {
            op: ReduceOp::Max,
            ..params(t, 2, w)
        })
        .unwrap();
        for (k, s) in o.sums.iter().enumerate() {
            let m = o.inputs[k]
                .iter()
                .copied()
                .fold(f32::NEG_INFINITY, f32::max);
            assert_eq!(*s, m, "threads {t}");
        }
    }
}

#[test]
fn input_values_are_checked_naming_the_key() {
    use serde_json::json;
    let key = |v: serde_json::Value, threads: u32| match read_values(&v, threads) {
        Err(Error::InvalidInput { key, problem }) => (key, problem.en),
        other => panic!("{other:?}"),
    };
    let (k, p) = key(json!({"values": [1, 2, 3]}), 4);
    assert_eq!(k, "values");
    assert!(p.contains("3 values but threads = 4"), "{p}");
    assert_eq!(key(json!({"values": [1, "nan", 3]}), 3).0, "values[1]");
    assert_eq!(key(json!({"values": [1, 1e39]}), 2).0, "values[1]");
    assert_eq!(key(json!({"values": [[1, 2], [3]]}), 2).0, "values[1]");
    assert_eq!(
        key(json!({"values": [[1, 2], [1, 2, 3]]}), 2).0,
        "values[1]"
    );
    assert_eq!(key(json!({"values": vec![vec![1.0; 2]; 9]}), 2).0, "values");
    assert_eq!(key(json!({"value": [1]}), 1).0, "value");
    assert_eq!(key(json!({}), 1).0, "values");
    // Two sets of two: K = 2 block results.
    let sets = read_values(&json!({"values": [[1, 2], [3, 4]]}), 2).unwrap();
    let o = run_on(&params(2, 1, 32), sets).unwrap();
    assert_eq!(o.sums, vec![3.0, 7.0]);
}

#[test]
fn bad_shapes_are_refused() {
    assert!(params(128, 2, 8).validate().is_err(), "16 warps > 8 lanes");
    assert!(params(256, 0, 32).validate().is_err());
}
