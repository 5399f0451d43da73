// Device copy bandwidth probe: dst = src, 16 bytes (vec4<f32>) per invocation per step,
// grid-stride. Read + written bytes over its time is the ceiling the kernels' GB/s compare to.

struct Params {
    n: u32,
    _a: u32,
    _b: u32,
    _c: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> dst: array<vec4<f32>>;

const WG: u32 = 256u;

@compute @workgroup_size(WG)
fn copy(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    for (var i = gid.x; i < params.n; i += nwg.x * WG) {
        dst[i] = src[i];
    }
}
