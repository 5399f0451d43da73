// Tree reduction in workgroup memory: each step halves the active threads, with a barrier
// between steps. Threads 0..s add; from s < 32 on, whole warps idle.
@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> sums: array<f32>;

var<workgroup> partial: array<f32, 256>;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) tid: u32,
        @builtin(workgroup_id) wg: vec3<u32>,
        @builtin(global_invocation_id) gid: vec3<u32>) {
    partial[tid] = input[gid.x];
    workgroupBarrier();
    for (var s = 128u; s > 0u; s = s >> 1u) {
        if (tid < s) {
            partial[tid] = partial[tid] + partial[tid + s];
        }
        workgroupBarrier();
    }
    if (tid == 0u) {
        sums[wg.x] = partial[0];
    }
}
