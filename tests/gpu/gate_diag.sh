#!/usr/bin/env bash
# Where capped launches wait, and what the SM clock does under a cap, on a
# real GPU: each workload of step_latency.py under a 50 % cap with
# CUDACAP_COUNT_CALLS=1 (the gate's counts at exit: new shapes, waits for a
# pending timing, timed launches, waits for tokens), with each library of
# VARIANTS; then the decode loop (graphs) bare and at caps 50 and 30 with the
# SM clock and power sampled every 0.2 s by nvidia-smi. Usage, from the
# repository root (builds the variants itself):
#   tests/gpu/gate_diag.sh
#   VARIANTS="build-gpu: build-old:-DCC_COST_SAMPLE_IDLE_NS=25000000"
#     (folder:C flags; the first is the one the decode loop uses)
#   PARTS="counts clocks" RUNS=2 (GPT-2 runs per variant)
export PYTHONUNBUFFERED=1
VARIANTS=${VARIANTS:-build-gpu:}
for v in $VARIANTS; do
  (cmake -S . -B "${v%%:*}" -DCMAKE_BUILD_TYPE=Release -DCUDACAP_BUILD_TESTS=OFF -DCMAKE_C_FLAGS="${v#*:}" >/dev/null &&
   cmake --build "${v%%:*}" -j16 >/dev/null) || exit 1
done
P=tests/gpu/step_latency.py
cnt() { # cnt BUILD ARGS...
  local S L=$PWD/$1/lib/libcudacap.so; shift; S=$(mktemp -d); echo "== $L: $*"
  CUDACAP_STATE_DIR=$S CUDACAP_SM_LIMIT=50 CUDACAP_COUNT_CALLS=1 LD_PRELOAD=$L timeout -k 5 120 \
    python3 $P "$@" 2>&1 | grep -E "gate|calls cu(Launch|Graph)|^[0-9]"; rm -rf "$S"; }
B0=${VARIANTS%%:*}
case " ${PARTS:-counts clocks} " in *" counts "*)
  for i in $(seq "${RUNS:-2}"); do for v in $VARIANTS; do cnt "${v%%:*}" gpt2 48 /tmp/g; done; done
  for v in $VARIANTS; do cnt "${v%%:*}" tokloop 3 /tmp/t; cnt "${v%%:*}" shapes /tmp/s; cnt "${v%%:*}" tiny 3 /tmp/y; done ;;
esac
case " ${PARTS:-counts clocks} " in *" clocks "*)
L=$PWD/$B0/lib/libcudacap.so
for cap in 0 50 30; do
  nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader,nounits -lms 200 > /tmp/clk$cap & K=$!
  S=$(mktemp -d)
  if [ $cap = 0 ]; then r=$(timeout 60 python3 $P decode graph 4 /tmp/d$cap 2>&1 | tail -1)
  else r=$(CUDACAP_STATE_DIR=$S CUDACAP_SM_LIMIT=$cap LD_PRELOAD=$L timeout 60 python3 $P decode graph 4 /tmp/d$cap 2>&1 | tail -1); fi
  kill $K; echo "== decode graph cap $cap: $r"
  awk -F', ' '$2>200 {n++; c+=$1; p+=$2} END {if (n) printf "   while busy (power > 200 W): %d samples, SM clock %.0f MHz, power %.0f W\n", n, c/n, p/n}' /tmp/clk$cap
  awk -F', ' '{n++; c+=$1; p+=$2} END {printf "   whole run: %d samples, SM clock %.0f MHz, power %.0f W\n", n, c/n, p/n}' /tmp/clk$cap
done
;;
esac
