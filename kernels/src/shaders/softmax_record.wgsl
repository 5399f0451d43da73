// Instrumented softmax backward, one row, one subgroup (the `softmax-warp` scene's
// `ker_attn_softmax_bw`: one warp per row, one shuffle-xor butterfly, no barrier).
// Every invocation writes a compact record of what it executed to `rec` (layout in
// `src/record.rs`): the loads it issued, its partial sum after each slot, after each butterfly
// level the value its partner lane sent and the sum after adding it, and the dx it wrote.
// Needs wgpu::Features::SUBGROUP (no `enable subgroups;` directive: naga 30 rejects it).

struct Params {
    cols: u32,
    max_steps: u32,
    inp_base: u32,
    out_base: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> grad: array<f32>;
@group(0) @binding(2) var<storage, read> inp: array<f32>;
@group(0) @binding(3) var<storage, read_write> dx: array<f32>;
@group(0) @binding(4) var<storage, read_write> rec: array<u32>;
// [0]: ticket counter (execution order of records), [1]: records dropped (step ≥ max_steps).
@group(0) @binding(5) var<storage, read_write> counters: array<atomic<u32>, 4>;

const WG: u32 = 128u;
const REC_WORDS: u32 = 9u;
const NONE: u32 = 0xffffffffu;
const NO_LEVEL: u32 = 255u;

// Ops (src/record.rs `Op`).
const GLOBAL_LOAD: u32 = 1u;
const GLOBAL_STORE: u32 = 2u;
const SHUFFLE_XOR: u32 = 5u;
const COMPUTE: u32 = 6u;
// Tags: which value.
const TAG_GRAD: u32 = 0u;
const TAG_INP: u32 = 1u;
const TAG_SUM: u32 = 2u;
const TAG_DX: u32 = 3u;

// (workgroup, subgroup id | subgroup size << 16, lane | local index << 16, record slot base)
var<private> who: vec4<u32>;

fn record(step: u32, op: u32, level: u32, tag: u32, arg: u32, address: u32, value: f32) {
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
fn record_row(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
    @builtin(subgroup_id) sg_id: u32,
    @builtin(subgroup_invocation_id) lane: u32,
    @builtin(subgroup_size) sg_size: u32,
) {
    // One row: subgroup 0 of workgroup 0 owns it; the other subgroups have nothing to do.
    if (wg.x != 0u || sg_id != 0u) {
        return;
    }
    who = vec4<u32>(wg.x, sg_id | (sg_size << 16u), lane | (lid << 16u), wg.x * WG + lid);
    let cols = params.cols;
    let iters = (cols + sg_size - 1u) / sg_size;
    var step = 0u;
    var sum = 0.0;
    for (var i = 0u; i < iters; i += 1u) {
        let j = lane + i * sg_size;
        var g = 0.0;
        var yv = 0.0;
        if (j < cols) {
            g = grad[j];
            record(step, GLOBAL_LOAD, NO_LEVEL, TAG_GRAD, i, 4u * j, g);
        }
        step += 1u;
        if (j < cols) {
            yv = inp[j];
            record(step, GLOBAL_LOAD, NO_LEVEL, TAG_INP, i, params.inp_base + 4u * j, yv);
            sum += g * yv;
        }
        step += 1u;
        record(step, COMPUTE, 0u, TAG_SUM, i, NONE, sum);
        step += 1u;
    }
    // The butterfly: log2(subgroup size) levels, every lane ends with the row's sum.
    var level = 1u;
    for (var off = sg_size >> 1u; off > 0u; off = off >> 1u) {
        let other = subgroupShuffleXor(sum, off);
        let partner = subgroupShuffleXor(lane, off);
        record(step, SHUFFLE_XOR, level, TAG_SUM, off, partner, other);
        step += 1u;
        sum += other;
        record(step, COMPUTE, level, TAG_SUM, off, NONE, sum);
        step += 1u;
        level += 1u;
    }
    for (var i = 0u; i < iters; i += 1u) {
        let j = lane + i * sg_size;
        if (j < cols) {
            let v = inp[j] * (grad[j] - sum);
            record(step, COMPUTE, NO_LEVEL, TAG_DX, i, NONE, v);
            dx[j] = v;
            record(step + 1u, GLOBAL_STORE, NO_LEVEL, TAG_DX, i, params.out_base + 4u * j, v);
        }
        step += 2u;
    }
}
