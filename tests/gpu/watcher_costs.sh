#!/usr/bin/env bash
# On a real GPU: the watcher's CPU (busy and idle, cap 30),
# the CPU cost of each NVML query it can make, and a refusal at the memory
# cap. Usage: tests/gpu/watcher_costs.sh BUILD_DIR (benchmarks built there).
set -u
B=$(cd "${1:-build}" && pwd); LIB=$B/lib/libcudacap.so
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
"$B/bench/bench_watcher_cost" nvml 200
for m in busy idle; do
  CUDACAP_STATE_DIR=$(mktemp -d) CUDACAP_SM_LIMIT=30 LD_PRELOAD=$LIB "$B/bench/bench_watcher_cost" watcher "${SECS:-10}" $m
done
CUDACAP_STATE_DIR=$(mktemp -d) CUDACAP_MEM_LIMIT=4g LD_PRELOAD=$LIB "$B/bench/bench_alloc_overhead" --refusal
CUDACAP_LIB=$LIB "$B/bench/bench_alloc_overhead" 2097152 3
