#!/usr/bin/env bash
# The MPI x GPU variants on one host: SOR/MPI.NCCL and KMeans/MPI.NCCL under
# mpirun with 1, 2, 4, ... ranks up to the GPUs, strong and weak scaling,
# each rank count one process tree writing DIR/ranks-P.json; then the GPU
# scaling charts over all of them (plots/plot --merge --chart gpus).
#
#   ci/gpu-scaling.sh [--bench PATH] [--out DIR] [--ranks LIST] [-- more bench arguments]
#
# Defaults: the shapes the family pages quote for scaling over GPUs, large
# enough that four GPUs still have work each (SOR 16386^2; k-means
# 32M x 16 x 16 on OneRead's step and 1M x 100 x 1000 on DMMA.Full's, 10
# iterations), 3 repetitions, DIR=$OUT or out/gpu-scaling.
# Under -np P the GPU axis is P x 1, P x 2, ... GPUs up to the host's, so
# ranks:1 also runs every GPU count in one process. Across hosts use
# ci/slurm/gpu-scaling.sbatch. Bench arguments after -- override these (the
# last of a flag wins): -- '--benchmark_filter=^SOR/MPI\.NCCL/' --scaling=strong
# runs SOR's strong scaling alone. A skipped or failed entry, or a selected
# family without a passed entry, fails the script (the remaining rank counts
# still run).
set -euo pipefail
cd "$(dirname "$0")/.."
bench="" out=${OUT:-out/gpu-scaling} ranks=""
while (($#)); do
  case "$1" in
    --bench) bench=$2; shift ;;
    --out) out=$2; shift ;;
    --ranks) ranks=$2; shift ;;
    --) shift; break ;;
    *) echo "gpu-scaling.sh: unknown option $1 (see the header of this script)" >&2; exit 2 ;;
  esac
  shift
done
[[ -z $bench && -x build/gpu/bench ]] && bench=build/gpu/bench
[[ -x $bench ]] || { echo "gpu-scaling.sh: no bench binary (ci/gpu.sh builds build/gpu/bench, or --bench PATH)" >&2; exit 2; }
command -v mpirun >/dev/null || { echo "gpu-scaling.sh: mpirun not found (Debian: apt-get install openmpi-bin)" >&2; exit 2; }
gpus=$(nvidia-smi --list-gpus 2>/dev/null | wc -l)
((gpus > 0)) || { echo "gpu-scaling.sh: no GPU here (nvidia-smi lists none)" >&2; exit 2; }
if [[ -z $ranks ]]; then
  for ((p = 1; p <= gpus; p *= 2)); do ranks+="${ranks:+,}$p"; done
fi
mkdir -p "$out"
# Each family the arguments select must have passed entries in every file.
filter='^(SOR|KMeans)/MPI\.NCCL/'
required=()
for fam in SOR KMeans; do
  if "$bench" --benchmark_list_tests --benchmark_filter="$filter" "$@" 2>/dev/null | grep -q "^$fam/MPI\.NCCL/"; then
    required+=(--require "$fam/MPI.NCCL")
  fi
done
((${#required[@]})) || { echo "gpu-scaling.sh: the arguments select no MPI.NCCL instance" >&2; exit 2; }
mpirun_args=(--bind-to none)
[[ $(id -u) == 0 ]] && mpirun_args+=(--allow-run-as-root)
status=0
for p in ${ranks//,/ }; do
  printf '== %s ranks [%s]\n' "$p" "$(date +%T)"
  mpirun "${mpirun_args[@]}" -np "$p" "$bench" --benchmark_filter="$filter" --scaling=strong,weak \
    --sor-grids=16386x16386 --kmeans-shapes=32000000x16x16,1000000x100x1000 --kmeans-loops=10 \
    --benchmark_min_time=0.2s --benchmark_repetitions=3 --no-progress \
    --benchmark_out="$out/ranks-$p.json" --benchmark_out_format=json "$@" || status=1
  ci/check-run "$out/ranks-$p.json" "${required[@]}" --context "mpi_ranks=$p" || status=1
done
plots/plot "$out"/ranks-*.json --merge --out "$out/report" --chart gpus
exit $status
