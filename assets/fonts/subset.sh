#!/usr/bin/env bash
# Regenerates NotoSansSC-warpscope.otf, the font subset the GUI embeds for Chinese text and
# for the symbols the lecture uses (∇ Σ ⊙ → ≤ ² μ σ γ β …), which egui's default fonts lack.
#
# Source: Noto Sans CJK SC (SIL Open Font License 1.1, see OFL.txt), face 2 of Debian's
#   fonts-noto-cjk NotoSansCJK-Regular.ttc.
# Needs: apt-get install fonts-noto-cjk; pip install fonttools.
# Kept: ASCII, Latin-1, Greek, combining marks (x̂), general punctuation, super/subscripts,
#   letterlike symbols, arrows, mathematical operators, box drawing, geometric shapes, CJK
#   punctuation, full-width forms, the 3,755 level-1 hanzi of GB2312, and every character of
#   the lecture text. No layout features, no hinting.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ttc=${NOTO_CJK_TTC:-/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc}
lecture=${LECTURE:-$here/../../../shared/lecture/lecture11-lightseq2-training.txt}
text=$(mktemp)
python3 - "$lecture" > "$text" <<'PY'
import sys
chars = set()
for hi in range(0xB0, 0xD8):            # GB2312 level 1: rows 16–55
    for lo in range(0xA1, 0xFF):
        try:
            chars.add(bytes([hi, lo]).decode("gb2312"))
        except UnicodeDecodeError:
            pass
try:
    chars |= set(open(sys.argv[1], encoding="utf-8").read())
except OSError:
    pass
sys.stdout.write("".join(sorted(c for c in chars if c.isprintable())))
PY
pyftsubset "$ttc" --font-number=2 \
  --unicodes="U+0020-007E,U+00A0-00FF,U+0300-036F,U+0370-03FF,U+2000-206F,U+2070-209F,U+2100-214F,U+2190-21FF,U+2200-22FF,U+2300-23FF,U+2500-257F,U+25A0-25FF,U+3000-303F,U+FF00-FFEF" \
  --text-file="$text" --layout-features='' --no-hinting --desubroutinize \
  --output-file="$here/NotoSansSC-warpscope.otf"
rm -f "$text"
ls -l "$here/NotoSansSC-warpscope.otf"

# Second fallback: DejaVu Sans (Bitstream Vera licence + public-domain changes, see
# DejaVu-LICENSE.txt) for the technical and mathematical symbols Noto Sans CJK lacks (⌈ ⌉ ⊕ …).
# Needs: apt-get install fonts-dejavu-core.
pyftsubset "${DEJAVU_TTF:-/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf}" \
  --unicodes="U+0020-007E,U+00A0-024F,U+0300-036F,U+0370-03FF,U+2000-2C7F,U+1D00-1DBF" \
  --layout-features='' --no-hinting --output-file="$here/DejaVuSans-warpscope.ttf"
ls -l "$here/DejaVuSans-warpscope.ttf"
