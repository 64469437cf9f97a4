#!/usr/bin/env bash
set -u
. ci/gpu-call.sh; call_setup "$OUT"
build_unless_skipped
nvidia-smi --query-gpu=index,name,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv > $F/gpu.txt
nvidia-smi topo -m > $F/topo.txt 2>&1
timeout 290 ci/scale-out --out so --only sor-weak,kmeans,mpi,charts --max-seconds 270 > $F/scale-out.log 2>&1; echo "scale-out exit $?"
tail -25 $F/scale-out.log
ci/scale-out --out so --dry-run > $F/dry.txt 2>&1; cat $F/dry.txt | cut -c1-60
tar czf $OUT/so.tgz so
pack
