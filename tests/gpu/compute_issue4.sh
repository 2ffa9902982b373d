#!/usr/bin/env bash
# Issue 4 part 5 on a real GPU, in one call of under ten minutes: one and four
# PyTorch processes under caps of 30 % and 60 %, two kernel shapes (8192^2
# fp16 matmuls: few long blocks; 64 x 1024^2 batched: many short blocks),
# NVML device utilization mean and p90 over MEASURE s, throughput against
# uncapped; then the same with per-process buckets. Usage:
#   tests/gpu/compute_issue4.sh BUILD_DIR
set -u
B=${1:-build}; LIB=$(cd "$B" && pwd)/lib/libcudacap.so; D=$(cd "$(dirname "$0")" && pwd)
W=${WARM:-4}; M=${MEASURE:-20}; T=$((W + M + 2))
trap 'pkill -9 -f compute_torch.py 2>/dev/null' EXIT
scenario() { # label cap nprocs size [env...]
  l=$1 cap=$2 n=$3 sz=$4; shift 4; ST=$(mktemp -d); : > "$ST/pids.tmp"
  for i in $(seq 1 "$n"); do
    env "$@" CUDACAP_STATE_DIR="$ST" CUDACAP_SM_LIMIT="$cap" LD_PRELOAD="$LIB" \
      timeout $((T + 60)) python3 "$D/compute_torch.py" work "$T" "$sz" "$ST/rate.$i" &
  done
  sleep 0.5; pgrep -f "compute_torch.py work $T $sz $ST" > "$ST/pids"
  R=$(timeout $((T + 30)) python3 "$D/compute_torch.py" sample "$M" "$W" "$ST/pids" | tr '\n' ' ')
  wait
  TOT=$(cat "$ST"/rate.* 2>/dev/null | awk '{s+=$1} END {printf "%.1f", s}')
  echo "$l cap $cap procs $n size $sz: $R total_rate $TOT per_proc $(cat "$ST"/rate.* | tr '\n' ' ')"
}
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
if [ -n "${MATRIX:-}" ]; then  # e.g. MATRIX="30:4:8192 60:1:1024": cap:procs:size
  for c in $MATRIX; do IFS=: read -r cap n sz <<< "$c"; scenario shared "$cap" "$n" "$sz"; done
  exit 0
fi
for sz in 8192 1024; do scenario uncapped 0 1 $sz; done
for cap in 30 60; do for n in 1 4; do for sz in 8192 1024; do
  scenario shared "$cap" "$n" "$sz"
done; done; done
for cap in 30 60; do scenario per-process "$cap" 4 8192 CUDACAP_SHARED_BUCKET=0; done
