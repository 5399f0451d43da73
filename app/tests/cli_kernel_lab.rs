//! `warpscope run kernel-lab`: a user's kernel file with its dispatch, a bundled example, and
//! the refusals (status 2 for bad input, whether or not an adapter is present).

// Test code: a failed expectation is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::warpscope;

/// A strided `vec2<f32>` read: o[i] = a[2i].x + a[2i + 1].y.
const KERNEL: &str = "
@group(0) @binding(0) var<storage, read> a: array<vec2<f32>>;
@group(0) @binding(1) var<storage, read_write> o: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    o[g.x] = a[2u * g.x].x + a[2u * g.x + 1u].y;
}
";

/// Writes `source` and `input` to fresh files and runs
/// `run kernel-lab --set source=FILE --input FILE ARGS`.
fn lab(source: &str, input: &str, args: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("k.wgsl");
    let d = dir.path().join("d.json");
    std::fs::write(&k, source).unwrap();
    std::fs::write(&d, input).unwrap();
    let set = format!("source={}", k.display());
    let mut all = vec![
        "run",
        "kernel-lab",
        "--set",
        &set,
        "--input",
        d.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    warpscope(&all)
}

/// Whether the run found no adapter (allowed outside CI: the test is then skipped).
fn no_adapter(out: &std::process::Output) -> bool {
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(1) && err.contains("no GPU adapter") {
        assert!(
            !warpscope_kernels::adapter_required(),
            "CI must provide an adapter: {err}"
        );
        eprintln!("skipped: no adapter ({err})");
        return true;
    }
    false
}

#[test]
fn a_users_kernel_runs_with_its_dispatch() {
    let input = r#"{"workgroups": [2, 1, 1], "buffers": {
        "0:0": {"type": "vec2<f32>", "len": 256, "fill": "iota"},
        "0:1": {"type": "f32", "len": 128}}}"#;
    let out = lab(KERNEL, input, &["--json", "--set", "runs=2"]);
    if no_adapter(&out) {
        return;
    }
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // iota: a[j] = (j, j), so o[i] = 2i + (2i + 1) = 4i + 1.
    let want: Vec<f64> = (0..128).map(|i| f64::from(4 * i + 1)).collect();
    assert_eq!(v["buffers"]["0:1"], serde_json::json!(want));
    assert_eq!(v["entry"], "main");
    assert_eq!(v["workgroup_size"], serde_json::json!([64, 1, 1]));
    assert_eq!(v["time"]["runs"], 2);
    assert!(v["adapter"]["name"].is_string());
    // The simulation of the same source and bytes agrees element for element.
    assert_eq!(v["comparison"]["passed"], true, "{v}");
    assert_eq!(v["comparison"]["buffers"]["0:1"]["mismatches"], 0, "{v}");
}

#[test]
fn a_bundled_example_runs_without_input() {
    let out = warpscope(&["run", "kernel-lab", "--set", "source=prefix-sum", "--json"]);
    if no_adapter(&out) {
        return;
    }
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // The scan of iota 0 … 255: the block's last element is 255 · 256 / 2.
    assert_eq!(v["buffers"]["0:1"][255], 32640.0);
    // The second block starts over: 256.
    assert_eq!(v["buffers"]["0:1"][256], 256.0);
    assert_eq!(v["comparison"]["passed"], true, "{v}");
    assert_eq!(v["comparison"]["buffers"]["0:1"]["type"], "u32");
    let out = warpscope(&["run", "--list"]);
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .any(|l| l == "kernel-lab")
    );
}

#[test]
fn bad_input_exits_2_naming_what_is_wrong() {
    let cases: [(&str, &str, &[&str], &str); 6] = [
        // A buffer the kernel binds is missing.
        (
            KERNEL,
            r#"{"workgroups": [1, 1, 1], "buffers": {"0:0": {"type": "f32", "len": 4}}}"#,
            &[],
            "no buffer for \"0:1\" (`o`)",
        ),
        // One it does not declare.
        (
            KERNEL,
            r#"{"workgroups": [1, 1, 1], "buffers": {"0:0": {"type": "f32", "len": 4},
               "0:1": {"type": "f32", "len": 4}, "3:0": {"type": "f32", "len": 4}}}"#,
            &[],
            "\"3:0\"",
        ),
        // The source does not parse: naga's message with the line.
        (
            "fn main( {",
            r#"{"workgroups": [1, 1, 1]}"#,
            &[],
            "does not parse",
        ),
        // The dispatch JSON names the key.
        (KERNEL, r#"{"workgroups": [0, 1, 1]}"#, &[], "workgroups[0]"),
        (
            KERNEL,
            r#"{"workgroups": [1, 1, 1]}"#,
            &["--set", "rows=4"],
            "rows",
        ),
        (
            KERNEL,
            r#"{"workgroups": [1, 1, 1]}"#,
            &["--set", "entry=other"],
            "no compute entry point `other`",
        ),
    ];
    for (source, input, extra, says) in cases {
        let out = lab(source, input, extra);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{input}: {err}");
        assert!(err.contains(says), "{input}: {err}");
    }
    let out = warpscope(&["run", "kernel-lab", "--set", "source=no-such-example"]);
    assert_eq!(out.status.code(), Some(2));
    let out = warpscope(&["run", "adam", "--input", "x.json"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn record_flag_records_the_tiled_transpose_as_simulated() {
    let out = warpscope(&[
        "run",
        "kernel-lab",
        "--set",
        "source=transpose-tiled",
        "--record",
        "--json",
    ]);
    if no_adapter(&out) {
        return;
    }
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &v["recorded"];
    // The issue's Done-when: nothing dropped, the instrumented run's buffers equal the plain
    // run's, every line's shared requests and wavefronts equal to the simulation's at the
    // recorded subgroup size.
    assert_eq!(r["dropped"], 0, "{r}");
    assert_eq!(r["unrecorded"], 0, "{r}");
    assert_eq!(r["buffers_equal"], true, "{r}");
    assert_eq!(r["comparison"]["all_equal"], true, "{r}");
    let n = r["subgroup_size"].as_u64().unwrap();
    assert!(n.is_power_of_two(), "{n}");
    // The column read of the 32 × 32 tile puts the lanes of a subgroup in one bank: a
    // request of n lanes is n wavefronts, so some line averages n wavefronts a request.
    let lines = r["lines"].as_array().unwrap();
    assert!(
        lines.iter().any(|l| {
            let (req, wf) = (
                l["shared_requests"].as_u64().unwrap_or(0),
                l["shared_wavefronts"].as_u64().unwrap_or(0),
            );
            req > 0 && wf == n * req
        }),
        "{r}"
    );
}
