//! The CLI contract (SCENES.md): `report SCENE --set k=v --json` prints
//! `{"scene", "params", "result"}`; invalid values exit 2 naming the parameter and its range.

use std::process::{Command, Output};

fn warpscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_warpscope"))
        .args(args)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .expect("the binary runs")
}

fn report(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["report"];
    all.extend_from_slice(args);
    all.push("--json");
    let out = warpscope(&all);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

#[test]
fn banks_column_access_conflicts_unless_padded() {
    let base = [
        "banks",
        "--set",
        "rows=32",
        "--set",
        "cols=32",
        "--set",
        "elem_bytes=4",
        "--set",
        "pattern=column",
    ];
    let mut a = base.to_vec();
    a.extend(["--set", "pad=0"]);
    let v = report(&a);
    assert_eq!(v["scene"], "banks");
    assert_eq!(v["params"]["pad"], 0);
    let r = &v["result"];
    assert_eq!(
        (
            r["conflict_degree"].as_u64(),
            r["wavefronts"].as_u64(),
            r["ideal_wavefronts"].as_u64()
        ),
        (Some(32), Some(32), Some(1))
    );
    let mut a = base.to_vec();
    a.extend(["--set", "pad=1"]);
    let r = &report(&a)["result"];
    assert_eq!(
        (
            r["conflict_degree"].as_u64(),
            r["wavefronts"].as_u64(),
            r["ideal_wavefronts"].as_u64()
        ),
        (Some(1), Some(1), Some(1))
    );
}

#[test]
fn reduction_together_needs_fewer_barriers_and_sums_match() {
    let r = &report(&["reduction", "--set", "threads=256", "--set", "values=2"])["result"];
    let together = r["block_barriers_together"].as_u64().unwrap();
    let sequential = r["block_barriers_sequential"].as_u64().unwrap();
    assert!(together < sequential, "{together} vs {sequential}");
    let sums = r["sums"].as_array().unwrap();
    let refs = r["reference_sums"].as_array().unwrap();
    assert_eq!(sums.len(), 2);
    for (s, f) in sums.iter().zip(refs) {
        assert!((s.as_f64().unwrap() - f.as_f64().unwrap()).abs() < 1e-4);
    }
}

#[test]
fn invalid_values_exit_2_naming_the_parameter() {
    for (args, needle) in [
        (
            vec!["report", "reduction", "--set", "threads=2000"],
            "threads",
        ),
        (
            vec!["report", "reduction", "--set", "threads=100"],
            "multiple of the warp width",
        ),
        (
            vec!["report", "banks", "--set", "pattern=zigzag"],
            "row, column, diagonal, stride",
        ),
        (vec!["report", "banks", "--set", "nonsense"], "key=value"),
        (vec!["report", "banks", "--set", "rows=abc"], "rows"),
        (vec!["report", "no-such-scene"], "warpscope list"),
        // Non-finite and out-of-range reals, and integers spelled as non-integers.
        (vec!["report", "trainer-fp16", "--set", "lr=NaN"], "lr"),
        (vec!["report", "trainer-fp16", "--set", "lr=inf"], "lr"),
        (
            vec!["report", "softmax-fusion", "--set", "dropout=-inf"],
            "dropout",
        ),
        (
            vec!["report", "softmax-fusion", "--set", "dropout=1e400"],
            "dropout",
        ),
        (
            vec!["report", "reduction", "--set", "threads=1e999"],
            "threads",
        ),
        (
            vec![
                "report",
                "reduction",
                "--set",
                "threads=-9223372036854775809",
            ],
            "threads",
        ),
        // Work past about a second is refused with the number.
        (
            vec![
                "report",
                "trainer-workspace",
                "--set",
                "model=gpt2-xl",
                "--set",
                "steps=100",
            ],
            "element-steps",
        ),
        // Snapshot paths: missing, a directory, not a pickle.
        (
            vec![
                "report",
                "memory-snapshot",
                "--set",
                "path=/nonexistent/x.pickle",
            ],
            "cannot open",
        ),
        (
            vec!["report", "memory-snapshot", "--set", "path=/"],
            "directory",
        ),
        (
            vec!["report", "memory-snapshot", "--set", "path=Cargo.toml"],
            "snapshot",
        ),
    ] {
        let out = warpscope(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn list_prints_every_scene_id() {
    let out = warpscope(&["list"]);
    assert!(out.status.success());
    let ids: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    assert!(
        ids.iter().any(|l| l == "reduction") && ids.iter().any(|l| l == "banks"),
        "{ids:?}"
    );
    for id in &ids {
        let out = warpscope(&["report", id, "--json"]);
        assert!(
            out.status.success(),
            "{id}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn gui_without_display_explains_instead_of_panicking() {
    if !cfg!(target_os = "linux") {
        return;
    }
    let out = warpscope(&[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no display") && err.contains("report"),
        "{err}"
    );
    assert!(!err.contains("panicked"));
}
