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
#   acc8       no GPU: the simulator's accuracy table at 8 processes, caps 10
#              and 30 (bench_compute_accuracy matrix), each worker's watcher
#              counts printed (CUDACAP_COUNT_CALLS), on all the host's cores
#              and again on two (taskset -c 0,1): on 16 cores the cells ran
#              +0.3..+1.1 points with NVML called 2.9-5 times a second, on
#              the 2-core CI machine -0.1 points at 10 (docs/validation.md,
#              2026-12-04 evening); the counts say which path skipped.
#   below      tests/gpu/below_cap.sh (launch latency below a 50 % cap, then
#              GPT-2 pairs while BELOW_S lasts).
#   counts     each decode mode 5 s at cap 30 with the library's exit counts
#              (CUDACAP_COUNT_CALLS: the watcher's learned NVML period and
#              lag, the gate's settled time).
#   fw         tests/gpu/frameworks.sh at cap 30 (capture, compile, JAX,
#              Triton, eager, the deep queue).
#   matrix4    four processes at cap 30 against one uncapped
#              (compute_matrix.sh, 1024² and 8192²).
#   gpt2cost   GPT-2 generate (step_latency.py gpt2, 5 timed generates of 48
#              tokens) at cap 50 with CUDACAP_COUNT_CALLS=1, RUNS (5) times,
#              each beside a bare run started after it, then RUNS times on
#              two cores (taskset -c 2,3) where the watcher shares them:
#              per run the share of the generates' wall time spent in the
#              gate (cudacap_gate_ns), whose complement bounds capped / bare
#              throughput from below, and the exit lines (gate host time,
#              the watcher's CPU).
# PARTS picks among deepqnew, prof (CUPTI, 30 matmuls), prof60, deepq, clock,
# decode, acc8, below, counts, fw, matrix4 and gpt2cost; the first six by
# default.
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
echo "== [$(el) s] acc8"
acc8() { # acc8 LABEL [taskset ...]: the 8-process cells, the watcher lines summed per cell
  local l=$1; shift
  "$@" env CUDACAP_COUNT_CALLS=1 BENCH_PROCS=8 BENCH_CAPS=10,30 LD_LIBRARY_PATH=build-acc/sim \
    timeout -k 5 "${ACC_S:-150}" build-acc/bench/bench_compute_accuracy matrix > "$O/acc8.$l.txt" 2>&1 ||
    echo "acc8 $l: rc $?"
  grep -E "^cap|procs|err|nvml" "$O/acc8.$l.txt" | grep -v "^cudacap" | head -20
  grep -c "watcher cycles" "$O/acc8.$l.txt" | sed "s/^/$l: watcher lines /"
  python3 - "$O/acc8.$l.txt" <<'PY'
import re, sys
keys = ["cycles", "owner", "quiet", "device-wide", "period read already", "per-process", "empty", "not due"]
tot = dict.fromkeys(keys, 0)
for m in re.finditer(r"watcher cycles (\d+) \(owner (\d+), quiet (\d+)\), NVML device-wide (\d+) \(period read "
                     r"already (\d+)\), per-process (\d+) \(empty (\d+), not due (\d+)\)", open(sys.argv[1]).read()):
    for k, v in zip(keys, m.groups()): tot[k] += int(v)
print("  summed over workers: " + ", ".join("%s %d" % kv for kv in tot.items()))
PY
}
on acc8 && {
  cmake -S . -B build-acc -DCMAKE_BUILD_TYPE=Release > "$O/acc-cmake.log" 2>&1 &&
    cmake --build build-acc -j"$(nproc)" --target bench_compute_accuracy sim_cuda sim_nvml cudacap > "$O/acc-build.log" 2>&1 ||
    { tail -20 "$O/acc-build.log"; }
  acc8 all; acc8 two taskset -c 0,1
}
echo "== [$(el) s] below"
on below && { timeout -k 5 "${BELOW_S:-300}" env BUDGET_S=$(( ${BELOW_S:-300} - 60 )) REPS=2 tests/gpu/below_cap.sh $B "$O/b" ||
  echo "below: rc $?"; }
echo "== [$(el) s] counts"
on counts && for m in graph eager; do
  st=$(mktemp -d); echo "== counts: decode $m at cap 30"
  CUDACAP_STATE_DIR=$st CUDACAP_SM_LIMIT=30 LD_PRELOAD=$PWD/$B/lib/libcudacap.so CUDACAP_COUNT_CALLS=1 \
    timeout 60 python3 tests/gpu/step_latency.py decode $m 5 "$st/r" > "$st/log" 2>&1
  grep -E "watcher|settled" "$st/log"; cat "$st/r"
done
echo "== [$(el) s] fw"
on fw && { timeout -k 5 "${FW_S:-200}" env PARTS="${FW_PARTS:-rules capture compile jax triton eager deepq}" SECS=5 N=5 REPLAY=3 CAPS=30 tests/gpu/frameworks.sh $B "$O/f" > "$O/fw.txt" 2>&1
  grep -v "^$" "$O/fw.txt" | tail -40; }
echo "== [$(el) s] matrix4"
on matrix4 && { timeout -k 5 "${MX_S:-150}" env MATRIX="0:1:1024 30:4:1024 0:1:8192 30:4:8192" PARTS=matrix WARM=3 \
  MEASURE=8 tests/gpu/compute_matrix.sh $B > "$O/mx.txt" 2>&1; tail -15 "$O/mx.txt"; }
echo "== [$(el) s] gpt2cost"
gpt2run() { # gpt2run LABEL CAP [taskset ...]: one process; its result line and exit lines
  local l=$1 c=$2 st; shift 2; st=$(mktemp -d)
  if [ "$c" = 0 ]; then "$@" timeout 120 python3 tests/gpu/step_latency.py gpt2 48 "$st/r" > "$st/log" 2>&1
  else CUDACAP_STATE_DIR=$st CUDACAP_SM_LIMIT=$c LD_PRELOAD=$PWD/$B/lib/libcudacap.so CUDACAP_COUNT_CALLS=1 \
    "$@" timeout 120 python3 tests/gpu/step_latency.py gpt2 48 "$st/r" > "$st/log" 2>&1; fi
  echo "$l: $(cat "$st/r" 2>/dev/null || tail -2 "$st/log") | $(grep -E '^gate:' "$st/log")"
  grep -oE "gate host time .*|cpu [0-9.]+ ms" "$st/log" | sed 's/^/    /'
}
on gpt2cost && { for i in $(seq "${RUNS:-5}"); do gpt2run "capped $i" 50; gpt2run "bare $i" 0; done
  for i in $(seq "${RUNS:-5}"); do gpt2run "capped on 2 cores $i" 50 taskset -c 2,3; done; }
echo "== [$(el) s] done"
