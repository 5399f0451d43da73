// LayerNorm backward dx, fused (HW4 `ker_ln_bw_dinp`), one row per workgroup, with subgroups:
// g = gamma * dy, xh = (x - mu) * r, dx = r * (g - (sum(g) + xh * sum(g * xh)) / m).
// sum(g) and sum(g * xh) are reduced together as one vec2: subgroupAdd in each subgroup,
// one partial per subgroup to shared memory, ONE workgroupBarrier, then every invocation adds
// the partials. The partials are double-buffered by row parity so the next row's writes never
// race the previous row's reads without a second barrier.
// Needs wgpu::Features::SUBGROUP (no `enable subgroups;`: naga 30 rejects it).

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

var<workgroup> partial: array<vec2<f32>, 2u * WG>; // 2 row parities × ≤ WG subgroups

@compute @workgroup_size(WG)
fn fused(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) tid: u32,
    @builtin(subgroup_id) sg_id: u32,
    @builtin(num_subgroups) n_sg: u32,
    @builtin(subgroup_invocation_id) lane: u32,
) {
    let cols = params.cols;
    let m = f32(cols);
    var parity = 0u;
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
        let part = subgroupAdd(acc);
        if (lane == 0u) {
            partial[parity * WG + sg_id] = part;
        }
        workgroupBarrier();
        var tot = vec2<f32>(0.0, 0.0);
        for (var k = 0u; k < n_sg; k += 1u) {
            tot += partial[parity * WG + k];
        }
        for (var j = tid; j < cols; j += WG) {
            let g = gamma[j] * dy[base + j];
            let xh = (x[base + j] - mean) * r;
            dx[base + j] = r * (g - (tot.x + xh * tot.y) / m);
        }
        parity = 1u - parity;
    }
}
