//! Replays the committed fuzz corpus (`fuzz/corpus/<target>/`, minimised with `cargo fuzz cmin`)
//! through the fuzz targets' own bodies (`fuzz/harness.rs`): every input must end in a result or
//! an error, never a panic. Crashers found by the fuzzers are added to the corpus and so stay
//! tested here. See `fuzz/README.md`.

// Test and bench helpers outside #[test] functions stop on failure by design.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../../fuzz/harness.rs"]
mod harness;

use std::path::PathBuf;

use warpscope_core::scene::Scene;

fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/corpus")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{}: empty corpus", dir.display());
    files
        .into_iter()
        .map(|p| {
            let b = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, b)
        })
        .collect()
}

/// Scenes light enough to compute at the top of their ranges in a debug build: the replay
/// parses every assignment but computes only these (the property tests run the heavy ones with
/// capped sizes; the fuzzers ran them in full).
fn cheap(s: &Scene) -> bool {
    !s.cost.heavy()
}

fn replay(target: &str, f: impl Fn(&[u8])) {
    for (path, bytes) in corpus(target) {
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&bytes))).is_err() {
            panic!("{target}: {} panicked", path.display());
        }
    }
}

#[test]
fn snapshot_corpus() {
    replay("snapshot", harness::snapshot);
}

#[test]
fn set_assignment_corpus() {
    replay("set_assignment", |b| harness::set_assignment(b, cheap));
}

#[test]
fn param_values_json_corpus() {
    replay("param_values_json", |b| {
        harness::param_values_json(b, cheap)
    });
}

#[test]
fn session_corpus() {
    replay("session", |b| harness::session(b, cheap));
}
