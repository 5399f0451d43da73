//! The CLI contract: `report SCENE --set k=v --json` prints
//! `{"scene", "params", "result"}`; invalid values exit 2 naming the parameter and its range.

// Test code: a failed expectation is the test failing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::warpscope;
use std::process::Command;

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
            vec![
                "report",
                "reduction",
                "--set",
                "threads=100",
                "--set",
                "warp=8",
            ],
            "at most 64",
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

#[test]
fn export_writes_svg_with_text_and_png_without_a_gpu() {
    let dir = tempfile::tempdir().expect("temp dir");
    let svg = dir.path().join("banks.svg");
    let out = Command::new(env!("CARGO_BIN_EXE_warpscope"))
        .args(["export", "banks", "--set", "pad=0", "--out"])
        .arg(&svg)
        .env("VK_ICD_FILENAMES", "/nonexistent")
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("banks.svg"),
        "says where the file went"
    );
    // Well-formed XML whose figure text is real text: the caption, the 32-way verdict, bank numbers.
    let texts = svg_rows(&svg);
    assert!(
        texts.iter().any(|t| t.contains("Bank playground")),
        "caption is text"
    );
    assert!(
        texts.iter().any(|t| t.contains("32-way")),
        "the verdict is text: {texts:?}"
    );
    let text = std::fs::read_to_string(&svg).expect("svg written");
    let doc = roxmltree::Document::parse(&text).expect("valid SVG");
    assert!(
        doc.descendants().filter(|n| n.has_tag_name("rect")).count() > 32 * 32,
        "the bank grid's cells are shapes"
    );

    let png = dir.path().join("reduction.png");
    let out = Command::new(env!("CARGO_BIN_EXE_warpscope"))
        .args([
            "export",
            "reduction",
            "--step",
            "6",
            "--scale",
            "1",
            "--out",
        ])
        .arg(&png)
        .env("VK_ICD_FILENAMES", "/nonexistent")
        .env("WGPU_BACKEND", "vulkan")
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let img = image::open(&png).expect("a PNG");
    assert!(
        img.width() >= 1000 && img.height() > 300,
        "{}×{}",
        img.width(),
        img.height()
    );
}

#[test]
fn export_errors_are_clear_and_write_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let missing = dir.path().join("no-such-folder").join("x.svg");
    let out = warpscope(&["export", "banks", "--out", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not exist"));
    let pdf = dir.path().join("x.pdf");
    let out = warpscope(&["export", "banks", "--out", pdf.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains(".svg, .png or .gif"));
    let out = warpscope(&["export", "banks", "--set", "rows=9999", "--out", "x.svg"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing half-written"
    );
}

#[test]
fn run_verifies_a_kernel_on_the_adapter_or_says_there_is_none() {
    let out = warpscope(&["run", "--list"]);
    assert!(out.status.success());
    let names = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(names.lines().any(|l| l == "softmax-bw"), "{names}");
    let out = warpscope(&[
        "run",
        "softmax-bw",
        "--set",
        "rows=64",
        "--set",
        "len=64",
        "--set",
        "runs=2",
        "--json",
    ]);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    if out.status.code() == Some(1) && err.contains("no GPU adapter") {
        assert!(
            !warpscope_kernels::adapter_required(),
            "CI must provide an adapter: {err}"
        );
        eprintln!("skipped: no adapter ({err})");
        return;
    }
    assert!(out.status.success(), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["verified"], true, "{v}");
    // The ∇γ/∇β tile at its default 4096 rows: column sums within the f32 summation bound.
    let out = warpscope(&["run", "layernorm-dgamma", "--set", "runs=1", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = warpscope(&["run", "softmax-bw", "--set", "rows=abc"]);
    assert_eq!(out.status.code(), Some(2));
    let out = warpscope(&["run", "no-such-kernel"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn export_gif_has_one_frame_per_step() {
    use image::AnimationDecoder;
    let dir = tempfile::tempdir().expect("temp dir");
    let gif = dir.path().join("reduction.gif");
    let out = Command::new(env!("CARGO_BIN_EXE_warpscope"))
        .args([
            "export",
            "reduction",
            "--set",
            "threads=64",
            "--frames",
            "0..5",
            "--scale",
            "1",
            "--out",
        ])
        .arg(&gif)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let file = std::io::BufReader::new(std::fs::File::open(&gif).expect("gif written"));
    let frames = image::codecs::gif::GifDecoder::new(file)
        .expect("a GIF")
        .into_frames()
        .collect_frames()
        .expect("frames");
    assert_eq!(frames.len(), 6, "events 0..=5");
    let out = warpscope(&[
        "export",
        "banks",
        "--out",
        dir.path().join("b.gif").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "banks has no stepper");
}

#[test]
fn presets_reproduce_a_scene_and_bad_ones_are_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let preset = dir.path().join("banks.json");
    std::fs::write(
        &preset,
        r#"{"scene": "banks", "params": {"pad": 1}, "step": 0}"#,
    )
    .unwrap();
    let p = preset.to_str().unwrap();
    let v = report(&["--preset", p]);
    assert_eq!(v["scene"], "banks");
    assert_eq!(v["result"]["conflict_degree"], 1, "pad=1 from the preset");
    let v = report(&["--preset", p, "--set", "pad=0"]);
    assert_eq!(
        v["result"]["conflict_degree"], 32,
        "--set applies on top of the preset"
    );
    let out = warpscope(&["report", "reduction", "--preset", p]);
    assert_eq!(out.status.code(), Some(2), "a preset for another scene");
    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, [0xffu8, 0, 1, 2, 3]).unwrap();
    let out = warpscope(&["report", "--preset", junk.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a warpscope session"));
    let svg = dir.path().join("b.svg");
    let out = warpscope(&["export", "--preset", p, "--out", svg.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn run_record_prints_the_decoded_trace_summary() {
    // Without any driver: said plainly, exit 1, no panic.
    let out = Command::new(env!("CARGO_BIN_EXE_warpscope"))
        .args(["run", "softmax-bw", "--record", "--json"])
        .env("VK_ICD_FILENAMES", "/nonexistent")
        .env("WGPU_BACKEND", "vulkan")
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no GPU adapter"));
    // Only kernels with a recorded variant; --set takes the scene's parameters.
    let out = warpscope(&["run", "adam", "--record"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("softmax-bw"));
    let out = warpscope(&["run", "softmax-bw", "--record", "--set", "rows=3"]);
    assert_eq!(out.status.code(), Some(2));

    let out = warpscope(&[
        "run",
        "softmax-bw",
        "--record",
        "--set",
        "len=100",
        "--set",
        "dtype=f32",
        "--json",
    ]);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    if out.status.code() == Some(1) && err.contains("no GPU adapter") {
        assert!(
            !warpscope_kernels::adapter_required(),
            "CI must provide an adapter: {err}"
        );
        eprintln!("skipped: no adapter ({err})");
        return;
    }
    if out.status.code() == Some(2) && err.contains("subgroup operations") {
        assert!(
            !warpscope_kernels::adapter_required(),
            "CI's adapter (lavapipe) must have subgroups: {err}"
        );
        eprintln!("skipped: the adapter has no subgroups ({err})");
        return;
    }
    assert!(out.status.success(), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let n = v["subgroup_size"].as_u64().expect("subgroup size") as u32;
    assert!(n.is_power_of_two(), "{n}");
    let levels = u64::from(n.ilog2());
    assert_eq!(v["comparison"]["recorded_levels"], levels);
    assert_eq!(v["comparison"]["simulated_levels"], 5, "log2 32");
    assert_eq!(v["summary"]["shuffles"], levels);
    assert_eq!(v["summary"]["barriers"], 0);
    // softmax_sg.wgsl, per slot of ⌈100/n⌉: 3 loads (∇y, the mask word, y), later ∇x stored;
    // one shuffle a level; slots past the 32 a lane keeps in registers load all three again.
    let slots = u64::from(100u32.div_ceil(n));
    let again = slots.saturating_sub(32);
    assert_eq!(v["summary"]["events"], 4 * slots + levels + 3 * again);
    // Σ∇y·y against an f64 sum of the scene's row (core's seeded inputs, summed here).
    let p = warpscope_core::softmax::warp::WarpParams {
        len: 100,
        dtype: warpscope_core::softmax::Dtype::F32,
        device: "a100".into(),
        seed: 0,
    };
    let row = warpscope_core::softmax::warp::run(&p).expect("core");
    let dot: f64 = row
        .dy
        .iter()
        .zip(&row.y)
        .map(|(a, b)| f64::from(*a) * f64::from(*b))
        .sum();
    let got = v["comparison"]["values"][0]["recorded"]
        .as_f64()
        .expect("value");
    assert!(
        (got - dot).abs() < 1e-5 + 1e-4 * dot.abs(),
        "{got} vs {dot}"
    );
    assert_eq!(v["verified"], true);

    // LayerNorm: a 64-thread workgroup is 64/n subgroups, one barrier; --trace adds the trace.
    let out = warpscope(&[
        "run",
        "layernorm-bw",
        "--record",
        "--set",
        "block=64",
        "--set",
        "rows=2",
        "--trace",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["summary"]["barriers"], 1);
    assert_eq!(v["comparison"]["simulated_barriers"], 2);
    assert_eq!(
        v["comparison"]["recorded_subgroups"],
        u64::from(64u32.div_ceil(n))
    );
    assert_eq!(v["trace"]["warp_size"], u64::from(n));
    assert_eq!(v["trace"]["origin"]["kind"], "recorded");
}

/// The rows of text of an SVG figure, a row split into <tspan> runs (CJK and Latin) read whole.
fn svg_rows(path: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).expect("svg written");
    let doc = roxmltree::Document::parse(&text).expect("valid SVG");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| {
            n.descendants()
                .filter(|d| d.is_text())
                .filter_map(|d| d.text())
                .collect::<String>()
        })
        .collect()
}

/// Runs `warpscope export ARGS --out SVG` with no GPU driver, checks it succeeded, and returns
/// the figure's text rows.
fn export_rows(svg: &std::path::Path, args: &[&str]) -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_warpscope"))
        .arg("export")
        .args(args)
        .arg("--out")
        .arg(svg)
        .env("VK_ICD_FILENAMES", "/nonexistent")
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    svg_rows(svg)
}

#[test]
fn export_in_chinese_translates_the_notes_core_computes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let svg = dir.path().join("step-ledger-zh.svg");
    let rows = export_rows(&svg, &["step-ledger", "--lang", "zh"]);
    // The lecture checks' notes and figures (the `zh` of core's bilingual `note` and `figure`), not the English.
    assert!(
        rows.iter()
            .any(|t| t.contains("3 个内核 × 436 个张量（Lab C 的统计）")),
        "{rows:?}"
    );
    assert!(
        rows.iter()
            .any(|t| t.contains("训练器不变，一步里其余部分更小")),
        "{rows:?}"
    );
    assert!(
        rows.iter()
            .any(|t| t.contains("训练器的内核发射次数，基线")),
        "{rows:?}"
    );
    assert!(
        !rows
            .iter()
            .any(|t| t.contains("same trainer") || t.contains("Lab C census")),
        "no English note left: {rows:?}"
    );
    // The English export keeps core's English notes.
    let svg = dir.path().join("step-ledger-en.svg");
    let rows = export_rows(&svg, &["step-ledger"]);
    assert!(
        rows.iter()
            .any(|t| t.contains("3 kernels × 436 tensors (Lab C census)")),
        "{rows:?}"
    );
}

#[test]
fn export_in_chinese_translates_the_view_body_not_only_the_title() {
    let dir = tempfile::tempdir().expect("temp dir");
    let svg = dir.path().join("banks-zh.svg");
    let texts = export_rows(&svg, &["banks", "--lang", "zh", "--set", "pad=0"]);
    // The title (from the registry) and the view's own labels and explanations.
    assert!(texts.iter().any(|t| t.contains("bank 实验场")), "{texts:?}");
    assert!(
        texts.iter().any(|t| t.contains("最坏的冲突路数")),
        "{texts:?}"
    );
    assert!(texts.iter().any(|t| t.contains("32 路")), "{texts:?}");
    assert!(
        texts.iter().any(|t| t.contains("把数组读一遍要几次请求")),
        "{texts:?}"
    );
    assert!(
        !texts.iter().any(|t| t.contains("worst conflict degree")),
        "no English label left: {texts:?}"
    );

    // A stepped scene: the trace view's explanations and the caption's event are Chinese too.
    let svg = dir.path().join("reduction-zh.svg");
    let rows = export_rows(&svg, &["reduction", "--lang", "zh", "--step", "6"]);
    for phrase in ["个线程束", "一起归约", "第 6 个事件", "线程束 0 的各个线程"]
    {
        assert!(
            rows.iter().any(|r| r.contains(phrase)),
            "`{phrase}` missing"
        );
    }
}

#[test]
fn list_json_carries_both_languages() {
    let out = warpscope(&["list", "--json"]);
    assert!(out.status.success());
    let all: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    for s in all.as_array().expect("an array") {
        for key in ["title", "summary"] {
            for lang in ["en", "zh"] {
                let v = s[key][lang].as_str().unwrap_or("");
                assert!(!v.is_empty(), "{} has no {key}.{lang}", s["id"]);
            }
            let han = |t: &str| t.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c));
            assert!(
                s[key]["zh"].as_str().is_some_and(han),
                "{}: {key}.zh is Chinese",
                s["id"]
            );
        }
    }
}

#[test]
fn a_closed_pipe_ends_quietly() {
    // `warpscope report … --json | head -c 1`: the reader goes away; the writer must neither
    // panic nor fail (status 0, as Unix tools do).
    let mut child = Command::new(env!("CARGO_BIN_EXE_warpscope"))
        .args(["report", "memory-snapshot", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("runs");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("exits");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}

#[test]
fn frames_without_an_animation_output_is_refused_with_the_fix() {
    let dir = tempfile::tempdir().expect("temp dir");
    let png = dir.path().join("r.svg");
    let out = warpscope(&[
        "export",
        "reduction",
        "--frames",
        "0..3",
        "--out",
        png.to_str().expect("utf-8"),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(".apng") && stderr.contains(".gif"),
        "{stderr}"
    );
    assert!(!png.exists(), "nothing written");
}

#[test]
fn a_slide_is_full_hd_whatever_the_scene_draws() {
    let dir = tempfile::tempdir().expect("temp dir");
    // A tall figure (the allocator's segment map) and a wide one (the reduction's lanes): both
    // land on the same 16 : 9 canvas.
    for scene in ["memory-allocator", "reduction"] {
        let png = dir.path().join(format!("{scene}.png"));
        let out = warpscope(&[
            "export",
            scene,
            "--slide",
            "--out",
            png.to_str().expect("utf-8 path"),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let bytes = std::fs::read(&png).expect("written");
        // A PNG's IHDR: width and height as big-endian u32 at bytes 16..24.
        let dim = |at: usize| {
            u32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
        };
        assert_eq!((dim(16), dim(20)), (1920, 1080), "{scene}");
    }
}

/// A slide figure taller than 16 : 9 shrinks to fit, and the export says by how much; one that
/// fits says nothing.
#[test]
fn a_slide_that_had_to_shrink_says_so() {
    let dir = tempfile::tempdir().expect("temp dir");
    let note = |scene: &str| {
        let png = dir.path().join(format!("{scene}.png"));
        let out = warpscope(&[
            "export",
            scene,
            "--slide",
            "--out",
            png.to_str().expect("utf-8 path"),
        ]);
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    // The allocator's figure (plot, op table, segment map) is far taller than 720 points.
    let tall = note("memory-allocator");
    assert!(
        tall.contains("scaled to fit") && tall.contains("Without --slide"),
        "{tall}"
    );
    let share: f32 = tall
        .split(" % ")
        .next()
        .and_then(|h| h.rsplit(' ').next())
        .and_then(|p| p.parse().ok())
        .expect("a percentage");
    assert!(share > 0.0 && share < 80.0, "{share}");
    assert_eq!(note("banks"), "");
}
