#!/usr/bin/env bash
# The main job on a machine without a GPU: programs run under cudacap on the
# GPU simulator (build/sim), showing that every route into the driver reaches
# cudacap and what a launch costs under it.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
export LD_LIBRARY_PATH=$PWD/build/sim
export CUDACAP_SIM_DIR=$(mktemp -d /tmp/cudacap-demo-sim.XXXXXX)
export CUDACAP_STATE_DIR=$(mktemp -d /tmp/cudacap-demo-state.XXXXXX)
trap 'rm -rf "$CUDACAP_SIM_DIR" "$CUDACAP_STATE_DIR"' EXIT

echo "== a driver-API program under cudacap: direct calls, dlsym and cuGetProcAddress"
LD_PRELOAD=$PWD/build/lib/libcudacap.so CUDACAP_COUNT_CALLS=1 build/tests/client_routing

echo
echo "== launch cost, bare vs under cudacap (simulator)"
BENCH_SECONDS=0.5 build/bench/bench_launch_overhead 3 2>/dev/null
