#!/usr/bin/env bash
# Render the report in headless Chromium, the summary and every family page,
# and require every image of each to load.
# Usage: render_report.sh CHROMIUM JSON...   (exit 77: Chromium missing -> CTest skip)
set -euo pipefail
chromium=$1; shift
root=$(cd "$(dirname "$0")/.." && pwd)
if [ ! -x "$chromium" ]; then
  echo "Chromium not installed (apt-get install chromium): report rendering not tested"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$root/plots/plot" "$@" --out "$tmp/report" > /dev/null
pages=0
for page in "$tmp"/report/*.html; do
  name=$(basename "$page")
  "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$tmp/profile" --virtual-time-budget=5000 --dump-dom \
    "file://$page" > "$tmp/dom.html" 2> "$tmp/chromium.log" || { tail -5 "$tmp/chromium.log"; exit 1; }
  loaded=$(grep -o 'data-images-loaded="[0-9]*"' "$tmp/dom.html" | grep -o '[0-9]*' || true)
  total=$(grep -o 'data-images-total="[0-9]*"' "$tmp/dom.html" | grep -o '[0-9]*' || true)
  echo "$name rendered: $loaded of $total images loaded"
  [ -n "$total" ] && [ "$loaded" = "$total" ]
  if [ "$name" = index.html ]; then
    grep -q '<h1>parbench report</h1>' "$tmp/dom.html"
    [ "$total" -gt 0 ]  # the family cards show a chart each
  fi
  pages=$((pages + 1))
done
[ "$pages" -gt 1 ]  # the summary and at least one family page
