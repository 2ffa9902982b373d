#!/usr/bin/env bash
# "20 runs in a row under a concurrent load": clean clones of this
# checkout's HEAD, run .ci/run two at a time (each the other's load), one
# line per run appended to LOG (default /tmp/ci_repeat.log):
#   DATE COMMIT RUN rc=N SECONDS
#   scripts/ci_repeat.sh ROUNDS [LOG]      (2 runs per round)
set -u
rounds=${1:-1}; log=${2:-/tmp/ci_repeat.log}
src=$(cd "$(dirname "$0")/.." && pwd)
for r in $(seq "$rounds"); do
  pids=()
  for k in a b; do
    d=/tmp/ci-repeat-$k; rm -rf "$d"; git clone -q "$src" "$d"
    head=$(git -C "$d" rev-parse --short HEAD) # each round clones HEAD as it is then
    ( t0=$(date +%s); (cd "$d" && CI=true bash .ci/run > "$d.log" 2>&1); rc=$?
      echo "$(date -u +%FT%TZ) $head round $r/$k rc=$rc $(( $(date +%s) - t0 ))s" >> "$log" ) &
    pids+=($!)
  done
  wait "${pids[@]}"
done
