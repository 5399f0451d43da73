// The shared block reduction, one copy for every shader that sums over a workgroup in shared
// memory (prepended by `concat!(include_str!(...), include_str!(...))` in `shaders.rs`).
// A tree: each level halves the active invocations, one workgroupBarrier a level (log2(WG)
// in all) and one more after the total is read, so the buffer can be reused at once.
// The including shader declares `const WG: u32`, its workgroup size (a power of two), and
// calls these with every invocation of the workgroup; `tid` is local_invocation_index.

var<workgroup> red: array<f32, WG>;
var<workgroup> red2: array<vec2<f32>, WG>;

// Tree sum over the workgroup; every invocation gets the total.
fn block_sum(v: f32, tid: u32) -> f32 {
    red[tid] = v;
    workgroupBarrier();
    for (var off = WG / 2u; off > 0u; off = off >> 1u) {
        if (tid < off) {
            red[tid] += red[tid + off];
        }
        workgroupBarrier();
    }
    let s = red[0];
    workgroupBarrier();
    return s;
}

// Two sums reduced together as one vec2 (one tree, the barriers of one).
fn block_sum2(v: vec2<f32>, tid: u32) -> vec2<f32> {
    red2[tid] = v;
    workgroupBarrier();
    for (var off = WG / 2u; off > 0u; off = off >> 1u) {
        if (tid < off) {
            red2[tid] += red2[tid + off];
        }
        workgroupBarrier();
    }
    let s = red2[0];
    workgroupBarrier();
    return s;
}

