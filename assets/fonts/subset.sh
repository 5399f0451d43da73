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
#   the lecture text, and every character of the Rust sources under app/src and core/src (so
#   each Chinese label the views draw has its glyph; app/tests/glyphs.rs checks this). No layout
#   features, no hinting.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ttc=${NOTO_CJK_TTC:-/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc}
lecture=${LECTURE:-$here/../../../shared/lecture/lecture11-lightseq2-training.txt}
text=$(mktemp)
python3 - "$lecture" "$here/../../app/src" "$here/../../core/src" > "$text" <<'PY'
import pathlib, sys
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
for root in sys.argv[2:]:
    for f in sorted(pathlib.Path(root).rglob("*.rs")):
        chars |= set(f.read_text(encoding="utf-8"))
sys.stdout.write("".join(sorted(c for c in chars if c.isprintable())))
PY
pyftsubset "$ttc" --font-number=2 \
  --unicodes="U+0020-007E,U+00A0-00FF,U+0300-036F,U+0370-03FF,U+2000-206F,U+2070-209F,U+2100-214F,U+2190-21FF,U+2200-22FF,U+2300-23FF,U+2500-257F,U+25A0-25FF,U+3000-303F,U+FF00-FFEF" \
  --text-file="$text" --layout-features='' --no-hinting --desubroutinize \
  --output-file="$here/NotoSansSC-warpscope.otf"
rm -f "$text"
ls -l "$here/NotoSansSC-warpscope.otf"

# Second fallback: DejaVu Sans (Bitstream Vera licence + public-domain changes, see
# DejaVu-LICENSE.txt) for the technical and mathematical symbols Noto Sans CJK lacks (⌈ ⌉ ⊕ …),
# modifier letters (eʸ) and Latin Extended Additional (Ṽ).
# Needs: apt-get install fonts-dejavu-core.
pyftsubset "${DEJAVU_TTF:-/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf}" \
  --unicodes="U+0020-007E,U+00A0-024F,U+02B0-02FF,U+0300-036F,U+0370-03FF,U+1D00-1DBF,U+1E00-1EFF,U+2000-2C7F" \
  --layout-features='' --no-hinting --output-file="$here/DejaVuSans-warpscope.ttf"
ls -l "$here/DejaVuSans-warpscope.ttf"
