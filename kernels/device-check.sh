#!/usr/bin/env bash
# On a machine with a real GPU: build, verify and time every WGSL kernel at the lecture's shapes
# in one go, and print one table — so a lent GPU's minutes go to measuring, not setting up.
# Usage: kernels/device-check.sh [runs]   (from the repository root; needs cargo and a driver)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}
if [ -z "${WARPSCOPE_BIN:-}" ]; then
  cargo build --release -q -p warpscope
fi
bin=${WARPSCOPE_BIN:-${CARGO_TARGET_DIR:-target}/release/warpscope}
"$bin" adapter
out=$(mktemp -d)
# Near the lecture's shapes, within the runners' 4M-element limit: LayerNorm 4096 tokens × 1024
# (half of §2.2's 8192); softmax rows of length 512
# (§3.2; 2048 rows, the core reference's 1M-element limit, of the lecture's 65,536); Adam over
# 4 layers of hidden size 512 (GPT-2-style tensors within the 32M-parameter limit, §4.2).
"$bin" run layernorm-bw --set rows=4096 --set cols=1024 --set runs="$runs" --json > "$out/layernorm-bw.json"
"$bin" run layernorm-dgamma --set rows=4096 --set cols=1024 --set runs="$runs" --json > "$out/layernorm-dgamma.json"
"$bin" run softmax-bw --set rows=2048 --set len=512 --set runs="$runs" --json > "$out/softmax-bw.json"
"$bin" run adam --set layers=4 --set hidden=512 --set vocab=8192 --set runs="$runs" --json > "$out/adam.json"
# Recorded reductions (instrumented kernels decoded into traces; needs subgroups): the softmax
# row at L = 2048 and the LayerNorm block of 1024 threads, beside the 32-lane simulation.
rec=$(mktemp -d)
"$bin" run softmax-bw --record --set len=2048 --json > "$rec/softmax-warp.json" || echo "softmax-bw --record failed (no subgroups?)"
"$bin" run layernorm-bw --record --set block=1024 --set cols=4096 --json > "$rec/layernorm-syncs.json" || echo "layernorm-bw --record failed (no subgroups?)"
python3 - "$out" <<'PY'
import json, os, sys
d = sys.argv[1]
print(f"{'kernel':<18} {'variant':<12} {'launches':>8} {'median µs':>12} {'GB/s':>8} {'of copy':>8} {'max abs err':>12} ok")
for f in sorted(os.listdir(d)):
    r = json.load(open(os.path.join(d, f)))
    for v in r["variants"]:
        print(f"{r['kernel']:<18} {v['name']:<12} {v['launches']:>8} {v['timing']['median_us']:>12.1f} "
              f"{v['achieved_gbps']:>8.1f} {v['fraction_of_copy_bandwidth']:>8.2f} "
              f"{v['verification']['max_abs_error']:>12.2e} {v['verification']['passed']}")
    c = r["comparison"]
    print(f"{'':<18} {c['baseline']} / {c['optimised']}: time ×{c['time_ratio']:.2f}, bytes ×{c['bytes_ratio']:.2f}")
    f = r.get("f16_storage")
    if f:
        for v in f["variants"]:
            print(f"{r['kernel']:<18} {v['name']:<12} {v['launches']:>8} {v['timing']['median_us']:>12.1f} "
                  f"{v['achieved_gbps']:>8.1f} {v['fraction_of_copy_bandwidth']:>8.2f} "
                  f"{v['verification']['max_abs_error']:>12.2e} {v['verification']['passed']}")
        print(f"{'':<18} {f['note']}" + (f"; linked-f16 / linked f32 time ×{f['time_vs_f32']:.2f}" if f.get("time_vs_f32") else ""))
print("adapter:", r["adapter"]["name"], r["adapter"]["backend"])
PY
python3 - "$rec" <<'PY'
import json, os, sys
d = sys.argv[1]
print(f"\n{'recorded scene':<16} {'subgroup':>8} {'subgroups':>9} {'levels':>6} {'shuffles':>8} {'barriers':>8} {'events':>7}  vs simulated (32-lane warps)  values ok")
for f in sorted(os.listdir(d)):
    try:
        r = json.load(open(os.path.join(d, f)))
    except ValueError:
        continue
    c = r["comparison"]
    print(f"{r['scene']:<16} {c['recorded_subgroup_size']:>8} {c['recorded_subgroups']:>9} {c['recorded_levels']:>6} "
          f"{c['recorded_shuffles']:>8} {c['recorded_barriers']:>8} {c['recorded_events']:>7}  "
          f"sim: {c['simulated_warps']} warps, {c['simulated_levels']} levels, {c['simulated_shuffles']} shuffles, "
          f"{c['simulated_barriers']} barriers  {r['verified']}")
    print(f"{'':<16} {c['explanation']}")
PY
