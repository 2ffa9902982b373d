#!/usr/bin/env bash
# GPT-2 generate, bare and capped at the same time: one bare and one capped
# process started together, each pinned to its own two cores (swapped every
# pair), so both see the same machine at the same moment. Processes placed
# one after the other differed up to 2.1x bare against bare on the H200
# (docs/validation.md, 2026-12-02, "pacing, second step"). Each process
# prints the median of 5 generates (step_latency.py gpt2). At ~3 % device
# busy each, the two barely share the GPU. Usage, from the repository root:
#   tests/gpu/gpt2_pairs.sh BUILD_DIR [PAIRS] [CAP]
B=$1; N=${2:-6}; CAP=${3:-50}
LIB=$(cd "$B" && pwd)/lib/libcudacap.so; D=tests/gpu
for i in $(seq "$N"); do
  if [ $((i % 2)) = 1 ]; then cb=2,3; cc=6,7; else cb=6,7; cc=2,3; fi
  sb=$(mktemp -d); sc=$(mktemp -d)
  taskset -c $cb python3 $D/step_latency.py gpt2 48 $sb/res > $sb/log 2>&1 &
  pb=$!
  CUDACAP_STATE_DIR=$sc CUDACAP_SM_LIMIT=$CAP LD_PRELOAD=$LIB taskset -c $cc \
    python3 $D/step_latency.py gpt2 48 $sc/res > $sc/log 2>&1 &
  pc=$!
  wait $pb $pc
  read -r b _ < $sb/res; read -r c _ < $sc/res
  echo "pair $i (bare on $cb): bare $b capped $c ms/token, ratio $(python3 -c "print(round($c / $b, 3))")"
done
