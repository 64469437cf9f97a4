#!/usr/bin/env bash
# Seed 001's grid: k-means as MPI ranks x OpenMP threads, every P x T up to
# the cores, plus the sequential reference on the same problems, as JSON, and
# the ranks x threads speedup / efficiency heatmaps drawn from them.
#
#   ci/mpi-grid.sh [--bench PATH] [--out DIR] [--cores C] [--ranks LIST]
#                  [--shapes NxDxK,...] [--hostfile FILE --per-host N] [--no-seq]
#                  [-- more bench arguments]
#
#   --cores C      cores per host (default: this host's); a cell runs when
#                  (ranks on one host) x threads <= C
#   --ranks LIST   rank counts (default 1,2,4,... up to C; with a hostfile, up
#                  to C x hosts); split a long grid over several calls with it
#   --hostfile F   run across the hosts in F (OpenMPI hostfile), N ranks per
#                  host (--per-host); bench must be at the same path on each
#   --no-seq       skip the sequential reference (already in DIR/seq.json)
#
# Writes DIR/seq.json (KMeans/Seq), DIR/mpi-P.json per rank count, and
# DIR/report/ (plots/plot --chart heatmap). Defaults: seed 001's N=250000,
# D=100, K=500 and N=100000, D=100, K=316; DIR=$OUT or out/mpi-grid. Runs
# the full profile, whose size caps let Seq run N=250000; a skipped or failed
# entry fails the script (the remaining cells still run).
set -euo pipefail
cd "$(dirname "$0")/.."
bench=""
out=${OUT:-out/mpi-grid}
cores=$(nproc)
ranks=""
shapes=250000x100x500,100000x100x316
hostfile="" per_host=""
seq=1
while (($#)); do
  case "$1" in
    --bench) bench=$2; shift ;;
    --out) out=$2; shift ;;
    --cores) cores=$2; shift ;;
    --ranks) ranks=$2; shift ;;
    --shapes) shapes=$2; shift ;;
    --hostfile) hostfile=$2; shift ;;
    --per-host) per_host=$2; shift ;;
    --no-seq) seq=0 ;;
    --) shift; break ;;
    *) echo "mpi-grid.sh: unknown option $1 (see the header of this script)" >&2; exit 2 ;;
  esac
  shift
done
if [[ -z $bench ]]; then
  for b in build/gpu/bench build/default/bench build/cpu/bench; do [[ -x $b ]] && { bench=$b; break; }; done
fi
[[ -x $bench ]] || { echo "mpi-grid.sh: no bench binary (build first, or --bench PATH)" >&2; exit 2; }
command -v mpirun >/dev/null || { echo "mpi-grid.sh: mpirun not found (Debian: apt-get install openmpi-bin)" >&2; exit 2; }
if [[ -n $hostfile && -z $per_host ]]; then echo "mpi-grid.sh: --hostfile needs --per-host N" >&2; exit 2; fi
hosts=1
[[ -n $hostfile ]] && hosts=$(grep -cv '^\s*\(#\|$\)' "$hostfile")
if [[ -z $ranks ]]; then
  max=$((hosts * (${per_host:-$cores}))); ranks=""
  for ((p = 1; p <= max; p *= 2)); do ranks+="${ranks:+,}$p"; done
fi
mkdir -p "$out"
mpirun_args=(--bind-to none)
[[ $(id -u) == 0 ]] && mpirun_args+=(--allow-run-as-root)
[[ -n $hostfile ]] && mpirun_args+=(--hostfile "$hostfile" --map-by "ppr:${per_host}:node")
log() { printf '== %s [%s]\n' "$*" "$(date +%T)"; }

status=0  # a failed check marks the grid failed; the remaining cells still run
if ((seq)); then
  log "sequential reference: $shapes"
  "$bench" --profile=full --kmeans-shapes="$shapes" --benchmark_filter='KMeans/Seq/' --no-progress \
    --benchmark_out="$out/seq.json" --benchmark_out_format=json "$@" || status=1
  ci/check-run "$out/seq.json" --require KMeans/Seq --no-skips || status=1
fi
for p in ${ranks//,/ }; do
  local_ranks=$p
  [[ -n $per_host ]] && ((local_ranks > per_host)) && local_ranks=$per_host
  threads=""
  for ((t = 1; local_ranks * t <= cores; t *= 2)); do threads+="${threads:+,}$t"; done
  [[ -z $threads ]] && { echo "mpi-grid.sh: $p ranks leave no thread count within $cores cores" >&2; continue; }
  ((local_ranks * ${threads##*,} < cores && cores % local_ranks == 0)) && threads+=",$((cores / local_ranks))"
  log "$p ranks x threads $threads"
  mpirun "${mpirun_args[@]}" -np "$p" "$bench" --profile=full --kmeans-shapes="$shapes" --benchmark_filter='KMeans/MPI/' \
    --threads="$threads" --no-progress --benchmark_out="$out/mpi-$p.json" --benchmark_out_format=json "$@" \
    || status=1
  ci/check-run "$out/mpi-$p.json" --require KMeans/MPI --no-skips || status=1
done
log "report"
# One experiment split over files: --merge reads them as one source.
plots/plot "$out"/seq.json "$out"/mpi-*.json --merge --out "$out/report" --chart heatmap
exit $status
