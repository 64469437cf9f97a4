# Sourced by the results/*/run-*.sh GPU calls, from the repository root:
# their shared set-up. call_setup OUT makes F=OUT/f, where a call writes;
# pack tars F into OUT/f.tgz, the one file that must come back when a call
# leaves more than the device tool returns (re-packed after each step, so a
# cut-off call still returns what ran); build_unless_skipped builds with
# ci/gpu.sh unless SKIP_BUILD is set (a warm machine keeps build/gpu).
call_setup() {
  OUT=${1:?usage: $0 OUT}
  F=$OUT/f
  mkdir -p "$F"
}
pack() { tar czf "$OUT/f.tgz" -C "$OUT" f; }
build_unless_skipped() {
  if [[ -z ${SKIP_BUILD:-} ]]; then
    OUT=$F ci/gpu.sh --no-tests > "$F/gpu-build.log" 2>&1
    echo "build exit $?"
    pack
  fi
}
