//! Issue 19, "no hang, no runaway memory, no silent wrong answer": each row's reproduction, run
//! through the binary. A refusal exits with status 2 within seconds, its message is under 1 KB
//! and names the parameter or path the user gave; nothing is clamped, cut or dropped silently.

// Test code: a failed expectation is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs the binary with `args`, killing it (and failing) if it runs past `limit`. Its output is
/// read while it runs (a full pipe would otherwise stall it).
fn run_within(args: &[&str], limit: Duration) -> Output {
    use std::io::Read as _;
    let mut child = Command::new(env!("CARGO_BIN_EXE_warpscope"))
        .args(args)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let drain = |mut r: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            buf
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("piped")));
    let stderr = drain(Box::new(child.stderr.take().expect("piped")));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("waits") {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{args:?} ran past {limit:?} (a hang or a grind)");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: stdout.join().expect("stdout read"),
        stderr: stderr.join().expect("stderr read"),
    }
}

fn warpscope(args: &[&str]) -> Output {
    run_within(args, Duration::from_secs(120))
}

/// Asserts that `args` is refused: status 2 within `limit`, a message under 1 KB that contains
/// every needle; answers the message.
fn refused_within(args: &[&str], needles: &[&str], limit: Duration) -> String {
    let out = run_within(args, limit);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.len() < 1024, "{args:?}: a {}-byte message", err.len());
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: `{n}` not in: {err}");
    }
    err
}

fn refused(args: &[&str], needles: &[&str]) -> String {
    refused_within(args, needles, Duration::from_secs(60))
}

fn mkfifo(path: &Path) {
    let ok = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs")
        .success();
    assert!(ok, "mkfifo {}", path.display());
}

fn s(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 temp path")
}

/// The longest run of digits in `text`.
fn longest_digit_run(text: &str) -> usize {
    text.split(|c: char| !c.is_ascii_digit())
        .map(str::len)
        .max()
        .unwrap_or(0)
}

/// The number after `marker` in `text`.
fn number_after(text: &str, marker: &str) -> usize {
    let rest = &text[text
        .find(marker)
        .unwrap_or_else(|| panic!("`{marker}` in {text}"))
        + marker.len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("a number after `{marker}` in {text}"))
}

// Rows 2 and 3: presets that are FIFOs or devices are refused before they are opened.

#[cfg(unix)]
#[test]
fn row2_a_fifo_preset_is_refused_at_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fifo = dir.path().join("p.json");
    mkfifo(&fifo);
    let out = dir.path().join("x.svg");
    for args in [
        vec!["report", "--preset", s(&fifo)],
        vec!["export", "--preset", s(&fifo), "--out", s(&out)],
        vec!["gui", "--preset", s(&fifo)],
    ] {
        refused_within(&args, &[s(&fifo), "FIFO"], Duration::from_secs(5));
    }
    assert!(!out.exists(), "nothing written");
}

#[cfg(unix)]
#[test]
fn row3_a_device_preset_is_refused_without_reading_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("x.svg");
    for dev in ["/dev/zero", "/dev/urandom"] {
        for args in [
            vec!["report", "--preset", dev],
            vec!["export", "--preset", dev, "--out", s(&out)],
            vec!["gui", "--preset", dev],
        ] {
            refused_within(&args, &[dev, "device"], Duration::from_secs(5));
        }
    }
    // A directory, and a regular file over the session limit, are refused the same way.
    refused(&["report", "--preset", s(dir.path())], &["directory"]);
    let big = dir.path().join("big.json");
    let over = warpscope_core::session::MAX_SESSION_BYTES + 1;
    std::fs::write(&big, vec![b' '; over]).unwrap();
    refused(
        &["report", "--preset", s(&big)],
        &["big.json", &over.to_string()],
    );
}

// Row 1: snapshots that are FIFOs or devices. The door is `warpscope_core::input::read_regular`;
// `torch::snapshot::read_file` is switched to it when the core split lands (issue 19 report).

#[cfg(unix)]
#[test]
fn row1_a_fifo_or_device_snapshot_is_refused_at_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fifo = dir.path().join("f.pickle");
    mkfifo(&fifo);
    let path = format!("path={}", s(&fifo));
    let out = dir.path().join("x.svg");
    refused_within(
        &["report", "memory-snapshot", "--set", &path, "--json"],
        &[s(&fifo), "FIFO"],
        Duration::from_secs(5),
    );
    refused_within(
        &[
            "export",
            "memory-snapshot",
            "--set",
            &path,
            "--out",
            s(&out),
        ],
        &[s(&fifo), "FIFO"],
        Duration::from_secs(5),
    );
    let preset = dir.path().join("snap.json");
    std::fs::write(
        &preset,
        serde_json::json!({"scene": "memory-snapshot", "params": {"path": s(&fifo)}}).to_string(),
    )
    .unwrap();
    refused_within(
        &["report", "--preset", s(&preset)],
        &[s(&fifo), "FIFO"],
        Duration::from_secs(5),
    );
    refused_within(
        &["report", "memory-snapshot", "--set", "path=/dev/zero"],
        &["/dev/zero", "device"],
        Duration::from_secs(5),
    );
}

// Row 4: GIF ranges are honoured or refused, never cut; long ones are capped with the fix.

#[test]
fn row4_frames_past_the_end_or_too_many_are_refused_naming_the_last_event() {
    let dir = tempfile::tempdir().expect("temp dir");
    let gif = dir.path().join("r.gif");
    let err = refused(
        &[
            "export",
            "reduction",
            "--frames",
            "0..1000000",
            "--out",
            s(&gif),
        ],
        &["frames", "0..1000000"],
    );
    let last = number_after(&err, "the last is ");
    // The range is shown as given, not rewritten.
    refused(
        &[
            "export",
            "reduction",
            "--frames",
            "100000..100010",
            "--out",
            s(&gif),
        ],
        &["100000..100010", &format!("the last is {last}")],
    );
    let past = format!("{}..{}", last, last + 1);
    refused(
        &["export", "reduction", "--frames", &past, "--out", s(&gif)],
        &[&past],
    );
    // A trace longer than the cap, with `FROM..` or no --frames: refused at once with the fix.
    let threads = ["--set", "threads=1024"];
    let err = refused_within(
        &[&["export", "reduction"][..], &threads, &["--out", s(&gif)]].concat(),
        &["frames", "--frames 0.."],
        Duration::from_secs(30),
    );
    let cap = number_after(&err, "at most ");
    assert!(cap > 0, "{err}");
    refused_within(
        &[
            &["export", "reduction"][..],
            &threads,
            &["--frames", "0..", "--out", s(&gif)],
        ]
        .concat(),
        &["frames", "0.."],
        Duration::from_secs(30),
    );
    let over = format!("0..{cap}");
    refused_within(
        &[
            &["export", "reduction"][..],
            &threads,
            &["--frames", &over, "--out", s(&gif)],
        ]
        .concat(),
        &[&over, &format!("at most {cap}")],
        Duration::from_secs(30),
    );
    assert!(!gif.exists(), "nothing written");
    // The last event itself is a valid frame.
    let last_only = format!("{last}..{last}");
    let out = warpscope(&[
        "export",
        "reduction",
        "--frames",
        &last_only,
        "--scale",
        "1",
        "--out",
        s(&gif),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // --step belongs to a PNG or SVG: with a GIF it is refused, not ignored.
    refused(
        &["export", "reduction", "--step", "3", "--out", s(&gif)],
        &["--step 3", "--frames"],
    );
}

#[test]
fn row4_gif_export_reports_progress_and_keeps_every_frame() {
    use image::AnimationDecoder;
    let dir = tempfile::tempdir().expect("temp dir");
    let gif = dir.path().join("r.gif");
    let out = warpscope(&[
        "export",
        "reduction",
        "--set",
        "threads=64",
        "--frames",
        "0..23",
        "--scale",
        "1",
        "--out",
        s(&gif),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("frame 24/24"), "progress on stderr: {err}");
    let file = std::io::BufReader::new(std::fs::File::open(&gif).expect("gif written"));
    let frames = image::codecs::gif::GifDecoder::new(file)
        .expect("a GIF")
        .into_frames()
        .collect_frames()
        .expect("frames");
    assert_eq!(frames.len(), 24, "events 0..=23");
    // Consecutive events differ (the stepper moves), and every frame is the full canvas.
    let (w, h) = frames[0].buffer().dimensions();
    assert!(frames.iter().all(|f| f.buffer().dimensions() == (w, h)));
    assert_ne!(frames[0].buffer().as_raw(), frames[1].buffer().as_raw());
}

// Row 5: a snapshot whose number literal is a megabyte long.

#[test]
fn row5_a_huge_literal_is_not_echoed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let p = dir.path().join("i.pickle");
    let mut bytes = b"I".to_vec();
    bytes.extend(std::iter::repeat_n(b'9', 1_000_000));
    bytes.extend_from_slice(b"\n.");
    std::fs::write(&p, bytes).unwrap();
    let err = refused(
        &[
            "report",
            "memory-snapshot",
            "--set",
            &format!("path={}", s(&p)),
        ],
        &["i.pickle"],
    );
    assert!(longest_digit_run(&err) < 40, "{err}");
}

// Row 6: the memory-allocator summary after out-of-memory.

#[test]
fn row6_an_out_of_memory_run_is_summarised_truthfully() {
    let out = warpscope(&[
        "report",
        "memory-allocator",
        "--set",
        "layers=48",
        "--set",
        "batches=1200",
        "--set",
        "tokens=65536",
        "--set",
        "len_min=1",
        "--set",
        "len_max=32",
        "--json",
    ]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let r = &v["result"];
    assert!(r["oom"].is_string(), "the run hits out-of-memory");
    // The batch that ran out is summarised: it allocated something, its length is in range, and
    // shares of an allocation are never negative.
    assert!(r["allocated_peak_mib"].as_f64().unwrap() > 0.0, "{r}");
    let len = r["largest_batch_len"].as_u64().unwrap();
    assert!((1..=32).contains(&len), "largest batch length {len}");
    let idle = r["preallocated_mean_idle_share"].as_f64().unwrap();
    assert!(idle >= 0.0 && idle.is_sign_positive(), "{idle}");
    // The failing batch is described, in the timeline or on its own.
    assert!(
        !r["timeline"].as_array().unwrap().is_empty() || r["oom_batch"].is_object(),
        "{r}"
    );
}

// Row 7: presets are read with the command line's rules and say what type they hold.

#[test]
fn row7_preset_types_follow_the_command_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let preset = |name: &str, json: serde_json::Value| {
        let p = dir.path().join(name);
        std::fs::write(&p, json.to_string()).unwrap();
        p
    };
    let report = |args: &[&str]| -> serde_json::Value {
        let out = warpscope(&[&["report"][..], args, &["--json"]].concat());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("JSON")
    };
    // 3.0 is the integer 3 in a preset, as `--set pad=3.0` and `--set pad=3e0` are.
    let p = preset(
        "f.json",
        serde_json::json!({"scene": "banks", "params": {"pad": 3.0}}),
    );
    let from_preset = report(&["--preset", s(&p)]);
    for spelling in ["pad=3", "pad=3.0", "pad=3e0"] {
        assert_eq!(
            report(&["banks", "--set", spelling]),
            from_preset,
            "{spelling}"
        );
    }
    // A string or a fraction is refused, saying which.
    let p = preset(
        "s.json",
        serde_json::json!({"scene": "banks", "params": {"pad": "3"}}),
    );
    refused(
        &["report", "--preset", s(&p)],
        &["`pad`", "a string, expected an integer"],
    );
    let p = preset(
        "h.json",
        serde_json::json!({"scene": "banks", "params": {"pad": 3.5}}),
    );
    refused(
        &["report", "--preset", s(&p)],
        &["`pad`", "a float, expected an integer"],
    );
    refused(&["report", "banks", "--set", "pad=3.5"], &["`pad`", "3.5"]);
    // u64::MAX stays exact, in a preset and on the command line.
    let max = u64::MAX.to_string();
    let p = dir.path().join("seed.json");
    std::fs::write(
        &p,
        format!(r#"{{"scene": "layernorm-error", "params": {{"seed": {max}}}}}"#),
    )
    .unwrap();
    refused(
        &["report", "--preset", s(&p)],
        &["`seed`", &format!("= {max}:")],
    );
    refused(
        &["report", "layernorm-error", "--set", &format!("seed={max}")],
        &["`seed`", &format!("= {max}:")],
    );
}

// Row 8: lists, steps and options that were silently lenient.

#[test]
fn row8_empty_items_zero_means_and_steps_past_the_end_are_refused() {
    for means in ["1,,2", "1,", ",1", "1, ,2"] {
        refused(
            &[
                "report",
                "layernorm-error",
                "--set",
                &format!("means={means}"),
            ],
            &["`means`", "empty"],
        );
    }
    // 0 cannot be drawn on the view's logarithmic axis: refused with the reason.
    for means in ["0", "1,0,10"] {
        refused(
            &[
                "report",
                "layernorm-error",
                "--set",
                &format!("means={means}"),
            ],
            &["`means`", "logarithmic"],
        );
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let png = dir.path().join("r.png");
    let err = refused(
        &[
            "export",
            "reduction",
            "--step",
            "999999999",
            "--scale",
            "1",
            "--out",
            s(&png),
        ],
        &["--step 999999999"],
    );
    let last = number_after(&err, "the last is ");
    let out = warpscope(&[
        "export",
        "reduction",
        "--step",
        &last.to_string(),
        "--scale",
        "1",
        "--out",
        s(&png),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_file(&png).unwrap();
    refused(
        &[
            "export",
            "reduction",
            "--step",
            &(last + 1).to_string(),
            "--out",
            s(&png),
        ],
        &[&format!("the last is {last}")],
    );
    // A preset's step is held to the same end.
    let preset = dir.path().join("r.json");
    std::fs::write(
        &preset,
        serde_json::json!({"scene": "reduction", "step": last + 1}).to_string(),
    )
    .unwrap();
    refused(
        &["export", "--preset", s(&preset), "--out", s(&png)],
        &["step", &format!("the last is {last}")],
    );
    // --step on a scene without a trace.
    refused(
        &["export", "layernorm-bytes", "--step", "5", "--out", s(&png)],
        &["--step 5", "layernorm-bytes"],
    );
    refused(
        &["export", "--all", "--step", "5", "--out", s(dir.path())],
        &["--step"],
    );
    assert!(!png.exists(), "nothing written");
}

// Row 9: numbers as written, the parameter set named, ranges advertised as accepted.

#[test]
fn row9_numbers_are_shown_as_written_and_name_what_was_set() {
    for (scene, set) in [
        ("softmax-fusion", "dropout=1e308"),
        ("trainer-fp16", "lr=1e308"),
        ("step-ledger", "gemm_efficiency=1e308"),
        ("trainer-fp16", "lr=-1e308"),
    ] {
        let name = set.split('=').next().unwrap();
        let err = refused(
            &["report", scene, "--set", set],
            &[&format!("`{name}`"), set.split('=').nth(1).unwrap()],
        );
        assert!(longest_digit_run(&err) < 40, "{err}");
    }
    let long = format!("threads={}", "9".repeat(5000));
    let err = refused(
        &["report", "reduction", "--set", &long],
        &["`threads`", "5000 characters"],
    );
    assert!(longest_digit_run(&err) < 40, "{err}");
    // Kernel options: checked (and named) before any adapter is opened.
    let err = refused(
        &["run", "softmax-bw", "--set", "rows=1e308"],
        &["rows", "1e308"],
    );
    assert!(longest_digit_run(&err) < 40, "{err}");
    let err = refused(&["run", "softmax-bw", "--set", "runs=0"], &["runs = 0:"]);
    assert!(
        !err.contains("runs=0"),
        "the value, not the assignment: {err}"
    );
    let max = number_after(&err, "1..=");
    assert!(max > 1, "{err}");
    let err = refused(
        &["run", "softmax-bw", "--set", &format!("runs={}", max + 1)],
        &[&format!("1..={max}")],
    );
    assert!(err.contains("runs"), "{err}");
}

#[test]
fn row9_a_work_limit_names_the_parameter_that_was_set() {
    let err = refused(
        &["report", "trainer-fp16", "--set", "steps=100000"],
        &["`steps`"],
    );
    assert!(!err.contains("`count`"), "count was never set: {err}");
}

/// Real-valued parameters whose scenes still refuse an end `list --json` advertises as
/// accepted; each must leave this list when its spec declares the open end (`open_min`) or
/// closes its range (main's 48000ad makes `gemm_efficiency` 0.01..=1: empty this at the merge).
const PENDING_OPEN_ENDS: &[(&str, &str)] = &[];

#[test]
fn row9_list_json_advertises_exactly_the_accepted_range() {
    let out = warpscope(&["list", "--json"]);
    assert!(out.status.success());
    let all: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let mut checked = 0;
    for scene in all.as_array().expect("scenes") {
        let id = scene["id"].as_str().expect("id");
        for p in scene["params"].as_array().expect("params") {
            let name = p["name"].as_str().expect("name");
            let (Some(range), Some(open)) = (p["range"].as_array(), p["range_open"].as_array())
            else {
                continue;
            };
            // Integer ranges are closed; real ones say which end is open.
            if p["default"].is_i64() {
                assert_eq!(open, &[false, false], "{id}.{name}");
                continue;
            }
            let mut agrees = true;
            for (end, open) in range.iter().zip(open) {
                let set = format!("{name}={}", end.as_f64().expect("a number"));
                let out = warpscope(&["report", id, "--set", &set, "--json"]);
                let err = String::from_utf8_lossy(&out.stderr);
                let accepted = out.status.success();
                let refused_here =
                    out.status.code() == Some(2) && err.contains(&format!("`{name}`"));
                assert!(accepted || refused_here, "{id} --set {set}: {err}");
                agrees &= accepted != open.as_bool().expect("a bool");
            }
            checked += 1;
            let pending = PENDING_OPEN_ENDS.contains(&(id, name));
            assert!(
                agrees != pending,
                "{id}.{name}: {}",
                if pending {
                    "now advertised as accepted: remove it from PENDING_OPEN_ENDS"
                } else {
                    "the advertised ends are not the accepted ones"
                }
            );
        }
    }
    assert!(checked > 0);
}

// Row 10: writing through a symbolic link.

#[cfg(unix)]
#[test]
fn row10_an_export_through_a_symlink_replaces_its_target() {
    let dir = tempfile::tempdir().expect("temp dir");
    let target: PathBuf = dir.path().join("figures").join("banks.svg");
    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
    std::fs::write(&target, "stale").unwrap();
    let link = dir.path().join("link.svg");
    std::os::unix::fs::symlink("figures/banks.svg", &link).unwrap();
    let out = warpscope(&["export", "banks", "--out", s(&link)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta = std::fs::symlink_metadata(&link).unwrap();
    assert!(meta.file_type().is_symlink(), "the link stays a link");
    let text = std::fs::read_to_string(&target).unwrap();
    assert!(text.starts_with("<svg"), "the target holds the new figure");
    // A chain of links, and a GIF, go the same way; nothing is left beside the link.
    let link2 = dir.path().join("link2.svg");
    std::os::unix::fs::symlink("link.svg", &link2).unwrap();
    std::fs::write(&target, "stale").unwrap();
    let out = warpscope(&["export", "banks", "--out", s(&link2)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        std::fs::read_to_string(&target)
            .unwrap()
            .starts_with("<svg")
    );
    assert!(
        std::fs::symlink_metadata(&link2)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
}

// Issue 30, "reliability III": each item's reproduction, in a file of its own.
#[path = "reliability/issue30.rs"]
mod issue30;

// Issue 30's memory items (3, 4, 11): settings kept as written, bounded inputs, the guard.
#[path = "reliability/issue30_memory.rs"]
mod issue30_memory;
