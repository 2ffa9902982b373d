#!/usr/bin/env bash
# Function hops of a capped allocation and a capped launch: how many calls
# a steady-state cuMemAlloc_v2 / cuMemFree_v2 (memory cap) and
# cuLaunchKernel (compute cap 90 %) make inside libcudacap.so and out of
# it, counted by valgrind's callgrind on the simulator (bench/hops.py
# walks its call graph). Prints one block per wrapper; docs/design.md
# ("The walk") records the figures.
#   bench/hops.sh [BUILD_DIR]        (default build/; needs valgrind)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../build}" && pwd)
command -v valgrind >/dev/null || { echo "hops: valgrind is not installed" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export LD_LIBRARY_PATH=$build/sim
run() { # name env... -- program args...
  local name=$1; shift
  env "$@" CUDACAP_STATE_DIR="$out/state.$name" LD_PRELOAD="$build/lib/libcudacap.so" \
    valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$out/$name.%p" \
    "${prog[@]}" >/dev/null 2>"$out/$name.log" || { cat "$out/$name.log" >&2; exit 1; }
}
prog=("$build/bench/bench_alloc_overhead" --worker=1048576)
run alloc CUDACAP_MEM_LIMIT=4g
prog=("$build/bench/bench_launch_overhead" --worker)
run launch CUDACAP_SM_LIMIT=90 BENCH_SECONDS=1
# The main thread's profile (-01): the watcher's thread is another file.
/usr/bin/env python3 "$here/hops.py" "$(ls "$out"/alloc.*-01)" cuMemAlloc_v2 cuMemFree_v2
/usr/bin/env python3 "$here/hops.py" "$(ls "$out"/launch.*-01)" cuLaunchKernel
