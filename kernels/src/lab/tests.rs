//! The kernel lab on the adapter (lavapipe in CI): every bundled example's buffers against
//! values this file derives on the CPU from the example's input bytes, and the refusals.

use std::collections::BTreeMap;

use warpscope_core::lab::dispatch::{Binding, Dispatch, decode};
use warpscope_core::lab::examples::{EXAMPLES, Example};

use super::*;
use crate::adapter_required;
use crate::runner::{Tolerance, Verification};

fn ctx() -> Option<DeviceContext> {
    match DeviceContext::open() {
        Ok(c) => Some(c),
        Err(e) if !adapter_required() => {
            eprintln!("skipped: no adapter ({e})");
            None
        }
        Err(e) => panic!("CI must provide a GPU adapter (lavapipe): {e}"),
    }
}

fn dispatch_of(ex: &Example) -> Dispatch {
    let v: serde_json::Value = serde_json::from_str(ex.input).unwrap();
    Dispatch::from_json(&v).unwrap_or_else(|e| panic!("{}: {e}", ex.name))
}

fn b(binding: u32) -> Binding {
    Binding { group: 0, binding }
}

/// The first component of every element of the input buffer at `binding`, as the GPU got it.
fn input(d: &Dispatch, binding: u32) -> Vec<f64> {
    let init = &d.buffers[&b(binding)];
    decode(&init.bytes(b(binding), d.seed).unwrap(), init.ty)
        .into_iter()
        .map(|e| e[0])
        .collect()
}

/// The first component of every element of the GPU's buffer at `binding`.
fn output(r: &GpuRun, binding: u32) -> Vec<f64> {
    r.buffers[&b(binding)]
        .values
        .iter()
        .map(|e| e.0[0])
        .collect()
}

fn close(name: &str, got: &[f64], want: &[f64]) {
    let got: Vec<f32> = got.iter().map(|&x| x as f32).collect();
    let v = Verification::compare(name, &got, want, Tolerance::F32);
    assert!(v.passed, "{name}: {v:?}");
}

/// Sums of consecutive blocks of 256.
fn block_sums(x: &[f64]) -> Vec<f64> {
    x.chunks(256).map(|c| c.iter().sum()).collect()
}

/// The expectation for one example, derived from its input; panics on a mismatch.
fn check(ex: &Example, d: &Dispatch, r: &GpuRun) {
    match ex.name {
        "reduce-shared" | "reduce-interleaved" | "reduce-strided" | "reduce-shuffle" => {
            // iota over 4 × 256: block w sums 256w … 256w + 255 = 65536w + 32640, every partial
            // an integer below 2²⁴, so exact in f32 whatever the order.
            let want = block_sums(&input(d, 0));
            assert_eq!(want, [32640.0, 98176.0, 163712.0, 229248.0]);
            assert_eq!(output(r, 1), want, "{}", ex.name);
        }
        "transpose-tiled" | "transpose-padded" => {
            let (rows, cols) = (64, 96);
            let x = input(d, 0);
            let mut want = vec![0.0; rows * cols];
            for i in 0..rows {
                for j in 0..cols {
                    want[j * rows + i] = x[i * cols + j];
                }
            }
            assert_eq!(output(r, 1), want, "{}", ex.name);
        }
        "histogram" => {
            let mut want = vec![0.0; 32];
            for v in input(d, 0) {
                want[(v as u64 % 32) as usize] += 1.0;
            }
            assert_eq!(want.iter().sum::<f64>(), 2048.0);
            assert_eq!(output(r, 1), want);
        }
        "prefix-sum" => {
            let x = input(d, 0);
            let mut want = Vec::new();
            for block in x.chunks(256) {
                let mut acc = 0.0;
                for v in block {
                    acc += v;
                    want.push(acc);
                }
            }
            assert_eq!(want[255], 32640.0);
            assert_eq!(output(r, 1), want);
        }
        "dgamma-32" | "dgamma-33" => {
            let (rows, cols) = (64, 64);
            let (x, dy, mu, rstd) = (input(d, 1), input(d, 2), input(d, 3), input(d, 4));
            let mut dg = vec![0.0; cols];
            let mut db = vec![0.0; cols];
            for r in 0..rows {
                for j in 0..cols {
                    let i = r * cols + j;
                    dg[j] += dy[i] * (x[i] - mu[r]) * rstd[r];
                    db[j] += dy[i];
                }
            }
            close(ex.name, &output(r, 5), &dg);
            close(ex.name, &output(r, 6), &db);
        }
        "softmax-warp" => {
            let (rows, cols) = (32, 64);
            let scale = f64::from(f32::from_bits(1_067_450_368));
            assert_eq!(scale, 1.25);
            let (dp, mask, y) = (input(d, 1), input(d, 2), input(d, 3));
            let mut want = vec![0.0; rows * cols];
            for row in 0..rows {
                let m = |i: usize| f64::from(((mask[i / 4] as u32) >> ((i % 4) * 8)) & 0xff);
                let g: Vec<f64> = (0..cols)
                    .map(|j| {
                        let i = row * cols + j;
                        dp[i] * m(i) * scale
                    })
                    .collect();
                let s: f64 = (0..cols).map(|j| g[j] * y[row * cols + j]).sum();
                for j in 0..cols {
                    want[row * cols + j] = y[row * cols + j] * (g[j] - s);
                }
            }
            close(ex.name, &output(r, 4), &want);
            // `row_sum`'s output, which `fused` does not use, is not read back.
            assert!(!r.buffers.contains_key(&b(6)));
        }
        "layernorm-fused" => {
            let (rows, cols) = (8, 256);
            let (x, dy, gamma, mu, rstd) = (
                input(d, 1),
                input(d, 2),
                input(d, 3),
                input(d, 4),
                input(d, 5),
            );
            let mut want = vec![0.0; rows * cols];
            for row in 0..rows {
                let base = row * cols;
                let g = |j: usize| gamma[j] * dy[base + j];
                let xh = |j: usize| (x[base + j] - mu[row]) * rstd[row];
                let sg: f64 = (0..cols).map(g).sum();
                let sgx: f64 = (0..cols).map(|j| g(j) * xh(j)).sum();
                for j in 0..cols {
                    want[base + j] = rstd[row] * (g(j) - (sg + xh(j) * sgx) / cols as f64);
                }
            }
            close(ex.name, &output(r, 6), &want);
        }
        other => panic!("example `{other}` has no expectation in this test"),
    }
}

#[test]
fn every_example_is_resolved_and_fits_its_dispatch() {
    for ex in EXAMPLES {
        let res = Resources::of(ex.source, ex.entry).unwrap_or_else(|e| panic!("{}: {e}", ex.name));
        res.check_dispatch(&dispatch_of(ex))
            .unwrap_or_else(|e| panic!("{}: {e}", ex.name));
    }
}

#[test]
fn every_example_on_the_adapter_equals_its_cpu_expectation() {
    let Some(ctx) = ctx() else { return };
    let opts = RunOptions { runs: 1 };
    for ex in EXAMPLES {
        let d = dispatch_of(ex);
        let r = run(ex.source, ex.entry, &d, &ctx, opts)
            .unwrap_or_else(|e| panic!("{} on {}: {e}", ex.name, ctx.report.name));
        check(ex, &d, &r);
        assert!(r.time.median_us > 0.0, "{}", ex.name);
        eprintln!(
            "{}: equal on {} (subgroup size {:?}), {:.1} µs",
            ex.name, r.adapter.name, r.subgroup_size, r.time.median_us
        );
    }
}

/// `a && b` where `a` holds on only some lanes of a warp: naga lowers it to a `bool` function
/// variable stored in an `if` on `a` (the ∇γ tile's last `if` has this shape). Every
/// invocation with lid.x = 0 writes its row, so o = [100, 101, 102, 103].
#[test]
fn short_circuit_and_with_a_partly_true_left_side() {
    let source = "
        @group(0) @binding(0) var<storage, read_write> o: array<u32>;
        @compute @workgroup_size(4, 4)
        fn main(@builtin(local_invocation_id) lid: vec3<u32>) {
            let row = lid.y;
            if (lid.x == 0u && row < 4u) {
                o[row] = 100u + row;
            }
        }";
    let v =
        serde_json::json!({"workgroups": [1, 1, 1], "buffers": {"0:0": {"type": "u32", "len": 4}}});
    let d = Dispatch::from_json(&v).unwrap();
    let sim = warpscope_core::lab::simulate(source, None, 8, &d).unwrap();
    let got: Vec<f64> = sim.buffers[&b(0)].values.iter().map(|e| e.0[0]).collect();
    assert_eq!(got, [100.0, 101.0, 102.0, 103.0]);
    if let Some(ctx) = ctx() {
        let gpu = run(source, None, &d, &ctx, RunOptions { runs: 1 }).unwrap();
        assert!(compare(&gpu.buffers, &sim.buffers).passed);
    }
}

#[test]
fn every_example_simulated_equals_the_gpu() {
    let Some(ctx) = ctx() else { return };
    let opts = RunOptions { runs: 1 };
    let mut failures = Vec::new();
    for ex in EXAMPLES {
        let d = dispatch_of(ex);
        let gpu = run(ex.source, ex.entry, &d, &ctx, opts)
            .unwrap_or_else(|e| panic!("{} on {}: {e}", ex.name, ctx.report.name));
        // The simulator splits the workgroup into warps of the adapter's subgroup size (8 on
        // lavapipe), so subgroup operations see the same lanes on both sides.
        let size = gpu.subgroup_size.unwrap_or(32);
        let options = warpscope_core::lab::Options {
            overrides: d.overrides.clone(),
            ..Default::default()
        };
        match warpscope_core::lab::simulate_with(ex.source, ex.entry, size, &d, &options) {
            Ok(sim) => {
                let c = compare(&gpu.buffers, &sim.buffers);
                if !c.passed {
                    failures.push(format!(
                        "{}: {}",
                        ex.name,
                        serde_json::to_string(&c).unwrap()
                    ));
                }
            }
            Err(e) => failures.push(format!("{}: the simulation failed: {e}", ex.name)),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn refusals_name_what_is_wrong() {
    let ex = warpscope_core::lab::examples::find("dgamma-33").unwrap();
    let res = Resources::of(ex.source, None).unwrap();
    assert_eq!(res.entry, "tile");
    assert_eq!(res.workgroup_size, [32, 32, 1]);
    // The uniform `Params` is four u32: 16 bytes.
    assert_eq!(res.resources[0].min_bytes, 16);
    assert!(res.resources[1].runtime_sized);
    let mut d = dispatch_of(ex);
    d.buffers.remove(&b(2));
    d.buffers.insert(b(9), d.buffers[&b(1)].clone());
    let msg = res.check_dispatch(&d).unwrap_err().to_string();
    assert!(msg.contains("\"0:2\" (`dy`)"), "{msg}");
    assert!(msg.contains("\"0:9\""), "{msg}");
    // A uniform of 3 u32 (12 bytes) is short of the 16 its type takes.
    let mut d = dispatch_of(ex);
    let params: serde_json::Value = serde_json::json!({"workgroups": [1, 1, 1], "buffers": {"0:0": {"type": "u32", "data": [1, 2, 3]}}, "overrides": {"PADDING": 1}});
    let short = Dispatch::from_json(&params).unwrap();
    d.buffers.insert(b(0), short.buffers[&b(0)].clone());
    d.overrides = short.overrides;
    let msg = res.check_dispatch(&d).unwrap_err().to_string();
    assert!(msg.contains("12 bytes; its type takes 16 bytes"), "{msg}");
    assert!(
        msg.contains("PADDING") && msg.contains("it has: PAD"),
        "{msg}"
    );

    // Two compute entry points and none named.
    let sm = warpscope_core::lab::examples::find("softmax-warp").unwrap();
    let msg = Resources::of(sm.source, None).unwrap_err().to_string();
    assert!(msg.contains("fused, row_sum"), "{msg}");
    let msg = Resources::of(sm.source, Some("rows"))
        .unwrap_err()
        .to_string();
    assert!(msg.contains("no compute entry point `rows`"), "{msg}");
    // A parse error quotes the line.
    let msg = Resources::of("@compute @workgroup_size(1) fn main() { let x = ; }", None)
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("does not parse") && msg.contains(":1:"),
        "{msg}"
    );
    assert!(Resources::of("fn f() {}", None).unwrap_err().is_input());
}

#[test]
fn adapters_without_subgroups_are_refused() {
    let sm = warpscope_core::lab::examples::find("reduce-shuffle").unwrap();
    let res = Resources::of(sm.source, None).unwrap();
    let report = AdapterReport {
        name: "no-subgroups".to_owned(),
        backend: "Vulkan".to_owned(),
        device_type: "Cpu".to_owned(),
        driver: String::new(),
        subgroup_min_size: 4,
        subgroup_max_size: 4,
        timestamps: false,
        subgroups: false,
        shader_f16: false,
    };
    match res.check_adapter(sm.source, &report) {
        Err(LabError::Unsupported { adapter, needs }) => {
            assert_eq!(adapter, "no-subgroups");
            assert!(needs.contains("subgroup operations"), "{needs}");
        }
        other => panic!("{other:?}"),
    }
    // The shared-memory reduction needs neither.
    let plain = warpscope_core::lab::examples::find("reduce-shared").unwrap();
    Resources::of(plain.source, None)
        .unwrap()
        .check_adapter(plain.source, &report)
        .unwrap();
}

#[test]
fn other_groups_uniforms_and_vectors() {
    let Some(ctx) = ctx() else { return };
    // Group 1 only for the uniform, group 0 skipped entirely by the storage buffer in group 2:
    // the empty group 0 and 1 … 2 must all be set.
    let source = "
        @group(1) @binding(3) var<uniform> k: vec4<u32>;
        @group(2) @binding(0) var<storage, read_write> o: array<vec2<f32>>;
        @compute @workgroup_size(4)
        fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
            let i = gid.x;
            o[i] = vec2<f32>(f32(i * k.x), o[i].y + f32(k.y));
        }";
    let v = serde_json::json!({
        "workgroups": [2, 1, 1],
        "buffers": {
            "1:3": {"type": "u32", "data": [3, 10, 0, 0]},
            "2:0": {"type": "vec2<f32>", "len": 8, "fill": 0.5}
        }
    });
    let d = Dispatch::from_json(&v).unwrap();
    let r = run(source, None, &d, &ctx, RunOptions { runs: 1 }).unwrap();
    let out = &r.buffers[&Binding {
        group: 2,
        binding: 0,
    }];
    let want: Vec<Vec<f64>> = (0..8).map(|i| vec![f64::from(3 * i), 10.5]).collect();
    let got: Vec<Vec<f64>> = out.values.iter().map(|e| e.0.clone()).collect();
    assert_eq!(got, want);
    assert_eq!(r.buffers.len(), 1, "uniforms are not read back");
    // The comparison with itself passes; the JSON names the binding "2:0".
    let c = compare(&r.buffers, &r.buffers);
    assert!(c.passed);
    let json = serde_json::to_value(&c).unwrap();
    assert_eq!(json["buffers"]["2:0"]["type"], "vec2<f32>");
    let by_binding: BTreeMap<_, _> = r.buffers.clone();
    assert_eq!(
        serde_json::to_value(&by_binding).unwrap()["2:0"][1],
        serde_json::json!([3.0, 10.5])
    );
}

mod recording {
    use super::*;
    use crate::lab::record::{RecordOptions, record};

    fn example(name: &str) -> &'static Example {
        EXAMPLES.iter().find(|e| e.name == name).unwrap()
    }

    /// Records `name` and checks the Done-when properties against the simulation at the
    /// recorded subgroup size, computed independently by the interpreter.
    fn records_like_the_simulation(name: &str) {
        let Some(ctx) = ctx() else { return };
        let ex = example(name);
        let d = dispatch_of(ex);
        let r = record(ex.source, ex.entry, &d, &ctx, &RecordOptions::default()).unwrap();
        assert_eq!(r.dropped, 0, "{name}");
        assert!(r.buffers_equal, "{name}");
        assert_eq!(r.unrecorded, 0, "{name}");
        let sim = warpscope_core::lab::simulate(ex.source, ex.entry, r.subgroup_size, &d).unwrap();
        let want: Vec<(u32, u64)> = sim
            .lines
            .iter()
            .filter(|l| l.counters.shared_requests > 0)
            .map(|l| (l.line, l.counters.shared_wavefronts))
            .collect();
        let got: Vec<(u32, u64)> = r
            .lines
            .iter()
            .filter(|l| l.counters.shared_requests > 0)
            .map(|l| (l.line, l.counters.shared_wavefronts))
            .collect();
        assert_eq!(got, want, "{name} at subgroup size {}", r.subgroup_size);
        assert!(r.comparison.all_equal, "{name}: {:?}", r.comparison);
        if ctx.report.subgroup_max_size == 8 && ctx.report.subgroup_min_size == 8 {
            assert_eq!(r.subgroup_size, 8);
        }
    }

    #[test]
    fn lab_record_transpose_tiled() {
        records_like_the_simulation("transpose-tiled");
    }

    #[test]
    fn lab_record_transpose_padded() {
        records_like_the_simulation("transpose-padded");
    }

    #[test]
    fn lab_record_histogram() {
        // Workgroup atomics, and a global atomic per bin the simulator counts among line 28's
        // atomics: recorded too, so every line agrees.
        records_like_the_simulation("histogram");
    }

    #[test]
    fn lab_record_reduce_shared() {
        records_like_the_simulation("reduce-shared");
    }

    #[test]
    fn lab_record_refuses_past_the_limit_before_recording() {
        let Some(ctx) = ctx() else { return };
        let ex = example("reduce-shared");
        let d = dispatch_of(ex);
        // Per workgroup of 256: 256 stores + 256 barriers at line 12–13; per step s (128 … 1)
        // s × 3 accesses + 256 barriers; 1 final load. 4 workgroups.
        let steps: u64 = (0..8).map(|k| (128u64 >> k) * 3 + 256).sum();
        let per_wg = 256 + 256 + steps + 1;
        let opts = RecordOptions { max_records: 100 };
        match record(ex.source, ex.entry, &d, &ctx, &opts) {
            Err(LabError::Input(m)) => {
                assert!(m.contains(&format!("{} records", 4 * per_wg)), "{m}");
                assert!(m.contains("limit is 100 records"), "{m}");
            }
            other => panic!("{other:?}"),
        }
    }
}
