//! `report --input FILE.json` for `trainer-adam`, `memory-plan` and `memory-allocator`: a good
//! input computes the user's numbers, a bad one exits 2 naming the key.

// Test code: a failed expectation is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::warpscope;
use std::process::Output;

/// `report SCENE --input FILE --json` with each of `sets` as a `--set`.
fn report_input(scene: &str, json: &str, sets: &[&str]) -> Output {
    let extra: Vec<&str> = sets.iter().flat_map(|s| ["--set", *s]).collect();
    common::report_input(scene, json, &extra)
}

fn result(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()["result"].clone()
}

fn refused_naming(out: &Output, key: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("`{key}`")),
        "expected `{key}` in: {err}"
    );
}

#[test]
fn trainer_adam_takes_a_gradient_list_and_names_bad_keys() {
    // 1e-4 < 2⁻¹² (half FP16's gap under 1.0): swallowed without master weights.
    let r = result(&report_input(
        "trainer-adam",
        r#"{"param": 1.0, "grad": [0.001, 0.001, 0.001], "lr": 0.0001}"#,
        &["storage=f16", "master=false"],
    ));
    assert_eq!(r["swallowed"], true);
    assert_eq!(r["trajectory"], serde_json::json!([1.0, 1.0, 1.0]));
    refused_naming(
        &report_input("trainer-adam", r#"{"grad": [1, 2], "steps": 3}"#, &[]),
        "grad",
    );
    refused_naming(
        &report_input("trainer-adam", r#"{"betas": [0.9, 1.5]}"#, &[]),
        "betas[1]",
    );
    refused_naming(
        &report_input("trainer-adam", r#"{"loss_scal": 2}"#, &[]),
        "loss_scal",
    );
}

#[test]
fn memory_plan_places_the_users_tensors_and_names_bad_keys() {
    let tensors = r#"{"tensors": [
        {"name": "x", "size_bytes": 4096, "first_op": 0, "last_op": 1},
        {"name": "y", "size_bytes": 4096, "first_op": 1, "last_op": 2}]}"#;
    // Closed lifetimes: both alive at op 1, so 8192 bytes.
    for planner in ["creation-order", "greedy-by-size"] {
        let r = result(&report_input(
            "memory-plan",
            tensors,
            &[&format!("planner={planner}")],
        ));
        assert_eq!(r["total_bytes"], 8192, "{planner}");
        assert_eq!(r["lower_bound_peak_live"], 8192);
    }
    refused_naming(
        &report_input(
            "memory-plan",
            r#"{"tensors": [{"name": "x", "size_bytes": 0, "first_op": 0, "last_op": 1}]}"#,
            &[],
        ),
        "tensors[0].size_bytes",
    );
    refused_naming(
        &report_input(
            "memory-plan",
            r#"{"tensors": [{"name": "x", "size_bytes": 8, "first_op": 3, "last_op": 1}]}"#,
            &[],
        ),
        "tensors[0].last_op",
    );
}

#[test]
fn memory_allocator_replays_a_trace_and_names_the_bad_op() {
    // 1000 B rounds to 1024 B in a 2 MiB small segment.
    let r = result(&report_input(
        "memory-allocator",
        r#"{"trace": [["malloc", "a", 1000], ["free", "a"]]}"#,
        &[],
    ));
    assert_eq!(r["per_step"][0]["rounded"], 1024);
    assert_eq!(r["final_reserved"], 2 * 1024 * 1024);
    assert_eq!(r["final_allocated"], 0);
    for (trace, key) in [
        (r#"{"trace": [["free", "a"]]}"#, "trace[0]"),
        (
            r#"{"trace": [["malloc", "a", 8], ["free", "a"], ["free", "a"]]}"#,
            "trace[2]",
        ),
        (
            r#"{"trace": [["malloc", "a", 8], ["malloc", "a", 8]]}"#,
            "trace[1]",
        ),
        (r#"{"trace": [["malloc", "a", 0]]}"#, "trace[0][2]"),
        (r#"{"trace": [["malloc", "a", 1e18]]}"#, "trace[0][2]"),
    ] {
        refused_naming(&report_input("memory-allocator", trace, &[]), key);
    }
}

#[test]
fn export_draws_the_users_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.json");
    std::fs::write(&input, r#"{"trace": [["malloc", "a", 1000]]}"#).unwrap();
    let svg = dir.path().join("a.svg");
    let out = warpscope(&[
        "export",
        "memory-allocator",
        "--input",
        input.to_str().unwrap(),
        "--out",
        svg.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    // 1000 B rounds up to 1024 B (a multiple of 512) in a 2 MiB small segment.
    assert!(text.contains("1024"), "the SVG names the rounded size");
    let bad = dir.path().join("bad.json");
    std::fs::write(
        &bad,
        r#"{"tensors": [{"name": "x", "size_bytes": 8, "first_op": 0}]}"#,
    )
    .unwrap();
    let out = warpscope(&[
        "export",
        "memory-plan",
        "--input",
        bad.to_str().unwrap(),
        "--out",
        dir.path().join("b.svg").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`tensors[0].last_op`"));
    assert!(!dir.path().join("b.svg").exists());
}
