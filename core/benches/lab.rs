//! `cargo bench -p warpscope-core --bench lab` — the kernel lab's interpreter speed, in
//! simulated lane instructions per second (criterion's "elements"): a 2²⁰-element shared-memory
//! reduction (the bundled `reduce-shared` kernel, 4096 workgroups of 256) and a 512 × 512
//! tiled transpose through a padded 32 × 33 tile (256 workgroups of 32 × 8). Goal (issue 26):
//! ≥ 20 million lane instructions per second on one core.

// Bench helpers stop on failure by design.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use warpscope_core::lab::dispatch::Dispatch;
use warpscope_core::lab::{examples, simulate};

const TRANSPOSE: &str = include_str!("../../assets/kernels/bench_transpose.wgsl");

fn cases() -> Vec<(&'static str, &'static str, Dispatch)> {
    let reduce = Dispatch::from_json(&serde_json::json!({
        "workgroups": [4096, 1, 1],
        "buffers": {"0:0": {"type": "f32", "len": 1 << 20, "fill": "iota"},
                    "0:1": {"type": "f32", "len": 4096}}
    }))
    .unwrap();
    let transpose = Dispatch::from_json(&serde_json::json!({
        "workgroups": [16, 16, 1],
        "buffers": {"0:0": {"type": "f32", "len": 512 * 512, "fill": "iota"},
                    "0:1": {"type": "f32", "len": 512 * 512}}
    }))
    .unwrap();
    let reduce_src = examples::find("reduce-shared").unwrap().source;
    vec![
        ("reduce-2^20", reduce_src, reduce),
        ("transpose-512", TRANSPOSE, transpose),
    ]
}

fn lab(c: &mut Criterion) {
    let mut g = c.benchmark_group("lab");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    for (name, src, d) in cases() {
        let lanes = simulate(src, None, 32, &d)
            .unwrap()
            .totals
            .lane_instructions;
        g.throughput(Throughput::Elements(lanes));
        g.bench_function(name, |b| {
            b.iter(|| {
                black_box(
                    simulate(src, None, 32, &d)
                        .unwrap()
                        .totals
                        .lane_instructions,
                )
            })
        });
    }
    g.finish();
}

criterion_group!(benches, lab);
criterion_main!(benches);
