"""The kernel lab against Numba's CUDA simulator (issue 26); run by scripts/bench-lab-numba.sh.

Runs the same two kernels as `core/benches/lab.rs` -- the shared-memory tree reduction of
`assets/kernels/reduce_shared.wgsl` and the padded tiled transpose of
`assets/kernels/bench_transpose.wgsl`, written here in Numba CUDA Python -- under
NUMBA_ENABLE_CUDASIM=1, checks both against numpy, and times them. Then times warpscope's lab on
the same kernels and sizes (the `lab_time` example, given as argv[1]), checks its output against
numpy too, and prints the ratio. Benchmark only: not part of any test suite.

    python bench_lab_numba.py LAB_TIME_BINARY REPO_ROOT WORKDIR [REDUCE_N [TRANSPOSE_N]]
"""

import json
import os
import subprocess
import sys
import time

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

import numpy as np  # noqa: E402
from numba import cuda, float32  # noqa: E402

BLOCK = 256
TILE = 32
ROWS = 8


@cuda.jit
def reduce_shared(inp, sums):
    partial = cuda.shared.array(256, dtype=float32)
    tid = cuda.threadIdx.x
    gid = cuda.blockIdx.x * cuda.blockDim.x + tid
    partial[tid] = inp[gid]
    cuda.syncthreads()
    s = 128
    while s > 0:
        if tid < s:
            partial[tid] = partial[tid] + partial[tid + s]
        cuda.syncthreads()
        s >>= 1
    if tid == 0:
        sums[cuda.blockIdx.x] = partial[0]


@cuda.jit
def transpose_tiled(a, b, n):
    tile = cuda.shared.array(1056, dtype=float32)  # 32 x 33, padded
    lx = cuda.threadIdx.x
    ly = cuda.threadIdx.y
    x = cuda.blockIdx.x * TILE + lx
    for j in range(0, TILE, ROWS):
        tile[(ly + j) * 33 + lx] = a[(cuda.blockIdx.y * TILE + ly + j) * n + x]
    cuda.syncthreads()
    tx = cuda.blockIdx.y * TILE + lx
    for j in range(0, TILE, ROWS):
        b[(cuda.blockIdx.x * TILE + ly + j) * n + tx] = tile[lx * 33 + ly + j]


def best_of(reps, fn):
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def lab(binary, src, dispatch, workdir, name, reps):
    dpath = os.path.join(workdir, f"{name}.json")
    opath = os.path.join(workdir, f"{name}.out.json")
    with open(dpath, "w") as f:
        json.dump(dispatch, f)
    line = subprocess.run([binary, src, dpath, str(reps), opath], check=True,
                          capture_output=True, text=True).stdout.strip()
    stats = json.loads(line)
    with open(opath) as f:
        buffers = json.load(f)
    return stats, np.array(buffers["0:1"], dtype=np.float64)


def main():
    binary, root, workdir = sys.argv[1:4]
    reduce_n = int(sys.argv[4]) if len(sys.argv) > 4 else 1 << 14
    tn = int(sys.argv[5]) if len(sys.argv) > 5 else 256
    reps = 3
    assert reduce_n % BLOCK == 0 and tn % TILE == 0
    rows = []

    # Reduction: input = iota (0, 1, 2, ...), one partial sum per 256-element block.
    inp = np.arange(reduce_n, dtype=np.float32)
    expect = inp.astype(np.float64).reshape(-1, BLOCK).sum(axis=1)
    sums = np.zeros(reduce_n // BLOCK, dtype=np.float32)
    blocks = reduce_n // BLOCK
    t_numba = best_of(1, lambda: reduce_shared[blocks, BLOCK](inp, sums))
    assert np.allclose(sums, expect, rtol=1e-6), "numba reduction differs from numpy"
    stats, got = lab(binary, os.path.join(root, "assets/kernels/reduce_shared.wgsl"),
                     {"workgroups": [blocks, 1, 1],
                      "buffers": {"0:0": {"type": "f32", "len": reduce_n, "fill": "iota"},
                                  "0:1": {"type": "f32", "len": blocks}}},
                     workdir, "reduce", reps)
    assert np.allclose(got, expect, rtol=1e-6), "lab reduction differs from numpy"
    rows.append((f"reduce-{reduce_n}", t_numba, stats))

    # Tiled transpose of a tn x tn matrix, iota input; the WGSL's `override N` set to tn.
    a = np.arange(tn * tn, dtype=np.float32)
    b = np.zeros(tn * tn, dtype=np.float32)
    grid = (tn // TILE, tn // TILE)
    t_numba = best_of(1, lambda: transpose_tiled[grid, (TILE, ROWS)](a, b, tn))
    expect = a.reshape(tn, tn).T.reshape(-1)
    assert np.array_equal(b, expect), "numba transpose differs from numpy"
    with open(os.path.join(root, "assets/kernels/bench_transpose.wgsl")) as f:
        src = f.read()
    assert "override N: u32 = 512u;" in src
    tsrc = os.path.join(workdir, "transpose.wgsl")
    with open(tsrc, "w") as f:
        f.write(src.replace("override N: u32 = 512u;", f"override N: u32 = {tn}u;"))
    stats, got = lab(binary, tsrc,
                     {"workgroups": [tn // TILE, tn // TILE, 1],
                      "buffers": {"0:0": {"type": "f32", "len": tn * tn, "fill": "iota"},
                                  "0:1": {"type": "f32", "len": tn * tn}}},
                     workdir, "transpose", reps)
    assert np.array_equal(got, expect), "lab transpose differs from numpy"
    rows.append((f"transpose-{tn}", t_numba, stats))

    print(f"{'kernel':<16} {'numba cudasim s':>16} {'warpscope s':>12} {'ratio':>8} "
          f"{'lane-instr':>11} {'lane-instr/s':>13}")
    for name, tn_s, st in rows:
        print(f"{name:<16} {tn_s:16.3f} {st['seconds']:12.5f} {tn_s / st['seconds']:7.0f}x "
              f"{st['lane_instructions']:11d} {st['lane_instructions_per_s'] / 1e6:11.1f} M")
    print("results of both checked against numpy; numba: one run, warpscope: best of", reps)


if __name__ == "__main__":
    main()
