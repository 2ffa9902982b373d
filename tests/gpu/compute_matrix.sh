#!/usr/bin/env bash
# The compute cap's accuracy on a real GPU. One and four PyTorch processes under caps of
# 30 % and 60 %, two kernel shapes (8192^2 fp16 matmuls: few long blocks;
# 64 x 1024^2 batched: many short blocks), NVML device utilization mean and
# p90 over MEASURE s, throughput against uncapped; then the same with
# per-process buckets; then (PARTS=extra) two containers on one device and
# kernels of >= 50 ms. Usage:
#   tests/gpu/compute_matrix.sh BUILD_DIR
#   PARTS="matrix baseline extra" (default "matrix baseline"; each part is a
#   few minutes: one device call of under ten minutes holds about two)
#   MATRIX="cap:procs:size ..." runs just those cells.
# Needs python3 with torch and pynvml. It reports; the figures are judged in
# docs/validation.md against the issue's bars.
set -u
B=${1:-build}; LIB=$(cd "$B" && pwd)/lib/libcudacap.so; D=$(cd "$(dirname "$0")" && pwd)
W=${WARM:-4}; M=${MEASURE:-20}; T=$((W + M + 2))
trap 'pkill -9 -f compute_torch.py 2>/dev/null' EXIT
start() { # state cap nprocs mode(size|long) [env...]: workers in the background
  local st=$1 cap=$2 n=$3 what=$4; shift 4
  for i in $(seq 1 "$n"); do
    if [ "$what" = long ]; then args="long $T $st/rate.$i"; else args="work $T $what $st/rate.$i"; fi
    env "$@" CUDACAP_STATE_DIR="$st" CUDACAP_SM_LIMIT="$cap" LD_PRELOAD="$LIB" \
      timeout $((T + 60)) python3 "$D/compute_torch.py" $args &
  done
  sleep 0.5; pgrep -f "compute_torch.py (work|long) $T .*$st/rate" > "$st/pids"
}
report() { # label cap nprocs what state sample-result
  local l=$1 cap=$2 n=$3 what=$4 st=$5 r=$6 tot sh
  tot=$(cat "$st"/rate.* 2>/dev/null | awk '{s+=$1} END {printf "%.1f", s}')
  # The controller's share at the end, against nominal (cap x 100 ms): far
  # from 1 means the cost model is biased and the controller compensates.
  sh=$(python3 -c "import struct,sys; b=open(sys.argv[1],'rb').read(); print('%.2f' % (struct.unpack_from('<q', b, 80)[0] / ($cap * 1e6)))" "$st/compute.region" 2>/dev/null)
  echo "$l cap $cap procs $n size $what: $r total_rate $tot per_proc $(cat "$st"/rate.* | tr '\n' ' ') share/nominal ${sh:-?}"
}
scenario() { # label cap nprocs size [env...]
  local l=$1 cap=$2 n=$3 sz=$4 st r; shift 4; st=$(mktemp -d)
  start "$st" "$cap" "$n" "$sz" "$@"
  r=$(timeout $((T + 30)) python3 "$D/compute_torch.py" sample "$M" "$W" "$st/pids" | tr '\n' ' ')
  wait; report "$l" "$cap" "$n" "$sz" "$st" "$r"
}
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
if [ -n "${MATRIX:-}" ]; then  # e.g. MATRIX="30:4:8192 60:1:1024": cap:procs:size
  for c in $MATRIX; do IFS=: read -r cap n sz <<< "$c"; scenario shared "$cap" "$n" "$sz"; done
  exit 0
fi
for part in ${PARTS:-matrix baseline}; do case $part in
matrix)
  for sz in 8192 1024; do scenario uncapped 0 1 $sz; done
  for cap in 30 60; do for n in 1 4; do for sz in 8192 1024; do
    scenario shared "$cap" "$n" "$sz"
  done; done; done ;;
baseline)
  for cap in 30 60; do scenario per-process "$cap" 4 8192 CUDACAP_SHARED_BUCKET=0; done ;;
extra)
  # Two containers on one device, caps 30 and 50, two processes each: the
  # sampler reports one group per container (NVML per-process samples) and
  # the device as a whole (their sum).
  A=$(mktemp -d); C=$(mktemp -d)
  start "$A" 30 2 8192; start "$C" 50 2 8192
  r=$(timeout $((T + 30)) python3 "$D/compute_torch.py" sample "$M" "$W" "$A/pids" "$C/pids" | tr '\n' ' ')
  wait; report two-containers-A 30 2 8192 "$A" "$r"; report two-containers-B 50 2 8192 "$C" "-"
  # Kernels of >= 50 ms (one 32768^2 fp16 matmul each, ~100 ms on an H200:
  # 1 / the uncapped rate), cap 30, against the same uncapped.
  for cap in 0 30; do
    L=$(mktemp -d); start "$L" "$cap" 1 long
    r=$(timeout $((T + 30)) python3 "$D/compute_torch.py" sample "$M" "$W" "$L/pids" | tr '\n' ' ')
    wait; report long "$cap" 1 long "$L" "$r"
  done ;;
esac; done
