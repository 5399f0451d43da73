// Tiled transpose of an N × N matrix through a padded 32 × 33 workgroup tile: coalesced
// global reads and writes, conflict-free shared accesses (stride 33 words).
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> b: array<f32>;
override N: u32 = 512u;
var<workgroup> tile: array<f32, 1056>;

@compute @workgroup_size(32, 8)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wg: vec3<u32>) {
    let x = wg.x * 32u + lid.x;
    for (var j = 0u; j < 32u; j += 8u) {
        tile[(lid.y + j) * 33u + lid.x] = a[(wg.y * 32u + lid.y + j) * N + x];
    }
    workgroupBarrier();
    let tx = wg.y * 32u + lid.x;
    for (var j = 0u; j < 32u; j += 8u) {
        b[(wg.x * 32u + lid.y + j) * N + tx] = tile[lid.x * 33u + lid.y + j];
    }
}
