#!/bin/sh
# Compute cap on a real GPU (issue 4 part 5). Usage: tests/gpu/compute_gpu.sh BUILD_DIR
# Needs python3 with torch and pynvml (nvidia-ml-py). Prints utilization per
# scenario; the figures go to docs/validation.md. Pass/fail is by eye against
# the issue's bars (avg within +-2 pp of the cap, p90 <= cap + 5) -- a real
# GPU's NVML samples at 1/6..1 s, so this script reports, it does not judge.
set -eu
B=${1:-build}; LIB=$(cd "$B" && pwd)/lib/libcudacap.so; D=$(cd "$(dirname "$0")" && pwd)
W=${WARM:-5}; M=${MEASURE:-20}; T=$((W + M + 2))
work() { # state cap nprocs size [extra env]: starts workers, writes their pids
  st=$1 cap=$2 n=$3 sz=$4; shift 4; : > "$st/pids.tmp"
  for i in $(seq 1 "$n"); do
    env "$@" CUDACAP_STATE_DIR="$st" CUDACAP_SM_LIMIT="$cap" LD_PRELOAD="$LIB" \
      python3 "$D/compute_torch.py" work "$T" "$sz" "$st/rate.$i" &
    echo $! >> "$st/pids.tmp"
  done
  mv "$st/pids.tmp" "$st/pids"
}
scenario() { # label cap nprocs size [env...]
  l=$1 cap=$2 n=$3 sz=$4; shift 4; ST=$(mktemp -d)
  work "$ST" "$cap" "$n" "$sz" "$@"
  R=$(python3 "$D/compute_torch.py" sample "$M" "$W" "$ST/pids")
  wait; echo "$l cap $cap procs $n size $sz: $R rates $(cat "$ST"/rate.* | tr '\n' ' ')"
}
echo "== uncapped reference"
for sz in 8192 1024; do scenario uncapped 0 1 $sz; done
echo "== caps x processes x shapes (shared bucket)"
for n in 1 4 8; do for cap in 10 30 50 70; do for sz in 8192 1024; do
  scenario shared "$cap" "$n" "$sz"
done; done; done
echo "== baseline: per-process buckets (CUDACAP_SHARED_BUCKET=0), 4 processes"
for cap in 30 70; do scenario per-process "$cap" 4 8192 CUDACAP_SHARED_BUCKET=0; done
echo "== two containers on one device, caps 30 and 50"
A=$(mktemp -d); C=$(mktemp -d)
work "$A" 30 2 8192; work "$C" 50 2 8192
python3 "$D/compute_torch.py" sample "$M" "$W" "$A/pids" "$C/pids"; wait
echo "== long kernels (>= 50 ms), cap 30"
L=$(mktemp -d)
CUDACAP_STATE_DIR=$L CUDACAP_SM_LIMIT=30 LD_PRELOAD=$LIB \
  python3 "$D/compute_torch.py" long "$T" "$L/rate" & echo $! > "$L/pids"
python3 "$D/compute_torch.py" sample "$M" "$W" "$L/pids"; wait
