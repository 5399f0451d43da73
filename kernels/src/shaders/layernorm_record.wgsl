// Instrumented LayerNorm backward reduction (the `layernorm-syncs` scene's rewrite,
// `ker_ln_bw_dinp`): one row per workgroup of WG invocations (the scene's block size, a
// pipeline-overridable constant); thread t owns columns t, t + WG, …; Σg and Σg·x̂ reduced
// together: a shuffle-xor butterfly per subgroup (spelled out so each level is observable; the
// production kernel calls subgroupAdd, whose result is recorded beside it as a check), one
// partial per subgroup to shared memory, ONE workgroupBarrier, every invocation adds the
// partials. Workgroup 0 (row 0) writes records (layout in `src/record.rs`); every row writes
// its two sums to `sums`.
// Needs wgpu::Features::SUBGROUP.

struct Params {
    rows: u32,
    cols: u32,
    max_steps: u32,
    dy_base: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> dy: array<f32>;
@group(0) @binding(3) var<storage, read> gamma: array<f32>;
@group(0) @binding(4) var<storage, read> mu: array<f32>;
@group(0) @binding(5) var<storage, read> rstd: array<f32>;
@group(0) @binding(6) var<storage, read_write> sums: array<f32>;
@group(0) @binding(7) var<storage, read_write> rec: array<u32>;
@group(0) @binding(8) var<storage, read_write> counters: array<atomic<u32>, 4>;

override WG: u32 = 128u;
const REC_WORDS: u32 = 9u;
const NONE: u32 = 0xffffffffu;
const NO_LEVEL: u32 = 255u;

const GLOBAL_LOAD: u32 = 1u;
const SHARED_LOAD: u32 = 3u;
const SHARED_STORE: u32 = 4u;
const SHUFFLE_XOR: u32 = 5u;
const COMPUTE: u32 = 6u;
const BARRIER: u32 = 7u;
const CHECK: u32 = 8u;
// Tags.
const TAG_X: u32 = 0u;
const TAG_DY: u32 = 1u;
const TAG_V0: u32 = 2u;
const TAG_V1: u32 = 3u;
const TAG_V0_BLOCK: u32 = 4u;
const TAG_V1_BLOCK: u32 = 5u;

// One vec2 partial (Σg, Σg·x̂) per subgroup: 8 bytes each.
var<workgroup> partial: array<vec2<f32>, 256>;

var<private> who: vec4<u32>;
var<private> recording: bool;

fn record(step: u32, op: u32, level: u32, tag: u32, arg: u32, address: u32, value: f32) {
    if (!recording) {
        return;
    }
    if (step >= params.max_steps) {
        atomicAdd(&counters[1], 1u);
        return;
    }
    let t = atomicAdd(&counters[0], 1u);
    let b = (who.w * params.max_steps + step) * REC_WORDS;
    rec[b] = t + 1u;
    rec[b + 1u] = step;
    rec[b + 2u] = op | (level << 8u) | (tag << 16u);
    rec[b + 3u] = arg;
    rec[b + 4u] = who.x;
    rec[b + 5u] = who.y;
    rec[b + 6u] = who.z;
    rec[b + 7u] = address;
    rec[b + 8u] = bitcast<u32>(value);
}

@compute @workgroup_size(WG)
fn record_rows(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
    @builtin(subgroup_id) sg_id: u32,
    @builtin(num_subgroups) n_sg: u32,
    @builtin(subgroup_invocation_id) lane: u32,
    @builtin(subgroup_size) sg_size: u32,
) {
    let row = wg.x;
    if (row >= params.rows) {
        return;
    }
    recording = row == 0u;
    who = vec4<u32>(wg.x, sg_id | (sg_size << 16u), lane | (lid << 16u), lid);
    let cols = params.cols;
    let base = row * cols;
    let mean = mu[row];
    let r = rstd[row];
    let iters = (cols + WG - 1u) / WG;
    var step = 0u;
    var acc = vec2<f32>(0.0, 0.0);
    for (var it = 0u; it < iters; it += 1u) {
        let j = lid + it * WG;
        if (j < cols) {
            let xv = x[base + j];
            record(step, GLOBAL_LOAD, NO_LEVEL, TAG_X, it, 4u * (base + j), xv);
            let dv = dy[base + j];
            record(step + 1u, GLOBAL_LOAD, NO_LEVEL, TAG_DY, it, params.dy_base + 4u * (base + j), dv);
            let g = gamma[j] * dv;
            let xh = (xv - mean) * r;
            acc += vec2<f32>(g, g * xh);
        }
        step += 2u;
    }
    // What the production kernel computes (subgroupAdd), kept as a check, not an event.
    let reference = subgroupAdd(acc);
    record(step, CHECK, NO_LEVEL, TAG_V0, 0u, NONE, reference.x);
    record(step + 1u, CHECK, NO_LEVEL, TAG_V1, 0u, NONE, reference.y);
    step += 2u;
    // Σg's butterfly, then Σg·x̂'s (two f32 shuffles a level, as a vec2 shuffle is lowered),
    // each starting from the thread's partial.
    var part = acc;
    record(step, COMPUTE, 0u, TAG_V0, 0u, NONE, part.x);
    step += 1u;
    var level = 1u;
    for (var off = sg_size >> 1u; off > 0u; off = off >> 1u) {
        let partner = subgroupShuffleXor(lane, off);
        let o0 = subgroupShuffleXor(part.x, off);
        record(step, SHUFFLE_XOR, level, TAG_V0, off, partner, o0);
        part.x += o0;
        record(step + 1u, COMPUTE, level, TAG_V0, off, NONE, part.x);
        step += 2u;
        level += 1u;
    }
    record(step, COMPUTE, 0u, TAG_V1, 0u, NONE, part.y);
    step += 1u;
    level = 1u;
    for (var off = sg_size >> 1u; off > 0u; off = off >> 1u) {
        let partner = subgroupShuffleXor(lane, off);
        let o1 = subgroupShuffleXor(part.y, off);
        record(step, SHUFFLE_XOR, level, TAG_V1, off, partner, o1);
        part.y += o1;
        record(step + 1u, COMPUTE, level, TAG_V1, off, NONE, part.y);
        step += 2u;
        level += 1u;
    }
    if (lane == 0u) {
        partial[sg_id] = part;
        record(step, SHARED_STORE, NO_LEVEL, TAG_V0, sg_id, 8u * sg_id, part.x);
    }
    step += 1u;
    record(step, BARRIER, NO_LEVEL, 0u, 1u, NONE, 0.0);
    step += 1u;
    workgroupBarrier();
    var tot = vec2<f32>(0.0, 0.0);
    for (var k = 0u; k < n_sg; k += 1u) {
        let p = partial[k];
        record(step, SHARED_LOAD, NO_LEVEL, TAG_V0_BLOCK, k, 8u * k, p.x);
        tot += p;
        step += 1u;
    }
    record(step, COMPUTE, NO_LEVEL, TAG_V0_BLOCK, n_sg, NONE, tot.x);
    record(step + 1u, COMPUTE, NO_LEVEL, TAG_V1_BLOCK, n_sg, NONE, tot.y);
    if (lid == 0u) {
        sums[2u * row] = tot.x;
        sums[2u * row + 1u] = tot.y;
    }
}
