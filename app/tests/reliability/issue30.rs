//! Issue 30, "reliability III": each fixed item's reproduction, run through the binary (the
//! helpers are the parent's). A refusal exits with status 2 and names what to change; work that
//! could not be done exits with status 1 (README's exit-code rule).

use super::*;

// Issue 30, item 12: an export respects the permissions of the file it would replace.

#[cfg(unix)]
#[test]
fn issue30_item12_a_read_only_target_is_refused_and_a_replaced_file_keeps_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("temp dir");
    let ro = dir.path().join("ro.png");
    std::fs::write(&ro, "keep\n").unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o444)).unwrap();
    let out = warpscope(&["export", "banks", "--out", s(&ro)]);
    let err = String::from_utf8_lossy(&out.stderr);
    // A write that cannot be done is a runtime failure: status 1 (README's exit-code rule).
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("read-only") && err.contains("ro.png"), "{err}");
    assert_eq!(std::fs::read_to_string(&ro).unwrap(), "keep\n");
    let mode = std::fs::metadata(&ro).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o444);

    let private = dir.path().join("private.svg");
    std::fs::write(&private, "old").unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = warpscope(&["export", "banks", "--out", s(&private)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        std::fs::read_to_string(&private)
            .unwrap()
            .starts_with("<svg")
    );
    let mode = std::fs::metadata(&private).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the replaced file keeps its mode");

    // A new file is an ordinary document: 0644 (the umask aside, which the rename ignores).
    let fresh = dir.path().join("fresh.svg");
    let out = warpscope(&["export", "banks", "--out", s(&fresh)]);
    assert!(out.status.success());
    let mode = std::fs::metadata(&fresh).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644);
}

// Issue 30, item 14: names a file supplies, with characters XML cannot hold.

#[test]
fn issue30_item14_control_characters_in_names_leave_a_well_formed_svg_and_a_png() {
    let dir = tempfile::tempdir().expect("temp dir");
    let input = dir.path().join("plan.json");
    // U+0001, BEL, ESC, NUL and U+FFFF in tensor names, as JSON escapes.
    std::fs::write(
        &input,
        r#"{"tensors": [{"name": "a\u0001\u0007", "size_bytes": 4096, "first_op": 0, "last_op": 1},
                        {"name": "b\u001b\u0000\uffff", "size_bytes": 4096, "first_op": 1, "last_op": 2}]}"#,
    )
    .unwrap();
    let svg = dir.path().join("plan.svg");
    let out = warpscope(&[
        "export",
        "memory-plan",
        "--input",
        s(&input),
        "--out",
        s(&svg),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&text);
    assert!(doc.is_ok(), "not well-formed: {:?}", doc.err());
    assert!(
        text.contains(r"a\u{1}\u{7}"),
        "the characters are shown by their code"
    );
    let png = dir.path().join("plan.png");
    let out = warpscope(&[
        "export",
        "memory-plan",
        "--input",
        s(&input),
        "--out",
        s(&png),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));
    let outlined = dir.path().join("outlined.svg");
    let out = warpscope(&[
        "export",
        "memory-plan",
        "--input",
        s(&input),
        "--outline-text",
        "--out",
        s(&outlined),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `report SCENE --input FILE --json` with `set`: the result object.
fn report_input(scene: &str, input: &str, set: &[&str]) -> serde_json::Value {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("in.json");
    std::fs::write(&path, input).unwrap();
    let mut args = vec!["report", scene, "--input", s(&path), "--json"];
    for kv in set {
        args.extend(["--set", kv]);
    }
    let out = warpscope(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["result"].clone()
}

/// Every `null` in `v`, by path.
fn nulls(v: &serde_json::Value, at: &str, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Null => out.push(at.to_owned()),
        serde_json::Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                nulls(x, &format!("{at}[{i}]"), out);
            }
        }
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                nulls(x, &format!("{at}.{k}"), out);
            }
        }
        _ => {}
    }
}

// Issue 30, item 7: ±∞ and NaN in results are the strings README promises.

#[test]
fn issue30_item7_an_overflowing_sum_is_written_inf_not_null() {
    // 3e38 + 3e38 is past f32's largest finite value (3.4028235e38): +∞ in f32.
    let r = report_input(
        "reduction",
        r#"{"values": [3e38, 3e38, 1, 1]}"#,
        &["threads=4"],
    );
    assert_eq!(r["sums"], serde_json::json!(["inf"]));
    // −∞ stays told apart from +∞ and NaN.
    let r = report_input(
        "reduction",
        r#"{"values": [-3e38, -3e38, 1, 1]}"#,
        &["threads=4"],
    );
    assert_eq!(r["sums"], serde_json::json!(["-inf"]));
    // LayerNorm on a row whose f32 square overflows: no `null` anywhere in the result.
    let r = report_input(
        "layernorm-formulas",
        r#"{"x": [[3e38, -3e38, 1, 1]], "dy": [[1, 0, 0, 0]]}"#,
        &["dtype=f32"],
    );
    let mut found = Vec::new();
    nulls(&r, "result", &mut found);
    assert!(found.is_empty(), "nulls at {found:?}");
    assert!(r.to_string().contains("\"inf\"") || r.to_string().contains("\"nan\""));
}

// Issue 30, item 20: the sums of layernorm-formulas default to PyTorch's accumulation type.

#[test]
fn issue30_item20_f64_storage_sums_in_f64_by_default() {
    let row = r#"{"x": [[10000, 10000.0625, 10000.25, 9999.9375, 10000.5, 9999.8125, 10000.0625, 9999.5625]],
                  "dy": [[1, -0.5, 0.25, 0, -1, 0.5, 0.75, -1]]}"#;
    let r = report_input("layernorm-formulas", row, &["dtype=f64"]);
    assert_eq!(r["compute"], "f64");
    assert_eq!(r["accumulate"], "f64");
    // Σ offsets from 10000 = 0.1875, exact in binary: μ = 10000 + 0.1875 / 8.
    assert_eq!(r["rows"][0]["mean"], 10000.0234375);
    for (dtype, acc) in [("f32", "f32"), ("f16", "f32"), ("bf16", "f32")] {
        let r = report_input("layernorm-formulas", row, &[&format!("dtype={dtype}")]);
        assert_eq!(r["accumulate"], acc, "{dtype}");
    }
}

// Issue 30, item 8: a preset's theme and language are the figure's unless the command line says.

#[test]
fn issue30_item8_export_preset_takes_the_sessions_theme_and_language() {
    let dir = tempfile::tempdir().expect("temp dir");
    let preset = dir.path().join("s.json");
    std::fs::write(
        &preset,
        r#"{"scene": "banks", "params": {"pad": 1}, "theme": "dark", "lang": "zh"}"#,
    )
    .unwrap();
    let fig = |name: &str, args: &[&str]| {
        let out_path = dir.path().join(name);
        let mut all = vec!["export"];
        all.extend_from_slice(args);
        all.extend(["--out", s(&out_path)]);
        let out = warpscope(&all);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::read(&out_path).unwrap()
    };
    let from_preset = fig("a.svg", &["--preset", s(&preset)]);
    let spelt = fig(
        "b.svg",
        &["banks", "--set", "pad=1", "--theme", "dark", "--lang", "zh"],
    );
    let plain = fig("c.svg", &["banks", "--set", "pad=1"]);
    assert_eq!(from_preset, spelt, "the preset's dark theme and Chinese");
    assert_ne!(from_preset, plain);
    // The command line still wins.
    let overridden = fig(
        "d.svg",
        &["--preset", s(&preset), "--theme", "slides", "--lang", "en"],
    );
    assert_eq!(overridden, plain);
}

// Issue 30, item 16: advice that can help.

#[test]
fn issue30_item16_all_with_a_gif_says_what_all_writes() {
    refused(
        &["export", "--all", "--out", "z.gif"],
        &[
            "--all writes one figure per scene into a folder",
            "name the scene",
        ],
    );
}

#[test]
fn issue30_item16_thread_advice_stays_in_range() {
    let dir = tempfile::tempdir().expect("temp dir");
    let input = dir.path().join("v.json");
    let values: Vec<String> = (0..2000).map(|i| i.to_string()).collect();
    std::fs::write(&input, format!("{{\"values\": [{}]}}", values.join(","))).unwrap();
    let err = refused(
        &["report", "reduction", "--input", s(&input), "--json"],
        &["2000 values but threads = 256", "at most 1024 threads"],
    );
    assert!(!err.contains("threads=2000"), "{err}");
    std::fs::write(&input, "{\"values\": [1, 2, 3]}").unwrap();
    refused(
        &["report", "reduction", "--input", s(&input), "--json"],
        &["(or --set threads=3)"],
    );
}

// Issue 30, item 19: README's one rule — 2 for a wrong request, 1 for work that could not be done.

#[test]
fn issue30_item19_write_failures_exit_1_and_wrong_requests_exit_2() {
    let dir = tempfile::tempdir().expect("temp dir");
    let missing = dir.path().join("no-such-folder").join("a.svg");
    let long = dir.path().join(format!("{}.svg", "n".repeat(300)));
    for out in [
        missing.as_path(),
        Path::new("/proc/warpscope.svg"),
        long.as_path(),
    ] {
        let o = warpscope(&["export", "banks", "--out", s(out)]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{out:?}: {err}");
        assert!(err.contains("cannot write"), "{err}");
    }
    refused(
        &["export", "banks", "--set", "pad=99", "--out", "x.svg"],
        &["pad"],
    );
    refused(
        &["export", "banks", "--out", "x.bmp"],
        &["unknown figure format"],
    );
    refused(
        &["export", "banks", "--bogus", "--out", "x.svg"],
        &["--bogus"],
    );
}

// Issue 30, item 10: a key given twice is refused by name, never resolved silently.

#[test]
fn issue30_item10_duplicate_keys_are_refused_naming_the_key() {
    let dir = tempfile::tempdir().expect("temp dir");
    let input = dir.path().join("v.json");
    std::fs::write(&input, r#"{"values":[1,2,3,4],"values":[5,6,7,8]}"#).unwrap();
    refused(
        &[
            "report",
            "reduction",
            "--input",
            s(&input),
            "--set",
            "threads=4",
        ],
        &["duplicate key `values`", "v.json"],
    );
    let preset = dir.path().join("p.json");
    std::fs::write(
        &preset,
        r#"{"scene": "banks", "params": {"pad": 1, "pad": 2}}"#,
    )
    .unwrap();
    refused(
        &["report", "--preset", s(&preset)],
        &["duplicate key `params.pad`", "p.json"],
    );
    std::fs::write(
        &preset,
        r#"{"scene": "reduction", "input": {"values": [1], "values": [2]}}"#,
    )
    .unwrap();
    refused(
        &["report", "--preset", s(&preset)],
        &["duplicate key `input.values`"],
    );
}

// Issue 30, item 15: a decoder's message keeps the field and the position whole.

#[test]
fn issue30_item15_a_session_error_names_the_field_and_position_whole() {
    let dir = tempfile::tempdir().expect("temp dir");
    let preset = dir.path().join("p.json");
    std::fs::write(&preset, r#"{"params": {"pad": 1}}"#).unwrap();
    refused(
        &["report", "--preset", s(&preset)],
        &["missing field `scene`", "line 1 column 22"],
    );
    // A long value the file supplies is still shortened, the facts around it kept.
    let long = "x".repeat(100_000);
    std::fs::write(&preset, format!(r#"{{"scene": "banks", "{long}": 1}}"#)).unwrap();
    let err = refused(
        &["report", "--preset", s(&preset)],
        &["unknown field `", "(100000 characters)`"],
    );
    assert!(err.contains("expected one of `scene`"), "{err}");
}

// Issue 30, item 16: the rest of the advice.

#[test]
fn issue30_item16_a_byte_order_mark_and_a_huge_number_are_named_plainly() {
    let dir = tempfile::tempdir().expect("temp dir");
    let input = dir.path().join("v.json");
    std::fs::write(&input, b"\xEF\xBB\xBF{\"values\": [1, 2, 3, 4]}").unwrap();
    refused(
        &[
            "report",
            "reduction",
            "--input",
            s(&input),
            "--set",
            "threads=4",
        ],
        &["UTF-8 byte-order mark (EF BB BF)"],
    );
    std::fs::write(&input, r#"{"param": 1e300}"#).unwrap();
    let err = refused(
        &["report", "trainer-adam", "--input", s(&input)],
        &["1e300 is outside -1e30 ..= 1e30"],
    );
    assert!(longest_digit_run(&err) < 10, "{err}");
}
