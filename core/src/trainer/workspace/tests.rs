//! Tests of the trainer workspace: bytes per parameter from element sizes, the lecture's
//! launches and times, views that alias their buffer, and the two Adam runs bit for bit.

use super::*;

#[test]
fn bytes_per_parameter_from_element_sizes() {
    // Exercise 3 by hand: copy g→g′ 2 + 4 = 6; Adam reads p′ g′ m v 4·4 = 16, writes
    // p′ m v 3·4 = 12 → 28; copy p′→p 4 + 2 = 6; total 40. Workspace: read p, g 2·2, m, v
    // 2·4, write p 2, m, v 2·4 → 22.
    let b: Vec<usize> = trainer_stages(TrainerScheme::PerTensorFp32Master)
        .iter()
        .map(Stage::bytes_per_param)
        .collect();
    assert_eq!(b, vec![6, 28, 6]);
    let w: Vec<usize> = trainer_stages(TrainerScheme::LinkedFp16Workspace)
        .iter()
        .map(Stage::bytes_per_param)
        .collect();
    assert_eq!(w, vec![22]);
}

#[test]
fn exercise_8_gpt2_large_on_a100() {
    let c = trainer_comparison("gpt2-large", "a100").unwrap();
    assert_eq!(c.baseline.launches, 1308);
    assert_eq!(c.workspace.launches, 1);
    // Lecture: launches 3 × 436 × 4 µs = 5.2 ms; bytes 40 × 7.74e8 / 1.555e12 = 19.9 ms;
    // total 25.1 ms. LightSeq2: 4 µs + 22 × 7.74e8 / 1.555e12 = 10.95 ms.
    assert!(
        (c.baseline.launch_ms - 5.2).abs() < 0.05,
        "{}",
        c.baseline.launch_ms
    );
    assert!(
        (c.baseline.bytes_ms - 19.9).abs() < 0.05,
        "{}",
        c.baseline.bytes_ms
    );
    assert!(
        (c.baseline.total_ms - 25.1).abs() < 0.1,
        "{}",
        c.baseline.total_ms
    );
    assert!((c.workspace.launch_ms - 0.004).abs() < 1e-9);
    assert!(
        (c.workspace.bytes_ms - 10.95).abs() < 0.01,
        "{}",
        c.workspace.bytes_ms
    );
    assert!(
        (c.workspace.total_ms - 10.95).abs() < 0.05,
        "{}",
        c.workspace.total_ms
    );
}

#[test]
fn exercise_4_fp32_copies_of_7b() {
    // 7e9 × (4 + 4) = 56 GB; 7e9 × 4 = 28 GB.
    let c = fp32_copies(7_000_000_000);
    assert_eq!(c.master_and_grad_bytes, 56_000_000_000);
    assert_eq!(c.grad_only_bytes, 28_000_000_000);
}

#[test]
fn instance_views_alias_and_adam_is_bitwise_identical() {
    let full = model("gpt2-large").unwrap().tensors();
    let c = run_instance(&full, 64, 3, 7).unwrap();
    assert_eq!(c.tensors, 436);
    assert!(c.views_alias_workspace);
    assert!(c.views_tile_workspace);
    assert!(c.bitwise_identical);
    assert!(
        c.changed_parameters > c.elements / 2,
        "{}",
        c.changed_parameters
    );
}

#[test]
fn a_too_large_instance_is_refused_with_its_size() {
    let scene = &SCENE;
    let mut v = scene.defaults();
    v.set(scene.params, "shrink", "1").unwrap();
    let e = scene.report(v).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("`shrink`"), "{msg}");
    // 774,030,080 elements × 22 bytes.
    assert!(msg.contains("774030080"), "{msg}");
    assert!(msg.contains(&(774_030_080u64 * 22).to_string()), "{msg}");
}

#[test]
fn scene_defaults_give_the_contract_keys() {
    let r = SCENE.report(SCENE.defaults()).unwrap().result;
    for k in [
        "bytes_per_param_baseline",
        "bytes_per_param_workspace",
        "launches_baseline",
        "launches_workspace",
        "baseline_ms",
        "workspace_ms",
        "bitwise_identical",
    ] {
        assert!(r.get(k).is_some(), "missing {k}");
    }
    assert_eq!(r["bytes_per_param_baseline"], 40);
    assert_eq!(r["bytes_per_param_workspace"], 22);
    assert_eq!(r["launches_baseline"], 1308);
    assert_eq!(r["bitwise_identical"], true);
    assert_eq!(r["segments"].as_array().map(Vec::len), Some(436));
}
