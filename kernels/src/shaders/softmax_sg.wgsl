// Softmax backward with dropout backward, one row per subgroup (HW4 `ker_attn_softmax_bw`:
// one warp per row, values in registers, one butterfly shuffle-xor sum, no block barrier).
// Needs wgpu::Features::SUBGROUP (no `enable subgroups;` directive: naga 30 rejects it).
//
// g' = dP * M * scale (scale = 1/keep), s = sum_j g'_j y_j, dx = y * (g' - s).
// Rows of `cols` elements, row-major; the 0/1 dropout mask is one byte per element, packed
// four to a u32 (little-endian), as HW4 / LightSeq2 store it as uint8.

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

// Workgroup size: a multiple of every subgroup size an adapter may use (≤ 128).
const WG: u32 = 128u;
// Values of one row a lane keeps in registers; beyond this it re-reads them.
const PER_LANE: u32 = 32u;

fn mask_at(i: u32) -> f32 {
    return f32((mask[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu);
}

// Butterfly sum over the subgroup: log2(size) shuffle-xor steps; every lane ends with the sum.
fn subgroup_sum(v: f32, size: u32) -> f32 {
    var s = v;
    for (var off = size >> 1u; off > 0u; off = off >> 1u) {
        s += subgroupShuffleXor(s, off);
    }
    return s;
}

// Fused: dropout backward in registers, then softmax backward.
@compute @workgroup_size(WG)
fn fused(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(subgroup_id) sg_id: u32,
    @builtin(num_subgroups) n_sg: u32,
    @builtin(subgroup_invocation_id) lane: u32,
    @builtin(subgroup_size) sg_size: u32,
) {
    let cols = params.cols;
    for (var row = wg.x * n_sg + sg_id; row < params.rows; row += nwg.x * n_sg) {
        let base = row * cols;
        var gr: array<f32, PER_LANE>;
        var yr: array<f32, PER_LANE>;
        var s = 0.0;
        var k = 0u;
        for (var j = lane; j < cols; j += sg_size) {
            let i = base + j;
            let g = dp[i] * mask_at(i) * params.scale;
            let yv = y[i];
            if (k < PER_LANE) {
                gr[k] = g;
                yr[k] = yv;
            }
            s += g * yv;
            k += 1u;
        }
        s = subgroup_sum(s, sg_size);
        k = 0u;
        for (var j = lane; j < cols; j += sg_size) {
            let i = base + j;
            var g: f32;
            var yv: f32;
            if (k < PER_LANE) {
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

// Unfused step 3: s[row] = sum_j P[row, j], one row per subgroup.
@compute @workgroup_size(WG)
fn row_sum(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(subgroup_id) sg_id: u32,
    @builtin(num_subgroups) n_sg: u32,
    @builtin(subgroup_invocation_id) lane: u32,
    @builtin(subgroup_size) sg_size: u32,
) {
    let cols = params.cols;
    for (var row = wg.x * n_sg + sg_id; row < params.rows; row += nwg.x * n_sg) {
        let base = row * cols;
        var s = 0.0;
        for (var j = lane; j < cols; j += sg_size) {
            s += prod[base + j];
        }
        s = subgroup_sum(s, sg_size);
        if (lane == 0u) {
            sums[row] = s;
        }
    }
}
