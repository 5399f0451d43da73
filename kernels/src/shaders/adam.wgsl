// Adam (Kingma & Ba 2015, algorithm 1; no weight decay), element-wise in f32, in the order of
// warpscope_core::trainer::adam::AdamStep::update:
// m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g g; p = p - lr (m / c1) / (sqrt(v / c2) + eps),
// c1 = 1 - b1^t, c2 = 1 - b2^t. One dispatch covers `n` elements (one tensor, or the whole
// linked workspace) with a grid-stride loop.

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
@group(0) @binding(1) var<storage, read_write> p: array<f32>;
@group(0) @binding(2) var<storage, read> g: array<f32>;
@group(0) @binding(3) var<storage, read_write> m: array<f32>;
@group(0) @binding(4) var<storage, read_write> v: array<f32>;

const WG: u32 = 256u;

@compute @workgroup_size(WG)
fn adam(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    for (var i = gid.x; i < params.n; i += nwg.x * WG) {
        let gi = g[i];
        let mi = params.beta1 * m[i] + (1.0 - params.beta1) * gi;
        let vi = params.beta2 * v[i] + (1.0 - params.beta2) * gi * gi;
        m[i] = mi;
        v[i] = vi;
        let m_hat = mi / params.c1;
        let v_hat = vi / params.c2;
        p[i] = p[i] - params.lr * m_hat / (sqrt(v_hat) + params.eps);
    }
}
