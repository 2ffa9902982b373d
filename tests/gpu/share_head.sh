#!/usr/bin/env bash
# Where the share of a deep queue of new shapes goes, and the decode loop's
# steps/s at the share's clock, on a real GPU in one device call:
#   deepqnew   PyTorch, cap 30: after a refill, QN matmuls of QN new shapes
#              (~35 ms each) queued without a sync (frameworks.py deepqnew),
#              bare once and capped three times, with the gate's counts
#              (CUDACAP_COUNT_CALLS: device time settled, debt forgiven) and
#              when each matmul ended, the region's share and bucket every
#              10 ms (TRACE=1); then capped with CUPTI's kernel records
#              (PROFILE=1), at 30 and at 60 matmuls; the same-shape deep
#              queue (deepq), traced.
#   clock      the graph decode loop bare at each cap's duty cycle against
#              capped (pacing.sh clock), CAPS="20 30 50 70 90".
#   decode     the step-latency table (pacing.sh decode, graphs and eager).
# PARTS picks among deepqnew, prof (CUPTI, 30 matmuls), prof60, deepq, clock
# and decode; all by default.
# Usage, from the repository root: [PARTS=...] tests/gpu/share_head.sh OUT_DIR
set -u
O=${1:-/tmp/share_head}; mkdir -p "$O"; B=build-gpu
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
export PYTHONUNBUFFERED=1
echo "== share_head $(date -u +%FT%TZ) rev ${REV:-$(git rev-parse --short HEAD 2>/dev/null)}"
echo "== $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader); $(nproc) cores"
cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release > "$O/cmake.log" 2>&1 &&
  cmake --build $B -j"$(nproc)" --target cudacap cudacap_cli > "$O/build.log" 2>&1 ||
  { tail -30 "$O/build.log"; exit 1; }
echo "== [$(el) s] built"
P=" ${PARTS:-deepqnew prof prof60 deepq clock decode} "; on() { [[ $P == *" $1 "* ]]; }
on deepqnew && { timeout -k 5 "${NEW_S:-120}" env PARTS=deepqnew NEW_RUNS="0 30 30 30" EXTRA_ENV="CUDACAP_COUNT_CALLS=1" TRACE=1 \
  tests/gpu/frameworks.sh $B "$O/n" || echo "deepqnew: rc $?"; }
echo "== [$(el) s] deepqnew with CUPTI"
on prof && { timeout -k 5 "${PROF_S:-90}" env PARTS=deepqnew NEW_RUNS="0 30" EXTRA_ENV="CUDACAP_COUNT_CALLS=1 PROFILE=1" \
  tests/gpu/frameworks.sh $B "$O/p" || echo "deepqnew profiled: rc $?"; }
on prof60 && { timeout -k 5 "${PROF_S:-90}" env PARTS=deepqnew NEW_RUNS="30" QN=60 EXTRA_ENV="CUDACAP_COUNT_CALLS=1 PROFILE=1" \
  tests/gpu/frameworks.sh $B "$O/p60" || echo "deepqnew 60 profiled: rc $?"; }
on deepq && { timeout -k 5 "${DEEPQ_S:-60}" env PARTS=deepq EXTRA_ENV="CUDACAP_COUNT_CALLS=1" TRACE=1 \
  tests/gpu/frameworks.sh $B "$O/q" || echo "deepq: rc $?"; }
echo "== [$(el) s] clock"
on clock && { timeout -k 5 "${CLOCK_S:-150}" env PARTS=clock SECS=3 CAPS="${CAPS:-20 30 50 70 90}" tests/gpu/pacing.sh $B "$O/c" || echo "clock: rc $?"; }
echo "== [$(el) s] decode"
on decode && { timeout -k 5 "${DECODE_S:-200}" env PARTS=decode SECS=3 tests/gpu/pacing.sh $B "$O/d" || echo "decode: rc $?"; }
echo "== [$(el) s] done"
