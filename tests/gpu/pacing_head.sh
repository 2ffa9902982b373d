#!/usr/bin/env bash
# The pacing figures of docs/compute.md at one commit, on a real GPU, in two
# device calls of under ten minutes each, every part bounded in time:
#   CALL=1  the launch-bound generate in C (bench_step_latency gen: GPT-2's
#           launch pattern with its host work a fixed busy wait, bare and
#           capped at 50 in rounds), the decode table at caps 20-90 (graphs
#           and eager), 16 new shapes pooled over 10 rounds and empty kernels
#           with a sync (tiny), GPT-2 generate in 5 pairs at cap 50.
#   CALL=2  the frameworks at cap 30 (capture, torch.compile, JAX, Triton,
#           eager, the deep queue), four processes at cap 30, GPT-2's
#           bare-against-bare control pairs, the C generate again and its
#           bare-against-bare control.
# Usage, from the repository root: CALL=1 tests/gpu/pacing_head.sh OUT_DIR
# Builds build-gpu (Release, with the benchmarks) itself.
set -u
O=${1:-/tmp/pacing_head}; mkdir -p "$O"; B=build-gpu
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
export PYTHONUNBUFFERED=1
echo "== pacing_head CALL=${CALL:-1} $(date -u +%FT%TZ) rev ${REV:-$(git rev-parse --short HEAD 2>/dev/null)}"
echo "== $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader); $(nproc) cores"
cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release > "$O/cmake.log" 2>&1 &&
  cmake --build $B -j"$(nproc)" --target cudacap cudacap_cli bench_step_latency > "$O/build.log" 2>&1 ||
  { tail -30 "$O/build.log"; exit 1; }
echo "== [$(el) s] built"
gen() { # the generate in C, ROUNDS rounds
  echo "== [$(el) s] C generate"
  timeout -k 5 "${GEN_S:-90}" env BENCH_ROUNDS="${1:-5}" BENCH_GEN_CONTROL="${2:-0}" CUDACAP_LIB="$PWD/$B/lib/libcudacap.so" \
    $B/bench/bench_step_latency gen 2>&1 | grep -v "^round"
}
case ${CALL:-1} in
1)
  gen 5
  echo "== [$(el) s] decode table"
  timeout -k 5 "${DECODE_S:-170}" env PARTS=decode SECS=3 tests/gpu/pacing.sh $B "$O/x" || echo "decode: rc $?"
  echo "== [$(el) s] tiny"
  timeout -k 5 60 env PARTS=tiny tests/gpu/pacing.sh $B "$O/y" || echo "tiny: rc $?"
  echo "== [$(el) s] shapes pooled"
  timeout -k 5 "${SHAPES_S:-100}" env PARTS=shapes ROUNDS=10 tests/gpu/below_cap_pooled.sh $B "$O/z" || echo "shapes: rc $?"
  echo "== [$(el) s] GPT-2 pairs at cap 50"
  timeout -k 5 "${GPT2_S:-130}" tests/gpu/gpt2_pairs.sh $B 5 50 || echo "gpt2: rc $?"
  ;;
2)
  echo "== [$(el) s] frameworks at cap 30"
  timeout -k 5 "${FW_S:-200}" env SECS=6 N=5 REPLAY=3 CAPS=30 tests/gpu/frameworks.sh $B "$O/f" || echo "frameworks: rc $?"
  echo "== [$(el) s] four processes at cap 30"
  timeout -k 5 "${FOUR_S:-150}" env MATRIX="0:1:1024 0:1:8192 30:4:1024 30:4:8192" PARTS=matrix WARM=3 MEASURE=10 \
    tests/gpu/compute_matrix.sh $B || echo "four: rc $?"
  echo "== [$(el) s] GPT-2 control pairs"
  timeout -k 5 "${GPT2_S:-130}" env CONTROL=1 tests/gpu/gpt2_pairs.sh $B 5 50 || echo "gpt2 control: rc $?"
  gen 3; gen 3 1
  ;;
esac
echo "== [$(el) s] done"
