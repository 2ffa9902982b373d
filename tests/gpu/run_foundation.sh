#!/usr/bin/env bash
# On a real GPU: routing client, PyTorch under the preload, launch
# overhead. Run from the repository root on the GPU machine; writes logs to
# ${OUT:-/tmp/out}.
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
exec > >(tee "$OUT/foundation.log") 2>&1
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null && cmake --build build-gpu -j16 >/dev/null || { echo BUILD FAILED; exit 1; }
LIB=$PWD/build-gpu/lib/libcudacap.so

echo "== routing client against the real driver"
LD_PRELOAD=$LIB CUDACAP_COUNT_CALLS=1 CUDACAP_LOG_LEVEL=2 CUDACAP_STATE_DIR=/tmp/cc-route \
  build-gpu/tests/client_routing 2>&1 | grep -v ': calls ' | tail -20
echo "routing exit: ${PIPESTATUS[0]}"

echo "== PyTorch matmul, bare"
python3 tests/gpu/torch_matmul.py 300
echo "== PyTorch matmul, preloaded"
LD_PRELOAD=$LIB CUDACAP_COUNT_CALLS=1 CUDACAP_LOG_LEVEL=2 CUDACAP_STATE_DIR=/tmp/cc-torch \
  python3 tests/gpu/torch_matmul.py 300

echo "== launch overhead"
BENCH_SECONDS=1 build-gpu/bench/bench_launch_overhead 9
