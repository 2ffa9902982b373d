#!/usr/bin/env bash
# On a real GPU: the driver's capture rules (sim/tests/test_capture.c
# built against the real libcuda), then real clients under the compute cap
# with NVML sampled beside them (tests/gpu/frameworks.py). Usage:
#   tests/gpu/frameworks.sh BUILD_DIR OUT_DIR
#   PARTS="rules capture compile jax triton eager deepq" (the default), deepqnew
#   CAPS="30 60" for the capture part; N=100 captures; REPLAY=20 s.
#   TRACE=1: the compute region's bucket and share every 10 ms beside each
#   capped run (frameworks.py trace), summarized for deepq/deepqnew.
# Reports; docs/validation.md judges the figures.
set -u
B=${1:-build}; O=${2:-/tmp/frameworks}; mkdir -p "$O"
LIB=$(cd "$B" && pwd)/lib/libcudacap.so; D=$(cd "$(dirname "$0")" && pwd); R=$(cd "$D/../.." && pwd)
N=${N:-100}; REPLAY=${REPLAY:-20}; SECS=${SECS:-20}
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
trap 'pkill -9 -f frameworks.py 2>/dev/null' EXIT
py() { python3 -c "print($1)"; }

# capped NAME CAP WINDOW ARGS...: runs `frameworks.py ARGS... RESULT` under
# the preload at CAP (0: bare, no preload) with a sampler; prints the result
# line and NVML over the last WINDOW s of the run (less its last 0.5 s), or
# of its measured steps where frameworks.py wrote their span.
capped() {
  local name=$1 cap=$2 win=$3; shift 3
  local st; st=$(mktemp -d); local res=$st/result
  if [ "$cap" = 0 ]; then
    env ${EXTRA_ENV:-} python3 "$D/frameworks.py" "$@" "$res" > "$st/log" 2>&1 &
  else
    env CUDACAP_STATE_DIR="$st" CUDACAP_SM_LIMIT="$cap" LD_PRELOAD="$LIB" ${EXTRA_ENV:-} \
      python3 "$D/frameworks.py" "$@" "$res" > "$st/log" 2>&1 &
  fi
  local pid=$!
  echo $pid > "$st/pids"
  python3 "$D/frameworks.py" sample 400 "$st/samples" "$st/pids" &
  local spid=$! tpid=
  # TRACE=1: the region's bucket and share every 10 ms, to O/trace.NAME.K.
  RUNS=$((${RUNS:-0} + 1))
  [ -n "${TRACE:-}" ] && [ "$cap" != 0 ] && {
    python3 "$D/frameworks.py" trace 400 "$O/trace.$name.$RUNS" "$st/compute.region" & tpid=$!; }
  wait $pid; local rc=$?
  [ -n "$tpid" ] && { kill $tpid 2>/dev/null; wait $tpid 2>/dev/null; }
  local end; end=$(date +%s.%N)
  [ -s "$res.span" ] && read -r _ end < "$res.span" # the measured steps' end
  sleep 0.3; kill $spid 2>/dev/null; wait $spid 2>/dev/null
  cp "$st/samples" "$O/samples.$name" 2>/dev/null
  echo "== $name cap $cap rc $rc: $(cat "$res" 2>/dev/null || tail -3 "$st/log")"
  if [ "$win" != - ]; then
    echo "   NVML last ${win}s: $(python3 "$D/frameworks.py" stats "$st/samples" \
      "$(py "$end - $win")" "$(py "$end - 0.5")")"
  fi
  LAST_ST=$st
}

echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
for part in ${PARTS:-rules capture compile jax triton eager deepq}; do case $part in
rules)
  gcc -std=gnu11 -O1 -I/usr/local/cuda/include -I"$R/sim/tests" -o "$O/capture_rules" \
    "$R/sim/tests/test_capture.c" "$R/sim/tests/simtest.c" -lcuda -lpthread && \
    "$O/capture_rules" > "$O/capture_rules.txt" 2>&1
  echo "== capture rules on the real driver: rc $? $(tail -1 "$O/capture_rules.txt")"
  grep DIFF "$O/capture_rules.txt" | head -60 ;;
capture)
  capped capture-bare 0 - capture "$N" 0
  for cap in ${CAPS:-30 60}; do capped "capture-$cap" "$cap" $((REPLAY - 2)) capture "$N" "$REPLAY"; done ;;
compile) capped compile-30 30 $((SECS - 4)) compile "$SECS" ;;
jax) capped jax-30 30 $((SECS - 4)) jax "$SECS" ;;
triton) capped triton-30 30 $((SECS - 4)) triton "$SECS" ;;
eager) capped eager-30 30 $((SECS - 4)) eager "$SECS" ;;
deepq|deepqnew)
  # deepqnew: CONTROL_LIB (a control build of the library, e.g.
  # cudacap_busy_slots) runs it once more at cap 30.
  # NEW_RUNS (deepqnew): the caps run, 0 bare (default "30 30"); QN
  # matmuls (default 30). EXTRA_ENV goes to capped runs (e.g.
  # CUDACAP_COUNT_CALLS=1: the gate's counts, printed; PROFILE=1: CUPTI's
  # kernel records, printed).
  runs="0 30"; [ "$part" = deepqnew ] && runs="${NEW_RUNS:-30 30} ${CONTROL_LIB:+control}"
  for cap in $runs; do
    if [ "$cap" = control ]; then LIB=$CONTROL_LIB capped "$part-control" 30 - "$part" 30
    else capped "$part-$cap" "$cap" - "$part" $([ "$part" = deepq ] && echo 50 || echo "${QN:-30}"); fi
    [ -s "$LAST_ST/result.ends" ] && echo "   ends (ms after the first): $(cat "$LAST_ST/result.ends")"
    [ -s "$LAST_ST/result.prof" ] && echo "   CUPTI: $(cat "$LAST_ST/result.prof")"
    grep -h "gate new shapes" "$LAST_ST/log" | sed 's/^/   /'
    go=$(awk '{print $2}' "$LAST_ST/result" 2>/dev/null); done_s=$(awk '{print $6}' "$LAST_ST/result" 2>/dev/null)
    [ -n "$go" ] || continue
    echo "   NVML first 1 s: $(python3 "$D/frameworks.py" stats "$LAST_ST/samples" "$go" "$(py "$go + 1")")"
    echo "   NVML first 2 s: $(python3 "$D/frameworks.py" stats "$LAST_ST/samples" "$go" "$(py "$go + 2")")"
    echo "   NVML whole run: $(python3 "$D/frameworks.py" stats "$LAST_ST/samples" "$go" "$(py "$go + $done_s")")"
    [ -n "${TRACE:-}" ] && [ -s "$O/trace.$part-$cap.$RUNS" ] || continue
    python3 - "$O/trace.$part-$cap.$RUNS" "$go" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1])]; go = float(sys.argv[2])
# the share (ms per 100 ms), the bucket (ms) and the published sample
# (container %), every 100 ms from 0.2 s before go
out, nxt = [], -0.2
for r in rows:
    t = float(r[0]) - go
    if t >= nxt:
        out.append(f"{t:+.1f}s {r[2]}/{r[1]}/{r[3]}")
        nxt += 0.1
print("   trace (share ms / bucket ms / container %): " + " ".join(out[:60]))
PY
  done ;;
esac; done
