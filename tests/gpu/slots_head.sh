#!/usr/bin/env bash
# The drained-stream rule for new shapes beside a pending probe (gate.c,
# stream_drained) on a real GPU, in one device call of under ten minutes:
#   the hole    PyTorch, cap 30: after a refill, 30 matmuls of 30 new shapes
#               (~40 ms each) queued without a sync (frameworks.py deepqnew),
#               twice, and once with the control library (cudacap_busy_slots:
#               the rule off); NVML over the first 1 and 2 s.
#   the costs   the same-shape deep queue (deepq), 16 new shapes pooled over
#               ROUNDS rounds at cap 50, the C generate (5 rounds), the decode
#               loop at caps 30 and 70 (graphs and eager).
# Usage, from the repository root: tests/gpu/slots_head.sh OUT_DIR
set -u
O=${1:-/tmp/slots_head}; mkdir -p "$O"; B=build-gpu
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
export PYTHONUNBUFFERED=1
echo "== slots_head $(date -u +%FT%TZ) rev ${REV:-$(git rev-parse --short HEAD 2>/dev/null)}"
echo "== $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader); $(nproc) cores"
cmake -S . -B $B -DCMAKE_BUILD_TYPE=Release > "$O/cmake.log" 2>&1 &&
  cmake --build $B -j"$(nproc)" --target cudacap cudacap_cli bench_step_latency cudacap_busy_slots > "$O/build.log" 2>&1 ||
  { tail -30 "$O/build.log"; exit 1; }
echo "== [$(el) s] built"
timeout -k 5 "${HOLE_S:-90}" env CONTROL_LIB="$PWD/$B/tests/cudacap_busy_slots/libcudacap.so" PARTS=deepqnew \
  tests/gpu/frameworks.sh $B "$O/h" || echo "deepqnew: rc $?"
echo "== [$(el) s] same-shape deep queue"
timeout -k 5 "${DEEPQ_S:-50}" env PARTS=deepq tests/gpu/frameworks.sh $B "$O/q" || echo "deepq: rc $?"
echo "== [$(el) s] shapes pooled"
timeout -k 5 "${SHAPES_S:-80}" env PARTS=shapes ROUNDS="${ROUNDS:-6}" tests/gpu/below_cap_pooled.sh $B "$O/z" || echo "shapes: rc $?"
echo "== [$(el) s] C generate"
timeout -k 5 "${GEN_S:-90}" env BENCH_ROUNDS=5 CUDACAP_LIB="$PWD/$B/lib/libcudacap.so" \
  $B/bench/bench_step_latency gen 2>&1 | grep -v "^round"
echo "== [$(el) s] decode at 30 and 70"
timeout -k 5 "${DECODE_S:-100}" env PARTS=decode SECS=3 CAPS="30 70" tests/gpu/pacing.sh $B "$O/x" || echo "decode: rc $?"
echo "== [$(el) s] done"
