#!/usr/bin/env bash
# Memory cap on a real GPU. Usage: tests/gpu/mem_gpu.sh BUILD_DIR
# Needs python3 with torch, nvidia-smi. Runs every step, prints PASS/FAIL for
# each, and never leaves a process behind (every python runs under timeout).
set -u
B=${1:-build}; LIB=$(cd "$B" && pwd)/lib/libcudacap.so; D=$(dirname "$0")
ST=$(mktemp -d); export CUDACAP_STATE_DIR=$ST
# (Anchored: a caller whose own command line names mem_torch.py was killed too.)
trap 'pkill -9 -f "^python3 [^ ]*mem_torch.py" 2>/dev/null' EXIT
fails=0
ok() { if [ "$1" = 0 ]; then echo "PASS: $2"; else echo "FAIL: $2"; fails=$((fails+1)); fi; }
capped() { env LD_PRELOAD="$LIB" CUDACAP_MEM_LIMIT="$1" timeout 120 "${@:2}"; }

echo "== 1. PyTorch to a 10 GiB cap"
capped 10g python3 "$D/mem_torch.py" cap 10; ok $? "OOM at the cap, mem_get_info total 10 GiB"

echo "== 2. nvidia-smi under the preload shows 10 GiB"
T=$(capped 10g nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits -i 0)
echo "memory.total = $T MiB"; [ "$T" = 10240 ]; ok $? "nvidia-smi total"

echo "== 3. four processes share an 8 GiB cap (NVML per-process memory)"
rm -rf "${ST:?}"/*
pids=()
for i in 1 2 3 4; do capped 8g python3 "$D/mem_torch.py" share 8 & pids+=($!); done
SUM=0
while kill -0 "${pids[@]}" 2>/dev/null; do
  S=$(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits -i 0 |
      awk -F, '{s+=$2} END {print s+0}')
  [ "$S" -gt "$SUM" ] && SUM=$S
  sleep 0.25
done
wait
echo "max sum of per-process memory over the run: $SUM MiB (cap 8192)"
[ "$SUM" -gt 0 ] && [ "$SUM" -le 8192 ]; ok $? "four processes never pass 8 GiB together"

echo "== 4. kill -9 gives the memory back"
rm -rf "${ST:?}"/*
capped 8g python3 "$D/mem_torch.py" hold 6 > "$ST/out" & P=$!
for _ in $(seq 300); do grep -q READY "$ST/out" && break; sleep 0.2; done
HOLDER=$(pgrep -f '^python3 .*mem_torch.py hold' | head -1)
echo "holder pid $HOLDER"; kill -9 "$HOLDER"; wait $P 2>/dev/null
capped 8g python3 -c "
import torch; x = torch.empty(6 << 30, dtype=torch.uint8, device='cuda'); print('re-allocated 6 GiB')"
ok $? "memory of a killed process comes back"

echo "== 5. alloc/free overhead"
timeout 120 "$B/bench/bench_alloc_overhead" 2097152 5
echo "failures: $fails"
