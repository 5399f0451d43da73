//! Every kernel runs on the adapter and matches an independently computed reference (f64
//! formulas written out here, and core's functions) within the f32 tolerance. Without an
//! adapter the tests skip, except in CI (`CI` set), where they fail.

// Test and bench helpers outside #[test] functions stop on failure by design.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use warpscope_kernels::data::Seeded;
use warpscope_kernels::runner::{Runner, Tolerance, Verification};
use warpscope_kernels::{
    DeviceContext, KernelError, RunOptions, TimingMethod, adam, adapter_required, kernel_names,
    layernorm, run_kernel_with, softmax,
};

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

fn check(name: &str, got: &[f32], want: &[f64]) {
    let v = Verification::compare(name, got, want, Tolerance::F32);
    eprintln!(
        "{name}: max abs {:.3e}, max rel {:.3e} over {}",
        v.max_abs_error, v.max_rel_error, v.elements
    );
    assert!(v.passed, "{name}: {v:?}");
}

fn softmax_problem(rows: usize, cols: usize, keep: f64, seed: u64) -> softmax::Problem {
    let mut rng = Seeded::new(seed);
    let mut y = Vec::with_capacity(rows * cols);
    for _ in 0..rows {
        let x: Vec<f64> = (0..cols).map(|_| 2.0 * rng.normal()).collect();
        let m = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let z: f64 = x.iter().map(|v| (v - m).exp()).sum();
        y.extend(x.iter().map(|v| ((v - m).exp() / z) as f32));
    }
    let dp = rng.normals_f32(rows * cols);
    let mask = (0..rows * cols)
        .map(|_| u8::from(rng.uniform() < keep))
        .collect();
    softmax::Problem {
        rows,
        cols,
        y,
        dp,
        mask,
        keep,
    }
}

/// ∇x = y ⊙ (g′ − Σ g′·y), g′ = ∇P·M/keep, all in f64, written out independently of core.
fn softmax_f64(p: &softmax::Problem) -> Vec<f64> {
    let mut out = Vec::new();
    for r in 0..p.rows {
        let i0 = r * p.cols;
        let g: Vec<f64> = (i0..i0 + p.cols)
            .map(|i| f64::from(p.dp[i]) * f64::from(p.mask[i]) / p.keep)
            .collect();
        let s: f64 = (0..p.cols).map(|j| g[j] * f64::from(p.y[i0 + j])).sum();
        out.extend((0..p.cols).map(|j| f64::from(p.y[i0 + j]) * (g[j] - s)));
    }
    out
}

#[test]
fn softmax_backward_fused_and_unfused_match_f64_and_core() {
    let Some(ctx) = ctx() else { return };
    // 300 columns: more than 32 values per lane at 8 lanes (the register array spills to
    // re-reads), and not a multiple of any subgroup size.
    for (rows, cols, keep) in [(37, 300, 0.9), (16, 5, 1.0), (3, 64, 0.5)] {
        let p = softmax_problem(rows, cols, keep, 11);
        let want = softmax_f64(&p);
        let core = p.reference().unwrap();
        let out = softmax::compute(&ctx, &p, 1).unwrap();
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].kernels.len(), 1);
        assert_eq!(out[1].kernels.len(), 5);
        for o in &out {
            check(
                &format!("softmax {} {rows}×{cols}", o.name),
                &o.output,
                &want,
            );
            check(&format!("softmax {} vs core", o.name), &o.output, &core);
            // Every row of ∇x sums to 0 (shift invariance).
            for row in o.output.chunks(cols) {
                let s: f64 = row.iter().map(|v| f64::from(*v)).sum();
                assert!(s.abs() < 1e-5, "{} row sum {s}", o.name);
            }
        }
    }
}

fn layernorm_problem(rows: usize, cols: usize, seed: u64) -> layernorm::Problem {
    let mut rng = Seeded::new(seed);
    // A non-zero mean, as activations have.
    let x = (0..rows * cols)
        .map(|_| (3.0 + rng.normal()) as f32)
        .collect();
    let dy = rng.normals_f32(rows * cols);
    let gamma = (0..cols)
        .map(|_| (1.0 + 0.1 * rng.normal()) as f32)
        .collect();
    layernorm::Problem {
        rows,
        cols,
        x,
        dy,
        gamma,
    }
}

/// HW4 form in f64 with f64 statistics: ∇x = r [g − (Σg + x̂ Σg·x̂)/m].
fn layernorm_f64(p: &layernorm::Problem) -> Vec<f64> {
    let m = p.cols as f64;
    let mut out = Vec::new();
    for r in 0..p.rows {
        let x: Vec<f64> = p.x[r * p.cols..(r + 1) * p.cols]
            .iter()
            .map(|v| f64::from(*v))
            .collect();
        let mu = x.iter().sum::<f64>() / m;
        let var = x.iter().map(|v| (v - mu) * (v - mu)).sum::<f64>() / m;
        let rs = 1.0 / (var + 1e-5).sqrt();
        let g: Vec<f64> = (0..p.cols)
            .map(|j| f64::from(p.gamma[j]) * f64::from(p.dy[r * p.cols + j]))
            .collect();
        let xh: Vec<f64> = x.iter().map(|v| (v - mu) * rs).collect();
        let sg: f64 = g.iter().sum();
        let sgx: f64 = g.iter().zip(&xh).map(|(a, b)| a * b).sum();
        out.extend((0..p.cols).map(|j| rs * (g[j] - (sg + xh[j] * sgx) / m)));
    }
    out
}

#[test]
fn layernorm_backward_fused_and_autograd_match_f64_and_core() {
    let Some(ctx) = ctx() else { return };
    for (rows, cols) in [(19, 200), (4, 1), (2, 1030)] {
        let p = layernorm_problem(rows, cols, 5);
        let want = layernorm_f64(&p);
        let core = p.reference();
        let out = layernorm::compute(&ctx, &p, 1).unwrap();
        assert_eq!(out[0].kernels.len(), 1);
        assert_eq!(out[1].kernels.len(), 7);
        for o in &out {
            check(
                &format!("layernorm {} {rows}×{cols}", o.name),
                &o.output,
                &want,
            );
            check(&format!("layernorm {} vs core", o.name), &o.output, &core);
        }
    }
}

/// The workgroup-tree variants (the shared block reduction of `shaders/block_reduce.wgsl`)
/// run where an adapter has no subgroups; the adapter's report is set to say so, so they run
/// here too.
#[test]
fn workgroup_tree_variants_match_f64() {
    let Some(mut ctx) = ctx() else { return };
    ctx.report.subgroups = false;
    for (rows, cols) in [(19, 200), (2, 1030)] {
        let p = layernorm_problem(rows, cols, 5);
        let want = layernorm_f64(&p);
        for o in layernorm::compute(&ctx, &p, 1).unwrap() {
            check(&format!("layernorm {} (tree)", o.name), &o.output, &want);
        }
    }
    for (rows, cols, keep) in [(37, 300, 0.9), (3, 64, 0.5)] {
        let p = softmax_problem(rows, cols, keep, 11);
        let want = softmax_f64(&p);
        for o in softmax::compute(&ctx, &p, 1).unwrap() {
            check(&format!("softmax {} (tree)", o.name), &o.output, &want);
        }
    }
}

#[test]
fn adam_per_tensor_and_linked_match_f64_and_core() {
    let Some(ctx) = ctx() else { return };
    let sizes = vec![5, 300, 1, 1000, 64];
    let p = warpscope_kernels::kernel::adam::adam_problem(sizes, 1e-3, 7, 3);
    // f64 Adam written out here (bias corrections in f64).
    let (b1, b2, eps, lr) = (0.9f64, 0.999f64, 1e-8f64, 1e-3f64);
    let (c1, c2) = (1.0 - b1.powi(7), 1.0 - b2.powi(7));
    let n = p.p.len();
    let mut want = vec![0.0; 3 * n];
    for i in 0..n {
        let g = f64::from(p.g[i]);
        let m = b1 * f64::from(p.m[i]) + (1.0 - b1) * g;
        let v = b2 * f64::from(p.v[i]) + (1.0 - b2) * g * g;
        want[i] = f64::from(p.p[i]) - lr * (m / c1) / ((v / c2).sqrt() + eps);
        want[n + i] = m;
        want[2 * n + i] = v;
    }
    let core = p.core_reference();
    let out = adam::compute(&ctx, &p, 1).unwrap();
    assert_eq!(out[0].name, "linked");
    assert_eq!(out[0].kernels.len(), 1);
    assert_eq!(out[1].name, "per-tensor");
    assert_eq!(out[1].kernels.len(), 5);
    for o in &out {
        check(&format!("adam {}", o.name), &o.output, &want);
        check(&format!("adam {} vs core", o.name), &o.output, &core);
    }
    // Element-wise: the layout cannot change a single bit.
    assert_eq!(out[0].output, out[1].output);
}

#[test]
fn every_kernel_runs_verifies_and_reports() {
    let Some(ctx) = ctx() else { return };
    let small: &[(&str, &[&str])] = &[
        ("layernorm-bw", &["rows=32", "cols=256"]),
        ("layernorm-dgamma", &["rows=100", "cols=70"]),
        ("softmax-bw", &["rows=64", "len=128"]),
        ("adam", &["layers=1", "hidden=16", "vocab=50"]),
    ];
    assert_eq!(small.len(), kernel_names().len());
    for (name, sets) in small {
        let mut o = RunOptions::default();
        o.set("runs=3").unwrap();
        for s in *sets {
            o.set(s).unwrap();
        }
        let run = run_kernel_with(name, &ctx, &o).unwrap();
        eprintln!(
            "{name}: ratio {:.2} ({} / {}), copy {:.2} GB/s",
            run.comparison.time_ratio,
            run.comparison.baseline,
            run.comparison.optimised,
            run.copy_bandwidth.gbps
        );
        assert!(run.verified, "{name}: {:#?}", run.variants);
        assert_eq!(run.variants.len(), 2);
        assert!(run.comparison.time_ratio > 0.0 && run.comparison.time_ratio.is_finite());
        assert!(run.comparison.bytes_ratio >= 1.0);
        assert!(run.comparison.launch_ratio >= 1.0);
        for v in &run.variants {
            assert_eq!(v.timing.runs, 3);
            assert!(v.timing.min_us <= v.timing.median_us && v.timing.median_us <= v.timing.max_us);
            assert!(v.timing.median_us > 0.0);
            assert!(v.bytes_moved > 0);
            assert_eq!(
                v.timing.caveat.is_some(),
                v.timing.timing == TimingMethod::Host
            );
            if let Some(d) = v.core_f32_max_abs_diff {
                assert!(d < 1e-4, "{name} {}: {d}", v.name);
            }
        }
        let json = serde_json::to_value(&run).unwrap();
        assert_eq!(json["kernel"], *name);
        assert!(json["variants"][0]["verification"]["max_abs_error"].is_number());
        assert!(json["comparison"]["time_ratio"].is_number());
    }
}

#[test]
fn errors_are_values() {
    let Some(ctx) = ctx() else { return };
    assert!(matches!(
        warpscope_kernels::run_kernel("no-such-kernel", &ctx),
        Err(KernelError::UnknownKernel { .. })
    ));
    let mut o = RunOptions::default();
    o.set("rows=100000").unwrap();
    let e = run_kernel_with("softmax-bw", &ctx, &o).unwrap_err();
    assert!(matches!(e, KernelError::InvalidOption { .. }), "{e}");
    // core refuses rows × len > 2²⁰ and says so.
    let mut o = RunOptions::default();
    o.set("rows=4096").unwrap();
    o.set("len=4096").unwrap();
    let e = run_kernel_with("softmax-bw", &ctx, &o).unwrap_err();
    assert!(e.to_string().contains("16777216"), "{e}");
    // A shader that does not compile is an error value naming the pipeline.
    let r = Runner::new(&ctx, "broken");
    let e = r
        .pipeline(
            "@compute @workgroup_size(1) fn main() { let x: f32 = 1u; }",
            "main",
            &[],
        )
        .unwrap_err();
    assert!(matches!(e, KernelError::Shader { .. }), "{e}");
    assert!(e.to_string().contains("broken/main"), "{e}");
}

#[test]
fn dgamma_tile_padded_and_unpadded_match_f64() {
    let Some(ctx) = ctx() else { return };
    if ctx.device.limits().max_compute_invocations_per_workgroup < 1024 {
        eprintln!("skipped: the adapter allows fewer than 1024 invocations per workgroup");
        return;
    }
    // 70 columns: a partial third tile; 100 rows: not a multiple of 32.
    let p = layernorm_problem(100, 70, 9);
    let s = p.saved();
    let mut want = vec![0.0f64; 140];
    for r in 0..p.rows {
        for j in 0..p.cols {
            let i = r * p.cols + j;
            let xh = (f64::from(p.x[i]) - f64::from(s.mu[r])) * f64::from(s.r[r]);
            want[j] += f64::from(p.dy[i]) * xh;
            want[70 + j] += f64::from(p.dy[i]);
        }
    }
    let out = warpscope_kernels::dgamma::compute(&ctx, &p, 1).unwrap();
    assert_eq!(out[0].name, "padded");
    assert_eq!(out[1].name, "unpadded");
    for o in &out {
        check(&format!("dgamma {}", o.name), &o.output, &want);
    }
    // Padding moves data between banks, not between additions: the same bits.
    assert_eq!(out[0].output, out[1].output);
}

#[test]
fn adam_f16_storage_matches_f64_within_one_fp16_unit() {
    let Some(ctx) = ctx() else { return };
    let sizes = vec![5, 300, 1, 1001, 64];
    let p = warpscope_kernels::kernel::adam::adam_problem(sizes, 1e-3, 7, 3);
    if !ctx.report.shader_f16 {
        let e = adam::compute_with(&ctx, &p, 1, adam::Storage::F16).unwrap_err();
        assert!(e.to_string().contains("not available on"), "{e}");
        return;
    }
    let out = adam::compute_with(&ctx, &p, 1, adam::Storage::F16).unwrap();
    let n = p.p.len();
    assert_eq!(out[0].name, "linked-f16");
    // 2 + 2 + 4 + 4 bytes read, 2 + 4 + 4 written per parameter.
    assert_eq!(out[0].bytes_moved, 22 * n as u64);
    // f64 Adam written out here on the FP16-rounded p and g; p's result rounded to FP16 once.
    let (b1, b2, eps, lr) = (0.9f64, 0.999f64, 1e-8f64, 1e-3f64);
    let (c1, c2) = (1.0 - b1.powi(7), 1.0 - b2.powi(7));
    let h = |x: f32| f64::from(half::f16::from_f32(x).to_f32());
    for o in &out {
        for i in 0..n {
            let g = h(p.g[i]);
            let m = b1 * f64::from(p.m[i]) + (1.0 - b1) * g;
            let v = b2 * f64::from(p.v[i]) + (1.0 - b2) * g * g;
            let want = h(p.p[i]) - lr * (m / c1) / ((v / c2).sqrt() + eps);
            let got = f64::from(o.output[i]);
            // One FP16 unit in the last place of the result (2⁻¹⁰ relative for normals,
            // 2⁻²⁴ for subnormals), plus the f32 arithmetic's own error before the rounding
            // (f32 constants: 1 − 0.999f32 is 4.7e-5 relative off 0.001, so m and v are
            // checked at f32's 1e-4 relative, as the f32 test does).
            let ulp = (want.abs().log2().floor() - 10.0)
                .exp2()
                .max(2f64.powi(-24));
            assert!(
                (got - want).abs() <= ulp + 1e-6,
                "{} p[{i}]: {got} vs {want} (ulp {ulp})",
                o.name
            );
            // Every stored p is an FP16 value.
            assert_eq!(h(o.output[i]), got);
            let (gm, gv) = (f64::from(o.output[n + i]), f64::from(o.output[2 * n + i]));
            assert!(
                (gm - m).abs() <= 1e-5 + 1e-4 * m.abs(),
                "m[{i}]: {gm} vs {m}"
            );
            assert!(
                (gv - v).abs() <= 1e-5 + 1e-4 * v.abs(),
                "v[{i}]: {gv} vs {v}"
            );
        }
    }
    assert_eq!(
        out[0].output, out[1].output,
        "the layout cannot change a bit"
    );
    // And through the registry: `warpscope run adam` reports it beside f32.
    let mut o = RunOptions::default();
    o.set("runs=2").unwrap();
    o.set("layers=1").unwrap();
    o.set("hidden=16").unwrap();
    let run = run_kernel_with("adam", &ctx, &o).unwrap();
    let f = run.f16_storage.expect("adam reports f16 storage");
    assert!(f.available && f.verified, "{f:#?}");
    assert_eq!(f.bytes_per_param, 22);
    assert_eq!(f.variants.len(), 2);
}
