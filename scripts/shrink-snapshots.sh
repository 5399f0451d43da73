#!/usr/bin/env bash
# Recompresses the GUI test snapshots losslessly (same RGBA pixels, ~half the bytes): kittest
# writes PNGs at a fast zlib level, and 60 window-sized images would otherwise bloat the repo.
# Run after `UPDATE_SNAPSHOTS=1 cargo test -p warpscope --test gui`; the tests compare pixels,
# so they pass unchanged. Needs ImageMagick (`apt-get install imagemagick`).
set -euo pipefail
dir=${1:-$(cd "$(dirname "$0")/.." && pwd)/app/tests/snapshots}
find "$dir" -name '*.png' ! -name '*.new.png' ! -name '*.diff.png' ! -name '*.old.png' -print0 |
  while IFS= read -r -d '' f; do
    tmp="$f.shrink"
    convert "$f" -define png:compression-level=9 -define png:compression-strategy=0 \
      -define png:compression-filter=0 "PNG32:$tmp"
    # Keep the smaller file; a PNG that does not shrink is left as it is.
    if [ "$(stat -c %s "$tmp")" -lt "$(stat -c %s "$f")" ]; then mv "$tmp" "$f"; else rm -f "$tmp"; fi
  done
du -sh "$dir"
