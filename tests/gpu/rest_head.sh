#!/usr/bin/env bash
# The rest of a device call beside share_head.sh: each decode mode once at
# cap 30 with the library's exit counts (CUDACAP_COUNT_CALLS: the watcher's
# learned NVML period and lag, the gate's settled time), then the frameworks
# at cap 30 and four processes at cap 30 (compute_matrix.sh). Its own
# script: a command line that names the Python client would be killed by
# pacing.sh's `pkill -f`. Usage, from the repository root, after
# share_head.sh built build-gpu: tests/gpu/rest_head.sh OUT_DIR
set -u
O=${1:-/tmp/rest_head}; mkdir -p "$O"; L=$PWD/build-gpu/lib/libcudacap.so
for m in graph eager; do
  st=$(mktemp -d); echo "== counts: decode $m at cap 30"
  CUDACAP_STATE_DIR=$st CUDACAP_SM_LIMIT=30 LD_PRELOAD=$L CUDACAP_COUNT_CALLS=1 timeout 60 \
    python3 tests/gpu/step_latency.py decode $m 5 "$st/r" > "$st/log" 2>&1
  grep -E "watcher|settled" "$st/log"; cat "$st/r"
done
echo "== frameworks"
timeout -k 5 "${FW_S:-200}" env SECS=5 N=5 REPLAY=3 CAPS=30 tests/gpu/frameworks.sh build-gpu "$O/f" > "$O/fw.txt" 2>&1
grep -v "^$" "$O/fw.txt" | tail -40
echo "== matrix"
timeout -k 5 "${MX_S:-150}" env MATRIX="0:1:1024 30:4:1024 0:1:8192 30:4:8192" PARTS=matrix WARM=3 MEASURE=8 \
  tests/gpu/compute_matrix.sh build-gpu > "$O/mx.txt" 2>&1
tail -15 "$O/mx.txt"
