#!/usr/bin/env bash
# Recompute every verdict in this folder from the kept rounds and files (no
# GPU needed; run from the repository root). The runs came from run.sh.
set -uo pipefail
R=results/nvidia-h200/compare
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
for n in paired-aa-1 paired-aa-2 paired-aa-queued paired-aa-queued-2 change-unroll change-refactor; do
  tar -xzf "$R/$n-rounds.tar.gz" -C "$W"
  ci/compare --analyse "$W/$n" --json "$R/$n.json" --markdown "$R/$n.md" > "$R/$n.txt"
  case $n in paired-aa*)
    ci/compare --analyse "$W/$n" --scale-new 1.05 --json "$R/$n-x1.05.json" > "$R/$n-x1.05.txt" ;;
  esac
done
ci/compare "$R/files-aa-idle-1.json.gz" "$R/files-aa-idle-2.json.gz" \
  --json "$R/files-aa-idle.json" --markdown "$R/files-aa-idle.md" > "$R/files-aa-idle.txt"
ci/compare "$R/files-aa-idle-1.json.gz" "$R/files-aa-idle-2.json.gz" --noise "$R/paired-aa-1.json" \
  --json "$R/files-aa-idle-noise.json" > "$R/files-aa-idle-noise.txt"
ci/compare "$R/files-aa-queued-1.json.gz" "$R/files-aa-queued-2.json.gz" --noise "$R/paired-aa-queued.json" \
  --json "$R/files-aa-queued.json" --markdown "$R/files-aa-queued.md" > "$R/files-aa-queued.txt"
ci/compare "$R/files-aa-queued-1.json.gz" "$R/files-aa-queued-2.json.gz" --noise "$R/paired-aa-queued.json" \
  --scale-new 1.05 --json "$R/files-aa-queued-x1.05.json" > "$R/files-aa-queued-x1.05.txt"
for f in "$R"/*.txt; do case $f in *.bench.txt) continue ;; esac; printf '%-40s %s\n' "$(basename "$f")" "$(tail -1 "$f")"; done
