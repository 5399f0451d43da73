// Adam over the FP16 workspace (the mixed-precision trainer's 22 B/param layout): p and g
// stored f16, m and v f32; p and g widened to f32 in registers, the f32 update of adam.wgsl,
// p rounded back to f16 — warpscope_core::trainer::adam::AdamStep::update_f16.
// Needs wgpu::Features::SHADER_F16 (f16 in storage buffers).
enable f16;

struct Params {
    n: u32,
    lr: f32,
    beta1: f32,
    beta2: f32,
    eps: f32,
    c1: f32,
    c2: f32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> p: array<f16>;
@group(0) @binding(2) var<storage, read> g: array<f16>;
@group(0) @binding(3) var<storage, read_write> m: array<f32>;
@group(0) @binding(4) var<storage, read_write> v: array<f32>;

const WG: u32 = 256u;

@compute @workgroup_size(WG)
fn adam(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    for (var i = gid.x; i < params.n; i += nwg.x * WG) {
        let gi = f32(g[i]);
        let mi = params.beta1 * m[i] + (1.0 - params.beta1) * gi;
        let vi = params.beta2 * v[i] + (1.0 - params.beta2) * gi * gi;
        m[i] = mi;
        v[i] = vi;
        let m_hat = mi / params.c1;
        let v_hat = vi / params.c2;
        p[i] = f16(f32(p[i]) - params.lr * m_hat / (sqrt(v_hat) + params.eps));
    }
}
