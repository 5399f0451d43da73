//! Hand-made hostile inputs (issue 11, "done when"): each ends in a clear error, through the
//! same path a user takes — a file handed to the `memory-snapshot` scene, or a preset's JSON.
//! The opcode-level cases of the pickle guard are unit tests in `core/src/torch/pickle.rs`;
//! these go end to end (file → scene → error message) and add the decoded-value hazards.

// Test and bench helpers outside #[test] functions stop on failure by design.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_pickle::{HashableValue, Value};
use warpscope_core::Error;
use warpscope_core::params::ParamValues;
use warpscope_core::scene;
use warpscope_core::torch::snapshot;

/// A file under the system temp dir, removed on drop.
struct TempFile(PathBuf);

impl TempFile {
    fn new(name: &str, bytes: &[u8]) -> Self {
        let p = std::env::temp_dir().join(format!("warpscope-{}-{name}", std::process::id()));
        std::fs::write(&p, bytes).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        TempFile(p)
    }
    fn path(&self) -> &str {
        self.0.to_str().unwrap_or_default()
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Runs the snapshot scene on `path` and returns its error message (the run must fail).
fn snapshot_error(path: &str) -> String {
    let s = scene::find("memory-snapshot").unwrap_or_else(|e| panic!("{e}"));
    let mut v = s.defaults();
    v.set(s.params, "path", path)
        .unwrap_or_else(|e| panic!("{e}"));
    match s.report(v) {
        Err(Error::BadInput(m)) => m,
        Err(e) => panic!("expected BadInput, got {e}"),
        Ok(_) => panic!("{path}: accepted"),
    }
}

#[test]
fn pickle_asking_for_os_system_executes_nothing() {
    let marker = std::env::temp_dir().join(format!("warpscope-pwned-{}", std::process::id()));
    let cmd = format!("touch {}", marker.display());
    // Protocol 0: GLOBAL os.system, a tuple of the command, REDUCE.
    let p0 = format!("cos\nsystem\n(S'{cmd}'\ntR.");
    // Protocol 4: STACK_GLOBAL, TUPLE1, REDUCE, as `pickle.dumps` writes for a __reduce__.
    let mut p4 = b"\x80\x04\x8c\x02os\x8c\x06system\x93".to_vec();
    p4.push(0x8c);
    p4.push(cmd.len() as u8);
    p4.extend_from_slice(cmd.as_bytes());
    p4.extend_from_slice(b"\x85R.");
    // The same call hidden inside an otherwise valid snapshot dict.
    let mut nested = b"\x80\x02}q\x00X\x08\x00\x00\x00segments]q\x01cposix\nsystem\nq\x02".to_vec();
    nested.extend_from_slice(format!("X{}", char::from(cmd.len() as u8)).as_bytes());
    nested.extend_from_slice(&[0, 0, 0]);
    nested.extend_from_slice(cmd.as_bytes());
    nested.extend_from_slice(b"\x85Rq\x03as.");
    for (name, bytes) in [("p0", p0.into_bytes()), ("p4", p4), ("nested", nested)] {
        let f = TempFile::new(&format!("os-system-{name}.pickle"), &bytes);
        let m = snapshot_error(f.path());
        assert!(
            m.contains("GLOBAL") && m.contains("executes nothing"),
            "{name}: {m}"
        );
        assert!(
            m.contains(f.path()),
            "{name}: the message names the file: {m}"
        );
        assert!(!marker.exists(), "{name}: the command ran");
    }
}

#[test]
fn two_gigabyte_length_prefixes_are_refused_before_allocating() {
    // BINUNICODE8, BINBYTES8 (8-byte lengths), BINUNICODE, BINBYTES (4-byte lengths), each
    // claiming about 2 GiB with three bytes behind it.
    let cases: [(&str, Vec<u8>); 4] = [
        (
            "binunicode8",
            [&b"\x80\x04\x8d"[..], &(2u64 << 30).to_le_bytes()].concat(),
        ),
        (
            "binbytes8",
            [&b"\x80\x04\x8e"[..], &(2u64 << 30).to_le_bytes()].concat(),
        ),
        (
            "binunicode",
            [&b"\x80\x02X"[..], &0x7fff_ffffu32.to_le_bytes()].concat(),
        ),
        (
            "binbytes",
            [&b"\x80\x03B"[..], &0xffff_ffffu32.to_le_bytes()].concat(),
        ),
    ];
    for (name, mut bytes) in cases {
        bytes.extend_from_slice(b"abc.");
        let f = TempFile::new(&format!("{name}.pickle"), &bytes);
        let m = snapshot_error(f.path());
        assert!(m.contains("truncated"), "{name}: {m}");
    }
}

#[test]
fn truncated_snapshots_fail_cleanly_at_every_cut() {
    let full = snapshot::BUILTIN_FIXTURE;
    assert!(snapshot::parse(full).is_ok());
    // Cuts at the start, in the header, and spread over the body; the file always ends early.
    let mut cuts: Vec<usize> = (0..16).collect();
    cuts.extend((1..64).map(|k| full.len() * k / 64));
    cuts.push(full.len() - 1);
    for cut in cuts {
        match snapshot::parse(&full[..cut]) {
            Err(Error::BadInput(m)) => assert!(!m.is_empty()),
            other => panic!("cut at {cut}: {:?}", other.map(|_| ())),
        }
    }
    let f = TempFile::new("truncated.pickle", &full[..full.len() / 2]);
    let m = snapshot_error(f.path());
    assert!(
        m.contains("truncated") || m.contains("not a readable pickle"),
        "{m}"
    );
}

#[test]
fn missing_files_directories_and_random_bytes_are_clear_errors() {
    let m = snapshot_error("/nonexistent/warpscope/snapshot.pickle");
    assert!(
        m.contains("cannot open") && m.contains("/nonexistent"),
        "{m}"
    );
    let dir = std::env::temp_dir();
    let m = snapshot_error(dir.to_str().unwrap_or("/tmp"));
    assert!(m.contains("directory"), "{m}");
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for n in [0usize, 1, 2, 100, 4096] {
        let bytes: Vec<u8> = (0..n).map(|_| rng.random()).collect();
        let f = TempFile::new(&format!("random-{n}.pickle"), &bytes);
        assert!(!snapshot_error(f.path()).is_empty());
    }
}

fn dict(entries: Vec<(&str, Value)>) -> Value {
    Value::Dict(
        entries
            .into_iter()
            .map(|(k, v)| (HashableValue::String(k.to_owned()), v))
            .collect::<BTreeMap<_, _>>(),
    )
}

fn pickle(v: &Value) -> Vec<u8> {
    serde_pickle::value_to_vec(v, serde_pickle::SerOptions::new()).unwrap_or_else(|e| panic!("{e}"))
}

/// Plain-data snapshots whose numbers are legal pickle integers but absurd as sizes: sums past
/// 2⁶⁴, segments at the top of the address space, traces asking for exabytes. Reading and
/// replaying them must give figures or an error, never an overflow panic.
#[test]
fn absurd_sizes_in_plain_data_do_not_overflow() {
    let big = i64::MAX;
    let seg = |addr: i64, size: i64, blocks: Vec<Value>| {
        dict(vec![
            ("device", Value::I64(0)),
            ("address", Value::I64(addr)),
            ("total_size", Value::I64(size)),
            ("allocated_size", Value::I64(size)),
            ("stream", Value::I64(0)),
            ("segment_type", Value::String("large".into())),
            ("blocks", Value::List(blocks)),
        ])
    };
    let block = |addr: Option<i64>, size: i64, state: &str| {
        let mut e = vec![
            ("size", Value::I64(size)),
            ("requested_size", Value::I64(size)),
            ("state", Value::String(state.into())),
        ];
        if let Some(a) = addr {
            e.push(("address", Value::I64(a)));
        }
        dict(e)
    };
    let ev = |action: &str, addr: i64, size: i64| {
        dict(vec![
            ("action", Value::String(action.into())),
            ("addr", Value::I64(addr)),
            ("size", Value::I64(size)),
            ("stream", Value::I64(0)),
        ])
    };
    let segments: Vec<Value> = (0..4)
        .map(|k| {
            seg(
                big - k,
                big,
                vec![
                    block(None, big, "inactive"),
                    block(None, big, "inactive"),
                    block(Some(big), big, "active_allocated"),
                    block(Some(0), big, "active_pending_free"),
                ],
            )
        })
        .collect();
    let trace: Vec<Value> = (0..6)
        .flat_map(|k| {
            [
                ev("segment_alloc", big - k, big),
                ev("alloc", big - k, big),
                ev("alloc", k, big / 2 + k),
                ev("free_completed", big - k, big),
                ev("segment_free", big - k, big),
            ]
        })
        .collect();
    let snap = dict(vec![
        ("segments", Value::List(segments)),
        (
            "device_traces",
            Value::List(vec![Value::List(trace.clone()), Value::List(trace)]),
        ),
    ]);
    let bytes = pickle(&snap);
    let s = snapshot::parse(&bytes).unwrap_or_else(|e| panic!("{e}"));
    let out = snapshot::summarise("absurd", &s);
    assert_eq!(out.segments, 4);
    // The figures saturate rather than wrap: a sum of four 2⁶³-byte segments is at least any one.
    assert!(out.reserved_bytes >= big as u64);
    assert!(serde_json::to_string(&out).is_ok());
    let f = TempFile::new("absurd.pickle", &bytes);
    let s = scene::find("memory-snapshot").unwrap_or_else(|e| panic!("{e}"));
    let mut v = s.defaults();
    v.set(s.params, "path", f.path())
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(s.report(v).is_ok());
}

/// A preset or settings file of random bytes (warpscope has no preset reader yet; this is the
/// part it will use: JSON → `ParamValues` → `validated` against each scene) ends in an error or
/// in values every scene's specs accept — never a panic, never an out-of-range value.
#[test]
fn preset_of_random_bytes_is_refused() {
    let mut rng = ChaCha8Rng::seed_from_u64(2024);
    let scenes: Vec<_> = scene::scenes().collect();
    for n in 0..400usize {
        let len = n % 97;
        let mut bytes: Vec<u8> = (0..len).map(|_| rng.random()).collect();
        // Half the time, random bytes inside a JSON object's braces.
        if n % 2 == 1 {
            bytes.insert(0, b'{');
            bytes.push(b'}');
        }
        if let Ok(v) = serde_json::from_slice::<ParamValues>(&bytes) {
            for s in &scenes {
                if let Ok(ok) = v.clone().validated(s.params) {
                    for spec in s.params {
                        assert!(spec.check(&ok.0[spec.name]).is_ok());
                    }
                }
            }
        }
    }
    // Hand-made: not JSON, the wrong JSON shape, and well-formed values out of range.
    for (text, scene_id) in [
        (&b"\xff\xfe\x00garbage"[..], "reduction"),
        (b"[1, 2, 3]", "reduction"),
        (b"{\"threads\": {\"nested\": true}}", "reduction"),
        (b"{\"rows\": 1e999}", "layernorm-dgamma"),
        (b"{\"rows\": -1}", "layernorm-dgamma"),
        (b"{\"rows\": 99999999999999999999999}", "layernorm-dgamma"),
        (b"{\"no_such_parameter\": 1}", "reduction"),
    ] {
        let s = scene::find(scene_id).unwrap_or_else(|e| panic!("{e}"));
        let r = serde_json::from_slice::<ParamValues>(text)
            .map_err(|e| e.to_string())
            .and_then(|v| v.validated(s.params).map_err(|e| e.to_string()));
        match r {
            Err(m) => assert!(!m.is_empty()),
            Ok(v) => panic!("{}: accepted {v:?}", String::from_utf8_lossy(text)),
        }
    }
}
