// The naive tree reduction: at step s, thread tid adds partial[tid + s] when tid is a multiple
// of 2s. The active threads are scattered over every warp, so each warp splits at the `if`
// (a divergent branch per warp per step) while most of its lanes idle.
@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> sums: array<f32>;

var<workgroup> partial: array<f32, 256>;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) tid: u32,
        @builtin(workgroup_id) wg: vec3<u32>,
        @builtin(global_invocation_id) gid: vec3<u32>) {
    partial[tid] = input[gid.x];
    workgroupBarrier();
    for (var s = 1u; s < 256u; s = s << 1u) {
        if (tid % (2u * s) == 0u) {
            partial[tid] = partial[tid] + partial[tid + s];
        }
        workgroupBarrier();
    }
    if (tid == 0u) {
        sums[wg.x] = partial[0];
    }
}
