// LayerNorm backward dx, fused, one row per workgroup, for adapters without subgroups:
// sum(g) and sum(g * xh) reduced together as one vec2 in a shared-memory tree
// (log2(WG) barriers; the subgroup version needs one).

struct Params {
    rows: u32,
    cols: u32,
    _a: u32,
    _b: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> dy: array<f32>;
@group(0) @binding(3) var<storage, read> gamma: array<f32>;
@group(0) @binding(4) var<storage, read> mu: array<f32>;
@group(0) @binding(5) var<storage, read> rstd: array<f32>;
@group(0) @binding(6) var<storage, read_write> dx: array<f32>;

const WG: u32 = 128u;

// block_sum2: the shared block reduction (block_reduce.wgsl, prepended).

@compute @workgroup_size(WG)
fn fused(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) tid: u32,
) {
    let cols = params.cols;
    let m = f32(cols);
    for (var row = wg.x; row < params.rows; row += nwg.x) {
        let base = row * cols;
        let mean = mu[row];
        let r = rstd[row];
        var acc = vec2<f32>(0.0, 0.0);
        for (var j = tid; j < cols; j += WG) {
            let g = gamma[j] * dy[base + j];
            let xh = (x[base + j] - mean) * r;
            acc += vec2<f32>(g, g * xh);
        }
        let tot = block_sum2(acc, tid);
        for (var j = tid; j < cols; j += WG) {
            let g = gamma[j] * dy[base + j];
            let xh = (x[base + j] - mean) * r;
            dx[base + j] = r * (g - (tot.x + xh * tot.y) / m);
        }
    }
}
