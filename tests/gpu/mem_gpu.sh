#!/bin/sh
# Memory cap on a real GPU (issue 3 item 6). Usage: tests/gpu/mem_gpu.sh BUILD_DIR
# Needs python3 with torch, nvidia-smi. Exits non-zero on the first failure.
set -eu
B=${1:-build}; LIB=$(cd "$B" && pwd)/lib/libcudacap.so; D=$(dirname "$0")
ST=$(mktemp -d); export CUDACAP_STATE_DIR=$ST
run() { LD_PRELOAD=$LIB "$@"; }
echo "== 1. PyTorch to a 10 GiB cap"
CUDACAP_MEM_LIMIT=10g run python3 "$D/mem_torch.py" cap 10
echo "== 2. nvidia-smi under the preload shows 10 GiB"
T=$(CUDACAP_MEM_LIMIT=10g run nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits -i 0)
echo "memory.total = $T MiB"; [ "$T" -eq 10240 ]
echo "== 3. four processes share an 8 GiB cap (NVML per-process memory)"
rm -rf "$ST"/*
for i in 1 2 3 4; do CUDACAP_MEM_LIMIT=8g run python3 "$D/mem_torch.py" share 8 & done
# Sample NVML's per-process memory every 0.25 s while they run; keep the max.
SUM=0
while [ -n "$(jobs -r)" ]; do
  S=$(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits -i 0 |
      awk -F, '{s+=$2} END {print s+0}')
  [ "$S" -gt "$SUM" ] && SUM=$S
  sleep 0.25
done
wait
echo "max sum of per-process memory over the run: $SUM MiB (cap 8192)"; [ "$SUM" -le 8192 ]
echo "== 4. kill -9 gives the memory back"
rm -rf "$ST"/*
CUDACAP_MEM_LIMIT=8g run python3 "$D/mem_torch.py" hold 6 > "$ST/out" & P=$!
until grep -q READY "$ST/out"; do sleep 0.2; done
kill -9 $P; wait $P || true
CUDACAP_MEM_LIMIT=8g run python3 -c "
import torch; x = torch.empty(6 << 30, dtype=torch.uint8, device='cuda'); print('re-allocated 6 GiB: PASS')"
echo "== 5. alloc/free overhead"
"$B/bench/bench_alloc_overhead" 2097152 5
echo ALL PASS
