set -u
. ci/gpu-call.sh; call_setup "$OUT"; build_unless_skipped
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,clocks_throttle_reasons.active --format=csv > $F/smi.txt
nvidia-smi topo -m > $F/topo.txt 2>&1
timeout 200 ci/scale-out --out $F/so --only ceilings,sor-strong,charts --max-seconds 140 > $F/scale-out.txt 2>&1; echo "scale-out exit $?"
tail -15 $F/scale-out.txt
ls -R $F/so | head -30
pack
