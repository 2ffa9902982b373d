#!/usr/bin/env bash
# Every launching and allocating entry point of cuda.h is intercepted
# (src/hook/hooks.def) or named below with the reason it needs no wrapper.
# The header is read through the C preprocessor twice (default and
# per-thread default stream), so the names are the exported, versioned ones
# (cuMemAlloc_v2, cuLaunchKernel_ptsz). A new toolkit that adds a member of
# these families fails here until it is hooked or exempted with a reason.
#   scripts/check_entry_points.sh CUDA_INCLUDE_DIR [EXTRA_HEADER]
# CUDA_INCLUDE_DIR: NVIDIA's toolkit headers where they are installed (ctest
# hooks.entry_points passes them when CMake finds them), else our
# declarations (include/cuda_decls, which reads include/cudacap/cuda_api.h:
# then only what cudacap declares is seen, so the check proves those hooked).
# EXTRA_HEADER (tests): more declarations, read after cuda.h.
set -euo pipefail
inc=${1:?usage: check_entry_points.sh CUDA_INCLUDE_DIR [EXTRA_HEADER]}
extra=${2:-}
root="$(cd "$(dirname "$0")/.." && pwd)"
cc=${CC:-cc}

families='^(cuLaunch|cuGraphLaunch|cuMemAlloc|cuMemHostAlloc|cuMemCreate|cuArray3?DCreate|cuMipmappedArrayCreate|cuMemPoolCreate|cuGraphAddMemAllocNode|cuGraphInstantiate|cuMemImport|cuMemPoolImport|cuIpcOpenMem|cuMulticastCreate)'
# name: reason (no wrapper needed)
exempt() {
  case "$1" in
    cuLaunchHostFunc|cuLaunchHostFunc_ptsz) echo "a host function: runs on the CPU, no device time" ;;
    cuMemAllocHost_v2|cuMemHostAlloc) echo "pinned host memory, not device memory" ;;
    cuMemImportFromShareableHandle|cuMemPoolImportPointer|cuIpcOpenMemHandle_v2)
      echo "maps memory another process allocated, charged where it was created" ;;
    cuMemPoolImportFromShareableHandle) echo "imports another process's pool; its allocations are charged there" ;;
    cuMulticastCreate) echo "a multicast object holds no memory: memory is bound to it from cuMemCreate, which is charged" ;;
    *) return 1 ;;
  esac
}

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
for d in "" -DCUDA_API_PER_THREAD_DEFAULT_STREAM; do
  { echo '#include <cuda.h>'; if [ -n "$extra" ]; then echo "#include \"$extra\""; fi; } |
    "$cc" -E $d -DCUDA_ENABLE_DEPRECATED -I"$inc" -x c -
done | grep -oE 'CUresult +(CUDAAPI +)?(cu[A-Za-z0-9_]+) *\(' | sed -E 's/CUresult +(CUDAAPI +)?//; s/ *\($//' |
  sort -u > "$tmp"

hooked=$(grep -oE '^CC_CU\(([A-Za-z0-9_]+)' "$root/src/hook/hooks.def" | sed 's/CC_CU(//')
n=0 bad=0
while read -r fn; do
  n=$((n + 1))
  if grep -qx "$fn" <<< "$hooked"; then continue; fi
  if why=$(exempt "$fn"); then continue; fi
  echo "check_entry_points: $fn launches or allocates and is not in src/hook/hooks.def (hook it, or add it to the exemptions in $0 with the reason)"
  bad=1
done < <(grep -E "$families" "$tmp")
[ $bad = 0 ] && echo "check_entry_points: $n launching/allocating entry points in cuda.h, each hooked or exempted with a reason"
[ "$n" -gt 20 ] || { echo "check_entry_points: only $n found: cannot read $inc/cuda.h?"; exit 1; }
exit $bad
