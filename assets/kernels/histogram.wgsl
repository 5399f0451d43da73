// Histogram of 32 bins with atomics in workgroup memory: each invocation adds its values to
// the workgroup's private bins (lanes of a warp that hit the same bin serialise on it), one
// barrier, then one global atomicAdd per bin and workgroup instead of one per value.
@group(0) @binding(0) var<storage, read> values: array<u32>;
@group(0) @binding(1) var<storage, read_write> bins: array<atomic<u32>>;

const BINS: u32 = 32u;
const WG: u32 = 256u;

var<workgroup> local_bins: array<atomic<u32>, BINS>;

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) tid: u32,
        @builtin(global_invocation_id) gid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
    // WGSL zeroes workgroup memory, but a kernel that relies on it does not port to CUDA or
    // survive being looped: clear the bins explicitly.
    if (tid < BINS) {
        atomicStore(&local_bins[tid], 0u);
    }
    workgroupBarrier();
    let n = arrayLength(&values);
    for (var i = gid.x; i < n; i += nwg.x * WG) {
        atomicAdd(&local_bins[values[i] % BINS], 1u);
    }
    workgroupBarrier();
    if (tid < BINS) {
        atomicAdd(&bins[tid], atomicLoad(&local_bins[tid]));
    }
}
