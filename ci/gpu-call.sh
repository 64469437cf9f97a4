# Shared set-up for a script that runs several steps in one GPU device call,
# sourced from the repository root: `. ci/gpu-call.sh`.
#   call_setup OUT        sets F=OUT/f, the folder the call's steps write into
#   pack                  tars F into OUT/f.tgz, the one file that must come
#                         back when the call leaves more than the device tool
#                         returns; call it after each step, so a call cut off
#                         by its time limit still returns what ran
#   build_unless_skipped  builds build/gpu with ci/gpu.sh (log in
#                         F/gpu-build.log) unless SKIP_BUILD is set, as on a
#                         warm machine that keeps build/gpu
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
