#!/usr/bin/env bash
# Our declarations of the CUDA driver API (include/cudacap/cuda_api.h, its
# lists in cuda_api_types.h and cuda_api_functions.h beside it)
# against NVIDIA's cuda.h: tests/cuda_api_check.c, built beside NVIDIA's
# header and linked with tests/cuda_api_own.c (built beside ours), in each
# of cuda.h's modes: plain, CUDA_API_PER_THREAD_DEFAULT_STREAM, and
# __CUDA_API_VERSION_INTERNAL (the simulator's). Types, values and layouts
# are compared at compile time, what each name expands to and the constants
# when the program runs. Also: every CUDA name our header #defines is named
# in one of its lists (so the check compares it).
#   scripts/check_cuda_api.sh CUDA_INCLUDE_DIR [CONTROL]
# Exit 77 (skipped) where CUDA_INCLUDE_DIR holds no cuda.h.
# CONTROL (the negative controls: function, value, layout or names) builds
# one wrong entry in (CC_CUDA_API_CONTROL_<CONTROL>): the check must refuse it
# with that entry's message, and then this exits 1; it exits 0 (so the
# WILL_FAIL test fails) when the check passed or failed for another reason.
set -euo pipefail
inc=${1:?usage: check_cuda_api.sh CUDA_INCLUDE_DIR [function|value|layout|names]}
control=${2:-}
root="$(cd "$(dirname "$0")/.." && pwd)"
cc=${CC:-cc}
hdr="$root/include/cudacap/cuda_api.h"
lists=("$root/include/cudacap/cuda_api_types.h" "$root/include/cudacap/cuda_api_functions.h")
if [ ! -f "$inc/cuda.h" ]; then
  echo "check_cuda_api: no cuda.h in $inc (NVIDIA's CUDA toolkit): skipped"
  exit 77
fi
def=() expect=""
case "$control" in
  "") ;;
  function) def=(-DCC_CUDA_API_CONTROL_FUNCTION) expect="prototype of cuMemAlloc_v2" ;;
  value) def=(-DCC_CUDA_API_CONTROL_VALUE) expect="value of CUDA_ERROR_OUT_OF_MEMORY" ;;
  layout) def=(-DCC_CUDA_API_CONTROL_LAYOUT) expect="size of CUmemLocation_v1" ;;
  names) def=(-DCC_CUDA_API_CONTROL_NAMES) expect="cuMemAlloc expands to cuMemAlloc_v3" ;;
  *) echo "check_cuda_api: unknown control '$control'" >&2; exit 2 ;;
esac

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() {
  # Every CUDA name the header #defines (cuX, CU_X, CUDA_X) is in a list.
  local listed bad=0
  listed=$(grep -hoE '^ +[FVD]\((CUresult, )?[A-Za-z0-9_]+' "$hdr" "${lists[@]}" | sed -E 's/^ +[FVD]\((CUresult, )?//')
  for n in $(grep -oE '^#define (cu[A-Z][A-Za-z0-9_]*|CU_[A-Z0-9_]*|CUDA_[A-Z0-9_]*)\b' "$hdr" | awk '{print $2}'); do
    grep -qx "$n" <<< "$listed" || { echo "check_cuda_api: $hdr defines $n but no list names it (add it to CC_CUDA_VERSIONED or CC_CUDA_CONSTANTS)"; bad=1; }
  done
  [ $bad = 0 ] || return 1
  local flags=(-std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE -I"$root/include" -I"$root/tests")
  for mode in plain per_thread internal; do
    case $mode in
      plain) m=() ;;
      per_thread) m=(-DCUDA_API_PER_THREAD_DEFAULT_STREAM) ;;
      internal) m=(-D__CUDA_API_VERSION_INTERNAL -D__CUDA_API_VERSION_INTERNAL_ODR) ;;
    esac
    # (each step || return: run is called where set -e does not apply)
    "$cc" "${flags[@]}" "${m[@]}" "${def[@]}" -I"$inc" -c "$root/tests/cuda_api_check.c" -o "$tmp/nv.o" || return 1
    "$cc" "${flags[@]}" "${m[@]}" "${def[@]}" -c "$root/tests/cuda_api_own.c" -o "$tmp/own.o" || return 1
    "$cc" -o "$tmp/check" "$tmp/nv.o" "$tmp/own.o" || return 1
    "$tmp/check" || return 1
  done
}
if [ -z "$control" ]; then
  run
  exit
fi
rc=0
run > "$tmp/log" 2>&1 || rc=$?
cat "$tmp/log"
if [ $rc != 0 ] && grep -q "$expect" "$tmp/log"; then
  echo "check_cuda_api: control $control refused as it must be ($expect)"
  exit 1
fi
echo "check_cuda_api: control $control was not refused for '$expect' (exit $rc)"
exit 0
