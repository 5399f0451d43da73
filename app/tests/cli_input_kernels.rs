//! `report --input FILE.json` for the kernel scenes (`layernorm-formulas`, `softmax-formula`,
//! `reduction`, `banks`): a good input computes, a bad one exits 2 naming the key.

// Test code: a failed expectation is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::report_input;

/// Asserts exit status 2 and that stderr names `key`.
fn refused(scene: &str, json: &str, extra: &[&str], key: &str) {
    let out = report_input(scene, json, extra);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{scene} {json}: {err}");
    assert!(err.contains(&format!("`{key}`")), "{scene} {json}: {err}");
}

fn result(scene: &str, json: &str, extra: &[&str]) -> serde_json::Value {
    let out = report_input(scene, json, extra);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["result"].clone()
}

#[test]
fn layernorm_input_computes_and_bad_keys_exit_2() {
    // x = (1, 3), ε = 0: μ = 2, var = 1 (by hand).
    let r = result(
        "layernorm-formulas",
        r#"{"x": [[1, 3]], "dy": [[1, 0]], "eps": 0}"#,
        &["--set", "dtype=f64", "--set", "accumulate=f64"],
    );
    assert_eq!(r["rows"][0]["mean"], 2.0);
    assert_eq!(r["rows"][0]["var"], 1.0);
    let s = "layernorm-formulas";
    refused(
        s,
        r#"{"x": [[1, 2], [3]], "dy": [[1, 2], [3, 4]]}"#,
        &[],
        "x[1]",
    );
    refused(s, r#"{"x": [[1, 2]], "dy": [[1, 2, 3]]}"#, &[], "dy");
    refused(s, r#"{"x": [[1, "nan"]], "dy": [[1, 2]]}"#, &[], "x[0][1]");
    refused(
        s,
        r#"{"x": [[1, 2]], "dy": [[1, 2]], "gamma": [1]}"#,
        &[],
        "gamma",
    );
    refused(s, r#"{"x": [[1, 2]]}"#, &[], "dy");
}

#[test]
fn reduction_input_sums_48_values_and_bad_lengths_exit_2() {
    // 1 + 2 + … + 48 = 1176.
    let values: Vec<String> = (1..=48).map(|v| v.to_string()).collect();
    let json = format!("{{\"values\": [{}]}}", values.join(", "));
    let r = result("reduction", &json, &["--set", "threads=48"]);
    assert_eq!(r["sums"][0], 1176.0);
    refused("reduction", &json, &["--set", "threads=64"], "values");
    refused(
        "reduction",
        r#"{"values": [1, "nan"]}"#,
        &["--set", "threads=2"],
        "values[1]",
    );
    refused(
        "reduction",
        r#"{"values": [[1, 2], [3]]}"#,
        &["--set", "threads=2"],
        "values[1]",
    );
}

#[test]
fn banks_input_by_formula_and_bad_addresses_exit_2() {
    // (lane·33 + 5)·4 → bank (lane + 5) mod 32: conflict-free (by hand).
    let r = result(
        "banks",
        r#"{"expression": "(lane * 33 + 5) * 4", "elem_bytes": 4}"#,
        &[],
    );
    assert_eq!(r["conflict_degree"], 1);
    assert_eq!(r["wavefronts"], 1);
    // lane·128: one bank, 32 words.
    let r = result("banks", r#"{"expression": "lane * 128"}"#, &[]);
    assert_eq!(r["conflict_degree"], 32);
    refused(
        "banks",
        r#"{"byte_addresses": [0, 4, 8]}"#,
        &[],
        "byte_addresses",
    );
    refused(
        "banks",
        r#"{"expression": "lane * 4 / 0"}"#,
        &[],
        "expression",
    );
    refused("banks", r#"{"expression": "lane * 3"}"#, &[], "expression");
    refused(
        "banks",
        r#"{"expression": "lane * 4", "elem_bytes": 32}"#,
        &[],
        "elem_bytes",
    );
}

#[test]
fn softmax_input_masks_a_whole_row_to_zero_and_bad_keys_exit_2() {
    // Row 0: scores (0, 0) → y = (1/2, 1/2); ∇y = (1, 0): s = 1/2, ∇x = (1/4, −1/4).
    // Row 1 fully masked: y = 0, ∇x = 0.
    let r = result(
        "softmax-formula",
        r#"{"scores": [[0, 0], [1, 2]], "dy": [[1, 0], [1, 0]], "mask": [[false, false], [true, true]]}"#,
        &[],
    );
    assert_eq!(r["rows"][0]["dx"], serde_json::json!([0.25, -0.25]));
    assert_eq!(r["rows"][1]["y"], serde_json::json!([0.0, 0.0]));
    assert_eq!(r["rows"][1]["dx"], serde_json::json!([0.0, 0.0]));
    assert_eq!(
        r["rows"][1]["naive"]["y_fill"],
        serde_json::json!([0.5, 0.5])
    );
    let s = "softmax-formula";
    refused(
        s,
        r#"{"scores": [[1, "nan"]], "dy": [[1, 2]]}"#,
        &[],
        "scores[0][1]",
    );
    refused(
        s,
        r#"{"scores": [[1, 2]], "dy": [[1, 2], [3, 4]]}"#,
        &[],
        "dy",
    );
    refused(
        s,
        r#"{"scores": [[1, 2]], "dy": [[1, 2]], "mask": [[true]]}"#,
        &[],
        "mask",
    );
    refused(s, r#"{"y": [[0.9, 0.9]], "dy": [[1, 2]]}"#, &[], "y[0]");
}

#[test]
fn too_many_numbers_are_refused_naming_the_key() {
    // 1025 rows × 1024 columns = 1,049,600 numbers, past the 2²⁰ = 1,048,576 an input key holds.
    let row = format!("[{}]", vec!["0"; 1024].join(","));
    let x = format!("[{}]", vec![row.as_str(); 1025].join(","));
    let json = format!("{{\"x\": {x}, \"dy\": {x}}}");
    refused("layernorm-formulas", &json, &[], "x");
    let values = format!("{{\"values\": [{}]}}", vec!["1"; (1 << 20) + 1].join(","));
    refused("reduction", &values, &[], "values");
}
