//! `cargo bench -p warpscope-core --bench scenes` — issue 10's computation benchmarks.
//!
//! - `scene/defaults/ID` and `scene/4x/ID`: every registered scene's `report`, at its lecture
//!   defaults and at about 4× the default size (the table [`FOUR_X`]; scenes without a size
//!   parameter have no 4× case).
//! - `simt/…`: the simulator's core loop, in simulated lane-accesses per second.
//! - `allocator/…`: the caching-allocator simulation, in events per second.
//! - `snapshot/…`: reading the real snapshots in `core/tests/data/snapshots/` and a synthetic one
//!   with 250,000 trace events (generated here, written to the temp folder).
//! - `adam/…`: the CPU Adam over the trainer workspace vs a plain copy of the same bytes; the
//!   bandwidth ratio is also measured interleaved (same run, alternating) and printed.
//!
//! Kept short (10 samples, a few seconds each): the machine is 2 shared cores.

// Test and bench helpers outside #[test] functions stop on failure by design.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use warpscope_core::memory::allocator;
use warpscope_core::scene::scenes;
use warpscope_core::simt::shared::BankConfig;
use warpscope_core::simt::{Block, BlockShape};
use warpscope_core::torch::snapshot;
use warpscope_core::trainer::adam::{AdamConfig, adam_f32};
use warpscope_core::trainer::census::model;
use warpscope_core::trainer::workspace::{Workspace, shrink_tensors};

/// About 4× the lecture's size, per scene: (scene, parameter, value). The parameter is the one
/// the work scales with (rows, batch, tokens, …); `shrink` ÷2 quadruples every matrix.
const FOUR_X: &[(&str, &str, &str)] = &[
    ("reduction", "threads", "1024"),
    ("banks", "rows", "128"),
    ("layernorm-formulas", "rows", "32"),
    ("layernorm-syncs", "rows", "32"),
    ("layernorm-bytes", "tokens", "32768"),
    ("layernorm-error", "rows", "256"),
    ("layernorm-dgamma", "rows", "32768"),
    ("softmax-formula", "rows", "32"),
    ("softmax-warp", "len", "2048"),
    ("softmax-fusion", "batch", "32"),
    ("softmax-saved", "batch", "32"),
    ("trainer-census", "model", "gpt2-xl"),
    ("trainer-workspace", "shrink", "8"),
    ("trainer-fp16", "count", "8000"),
    ("trainer-timing", "shrink", "4"),
    ("memory-lifetimes", "batch", "64"),
    ("memory-plan", "batch", "64"),
    ("memory-allocator", "batches", "1200"),
    ("step-ledger", "tokens", "32768"),
];

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
        .without_plots()
}

fn bench_scenes(c: &mut Criterion) {
    let mut g = c.benchmark_group("scene");
    for s in scenes() {
        let defaults = s.defaults();
        g.bench_with_input(BenchmarkId::new("defaults", s.id), &defaults, |b, v| {
            b.iter(|| s.report(black_box(v.clone())).expect("defaults run"))
        });
        if let Some(&(_, name, value)) = FOUR_X.iter().find(|(id, _, _)| *id == s.id) {
            let mut v = s.defaults();
            v.set(s.params, name, value).expect("4× value in range");
            if let Err(e) = s.report(v.clone()) {
                eprintln!("scene/4x/{}: {name}={value} refused: {e}", s.id);
                continue;
            }
            g.bench_with_input(BenchmarkId::new("4x", s.id), &v, |b, v| {
                b.iter(|| s.report(black_box(v.clone())).expect("4× run"))
            });
        }
    }
    g.finish();
}

/// One warp request per pattern: row (conflict-free), column of a 32×32 f32 tile (32-way),
/// stride-2 (2-way), broadcast, 8-byte and 16-byte rows.
fn bank_requests() -> Vec<(Vec<Option<u64>>, u32)> {
    let lanes = |f: &dyn Fn(u64) -> u64| (0..32).map(|l| Some(f(l))).collect::<Vec<_>>();
    vec![
        (lanes(&|l| 4 * l), 4),
        (lanes(&|l| 4 * 32 * l), 4),
        (lanes(&|l| 8 * l), 4),
        (lanes(&|_| 64), 4),
        (lanes(&|l| 8 * l), 8),
        (lanes(&|l| 16 * l), 16),
    ]
}

/// The reduction kernel on a 1024-thread block, 8 values reduced together (the 4× shape).
fn reduce_block(inputs: &[Vec<f32>]) -> warpscope_core::simt::Trace {
    let shape = BlockShape::new(1024, 32).expect("shape");
    let mut block = Block::new("block_reduce", shape);
    let ks: Vec<usize> = (0..inputs.len()).collect();
    warpscope_core::reduction::block_reduce(&mut block, inputs, &ks, 32).expect("reduce");
    block.finish()
}

fn bench_simt(c: &mut Criterion) {
    let mut g = c.benchmark_group("simt");
    let cfg = BankConfig::default();
    let reqs = bank_requests();
    let lanes: u64 = reqs.iter().map(|(a, _)| a.len() as u64).sum();
    g.throughput(Throughput::Elements(lanes));
    g.bench_function("bank_request_lanes", |b| {
        b.iter(|| {
            for (a, w) in &reqs {
                black_box(cfg.request(black_box(a), *w).expect("request"));
            }
        })
    });
    let inputs: Vec<Vec<f32>> = (0..8)
        .map(|k| (0..1024).map(|t| ((t * 7 + k) % 13) as f32 - 6.0).collect())
        .collect();
    let trace = reduce_block(&inputs);
    let active: u64 = trace
        .warps
        .iter()
        .flat_map(|w| &w.events)
        .map(|e| e.lanes.iter().filter(|l| l.active).count() as u64)
        .sum();
    let events: usize = trace.warps.iter().map(|w| w.events.len()).sum();
    eprintln!("simt/reduce_block_lanes: {events} warp instructions, {active} active lanes");
    g.throughput(Throughput::Elements(active));
    g.bench_function("reduce_block_lanes", |b| {
        b.iter(|| black_box(reduce_block(black_box(&inputs))))
    });
    g.finish();
}

fn bench_allocator(c: &mut Criterion) {
    let mut g = c.benchmark_group("allocator");
    let s = warpscope_core::scene::find("memory-allocator").expect("scene");
    for batches in ["300", "1200"] {
        let mut v = s.defaults();
        v.set(s.params, "batches", batches).expect("batches");
        let p = allocator::AllocatorParams::from_values(&v.validated(s.params).expect("valid"))
            .expect("params");
        let events = allocator::simulate(&p, false).expect("sim").events.len() as u64;
        eprintln!("allocator/simulate/{batches} batches: {events} events");
        g.throughput(Throughput::Elements(events));
        g.bench_with_input(BenchmarkId::new("simulate_events", batches), &p, |b, p| {
            b.iter(|| black_box(allocator::simulate(p, false).expect("sim")))
        });
    }
    g.finish();
}

fn snapshot_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/snapshots")
}

fn bench_snapshots(c: &mut Criterion) {
    let mut g = c.benchmark_group("snapshot");
    let mut files: Vec<_> = std::fs::read_dir(snapshot_dir())
        .expect("snapshot dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "pickle"))
        .collect();
    files.sort();
    for path in files {
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("?")
            .to_owned();
        let bytes = std::fs::read(&path).expect("read");
        let s = snapshot::parse(&bytes).expect("parse");
        let events: usize = s.device_traces.iter().map(Vec::len).sum();
        let blocks: usize = s.segments.iter().map(|sg| sg.blocks.len()).sum();
        eprintln!(
            "snapshot/parse/{name}: {} bytes, {} segments, {blocks} blocks, {events} trace events",
            bytes.len(),
            s.segments.len()
        );
        // Events per second where the file has a trace worth the name, else bytes per second.
        g.throughput(if events >= 50 {
            Throughput::Elements(events as u64)
        } else {
            Throughput::Bytes(bytes.len() as u64)
        });
        g.bench_with_input(BenchmarkId::new("parse", &name), &bytes, |b, bytes| {
            b.iter(|| black_box(snapshot::parse(black_box(bytes)).expect("parse")))
        });
        g.bench_with_input(BenchmarkId::new("scene", &name), &path, |b, path| {
            b.iter(|| black_box(snapshot::run_path(path.to_str().expect("utf-8")).expect("scene")))
        });
    }
    g.finish();

    // 250,000 trace events, 7 stack frames each (cs336-a2's events carry 7–10).
    let mut g = c.benchmark_group("snapshot_250k");
    g.sample_size(10).measurement_time(Duration::from_secs(8));
    let t0 = Instant::now();
    let bytes = snapshot::synthetic(250_000, 7, 1).expect("synthetic");
    let path = std::env::temp_dir().join("warpscope-bench-250k.pickle");
    std::fs::write(&path, &bytes).expect("write synthetic snapshot");
    eprintln!(
        "snapshot_250k: synthetic file {} ({} bytes) generated in {:.2} s",
        path.display(),
        bytes.len(),
        t0.elapsed().as_secs_f64()
    );
    drop(bytes);
    let p = path.to_str().expect("utf-8").to_owned();
    g.throughput(Throughput::Elements(250_000));
    g.bench_function("read_file", |b| {
        b.iter(|| black_box(snapshot::read_file(black_box(&p)).expect("read")))
    });
    g.bench_function("scene", |b| {
        b.iter(|| black_box(snapshot::run_path(black_box(&p)).expect("scene")))
    });
    // The same trace without stack frames: the floor set by the fields the reader uses.
    let bare = snapshot::synthetic(250_000, 0, 1).expect("synthetic");
    let bare_path = std::env::temp_dir().join("warpscope-bench-250k-no-frames.pickle");
    std::fs::write(&bare_path, &bare).expect("write synthetic snapshot");
    eprintln!("snapshot_250k: without frames {} bytes", bare.len());
    let bp = bare_path.to_str().expect("utf-8").to_owned();
    g.bench_function("read_file_no_frames", |b| {
        b.iter(|| black_box(snapshot::read_file(black_box(&bp)).expect("read")))
    });
    g.finish();
}

/// Median of `n` interleaved timings of `a` and `b`, seconds.
fn interleaved(n: usize, mut a: impl FnMut(), mut b: impl FnMut()) -> (f64, f64) {
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    for _ in 0..n {
        let t = Instant::now();
        a();
        ta.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        b();
        tb.push(t.elapsed().as_secs_f64());
    }
    let med = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    (med(ta), med(tb))
}

fn bench_adam(c: &mut Criterion) {
    let mut g = c.benchmark_group("adam");
    // The trainer-workspace scene's instance at its defaults: GPT-2 large, each dimension ÷ 16.
    let tensors = shrink_tensors(&model("gpt2-large").expect("model").tensors(), 16);
    let mut ws = Workspace::new(tensors, 1).expect("workspace");
    ws.fill_gradients(&mut ChaCha8Rng::seed_from_u64(1))
        .expect("grads");
    let n = ws.p.len();
    let step = AdamConfig::with_lr(1e-3).step(1);
    // FP16 workspace: reads p, g (2 B) and m, v (4 B); writes p (2 B), m, v (4 B) = 22 B/param.
    let ws_bytes = 22 * n;
    // The copy moves the same bytes: reads half, writes half.
    let src: Vec<u8> = (0..ws_bytes / 2).map(|i| i as u8).collect();
    let mut dst = vec![0u8; ws_bytes / 2];
    // f32 Adam (trainer-timing's kernel): p, g, m, v read, p, m, v written = 28 B/param.
    let mut p32 = vec![0.01f32; n];
    let g32: Vec<f32> = (0..n).map(|i| (i % 17) as f32 * 1e-3 - 8e-3).collect();
    let (mut m32, mut v32) = (vec![0.0f32; n], vec![0.0f32; n]);
    let src32: Vec<u8> = (0..28 * n / 2).map(|i| i as u8).collect();
    let mut dst32 = vec![0u8; 28 * n / 2];

    let (t_adam, t_copy) = interleaved(
        21,
        || ws.adam_whole(&step),
        || dst.copy_from_slice(black_box(&src)),
    );
    let (t_adam32, t_copy32) = interleaved(
        21,
        || adam_f32(&mut p32, &g32, &mut m32, &mut v32, &step),
        || dst32.copy_from_slice(black_box(&src32)),
    );
    eprintln!(
        "adam: {n} parameters. FP16 workspace Adam {:.2} ms ({:.2} GB/s) vs copy of the same {} bytes {:.2} ms ({:.2} GB/s): ratio {:.0}%",
        t_adam * 1e3,
        ws_bytes as f64 / t_adam / 1e9,
        ws_bytes,
        t_copy * 1e3,
        ws_bytes as f64 / t_copy / 1e9,
        100.0 * t_copy / t_adam
    );
    eprintln!(
        "adam: f32 Adam {:.2} ms ({:.2} GB/s) vs copy of the same {} bytes {:.2} ms ({:.2} GB/s): ratio {:.0}%",
        t_adam32 * 1e3,
        (28 * n) as f64 / t_adam32 / 1e9,
        28 * n,
        t_copy32 * 1e3,
        (28 * n) as f64 / t_copy32 / 1e9,
        100.0 * t_copy32 / t_adam32
    );

    g.throughput(Throughput::Bytes(ws_bytes as u64));
    g.bench_function("workspace_fp16_whole", |b| b.iter(|| ws.adam_whole(&step)));
    g.bench_function("workspace_fp16_per_tensor", |b| {
        b.iter(|| ws.adam_per_tensor(&step).expect("adam"))
    });
    g.bench_function("copy_same_bytes_fp16", |b| {
        b.iter(|| dst.copy_from_slice(black_box(&src)))
    });
    g.throughput(Throughput::Bytes(28 * n as u64));
    g.bench_function("f32_whole", |b| {
        b.iter(|| adam_f32(&mut p32, &g32, &mut m32, &mut v32, &step))
    });
    g.bench_function("copy_same_bytes_f32", |b| {
        b.iter(|| dst32.copy_from_slice(black_box(&src32)))
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_scenes, bench_simt, bench_allocator, bench_snapshots, bench_adam
}
criterion_main!(benches);
