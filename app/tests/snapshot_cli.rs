//! The memory-snapshot CLI contract (issue 17): `report memory-snapshot --set path=F --set
//! event=N --json` prints `result.at_event` and `result.warnings`; an event past the trace is
//! refused naming its last event; `~` is expanded in `path`; `warpscope FILE.pickle` opens the
//! window on the file (here: refused without a display, after the path was checked).

// Test code: a failed expectation is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::{Command, Output};

fn data(name: &str) -> String {
    format!(
        "{}/../core/tests/data/snapshots/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn warpscope(args: &[&str], home: Option<&std::path::Path>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_warpscope"));
    c.args(args)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY");
    if let Some(h) = home {
        c.env("HOME", h);
    }
    c.output().expect("the binary runs")
}

fn report(args: &[&str], home: Option<&std::path::Path>) -> serde_json::Value {
    let mut all = vec!["report", "memory-snapshot"];
    all.extend_from_slice(args);
    all.push("--json");
    let out = warpscope(&all, home);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

#[test]
fn report_prints_the_state_at_an_event() {
    // The mini fixture after event 12, counted by hand from its events (read with Python's
    // pickle; see core's `the_mini_fixture_at_its_hand_counted_events`): six segments of
    // 24 + 20 + 24 + 24 + 20 + 24 MiB = 142,606,336 B reserved, seven allocs of 24 + 8 + 24 + 8 +
    // 24 + 8 + 24 MiB = 125,829,120 B requested; event 12 is `alloc` of 24 MiB.
    let path = format!("path={}", data("torch2.11-mini-fixture.pickle"));
    let v = report(&["--set", &path, "--set", "event=12"], None);
    assert_eq!(v["params"]["event"], 12);
    let a = &v["result"]["at_event"];
    assert_eq!(a["index"], 12);
    assert_eq!(a["action"], "alloc");
    assert_eq!(a["size"], 25_165_824);
    assert!(a["addr"].is_u64());
    assert_eq!(a["reserved_bytes"], 142_606_336_u64);
    assert_eq!(a["requested_bytes"], 125_829_120_u64);
    assert!(a["allocated_bytes"].is_u64());
    let segs = a["segments"].as_array().unwrap();
    assert_eq!(segs.len(), 6);
    let total: u64 = segs.iter().map(|s| s["total_size"].as_u64().unwrap()).sum();
    assert_eq!(total, 142_606_336);
    for s in segs {
        assert!(s["address"].is_u64());
        for b in s["blocks"].as_array().unwrap() {
            assert!(b["address"].is_u64() && b["size"].is_u64() && b["state"].is_string());
        }
    }
    // The trimmed fixture's trace disagrees with its blocks: said, not hidden.
    assert!(
        !v["result"]["warnings"].as_array().unwrap().is_empty(),
        "{}",
        v["result"]["warnings"]
    );
    // Without `event`, the last event: the file's own segments; a clean file has no warnings.
    let path = format!("path={}", data("torch2.11-cs336-a2.pickle"));
    let v = report(&["--set", &path], None);
    let r = &v["result"];
    assert_eq!(r["at_event"]["index"], 5162);
    assert_eq!(r["at_event"]["reserved_bytes"], r["reserved_bytes"]);
    assert_eq!(r["at_event"]["allocated_bytes"], r["allocated_bytes"]);
    assert_eq!(r["at_event"]["segments"].as_array().unwrap().len(), 216);
    assert_eq!(r["warnings"], serde_json::json!([]));
    // A file without a trace: no event to be at.
    let path = format!("path={}", data("torch2.6-verl.pickle"));
    assert!(report(&["--set", &path], None)["result"]["at_event"].is_null());
}

#[test]
fn an_event_past_the_trace_is_refused_naming_the_last() {
    let out = warpscope(
        &["report", "memory-snapshot", "--set", "event=50", "--json"],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("`event` = 50"), "{err}");
    assert!(err.contains("its last is event 49"), "{err}");
}

#[test]
fn a_path_with_a_tilde_is_read_from_home() {
    let home = std::env::temp_dir().join(format!("warpscope-home-{}", std::process::id()));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::copy(
        data("torch2.11-mini-fixture.pickle"),
        home.join("mini.pickle"),
    )
    .unwrap();
    let v = report(&["--set", "path=~/mini.pickle"], Some(&home));
    assert_eq!(v["result"]["segments"], 14);
    assert_eq!(v["result"]["path"], "~/mini.pickle");
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn a_bare_path_opens_the_window_on_that_file() {
    // Not a file: refused before any window.
    let out = warpscope(&["/nonexistent/run.pickle"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("no snapshot file at /nonexistent/run.pickle")
    );
    // A folder and a device are named as what they are.
    let out = warpscope(&[env!("CARGO_MANIFEST_DIR")], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("a folder, not a snapshot file"));
    #[cfg(unix)]
    {
        let out = warpscope(&["/dev/zero"], None);
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains("not a regular file"));
    }
    // An empty file and a text file: said to be no snapshot, with how to write one.
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.pickle");
    let text = dir.path().join("notes.pickle");
    std::fs::write(&empty, b"").unwrap();
    std::fs::write(&text, b"hello, not a pickle\n").unwrap();
    for (file, says) in [
        (&empty, "the file is empty"),
        (&text, "not a memory snapshot"),
    ] {
        let set = format!("path={}", file.display());
        let out = warpscope(&["report", "memory-snapshot", "--set", &set], None);
        assert_eq!(out.status.code(), Some(2), "{says}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(says) && err.contains("_dump_snapshot"),
            "{err}"
        );
    }
    // A file: the window is asked for (here there is no display, so it explains instead).
    let out = warpscope(&[&data("torch2.11-mini-fixture.pickle")], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no display"));
    // Subcommands still win.
    assert!(warpscope(&["list"], None).status.success());
    // The session it opens: the memory-snapshot scene with `path` set.
    let s = warpscope::gui::open::session_for(std::path::Path::new("/x/run.pickle"));
    assert_eq!(s.scene, "memory-snapshot");
    assert_eq!(
        s.params.0.get("path"),
        Some(&warpscope_core::params::ParamValue::Text(
            "/x/run.pickle".into()
        ))
    );
}

/// An export without `--step` shows the event the `event` parameter names (the last by
/// default, as `report` and the window do); `--step` places it anywhere, 0 included.
#[test]
fn an_export_shows_the_event_parameters_event_unless_a_step_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let shown = |extra: &[&str]| {
        let out = dir.path().join("fig.svg");
        let out_s = out.to_string_lossy().into_owned();
        let mut args = vec!["export", "memory-snapshot", "--out", &out_s];
        args.extend_from_slice(extra);
        let o = warpscope(&args, None);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let svg = std::fs::read_to_string(&out).unwrap();
        // The trace panel's heading: "Event N of 50: …" (the built-in fixture has 50 events).
        let at = svg.find(" of 50: ").expect("the event heading");
        let head = &svg[..at];
        head[head.rfind("Event ").expect("its start") + 6..].to_owned()
    };
    assert_eq!(shown(&[]), "49");
    assert_eq!(shown(&["--set", "event=7"]), "7");
    assert_eq!(shown(&["--step", "0"]), "0");
    assert_eq!(shown(&["--step", "12"]), "12");
}

/// The longest run of English words in `s`: words of Latin letters (hyphens and apostrophes
/// allowed) one after another with only ASCII spaces and punctuation between them. A Chinese
/// character, a number, an address or an identifier (`free_completed`, `torch.cuda`) ends a
/// run.
fn english_run(s: &str) -> usize {
    let mut most = 0;
    for chunk in s.split(|c: char| !c.is_ascii()) {
        let mut run = 0;
        for token in chunk.split_ascii_whitespace() {
            let word = token.trim_matches(|c: char| c.is_ascii_punctuation());
            let english = word.len() > 1
                && word
                    .chars()
                    .all(|c| c.is_ascii_alphabetic() || c == '-' || c == '\'');
            run = if english { run + 1 } else { 0 };
            most = most.max(run);
        }
    }
    most
}

#[test]
fn the_chinese_snapshot_figures_hold_no_english_sentence() {
    // The checker's own rule, on what the figures once showed.
    assert_eq!(english_run("文件：(built-in mini fixture)。"), 3);
    assert_eq!(english_run("（alloc at 0x7f783ba04000，256 B）"), 2);
    let dir = tempfile::tempdir().expect("temp dir");
    for scene in ["memory-snapshot", "memory-diff"] {
        let svg = dir.path().join(format!("{scene}.svg"));
        let svg_arg = svg.to_str().expect("a UTF-8 temp path");
        let out = warpscope(&["export", scene, "--lang", "zh", "--out", svg_arg], None);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = std::fs::read_to_string(&svg).expect("svg written");
        let doc = roxmltree::Document::parse(&text).expect("valid SVG");
        let rows: Vec<String> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .map(|n| {
                n.descendants()
                    .filter(|d| d.is_text())
                    .filter_map(|d| d.text())
                    .collect()
            })
            .collect();
        // The built-in fixture's warnings are in the figure, in Chinese.
        if scene == "memory-snapshot" {
            assert!(
                rows.iter()
                    .any(|r| r.contains("个轨迹事件无法在文件的块上撤销")),
                "{rows:?}"
            );
        }
        for row in &rows {
            assert!(english_run(row) < 3, "{scene}: {row}");
        }
    }
}
