//! Checks of the interpreter against figures derived by hand (each derivation in a comment).

use super::dispatch::{Binding, Dispatch};
use super::output::{Counters, LabOutput, WarningKind};
use super::*;

fn dispatch(json: serde_json::Value) -> Dispatch {
    Dispatch::from_json(&json).unwrap()
}

fn line_of(src: &str, needle: &str) -> u32 {
    src.lines().position(|l| l.contains(needle)).unwrap() as u32 + 1
}

fn at(out: &LabOutput, line: u32) -> Counters {
    out.lines
        .iter()
        .find(|l| l.line == line)
        .map(|l| l.counters)
        .unwrap_or_default()
}

fn buffer(out: &LabOutput, g: u32, b: u32) -> Vec<f64> {
    out.buffers[&Binding {
        group: g,
        binding: b,
    }]
        .values
        .iter()
        .flat_map(|e| e.0.clone())
        .collect()
}

#[test]
fn reduce_shared_example_sums_and_counts() {
    let ex = examples::find("reduce-shared").unwrap();
    let d = Dispatch::from_json(&serde_json::from_str(ex.input).unwrap()).unwrap();
    let out = simulate(ex.source, None, 32, &d).unwrap();
    // sums[w] = Σ_{i=256w}^{256w+255} i = 256·256·w + (0 + … + 255) = 65536·w + 32640.
    assert_eq!(buffer(&out, 0, 1), [32640.0, 98176.0, 163712.0, 229248.0]);
    let src = ex.source;
    // 4 workgroups × 8 warps. Load line: one request per warp, 32 × 4 contiguous bytes from
    // a 128-byte-aligned address = 4 sectors; the shared store 1 wavefront (32 banks).
    let first = at(&out, line_of(src, "partial[tid] = input[gid.x]"));
    assert_eq!(
        (
            first.global_requests,
            first.global_sectors,
            first.global_ideal_sectors
        ),
        (32, 128, 128)
    );
    assert_eq!((first.shared_requests, first.shared_wavefronts), (32, 32));
    // Tree: s = 128, 64, 32, 16, 8, 4, 2, 1 keeps 4, 2, 1, 1, 1, 1, 1, 1 warps busy = 12
    // warp passes per workgroup, each 2 loads + 1 store of consecutive words (1 wavefront):
    // 36 requests and wavefronts per workgroup, 144 in all.
    let tree = at(&out, line_of(src, "partial[tid] + partial[tid + s]"));
    assert_eq!(
        (
            tree.shared_requests,
            tree.shared_wavefronts,
            tree.shared_ideal_wavefronts
        ),
        (144, 144, 144)
    );
    // `tid < s` splits warp 0 for s = 16, 8, 4, 2, 1: 5 per workgroup.
    assert_eq!(
        at(&out, line_of(src, "if (tid < s)")).divergent_branches,
        20
    );
    // `tid == 0` splits warp 0 once per workgroup; lane 0 alone reads one word, stores 4 bytes
    // (1 sector).
    assert_eq!(
        at(&out, line_of(src, "if (tid == 0u)")).divergent_branches,
        4
    );
    let last = at(&out, line_of(src, "sums[wg.x]"));
    assert_eq!(
        (
            last.global_requests,
            last.global_sectors,
            last.shared_wavefronts
        ),
        (4, 4, 4)
    );
    // One barrier before the loop and one per step: 9 per workgroup.
    assert_eq!(out.totals.barriers, 36);
    assert_eq!(out.totals.warps, 32);
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    // The stepped workgroup's trace: 8 warps, each with its barrier waits.
    assert_eq!(out.trace.warps.len(), 8);
    let bars = out.trace.warps[7]
        .events
        .iter()
        .filter(|e| matches!(e.kind, crate::simt::EventKind::Barrier { .. }))
        .count();
    assert_eq!(bars, 9);
    assert_eq!(
        out.events,
        out.trace
            .warps
            .iter()
            .map(|w| w.events.len())
            .sum::<usize>()
    );
}

const COLUMN: &str = "@group(0) @binding(0) var<storage, read_write> out: array<f32>;
var<workgroup> tile: array<f32, 1056>;
override PAD: u32 = 0u;

@compute @workgroup_size(32)
fn main(@builtin(local_invocation_index) i: u32) {
    let stride = 32u + PAD;
    for (var r = 0u; r < 32u; r++) {
        tile[r * stride + i] = f32(r * 32u + i);
    }
    workgroupBarrier();
    out[i] = tile[i * stride];
}
";

#[test]
fn column_read_conflicts_and_padding() {
    let d = dispatch(serde_json::json!({"workgroups": [1, 1, 1],
        "buffers": {"0:0": {"type": "f32", "len": 32}}}));
    let store = line_of(COLUMN, "tile[r * stride + i] =");
    let read = line_of(COLUMN, "out[i] = tile");
    for (pad, wavefronts) in [(0.0, 32), (1.0, 1)] {
        let mut o = Options::default();
        o.overrides.insert("PAD".into(), pad);
        let out = simulate_with(COLUMN, None, 32, &d, &o).unwrap();
        // Row stores: lane i writes word r·stride + i, 32 consecutive words = 1 wavefront, 32
        // times.
        let s = at(&out, store);
        assert_eq!(
            (
                s.shared_requests,
                s.shared_wavefronts,
                s.shared_ideal_wavefronts
            ),
            (32, 32, 32)
        );
        // Column read: lane i reads word 32·i (bank 0 for all: 32 wavefronts) or 33·i (bank
        // i: 1); ideally 32 distinct words over 32 banks = 1.
        let r = at(&out, read);
        assert_eq!(
            (
                r.shared_requests,
                r.shared_wavefronts,
                r.shared_ideal_wavefronts
            ),
            (1, wavefronts, 1)
        );
        // Lane i reads row i, column 0, written by lane 0 with r = i: 32·i.
        let want: Vec<f64> = (0..32).map(|i| f64::from(32 * i)).collect();
        assert_eq!(buffer(&out, 0, 0), want);
        // Store of 32 consecutive floats: 4 sectors.
        assert_eq!((r.global_requests, r.global_sectors), (1, 4));
    }
}

#[test]
fn strided_vec2_read_touches_twice_the_ideal_sectors() {
    let src = "@group(0) @binding(0) var<storage, read> v: array<vec2<f32>>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(32)
fn main(@builtin(local_invocation_index) i: u32) {
    let p = v[i * 2u];
    out[i] = p.x + p.y;
}
";
    let d = dispatch(serde_json::json!({"workgroups": [1, 1, 1],
        "buffers": {"0:0": {"type": "vec2<f32>", "len": 64, "fill": "iota"},
                    "0:1": {"type": "f32", "len": 32}}}));
    let out = simulate(src, None, 32, &d).unwrap();
    // Lane i reads 8 bytes at 16·i: 512 bytes spanned, 2 lanes per 32-byte sector = 16
    // sectors; the 256 bytes asked for would fit in 8.
    let l = at(&out, line_of(src, "let p = v[i * 2u]"));
    assert_eq!(
        (l.global_requests, l.global_sectors, l.global_ideal_sectors),
        (1, 16, 8)
    );
    // iota: v[2i] = (2i, 2i), so out[i] = 4i.
    let want: Vec<f64> = (0..32).map(|i| f64::from(4 * i)).collect();
    assert_eq!(buffer(&out, 0, 1), want);
}

const DIVERGE: &str = "@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) i: u32) {
    var x = 0u;
    if (i % 2u == 1u) { x = 1u; } else { x = 2u; }
    if (i < 32u) { x += 10u; }
    out[i] = x;
}
";

#[test]
fn divergence_counts_split_warps_only() {
    let d = dispatch(serde_json::json!({"workgroups": [1, 1, 1],
        "buffers": {"0:0": {"type": "u32", "len": 64}}}));
    let odd = line_of(DIVERGE, "i % 2u");
    let half = line_of(DIVERGE, "i < 32u");
    // 32 lanes: both warps split by parity (2); `i < 32` is warp-uniform (0).
    // 64 lanes: one warp, split by both (1 and 1).
    for (sg, a, b) in [(32, 2, 0), (64, 1, 1)] {
        let out = simulate(DIVERGE, None, sg, &d).unwrap();
        assert_eq!(at(&out, odd).divergent_branches, a, "sg {sg}");
        assert_eq!(at(&out, half).divergent_branches, b, "sg {sg}");
        let want: Vec<f64> = (0..64u32)
            .map(|i| f64::from(if i % 2 == 1 { 1 } else { 2 } + if i < 32 { 10 } else { 0 }))
            .collect();
        assert_eq!(buffer(&out, 0, 0), want);
    }
}

const BUTTERFLY: &str = "@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(32)
fn main(@builtin(local_invocation_index) i: u32) {
    var s = f32(i);
    for (var off = 16u; off > 0u; off >>= 1u) {
        s += subgroupShuffleXor(s, off);
    }
    out[i] = s;
}
";

#[test]
fn shuffle_xor_butterfly_sums_the_warp() {
    let d = dispatch(serde_json::json!({"workgroups": [1, 1, 1],
        "buffers": {"0:0": {"type": "f32", "len": 32}}}));
    let out = simulate(BUTTERFLY, None, 32, &d).unwrap();
    // 0 + 1 + … + 31 = 496 in every lane after log2(32) = 5 shuffle steps.
    assert_eq!(buffer(&out, 0, 0), vec![496.0; 32]);
    let line = line_of(BUTTERFLY, "subgroupShuffleXor");
    assert_eq!(at(&out, line).subgroup_ops, 5);
    let masks: Vec<u32> = out.trace.warps[0]
        .events
        .iter()
        .filter_map(|e| match e.kind {
            crate::simt::EventKind::Shuffle { arg, .. } => Some(arg),
            _ => None,
        })
        .collect();
    assert_eq!(masks, [16, 8, 4, 2, 1]);
    // 8-lane subgroups: lane ^ 16 is past the subgroup, indeterminate (NaN here), so
    // every sum is NaN — WGSL's rule, visible.
    let out8 = simulate(BUTTERFLY, None, 8, &d).unwrap();
    assert!(buffer(&out8, 0, 0).iter().all(|x| x.is_nan()));
}

#[test]
fn races_out_of_bounds_and_uninitialised_reads_are_reported() {
    let src = "@group(0) @binding(0) var<storage, read_write> out: array<u32>;
var<workgroup> w: u32;
var<workgroup> small: array<u32, 4>;
var<workgroup> never: u32;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) i: u32) {
    if (i % 32u == 0u) { w = i; }
    small[i] = i;
    workgroupBarrier();
    out[i] = w + never;
    out[0] = 7u;
    out[i + 64u] = 1u;
}
";
    let d = dispatch(serde_json::json!({"workgroups": [1, 1, 1],
        "buffers": {"0:0": {"type": "u32", "len": 64}}}));
    let out = simulate(src, None, 32, &d).unwrap();
    let has = |k: WarningKind, needle: &str| {
        out.warnings
            .iter()
            .any(|w| w.kind == k && w.line == line_of(src, needle))
    };
    // Lane 0 of warp 0 and lane 0 of warp 1 both write `w` between barriers.
    assert!(has(WarningKind::Race, "w = i;"), "{:?}", out.warnings);
    // `small` has 4 elements; lanes 4..63 index past it (their stores are dropped).
    assert!(has(WarningKind::OutOfBounds, "small[i] = i"));
    // `never` is read, never written.
    assert!(has(WarningKind::UninitializedRead, "w + never"));
    // Every invocation writes out[0]: a storage race.
    assert!(has(WarningKind::Race, "out[0] = 7u"));
    // out has 64 elements; i + 64 is past it for every lane: dropped.
    assert!(has(WarningKind::OutOfBounds, "out[i + 64u]"));
    let got = buffer(&out, 0, 0);
    assert_eq!(got.len(), 64);
    // out[0] = 7 (last write); others hold w: the last writer in schedule order, warp 1's
    // lane 0 (i = 32), + 0.
    assert_eq!(got[0], 7.0);
    assert!(got[1..].iter().all(|&x| x == 32.0), "{got:?}");
}

#[test]
fn shared_atomics_histogram() {
    let src = "@group(0) @binding(0) var<storage, read_write> out: array<u32>;
var<workgroup> bins: array<atomic<u32>, 4>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) i: u32) {
    atomicAdd(&bins[i % 4u], 1u);
    workgroupBarrier();
    if (i < 4u) { out[i] = atomicLoad(&bins[i]); }
}
";
    let d = dispatch(serde_json::json!({"workgroups": [1, 1, 1],
        "buffers": {"0:0": {"type": "u32", "len": 4}}}));
    let out = simulate(src, None, 32, &d).unwrap();
    // 64 invocations over 4 bins: 16 each.
    assert_eq!(buffer(&out, 0, 0), [16.0; 4]);
    let a = at(&out, line_of(src, "atomicAdd"));
    // One atomic request per warp; 4 distinct words in 4 banks: 1 wavefront each.
    assert_eq!(
        (a.atomics, a.shared_requests, a.shared_wavefronts),
        (2, 2, 2)
    );
    // 32 lanes over 4 addresses: 8 lanes contend per address.
    let ev = out.trace.warps[0]
        .events
        .iter()
        .find(|e| matches!(e.kind, crate::simt::EventKind::Atomic { .. }))
        .unwrap();
    assert_eq!(ev.metrics.contention, Some(8));
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
}

#[test]
fn refusals_name_what_and_where() {
    let d = dispatch(serde_json::json!({"workgroups": [1, 1, 1]}));
    // A barrier under a non-uniform branch (naga 30 lets it through): 16 of 64 invocations
    // arrive, a barrier_divergence warning on its line.
    let src = "@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) i: u32) {
    if (i < 16u) {
        workgroupBarrier();
    }
}
";
    let out = simulate(src, None, 32, &d).unwrap();
    assert_eq!(out.warnings.len(), 1);
    assert_eq!(
        (out.warnings[0].kind, out.warnings[0].line),
        (WarningKind::BarrierDivergence, 4)
    );
    assert!(
        out.warnings[0]
            .message
            .en
            .contains("16 of the workgroup's 64")
    );
    // A validation error comes with its place, in both languages.
    match simulate(
        "@compute @workgroup_size(1)\nfn main() {\n  let x: u32 = 1.5;\n}",
        None,
        32,
        &d,
    ) {
        Err(Error::BadInput(m)) => assert!(m.contains("line 3") && m.contains("第 3 行"), "{m}"),
        other => panic!("{other:?}"),
    }
    // Missing bindings are named.
    let src = "@group(0) @binding(3) var<storage, read_write> a: array<u32>;
@group(1) @binding(0) var<uniform> b: vec4<u32>;
@compute @workgroup_size(1)
fn main() { a[0] = b.x; }
";
    match simulate(src, None, 32, &d) {
        Err(Error::InvalidInput { key, problem }) => {
            let problem = problem.en;
            assert_eq!(key, "buffers");
            assert!(
                problem.contains("0:3") && problem.contains("1:0"),
                "{problem}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        simulate(src, None, 12, &d),
        Err(Error::InvalidParam { .. })
    ));
    // An endless loop ends at the budget, with the number.
    let src = "@group(0) @binding(0) var<storage, read_write> a: array<u32>;
@compute @workgroup_size(32)
fn main() { loop { a[0] += 1u; } }
";
    let d = dispatch(serde_json::json!({"workgroups": [1, 1, 1],
        "buffers": {"0:0": {"type": "u32", "len": 1}}}));
    let o = Options {
        max_lane_instructions: 10_000,
        ..Options::default()
    };
    match simulate_with(src, None, 32, &d, &o) {
        Err(Error::BadInput(m)) => assert!(m.contains("10000"), "{m}"),
        other => panic!("{other:?}"),
    }
}

/// The lecture's ∇γ tile shader.
const DGAMMA: &str = include_str!("../../../kernels/src/shaders/dgamma.wgsl");

#[test]
fn dgamma_shader_matches_the_simt_model_of_the_tile() {
    // 64 rows × 32 columns: one (32, 32) workgroup, 32 warps (warp y = row y of the tile).
    let d = dispatch(serde_json::json!({"workgroups": [1, 1, 1], "seed": 3,
        "buffers": {"0:0": {"type": "u32", "data": [64, 32, 0, 0]},
                    "0:1": {"type": "f32", "len": 2048, "fill": "random"},
                    "0:2": {"type": "f32", "len": 2048, "fill": "random"},
                    "0:3": {"type": "f32", "len": 64, "fill": "random"},
                    "0:4": {"type": "f32", "len": 64, "fill": "random"},
                    "0:5": {"type": "f32", "len": 32},
                    "0:6": {"type": "f32", "len": 32}}}));
    let s = crate::scene::find("layernorm-dgamma").unwrap();
    let load = line_of(DGAMMA, "let g = buf_g[lid.x * stride + lid.y]");
    let store = line_of(DGAMMA, "buf_g[lid.y * stride + lid.x] = sg;");
    for pad in [0u32, 1] {
        let mut v = s.defaults();
        for (k, x) in [("rows", "64"), ("cols", "64"), ("scheme", "tiled")] {
            v.set(s.params, k, x).unwrap();
        }
        v.set(s.params, "pad", &pad.to_string()).unwrap();
        let model = crate::layernorm::dgamma::run(
            &crate::layernorm::dgamma::DgammaParams::from_values(&v).unwrap(),
        )
        .unwrap();
        let mut o = Options::default();
        o.overrides.insert("PAD".into(), f64::from(pad));
        let out = simulate_with(DGAMMA, None, 32, &d, &o).unwrap();
        // The transposed load: one request per warp, each as many wavefronts as the model's
        // (32 with stride 32: every lane in one bank; 1 with stride 33).
        let l = at(&out, load);
        assert_eq!(l.shared_requests, 32);
        assert_eq!(
            l.shared_wavefronts,
            32 * u64::from(model.tile.load_wavefronts),
            "pad {pad}"
        );
        assert_eq!(model.tile.load_wavefronts, if pad == 0 { 32 } else { 1 });
        let st = at(&out, store);
        assert_eq!(
            st.shared_wavefronts,
            32 * u64::from(model.tile.store_wavefronts)
        );
        assert!(out.warnings.is_empty(), "{:?}", out.warnings);
        // ∇β_j = Σ_r ∇y[r, j], from the very bytes the kernel read.
        let b = Binding {
            group: 0,
            binding: 2,
        };
        let dy = super::dispatch::decode(&d.buffers[&b].bytes(b, 3).unwrap(), d.buffers[&b].ty);
        let dbeta = buffer(&out, 0, 6);
        for j in 0..32 {
            let want: f64 = (0..64).map(|r| dy[r * 32 + j][0]).sum();
            assert!(
                (dbeta[j] - want).abs() < 1e-4 * want.abs().max(1.0),
                "{j}: {} vs {want}",
                dbeta[j]
            );
        }
    }
}

/// The lecture's warp-per-row softmax backward.
const SOFTMAX_SG: &str = include_str!("../../../kernels/src/shaders/softmax_sg.wgsl");

#[test]
fn softmax_shader_shuffles_match_the_butterfly_model() {
    // 4 rows of 32: one workgroup of 128 = 4 subgroups of 32, one row each; mask bytes all 1,
    // scale 1.0 (bits 0x3F80_0000 = 1065353216).
    let d = dispatch(serde_json::json!({"workgroups": [1, 1, 1], "seed": 5,
        "buffers": {"0:0": {"type": "u32", "data": [4, 32, 1065353216, 0]},
                    "0:1": {"type": "f32", "len": 128, "fill": "random"},
                    "0:2": {"type": "u32", "len": 32, "fill": 16843009},
                    "0:3": {"type": "f32", "len": 128, "fill": "random"},
                    "0:4": {"type": "f32", "len": 128}}}));
    let out = simulate(SOFTMAX_SG, Some("fused"), 32, &d).unwrap();
    let s = crate::scene::find("softmax-warp").unwrap();
    let model = crate::softmax::warp::run(
        &crate::softmax::warp::WarpParams::from_values(&s.defaults()).unwrap(),
    )
    .unwrap();
    // Each warp's butterfly: xor 16, 8, 4, 2, 1 — the model's masks, log2(32) = 5 steps.
    for w in &out.trace.warps {
        let masks: Vec<u32> = w
            .events
            .iter()
            .filter_map(|e| match e.kind {
                crate::simt::EventKind::Shuffle { arg, .. } => Some(arg),
                _ => None,
            })
            .collect();
        assert_eq!(masks, model.shuffle_masks, "warp {}", w.warp);
    }
    let line = line_of(SOFTMAX_SG, "subgroupShuffleXor");
    assert_eq!(
        at(&out, line).subgroup_ops,
        4 * u64::from(model.shuffle_steps)
    );
    // dx = y · (g − Σ g·y) with g = dP (mask 1, scale 1), row by row, in f64.
    let read = |b: u32| {
        let k = Binding {
            group: 0,
            binding: b,
        };
        super::dispatch::decode(&d.buffers[&k].bytes(k, 5).unwrap(), d.buffers[&k].ty)
    };
    let (dp, y) = (read(1), read(3));
    let dx = buffer(&out, 0, 4);
    for r in 0..4 {
        let sum: f64 = (0..32).map(|j| dp[r * 32 + j][0] * y[r * 32 + j][0]).sum();
        for j in 0..32 {
            let i = r * 32 + j;
            let want = y[i][0] * (dp[i][0] - sum);
            assert!((dx[i] - want).abs() < 1e-5, "{i}: {} vs {want}", dx[i]);
        }
    }
}

#[test]
fn short_circuit_and_writes_a_bool_per_lane() {
    // naga lowers `a && b` to a bool local set in both branches; bools are 1 byte per lane, so
    // a 4-byte store would clobber the next lanes' flags. Lane 0 of each warp (lid.y = 0, 1)
    // writes out[lid.y] = 5 + lid.y; lane 1 writes out[2 + lid.y] = 7 (c < 32 holds).
    let src = "@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(32, 2)
fn main(@builtin(local_invocation_id) lid: vec3<u32>) {
    let c = lid.y + 0u;
    if (lid.x == 0u && c < 32u) {
        out[c] = 5u + lid.y;
    }
    if (lid.x == 1u) { out[2u + lid.y] = select(9u, 7u, c < 32u); }
}
";
    let d = dispatch(serde_json::json!({"workgroups": [1, 1, 1],
        "buffers": {"0:0": {"type": "u32", "len": 4}}}));
    let out = simulate(src, None, 32, &d).unwrap();
    assert_eq!(buffer(&out, 0, 0), [5.0, 6.0, 7.0, 7.0]);
}

const TRANSPOSE: &str = include_str!("../../../assets/kernels/bench_transpose.wgsl");

#[test]
fn tiled_transpose_is_right_and_conflict_free() {
    let d = dispatch(serde_json::json!({"workgroups": [2, 2, 1],
        "buffers": {"0:0": {"type": "f32", "len": 4096, "fill": "iota"},
                    "0:1": {"type": "f32", "len": 4096}}}));
    let mut o = Options::default();
    o.overrides.insert("N".into(), 64.0);
    let out = simulate_with(TRANSPOSE, None, 32, &d, &o).unwrap();
    // b[r][c] = a[c][r] = 64·c + r for the 64 × 64 iota matrix.
    let b = buffer(&out, 0, 1);
    assert!((0..4096).all(|i| b[i] == f64::from((i % 64 * 64 + i / 64) as u32)));
    // 4 workgroups × 8 warps × 4 rows: 128 shared stores and 128 loads, each 1 wavefront
    // (stride 33: lane x of a row in bank (33·row + x) mod 32, all distinct); every global
    // request 32 consecutive floats = 4 sectors.
    let st = at(
        &out,
        line_of(TRANSPOSE, "tile[(lid.y + j) * 33u + lid.x] ="),
    );
    assert_eq!(
        (
            st.shared_requests,
            st.shared_wavefronts,
            st.global_requests,
            st.global_sectors
        ),
        (128, 128, 128, 512)
    );
    let ld = at(&out, line_of(TRANSPOSE, "= tile[lid.x * 33u + lid.y + j]"));
    assert_eq!(
        (ld.shared_requests, ld.shared_wavefronts, ld.global_sectors),
        (128, 128, 512)
    );
    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
}

/// Speed in this (debug) build: `cargo test -p warpscope-core --lib lab::tests::speed -- --ignored --nocapture`.
#[test]
#[ignore]
fn speed() {
    let ex = examples::find("reduce-shared").unwrap();
    let d = dispatch(serde_json::json!({"workgroups": [4096, 1, 1],
        "buffers": {"0:0": {"type": "f32", "len": 1048576, "fill": "iota"},
                    "0:1": {"type": "f32", "len": 4096}}}));
    let t = std::time::Instant::now();
    let out = simulate(ex.source, None, 32, &d).unwrap();
    let s = t.elapsed().as_secs_f64();
    let lanes = out.totals.lane_instructions;
    eprintln!(
        "reduce 2^20: {lanes} lane instructions in {s:.3} s = {:.1} M/s",
        lanes as f64 / s / 1e6
    );
    // Σ 0..2²⁰−1 over the 4096 group sums: 2²⁰(2²⁰−1)/2.
    let total: f64 = buffer(&out, 0, 1).iter().sum();
    assert_eq!(total, 549755289600.0);
    let d = dispatch(serde_json::json!({"workgroups": [16, 16, 1],
        "buffers": {"0:0": {"type": "f32", "len": 262144, "fill": "iota"},
                    "0:1": {"type": "f32", "len": 262144}}}));
    let t = std::time::Instant::now();
    let out = simulate(TRANSPOSE, None, 32, &d).unwrap();
    let s = t.elapsed().as_secs_f64();
    let lanes = out.totals.lane_instructions;
    eprintln!(
        "transpose 512: {lanes} lane instructions in {s:.3} s = {:.1} M/s",
        lanes as f64 / s / 1e6
    );
}
