// LayerNorm backward dx, autograd style: the backward of the 7-op decomposition
// (mu = mean(x), xc = x - mu, s = xc^2, v = mean(s), sigma = sqrt(v + eps), xh = xc / sigma,
// y = gamma * xh + beta), op by op, each a kernel talking to the next through device memory
// (warpscope_core::layernorm::bytes, kernels 3-9; kernels 1-2, dgamma/dbeta, are not part of dx).
// Saved by the forward: xc (tensor) and sigma (per row).

struct Params {
    rows: u32,
    cols: u32,
    _a: u32,
    _b: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> dy: array<f32>;
@group(0) @binding(2) var<storage, read> gamma: array<f32>;
@group(0) @binding(3) var<storage, read_write> dxh: array<f32>;
@group(0) @binding(4) var<storage, read> xc: array<f32>;
@group(0) @binding(5) var<storage, read> sigma: array<f32>;
@group(0) @binding(6) var<storage, read_write> dxc1: array<f32>;
@group(0) @binding(7) var<storage, read_write> dsigma: array<f32>;
@group(0) @binding(8) var<storage, read_write> ds: array<f32>;
@group(0) @binding(9) var<storage, read_write> dxc2: array<f32>;
@group(0) @binding(10) var<storage, read_write> dxc: array<f32>;
@group(0) @binding(11) var<storage, read_write> dmu: array<f32>;
@group(0) @binding(12) var<storage, read_write> dx: array<f32>;

const EW: u32 = 256u;
const WG: u32 = 128u;

// block_sum: the shared block reduction (block_reduce.wgsl, prepended).

// 3. affine backward: dxh = gamma * dy.
@compute @workgroup_size(EW)
fn affine_bw(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params.rows * params.cols;
    for (var i = gid.x; i < n; i += nwg.x * EW) {
        dxh[i] = gamma[i % params.cols] * dy[i];
    }
}

// 4. div backward: dxc1 = dxh / sigma; dsigma = -sum(dxh * xc) / sigma^2 (row per workgroup).
@compute @workgroup_size(WG)
fn div_bw(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) tid: u32,
) {
    let cols = params.cols;
    for (var row = wg.x; row < params.rows; row += nwg.x) {
        let base = row * cols;
        let sg = sigma[row];
        var acc = 0.0;
        for (var j = tid; j < cols; j += WG) {
            let d = dxh[base + j];
            dxc1[base + j] = d / sg;
            acc += d * xc[base + j];
        }
        let tot = block_sum(acc, tid);
        if (tid == 0u) {
            dsigma[row] = -tot / (sg * sg);
        }
    }
}

// 5. sqrt + mean backward: ds = dsigma / (2 sigma) / m (per row).
@compute @workgroup_size(EW)
fn sqrt_mean_bw(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    for (var row = gid.x; row < params.rows; row += nwg.x * EW) {
        ds[row] = dsigma[row] / (2.0 * sigma[row]) / f32(params.cols);
    }
}

// 6. square backward: dxc2 = 2 xc ds.
@compute @workgroup_size(EW)
fn square_bw(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params.rows * params.cols;
    for (var i = gid.x; i < n; i += nwg.x * EW) {
        dxc2[i] = 2.0 * xc[i] * ds[i / params.cols];
    }
}

// 7. accumulate: dxc = dxc1 + dxc2 (xc has two consumers).
@compute @workgroup_size(EW)
fn accumulate(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params.rows * params.cols;
    for (var i = gid.x; i < n; i += nwg.x * EW) {
        dxc[i] = dxc1[i] + dxc2[i];
    }
}

// 8. sub backward: dmu = -sum_cols dxc (row per workgroup).
@compute @workgroup_size(WG)
fn sub_bw(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) tid: u32,
) {
    let cols = params.cols;
    for (var row = wg.x; row < params.rows; row += nwg.x) {
        let base = row * cols;
        var acc = 0.0;
        for (var j = tid; j < cols; j += WG) {
            acc += dxc[base + j];
        }
        let tot = block_sum(acc, tid);
        if (tid == 0u) {
            dmu[row] = -tot;
        }
    }
}

// 9. mean backward + accumulate: dx = dxc + dmu / m.
@compute @workgroup_size(EW)
fn mean_bw(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let n = params.rows * params.cols;
    for (var i = gid.x; i < n; i += nwg.x * EW) {
        dx[i] = dxc[i] + dmu[i / params.cols] / f32(params.cols);
    }
}
