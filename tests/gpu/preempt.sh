#!/usr/bin/env bash
# On a real GPU: a hard cap held by the cost model alone (the library's NVML
# off: CUDACAP_TEST_FAULT=nvml_open:1:sticky, so the controller cannot
# correct the model) while every core of the host is busy (HOGS CPU-bound
# shells, default 2 x nproc), so the launching thread is preempted, now and
# then after the driver has queued its kernel. The decode loop (pacing.sh
# decode, graphs and eager) at CAPS (50), bare in the same conditions, with
# the library and with its control build that takes a timed launch's host
# gap to the launch's return however slow the call
# (CC_TEST_GAP_TO_RETURN: cudacap_gap_to_return; src/cap/compute/cost.c,
# known_gap). Then the same without hogs. Usage, from the repository root:
#   [LOADS="busy idle"] [CAPS=50] [SECS=4] tests/gpu/preempt.sh BUILD_DIR OUT_DIR
#   (BUILD_DIR configured and built)
set -u
B=$1; O=${2:-/tmp/preempt}; mkdir -p "$O"; D=$(cd "$(dirname "$0")" && pwd)
cmake --build "$B" -j"$(nproc)" --target cudacap_gap_to_return > "$O/build_ctl.log" 2>&1 ||
  { tail -20 "$O/build_ctl.log"; exit 1; }
FIX=$(cd "$B" && pwd)/lib/libcudacap.so; CTL=$(cd "$B" && pwd)/tests/cudacap_gap_to_return/libcudacap.so
hogs=(); trap 'kill "${hogs[@]}" 2>/dev/null' EXIT
for load in ${LOADS:-busy idle}; do
  if [ $load = busy ]; then
    for _ in $(seq "${HOGS:-$((2 * $(nproc)))}"); do bash -c 'while :; do :; done' & hogs+=($!); done
  else
    kill "${hogs[@]}" 2>/dev/null; hogs=()
  fi
  for lib in fix control; do
    l=$FIX; [ $lib = control ] && l=$CTL
    echo "== $load host ($(cat /proc/loadavg | cut -d' ' -f1-3)), library: $lib"
    LIB=$l EXTRA_ENV="CUDACAP_TEST_FAULT=nvml_open:1:sticky" PARTS=decode CAPS="${CAPS:-50}" SECS=${SECS:-4} \
      "$D/pacing.sh" "$B" "$O/$load.$lib" | grep -E "^==|^\| [0-9]"
  done
done
