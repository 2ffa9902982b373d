#!/usr/bin/env bash
# The main job on a machine without a GPU: three containers share one
# simulated GPU (build/sim), each run by `cudacap run` exactly as a container
# would be capped:
#   train     4 processes, SM cap 30 %   (one cap for the four together)
#   infer     1 process,   SM cap 50 %
#   notebook  1 process,   memory cap 4 GiB, allocates until the cap says no
# `cudacap top` shows them converge; a summary compares caps with what the
# simulator's NVML measured. About a minute on 2 cores, no GPU needed.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x build/bin/cudacap ] || [ ! -x build/tests/cudacap_demo_worker ] || [ "${DEMO_REBUILD:-1}" = 1 ]; then
  echo "== building (cmake, build/)"
  cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build -j"$(nproc)" --target cudacap_cli cudacap cudacap_demo_worker >/dev/null
fi
B=$PWD/build
W=$B/tests/cudacap_demo_worker
RUN_S=${DEMO_SECONDS:-30}      # how long the workers run
SETTLE_S=$((RUN_S / 3))        # measured after this many seconds
export LD_LIBRARY_PATH=$B/sim
export CUDACAP_SIM_DIR=$(mktemp -d /tmp/cudacap-demo-sim.XXXXXX)
export CUDACAP_ROOT=$(mktemp -d /tmp/cudacap-demo-root.XXXXXX)
export CUDACAP_SIM_MEM=16g CUDACAP_SIM_SMS=132 CUDACAP_LOG_LEVEL=0
LOGS=$(mktemp -d /tmp/cudacap-demo-logs.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$CUDACAP_SIM_DIR" "$CUDACAP_ROOT" "$LOGS"
}
trap cleanup EXIT

echo "== one simulated GPU (16 GiB, 132 SMs); containers under $CUDACAP_ROOT"
echo "   train:    cudacap run --sm 30 --name train -- (4 x worker spin)"
echo "   infer:    cudacap run --sm 50 --name infer -- worker spin"
echo "   notebook: cudacap run --mem 4g --name notebook -- worker alloc (256 MiB chunks)"
$B/bin/cudacap run --sm 30 --name train -- bash -c \
  "for i in 1 2 3 4; do $W spin --us 2000 --seconds $RUN_S & done; wait" >"$LOGS/train" 2>&1 &
pids+=($!)
$B/bin/cudacap run --sm 50 --name infer -- $W spin --us 2000 --seconds "$RUN_S" >"$LOGS/infer" 2>&1 &
pids+=($!)
$B/bin/cudacap run --mem 4g --name notebook -- $W alloc --chunk 256 --seconds "$RUN_S" \
  >"$LOGS/notebook" 2>&1 &
pids+=($!)

# Samples for the summary: the exposition every second, as a scraper sees it.
( for ((i = 0; i < RUN_S - 2; i++)); do
    echo "# t=$i"; $B/bin/cudacap metrics 2>/dev/null || true; sleep 1
  done ) >"$LOGS/metrics" &
pids+=($!)

sleep 1
if [ -t 1 ]; then
  $B/bin/cudacap top --brief --interval 1 --iterations $((RUN_S - 4))
else # a log, not a terminal: fewer frames
  $B/bin/cudacap top --brief --interval 5 --iterations $(((RUN_S - 4) / 5))
fi
wait "${pids[0]}" "${pids[1]}" "${pids[2]}" "${pids[3]}" 2>/dev/null || true

echo
echo "== what the programs said"
cat "$LOGS/train" "$LOGS/infer" "$LOGS/notebook" | sed 's/^/   /'
echo
echo "== summary (utilization: mean of the samples after ${SETTLE_S}s; memory: peak)"
awk -v settle="$SETTLE_S" '
  /^# t=/ { t = substr($2, 3) + 0; next }
  /^#/ { next }
  {
    if (!match($0, /cudacap_container="[^"]*"/)) next; c = substr($0, RSTART + 19, RLENGTH - 20)
    name = $0; sub(/\{.*/, "", name); v = $NF + 0
    seen[c] = 1
    if (name == "cudacap_sm_limit_ratio") smcap[c] = v * 100
    if (name == "cudacap_fb_limit_bytes") memcap[c] = v
    if (name == "cudacap_processes" && v > procs[c]) procs[c] = v
    if (name == "cudacap_fb_used_bytes" && v > peak[c]) peak[c] = v
    if (name == "cudacap_sm_utilization_ratio" && t >= settle) { sum[c] += v * 100; n[c]++ }
  }
  END {
    printf "   %-10s %6s %10s %12s %12s %14s %s\n", "CONTAINER", "PROCS", "SM CAP", "SM MEASURED",
           "MEM CAP", "MEM PEAK", "VERDICT"
    for (c in seen) {
      util = n[c] ? sum[c] / n[c] : -1
      verdict = "ok"
      if ((c in smcap) && (util < 0 || util > smcap[c] + 3)) verdict = "OVER THE CAP"
      if ((c in memcap) && (peak[c] > memcap[c])) verdict = "OVER THE CAP"
      printf "   %-10s %6d %10s %12s %12s %14s %s\n", c, procs[c],
             (c in smcap) ? sprintf("%.0f%%", smcap[c]) : "-",
             (util >= 0) ? sprintf("%.1f%%", util) : "-",
             (c in memcap) ? sprintf("%.2f GiB", memcap[c] / 2^30) : "-",
             (c in peak) ? sprintf("%.2f GiB", peak[c] / 2^30) : "-", verdict
    }
  }' "$LOGS/metrics" | sort
echo
echo "   SM MEASURED: the simulator's NVML per-process utilization summed over each"
echo "   container's processes, as its sampling process published it."
