#!/usr/bin/env bash
# Render the committed `dokoro browse` SVG snapshots as PNG (needs rsvg-convert: apt-get install librsvg2-bin).
# Usage: scripts/browse_screenshots.sh [OUT_DIR]   (default: a temporary folder, printed)
# docs/browse.png and docs/browse-plan.png (the README's) are browse-categories.png and browse-preview-plan.png.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$(mktemp -d)}"
mkdir -p "$out"
for svg in "$here"/packages/dokoro/tests/snapshots/*.svg; do
  name="$(basename "$svg" .svg)"
  # Textual writes spaces as no-break spaces, which librsvg draws narrower than a cell: use plain
  # spaces and keep them.
  sed 's/&#160;/ /g; s/<svg /<svg xml:space="preserve" /' "$svg" > "$out/$name.tmp.svg"
  rsvg-convert -w 1100 "$out/$name.tmp.svg" -o "$out/browse-$name.png"
  rm "$out/$name.tmp.svg"
done
echo "$out"
