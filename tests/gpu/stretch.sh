#!/usr/bin/env bash
# A contention signal for elastic caps, measured: a container's own kernel times when a
# neighbour's work starts beside it on a time-sliced GPU (tests/gpu/stretch.py).
# Usage: tests/gpu/stretch.sh BUILD_DIR OUT_DIR
# Scenarios (A: the container watched, B: a neighbour on 2 s, off 2 s from 3 s):
#   raw1   A one process of ~1.7 ms kernels, B one, no preload
#   raw3   A three processes, B one, no preload
#   short  A one process of ~10 us kernels, B one of 1.7 ms ones, no preload
#   capped A elastic 30/100 (three processes), B hard 50, under the preload
set -u
B=${1:-build}; O=${2:-/tmp/stretch}; mkdir -p "$O"
LIB=$(cd "$B" && pwd)/lib/libcudacap.so; D=$(cd "$(dirname "$0")" && pwd); S="python3 $D/stretch.py"
WARM=${WARM:-20}
export PYTHONUNBUFFERED=1
py() { python3 -c "print($1)"; }
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
for sc in ${SCEN:-raw1 raw3 short capped}; do
  R=$(mktemp -d "$O/$sc.XXXX"); T0=$(py "$(date +%s.%N) + $WARM"); E=$(py "$T0 + 11")
  na=1; ka=long; envA=(); envB=()
  [ $sc = raw3 ] && na=3
  [ $sc = short ] && ka=short
  if [ $sc = capped ]; then
    na=3
    envA=(CUDACAP_STATE_DIR="$R/a" CUDACAP_SM_LIMIT=30 CUDACAP_SM_SOFT_LIMIT=100 LD_PRELOAD="$LIB")
    envB=(CUDACAP_STATE_DIR="$R/b" CUDACAP_SM_LIMIT=50 LD_PRELOAD="$LIB")
    mkdir -p "$R/a" "$R/b"
  fi
  pids=()
  for k in $(seq $na); do
    env "${envA[@]}" $S work $ka "$T0" "$E" 0 "$R/a.w$k" > "$R/a.log$k" 2>&1 & pids+=($!)
  done
  env "${envB[@]}" $S work long "$(py "$T0 + 3")" "$E" 2 "$R/b.w1" > "$R/b.log1" 2>&1 & pids+=($!)
  wait "${pids[@]}"
  echo "== $sc: A ($na x $ka) kernel times, neighbour on at 3 s and 7 s, off at 5 s and 9 s"
  $S report "$(py "$T0 + 1")" "$(py "$T0 + 3")" "$(py "$T0 + 3")" "$(py "$T0 + 7")" -- "$R"/a.w*
  echo "   (and after the neighbour stops, relative to the same baseline)"
  $S report "$(py "$T0 + 1")" "$(py "$T0 + 3")" "$(py "$T0 + 5")" "$(py "$T0 + 9")" -- "$R"/a.w* | tail -2
  echo "   neighbour's own kernels (baseline: its first burst)"
  $S report "$(py "$T0 + 3")" "$(py "$T0 + 5")" "$(py "$T0 + 7")" -- "$R"/b.w1 | sed -n 1p
  tail -n 2 "$R"/a.log1 "$R"/b.log1 | grep -i error
done
