// LayerNorm dgamma / dbeta (HW4 `ker_ln_bw_dgamma_dbetta`): a (32, 32) workgroup per 32
// columns. Invocation (x, y) sums column x over rows y, y + 32, ...; partials go to shared
// buf[y][x]; barrier; the transposed read buf[x][y] hands row y of the workgroup the 32
// partials of column y — the access that hits one bank 32 times when the row stride is 32
// words, and 32 different banks when it is 33. PAD (pipeline-overridable) picks the stride
// 32 + PAD. The 32 partials are then summed by a shared-memory tree over x (portable: no
// assumption on the subgroup size).
// dgamma_j = sum_rows dy * xh, dbeta_j = sum_rows dy, xh = (x - mu) * r.

struct Params {
    rows: u32,
    cols: u32,
    _a: u32,
    _b: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> dy: array<f32>;
@group(0) @binding(3) var<storage, read> mu: array<f32>;
@group(0) @binding(4) var<storage, read> rstd: array<f32>;
@group(0) @binding(5) var<storage, read_write> dgamma: array<f32>;
@group(0) @binding(6) var<storage, read_write> dbeta: array<f32>;

override PAD: u32 = 0u;
const T: u32 = 32u;

var<workgroup> buf_g: array<f32, 1056>; // 32 * 33: room for PAD <= 1
var<workgroup> buf_b: array<f32, 1056>;

@compute @workgroup_size(32, 32)
fn tile(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wg: vec3<u32>) {
    let stride = T + PAD;
    let col = wg.x * T + lid.x;
    var sg = 0.0;
    var sb = 0.0;
    if (col < params.cols) {
        for (var r = lid.y; r < params.rows; r += T) {
            let i = r * params.cols + col;
            let d = dy[i];
            sb += d;
            sg += d * (x[i] - mu[r]) * rstd[r];
        }
    }
    buf_g[lid.y * stride + lid.x] = sg;
    buf_b[lid.y * stride + lid.x] = sb;
    workgroupBarrier();
    // The transposed read: partial lid.x of column lid.y.
    let g = buf_g[lid.x * stride + lid.y];
    let b = buf_b[lid.x * stride + lid.y];
    workgroupBarrier();
    buf_g[lid.y * stride + lid.x] = g;
    buf_b[lid.y * stride + lid.x] = b;
    workgroupBarrier();
    for (var off = T / 2u; off > 0u; off = off >> 1u) {
        if (lid.x < off) {
            buf_g[lid.y * stride + lid.x] += buf_g[lid.y * stride + lid.x + off];
            buf_b[lid.y * stride + lid.x] += buf_b[lid.y * stride + lid.x + off];
        }
        workgroupBarrier();
    }
    let out_col = wg.x * T + lid.y;
    if (lid.x == 0u && out_col < params.cols) {
        dgamma[out_col] = buf_g[lid.y * stride];
        dbeta[out_col] = buf_b[lid.y * stride];
    }
}
