// The warp-shuffle reduction: each subgroup sums its values in registers with a butterfly of
// subgroupShuffleXor (log2(subgroup size) steps, no shared memory, no barrier), one partial per
// subgroup goes to shared memory, one barrier, and the first subgroup sums the partials the
// same way. Subgroup k is taken to hold invocations k·size … k·size + size − 1 of the
// workgroup, as on the GPUs and drivers this runs on.
@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> sums: array<f32>;

const WG: u32 = 256u;

// One partial per subgroup: at most 64, subgroups having at least 4 invocations.
var<workgroup> partial: array<f32, 64>;

// Every lane of the subgroup ends with the subgroup's sum.
fn butterfly(v: f32, size: u32) -> f32 {
    var s = v;
    for (var off = size >> 1u; off > 0u; off = off >> 1u) {
        s += subgroupShuffleXor(s, off);
    }
    return s;
}

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) tid: u32,
        @builtin(workgroup_id) wg: vec3<u32>,
        @builtin(global_invocation_id) gid: vec3<u32>,
        @builtin(subgroup_invocation_id) lane: u32,
        @builtin(subgroup_size) size: u32) {
    let s = butterfly(input[gid.x], size);
    if (lane == 0u) {
        partial[tid / size] = s;
    }
    workgroupBarrier();
    if (tid < size) {
        var v = 0.0;
        for (var k = lane; k < WG / size; k += size) {
            v += partial[k];
        }
        let total = butterfly(v, size);
        if (tid == 0u) {
            sums[wg.x] = total;
        }
    }
}
