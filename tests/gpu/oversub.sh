#!/usr/bin/env bash
# Oversubscription on a real GPU (docs/memory.md, "Oversubscription"):
# PyTorch under a 4 GiB device cap with 4 GiB beyond it in host memory.
#   1. allocates about 7.5 GiB (256 MiB blocks, each written) while
#      nvidia-smi's device memory.used, sampled every 0.2 s by a process
#      that is not preloaded, stays within 4 GiB of its value before;
#      and the seed's CUDA_MEM_LIMIT_0=8g CUDA_MEM_RATIO_0=2 the same
#   2. a matrix product of tensors beyond the cap (managed, host-resident)
#      agrees with the same product on device copies; both throughputs
#   3. one training step that fits only with the oversubscription: runs
#      with it, OOM without it (the control)
# Usage, from the repository root: tests/gpu/oversub.sh BUILD_DIR
# Needs python3 with torch, nvidia-smi, an otherwise idle GPU 0 (memory.used
# is the device's). Every python runs under timeout; PASS/FAIL per step.
set -u
B=${1:-build}; LIB=$(cd "$B" && pwd)/lib/libcudacap.so; D=$(dirname "$0")
ST=$(mktemp -d); export CUDACAP_STATE_DIR=$ST
trap 'rm -rf "$ST"' EXIT # every python runs under timeout: nothing outlives the script
fails=0
ok() { if [ "$1" = 0 ]; then echo "PASS: $2"; else echo "FAIL: $2"; fails=$((fails+1)); fi; }
over() { env LD_PRELOAD="$LIB" CUDACAP_MEM_LIMIT=4g CUDACAP_MEM_OVERSUBSCRIBE=4g timeout 300 "$@"; }
smi_used() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 0; }
echo "== oversub $(date -u +%FT%TZ) rev $(git rev-parse --short HEAD 2>/dev/null)"
echo "== $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader -i 0)"

# sample_during CMD...: runs CMD, prints the highest memory.used minus the
# value before, in MiB, as "PEAK n"
sample_during() {
  local base peak=0 u; base=$(smi_used)
  "$@" & local p=$!
  while kill -0 $p 2>/dev/null; do
    u=$(smi_used); [ "$u" -gt "$peak" ] && peak=$u; sleep 0.2
  done
  wait $p; local rc=$?
  echo "device memory.used: $base MiB before, highest $peak MiB (+$((peak - base)) MiB)"
  echo "PEAK $((peak - base))"; return $rc
}
# peak_ok OUTPUT WHAT: the PEAK line of sample_during's OUTPUT within 4 GiB
peak_ok() {
  local p; p=$(echo "$1" | awk '/^PEAK/ {print $2}')
  [ -n "$p" ] && [ "$p" -le 4096 ]; ok $? "$2: device usage within 4 GiB (+$p MiB)"
}

echo "== 1. about 7.5 GiB under 4 GiB + 4 GiB"
rm -rf "${ST:?}"/*
out=$(sample_during over python3 "$D/oversub_torch.py" alloc 8); rc=$?; echo "$out"
ok $rc "allocated about 7.5 GiB, contents intact"
peak_ok "$out" "4 GiB + 4 GiB"
echo "-- the seed's names: CUDA_MEM_LIMIT_0=8g CUDA_MEM_RATIO_0=2"
rm -rf "${ST:?}"/*
out=$(sample_during env LD_PRELOAD="$LIB" CUDA_MEM_LIMIT_0=8g CUDA_MEM_RATIO_0=2 timeout 300 \
      python3 "$D/oversub_torch.py" alloc 8); rc=$?; echo "$out"
ok $rc "seed ratio: about 7.5 GiB"
peak_ok "$out" "seed ratio"
echo "   (the seed system itself: 7.25 GiB allocated, 3.76 GiB of it on the device; H200, 2026-12-02)"

echo "== 2. matmul over tensors beyond the cap"
rm -rf "${ST:?}"/*
over python3 "$D/oversub_torch.py" matmul 8192; ok $? "product beyond the cap agrees with the device's"

echo "== 3. a training step that fits only with oversubscription"
rm -rf "${ST:?}"/*
env LD_PRELOAD="$LIB" CUDACAP_MEM_LIMIT=4g timeout 300 python3 "$D/oversub_torch.py" train 8192
[ $? = 3 ]; ok $? "control: 4 GiB alone runs out of memory"
rm -rf "${ST:?}"/*
out=$(sample_during over python3 "$D/oversub_torch.py" train 8192); rc=$?; echo "$out"
ok $rc "the step completes with 4 GiB + 4 GiB"
peak_ok "$out" "training"

echo "== $fails failure(s)"
[ "$fails" = 0 ]
