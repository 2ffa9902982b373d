#!/usr/bin/env bash
# GPT-2 generate, bare and capped at the same time: one bare and one capped
# process started together, each pinned to its own two cores (swapped every
# pair), so both see the same machine at the same moment. Processes placed
# one after the other differed up to 2.1x bare against bare on the H200
# (docs/validation.md, 2026-12-02, "pacing, second step"). Each process
# prints the median of 5 generates (step_latency.py gpt2). At ~3 % device
# busy each, the two barely share the GPU. Usage, from the repository root:
#   tests/gpu/gpt2_pairs.sh BUILD_DIR [PAIRS] [CAP]
#   CONTROL=1: both processes of a pair bare (the same pinning swap), the
#     second in the capped one's place: the ratio bare/bare that a capped
#     pair's ratio must be told apart from.
#   NOASLR=1: every worker under `setarch $(uname -m) -R` (address-space
#     layout randomization off), to see whether layout is what makes
#     processes differ.
#   FIRST=K: number the pairs from K (the pinning swaps by the number's
#     parity), so that several calls continue one sequence.
#   CORES_A=2,3 CORES_B=6,7: the two core sets (several lanes of pairs can
#     then run at once on disjoint cores: tests/gpu/below_cap.sh).
#   STAT=min: compare each process's fastest generate instead of its median
#     (with GPT2_GENS=15, say): interference from the machine only ever
#     slows a generate, so the fastest of many is what the process itself
#     costs.
# One line a pair: "pair I (bare on CORES): bare X capped Y ms/token, ratio Y/X"
# (CONTROL=1: "... bare X bare-b Y ..."), or "pair I FAILED: ...".
B=$1; N=${2:-6}; CAP=${3:-50}; FIRST=${FIRST:-1}
LIB=$(cd "$B" && pwd)/lib/libcudacap.so; D=tests/gpu
NA=(); [ "${NOASLR:-0}" = 1 ] && NA=(setarch "$(uname -m)" -R)
for i in $(seq "$FIRST" $((FIRST + N - 1))); do
  A=${CORES_A:-2,3}; Z=${CORES_B:-6,7}
  if [ $((i % 2)) = 1 ]; then cb=$A; cc=$Z; else cb=$Z; cc=$A; fi
  sb=$(mktemp -d); sc=$(mktemp -d)
  taskset -c $cb "${NA[@]}" python3 $D/step_latency.py gpt2 48 $sb/res > $sb/log 2>&1 &
  pb=$!
  if [ "${CONTROL:-0}" = 1 ]; then
    taskset -c $cc "${NA[@]}" python3 $D/step_latency.py gpt2 48 $sc/res > $sc/log 2>&1 &
  else
    CUDACAP_STATE_DIR=$sc CUDACAP_SM_LIMIT=$CAP LD_PRELOAD=$LIB taskset -c $cc "${NA[@]}" \
      python3 $D/step_latency.py gpt2 48 $sc/res > $sc/log 2>&1 &
  fi
  pc=$!
  wait $pb $pc
  if [ ! -s $sb/res ] || [ ! -s $sc/res ]; then
    echo "pair $i FAILED: $(tail -1 $sb/log) | $(tail -1 $sc/log)"; continue
  fi
  if [ "${STAT:-median}" = min ]; then read -r _ b _ < $sb/res; read -r _ c _ < $sc/res
  else read -r b _ < $sb/res; read -r c _ < $sc/res; fi
  if [ "${CONTROL:-0}" = 1 ]; then what="bare $b bare-b $c"; else what="bare $b capped $c"; fi
  echo "pair $i (bare on $cb): $what ms/token, ratio $(python3 -c "print(round($c / $b, 3))")"
  [ "${STAT:-median}" = min ] && echo "  each generate: $(tr '\n' ' ' < $sb/res.raw)| $(tr '\n' ' ' < $sc/res.raw)"
done
