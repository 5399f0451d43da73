//! Progress and cancellation of the heavy computations (issue 10): each one, run inside a
//! [`progress::scope`] on its own thread, stops with [`Error::Cancelled`] soon after the window
//! cancels it, and an uncancelled run's progress reaches 1.

// Test and bench helpers outside #[test] functions stop on failure by design.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use warpscope_core::Error;
use warpscope_core::progress::{self, Progress};
use warpscope_core::scene::scenes;
use warpscope_core::torch::snapshot;

/// The scenes that can run longer than a frame (16 ms) somewhere in their ranges, each with
/// parameters that keep it busy for a while in a test build but no longer than needed.
const HEAVY: &[(&str, &[(&str, &str)])] = &[
    ("trainer-fp16", &[]),
    ("trainer-workspace", &[("shrink", "32")]),
    ("trainer-timing", &[("shrink", "16"), ("runs", "20")]),
    ("memory-allocator", &[]),
    ("layernorm-error", &[("rows", "1024")]),
    ("layernorm-dgamma", &[("rows", "32768")]),
    ("layernorm-formulas", &[("rows", "1024")]),
    ("softmax-formula", &[("len", "1024")]),
];

/// Small instances of the same scenes, for the run-to-completion check.
const SMALL: &[(&str, &[(&str, &str)])] = &[
    ("trainer-fp16", &[("count", "50"), ("steps", "100")]),
    ("trainer-workspace", &[("shrink", "128")]),
    ("trainer-timing", &[("shrink", "128"), ("runs", "2")]),
    ("memory-allocator", &[("batches", "10")]),
    ("layernorm-error", &[("rows", "2")]),
    ("layernorm-dgamma", &[("rows", "64"), ("cols", "64")]),
    ("memory-snapshot", &[]),
    ("layernorm-formulas", &[]),
    ("softmax-formula", &[]),
];

fn values(id: &str, set: &[(&str, &str)]) -> warpscope_core::params::ParamValues {
    let s = scenes().find(|s| s.id == id).unwrap();
    let mut v = s.defaults();
    for (k, x) in set {
        v.set(s.params, k, x).unwrap();
    }
    v
}

/// Runs `f` in a progress scope on a thread, cancels it at its first progress report and
/// returns its result and how long it took to stop after the cancel.
fn cancel_at_first_report<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, Error> + Send + 'static,
) -> (Result<T, Error>, Duration) {
    let p = Progress::new();
    let q: Arc<Progress> = p.clone();
    let worker = std::thread::spawn(move || progress::scope(q, f));
    let start = Instant::now();
    while p.fraction().is_none() && !worker.is_finished() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no progress report"
        );
        std::thread::sleep(Duration::from_micros(200));
    }
    p.cancel();
    let cancelled_at = Instant::now();
    let r = worker.join().unwrap();
    (r, cancelled_at.elapsed())
}

#[test]
fn every_heavy_scene_stops_promptly_when_cancelled() {
    for &(id, set) in HEAVY {
        let s = scenes().find(|s| s.id == id).unwrap();
        let v = values(id, set);
        let (r, took) = cancel_at_first_report(move || s.report(v));
        assert_eq!(r.err(), Some(Error::Cancelled), "{id}");
        // Reports come at least every few ms of release-build work; a test build is slower
        // and the machine shared, so the bound is loose.
        assert!(
            took < Duration::from_secs(3),
            "{id}: {took:?} after the cancel"
        );
    }
}

#[test]
fn the_snapshot_reader_and_replay_stop_when_cancelled() {
    let bytes = snapshot::synthetic(20_000, 2, 1).unwrap();
    let (r, took) = cancel_at_first_report(move || snapshot::parse(&bytes));
    assert_eq!(r.err(), Some(Error::Cancelled));
    assert!(took < Duration::from_secs(3), "{took:?}");
    // Cancelled before the scene starts: the built-in fixture is refused at once too.
    let p = Progress::new();
    p.cancel();
    assert_eq!(
        progress::scope(p, || snapshot::run_path("")).err(),
        Some(Error::Cancelled)
    );
}

#[test]
fn progress_reaches_one_when_not_cancelled() {
    for &(id, set) in SMALL {
        let s = scenes().find(|s| s.id == id).unwrap();
        let p = Progress::new();
        let r = progress::scope(p.clone(), || s.report(values(id, set)));
        assert!(r.is_ok(), "{id}: {r:?}");
        let f = p.fraction();
        assert!(f.is_some_and(|f| f >= 0.99), "{id}: {f:?}");
    }
}
