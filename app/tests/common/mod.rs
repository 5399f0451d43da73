//! What the CLI tests share: running the built binary without a display, and `report --input`
//! on a JSON text written to a fresh file.

// Each test file uses its own share of these.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::process::{Command, Output};

/// Runs `warpscope ARGS` with no display, so no window can open.
pub fn warpscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_warpscope"))
        .args(args)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .expect("the binary runs")
}

/// Writes `json` to a fresh file and runs `report SCENE --input FILE --json`, then `extra`.
pub fn report_input(scene: &str, json: &str, extra: &[&str]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("input.json");
    std::fs::write(&path, json).unwrap();
    let p = path.to_str().unwrap();
    let mut args = vec!["report", scene, "--input", p, "--json"];
    args.extend_from_slice(extra);
    warpscope(&args)
}
