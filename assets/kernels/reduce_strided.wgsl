// The tree reduction without divergence: at step s, thread tid works on index 2·s·tid, so the
// active threads are the first ones and whole warps agree at the `if`. But the index strides by
// 2s words: lanes of one warp hit the same bank, and the shared requests replay (bank conflicts).
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
        let i = 2u * s * tid;
        if (i < 256u) {
            partial[i] = partial[i] + partial[i + s];
        }
        workgroupBarrier();
    }
    if (tid == 0u) {
        sums[wg.x] = partial[0];
    }
}
