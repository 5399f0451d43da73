#!/usr/bin/env bash
# Reading a large snapshot: warpscope against Python's own `pickle.load` of the same file, in the
# same run. Builds 250,000- and 2,000,000-event files in PyTorch's layout from the cs336 snapshot
# (scripts/make-snapshot.py), then times each reader with /usr/bin/time (wall seconds, max RSS).
#   scripts/bench-snapshot.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-/tmp/warpscope-bench}
mkdir -p "$out"
src=core/tests/data/snapshots/torch2.11-cs336-a2.pickle
cargo build --release -p warpscope-core --example snapshot_read
bin=${CARGO_TARGET_DIR:-target}/release/examples/snapshot_read
for n in 250000 2000000; do
  f="$out/cs336-$n.pickle"
  [ -f "$f" ] || python3 scripts/make-snapshot.py "$src" "$n" "$f"
  size=$(stat -c %s "$f")
  echo "== $n events, $size bytes"
  for run in 1 2 3; do
    /usr/bin/time -f "python wall_s %e max_rss_kib %M" \
      python3 -c 'import pickle,sys; pickle.load(open(sys.argv[1],"rb"))' "$f"
    /usr/bin/time -f "warpscope wall_s %e max_rss_kib %M" "$bin" "$f"
  done
done
