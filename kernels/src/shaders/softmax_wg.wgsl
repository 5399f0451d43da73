// Softmax backward with dropout backward, one row per workgroup, for adapters without
// subgroups: a shared-memory tree reduction (log2(WG) barriers) instead of shuffles.
//
// g' = dP * M * scale (scale = 1/keep), s = sum_j g'_j y_j, dx = y * (g' - s).

struct Params {
    rows: u32,
    cols: u32,
    scale: f32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> dp: array<f32>;
@group(0) @binding(2) var<storage, read> mask: array<u32>;
@group(0) @binding(3) var<storage, read> y: array<f32>;
@group(0) @binding(4) var<storage, read_write> dx: array<f32>;
@group(0) @binding(5) var<storage, read> prod: array<f32>;
@group(0) @binding(6) var<storage, read_write> sums: array<f32>;

const WG: u32 = 128u;
const PER_THREAD: u32 = 32u;

fn mask_at(i: u32) -> f32 {
    return f32((mask[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu);
}

// block_sum: the shared block reduction (block_reduce.wgsl, prepended).

@compute @workgroup_size(WG)
fn fused(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) tid: u32,
) {
    let cols = params.cols;
    for (var row = wg.x; row < params.rows; row += nwg.x) {
        let base = row * cols;
        var gr: array<f32, PER_THREAD>;
        var yr: array<f32, PER_THREAD>;
        var s = 0.0;
        var k = 0u;
        for (var j = tid; j < cols; j += WG) {
            let i = base + j;
            let g = dp[i] * mask_at(i) * params.scale;
            let yv = y[i];
            if (k < PER_THREAD) {
                gr[k] = g;
                yr[k] = yv;
            }
            s += g * yv;
            k += 1u;
        }
        s = block_sum(s, tid);
        k = 0u;
        for (var j = tid; j < cols; j += WG) {
            let i = base + j;
            var g: f32;
            var yv: f32;
            if (k < PER_THREAD) {
                g = gr[k];
                yv = yr[k];
            } else {
                g = dp[i] * mask_at(i) * params.scale;
                yv = y[i];
            }
            dx[i] = yv * (g - s);
            k += 1u;
        }
    }
}

@compute @workgroup_size(WG)
fn row_sum(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) tid: u32,
) {
    let cols = params.cols;
    for (var row = wg.x; row < params.rows; row += nwg.x) {
        let base = row * cols;
        var s = 0.0;
        for (var j = tid; j < cols; j += WG) {
            s += prod[base + j];
        }
        s = block_sum(s, tid);
        if (tid == 0u) {
            sums[row] = s;
        }
    }
}
