#!/usr/bin/env bash
# The device record and the memory policy moved into src/cap (2026-12-03)
# on a real GPU: nothing may move. The framework regression of
# tests/gpu/frameworks.sh (CUDA graphs, torch.compile, Triton, JAX, eager, a deep
# queue, all at cap 30) and the memory cap under PyTorch's three allocator
# back-ends (the native caching allocator, expandable segments: VMM,
# cudaMallocAsync: pools), each filled to a 4 GiB cap. Usage:
#   tests/gpu/frameworks_alloc.sh BUILD_DIR OUT_DIR
# Prints figures; docs/validation.md judges them against the earlier runs.
set -u
B=${1:-build}; O=${2:-/tmp/frameworks_alloc}; mkdir -p "$O"
LIB=$(cd "$B" && pwd)/lib/libcudacap.so; D=$(cd "$(dirname "$0")" && pwd)
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
for conf in "" "expandable_segments:True" "backend:cudaMallocAsync"; do
  st=$(mktemp -d)
  out=$(env PYTORCH_CUDA_ALLOC_CONF="$conf" CUDACAP_STATE_DIR="$st" CUDACAP_MEM_LIMIT=4g \
        LD_PRELOAD="$LIB" timeout 120 python3 "$D/mem_torch.py" cap 4 2>&1)
  echo "== memory, allocator '${conf:-native}': rc $? $(echo "$out" | grep -E 'OOM after|NVML per-process|PASS|Error' | tr '\n' ' ')"
done
SECS=${SECS:-12} N=${N:-30} REPLAY=${REPLAY:-10} CAPS=${CAPS:-30} \
  PARTS=${PARTS:-capture compile triton jax eager deepq} bash "$D/frameworks.sh" "$B" "$O"
