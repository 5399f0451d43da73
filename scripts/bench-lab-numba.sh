#!/usr/bin/env bash
# The kernel lab against Numba's CUDA simulator (issue 26): the same shared-memory reduction and
# padded tiled transpose as `cargo bench -p warpscope-core --bench lab`, on sizes Numba's
# simulator finishes in seconds, both checked against numpy, timed in one run; prints the ratio.
# Benchmark only (Python is not part of the tests).
#
#   scripts/bench-lab-numba.sh [REDUCE_N [TRANSPOSE_N]]     # defaults 16384 and 256 (~40 s of Numba)
#
# Numba and numpy are installed into a venv under $WARPSCOPE_BENCH_VENV (default
# ${XDG_CACHE_HOME:-~/.cache}/warpscope-bench-numba) when missing. The Rust side is the
# `lab_time` example, built --release (without LTO, to keep the build short).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
venv="${WARPSCOPE_BENCH_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/warpscope-bench-numba}"
if ! "$venv/bin/python" -c 'import numba, numpy' 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q numba numpy
fi

cd "$root"
export CARGO_PROFILE_RELEASE_LTO="${CARGO_PROFILE_RELEASE_LTO:-false}"
cargo build -q --release -p warpscope-core --example lab_time
target="${CARGO_TARGET_DIR:-$root/target}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$venv/bin/python" -c 'import numba, numpy, platform; print(f"numba {numba.__version__}, numpy {numpy.__version__}, python {platform.python_version()}")'
"$venv/bin/python" "$root/scripts/bench_lab_numba.py" "$target/release/examples/lab_time" "$root" "$work" "$@"
