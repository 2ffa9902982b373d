#!/usr/bin/env bash
# Two containers (caps 30 and 50, 2 processes each, 8192^2 mm) with debug
# logs of every process (the refill lines show what each container's
# controller read from NVML) and `cudacap status` of both mid-run.
# Usage: tests/gpu/debug_twocont.sh BUILD_DIR [OUTDIR]. This is how the
# one-process-per-sample attribution was found (docs/validation.md).
set -u
B=$1; LIB=$(cd "$B" && pwd)/lib/libcudacap.so; D=$(cd "$(dirname "$0")" && pwd); O=${2:-/tmp}
T=20
R=$(mktemp -d); A=$R/a; C=$R/c; mkdir -p "$A" "$C"
for st in "$A:30" "$C:50"; do dir=${st%:*}; cap=${st#*:}
  for i in 1 2; do
    CUDACAP_LOG_LEVEL=4 CUDACAP_STATE_DIR=$dir CUDACAP_SM_LIMIT=$cap LD_PRELOAD=$LIB \
      timeout 80 python3 "$D/compute_torch.py" work $T 8192 "$dir/rate.$i" 2> "$dir/err.$i" &
  done
done
sleep 12
"$B/bin/cudacap" status --root "$R" > $O/status.txt 2>&1
nvidia-smi --query-compute-apps=pid,used_memory --format=csv >> $O/status.txt
wait
cat $A/rate.* $C/rate.*
for x in A C; do d=${!x}; for i in 1 2; do grep -v "cost:" $d/err.$i | head -c 400000 > $O/err$x$i.txt; done; done
grep -h "refill" $A/err.* | tail -5; grep -h "refill" $C/err.* | tail -5
