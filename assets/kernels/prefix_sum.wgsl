// Inclusive prefix sum (Hillis–Steele scan) of each 256-element block in workgroup memory:
// log2(256) = 8 steps, in step k every invocation adds the value 2^k places to its left. The
// scan reads and writes the same array in one step, so it ping-pongs between two halves of the
// shared buffer; one barrier per step. It does n·log2(n) additions where a sequential scan
// does n — the price of finishing in log2(n) steps.
@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> output: array<u32>;

const WG: u32 = 256u;

var<workgroup> buf: array<array<u32, WG>, 2>;

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) tid: u32,
        @builtin(global_invocation_id) gid: vec3<u32>) {
    buf[0][tid] = input[gid.x];
    workgroupBarrier();
    var src = 0u;
    for (var offset = 1u; offset < WG; offset = offset << 1u) {
        let dst = 1u - src;
        if (tid >= offset) {
            buf[dst][tid] = buf[src][tid] + buf[src][tid - offset];
        } else {
            buf[dst][tid] = buf[src][tid];
        }
        src = dst;
        workgroupBarrier();
    }
    output[gid.x] = buf[src][tid];
}
