// The element-wise kernels of the unfused softmax-backward chain (grid-stride loops):
// 1. dropout_bw: g' = dP * M * scale; 2. and 5. mul: out = a * b; 4. sub_row: out = a - s[row].

struct Params {
    rows: u32,
    cols: u32,
    scale: f32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read> mask: array<u32>;
@group(0) @binding(4) var<storage, read> s: array<f32>;
@group(0) @binding(5) var<storage, read_write> out: array<f32>;

const WG: u32 = 256u;

@compute @workgroup_size(WG)
fn dropout_bw(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params.rows * params.cols;
    for (var i = gid.x; i < n; i += nwg.x * WG) {
        let m = f32((mask[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu);
        out[i] = a[i] * m * params.scale;
    }
}

@compute @workgroup_size(WG)
fn mul(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params.rows * params.cols;
    for (var i = gid.x; i < n; i += nwg.x * WG) {
        out[i] = a[i] * b[i];
    }
}

@compute @workgroup_size(WG)
fn sub_row(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params.rows * params.cols;
    for (var i = gid.x; i < n; i += nwg.x * WG) {
        out[i] = a[i] - s[i / params.cols];
    }
}
