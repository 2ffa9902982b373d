#!/usr/bin/env bash
# Where capped launches wait, and what the SM clock does under a cap, on a
# real GPU: each workload of step_latency.py once under a 50 % cap with
# CUDACAP_COUNT_CALLS=1 (the gate's counts at exit: new shapes, waits for a
# pending timing, timed launches, waits for tokens); then the decode loop
# (graphs) bare and at caps 50 and 30 with the SM clock and power sampled
# every 0.2 s by nvidia-smi. Usage, from the repository root:
#   tests/gpu/gate_diag.sh   (builds build-gpu itself)
export PYTHONUNBUFFERED=1; (cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCUDACAP_BUILD_TESTS=OFF >/dev/null && cmake --build build-gpu -j16 >/dev/null) || exit 1
L=$PWD/build-gpu/lib/libcudacap.so; P=tests/gpu/step_latency.py
cnt() { local S; S=$(mktemp -d); echo "== counts: $*"; CUDACAP_STATE_DIR=$S CUDACAP_SM_LIMIT=50 CUDACAP_COUNT_CALLS=1 LD_PRELOAD=$L timeout -k 5 120 python3 $P "$@" 2>&1 | grep -E "gate|calls cu(Launch|Graph)|^[0-9]"; }
cnt gpt2 48 /tmp/g1; cnt gpt2 48 /tmp/g2; cnt tokloop 3 /tmp/t1; cnt shapes /tmp/s1; cnt tiny 3 /tmp/y1
for cap in 0 50 30; do
  nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader,nounits -lms 200 > /tmp/clk$cap & K=$!
  S=$(mktemp -d)
  if [ $cap = 0 ]; then r=$(timeout 60 python3 $P decode graph 4 /tmp/d$cap 2>&1 | tail -1); else r=$(CUDACAP_STATE_DIR=$S CUDACAP_SM_LIMIT=$cap LD_PRELOAD=$L timeout 60 python3 $P decode graph 4 /tmp/d$cap 2>&1 | tail -1); fi
  kill $K; echo "== decode graph cap $cap: $r"
  awk -F', ' '$2>200 {n++; c+=$1; p+=$2} END {printf "   while busy (power > 200 W): %d samples, SM clock %.0f MHz, power %.0f W\n", n, c/n, p/n}' /tmp/clk$cap
  awk -F', ' '{n++; c+=$1; p+=$2} END {printf "   whole run: %d samples, SM clock %.0f MHz, power %.0f W\n", n, c/n, p/n}' /tmp/clk$cap
done
