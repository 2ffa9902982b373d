#!/usr/bin/env bash
# On a real GPU: what a latency-sensitive client feels under the
# compute cap, each capped run against bare in the same run
# (tests/gpu/step_latency.py). Usage:
#   tests/gpu/pacing.sh BUILD_DIR OUT_DIR
#   PARTS="decode tiny shapes tokloop gpt2" (the default: all), clock
#   clock: the graph decode loop bare at each cap's duty cycle (STEP_DUTY:
#   the device idle between steps as the cap would leave it, so at the SM
#   clock a capped run gets) against capped: steps/s of cap x bare there.
#   CAPS="20 30 50 70 90" for decode; SECS=4 measured per decode run;
#   GPT2_RUNS=5, TOKENS=64; PIN="taskset -c 4,5" runs every worker, bare
#   and capped, on the same cores (a launch-bound generate varied 6-13 ms a
#   token between processes placed freely).
# Prints tables; docs/validation.md judges the figures.
set -u
B=${1:-build}; O=${2:-/tmp/pacing}; mkdir -p "$O"
LIB=${LIB:-$(cd "$B" && pwd)/lib/libcudacap.so}; D=$(cd "$(dirname "$0")" && pwd)
SECS=${SECS:-4}; CAPS=${CAPS:-20 30 50 70 90}
export PYTHONUNBUFFERED=1
trap 'pkill -9 -f step_latency.py 2>/dev/null' EXIT
py() { python3 -c "print($1)"; }

# w CAP ARGS...: step_latency.py ARGS... RESULT at CAP (0: bare, no
# preload), each in a fresh state folder; echoes the result line.
w() {
  local cap=$1; shift
  local st; st=$(mktemp -d); local res=$st/result
  if [ "$cap" = 0 ]; then
    ${PIN:-} python3 "$D/step_latency.py" "$@" "$res" > "$st/log" 2>&1 &
  else
    ${PIN:-} env CUDACAP_STATE_DIR="$st" CUDACAP_SM_LIMIT="$cap" LD_PRELOAD="$LIB" ${EXTRA_ENV:-} \
      python3 "$D/step_latency.py" "$@" "$res" > "$st/log" 2>&1 &
  fi
  local pid=$!; echo $pid > "$st/pids"
  # NVML beside a decode run (not preloaded): the device's utilization.
  local spid=; [ "$1" = decode ] && {
    python3 "$D/frameworks.py" sample 60 "$st/samples" "$st/pids" > /dev/null 2>&1 & spid=$!; }
  wait $pid
  [ -n "$spid" ] && { kill $spid 2>/dev/null; wait $spid 2>/dev/null; }
  if [ ! -s "$res" ]; then echo "FAILED: $(tail -2 "$st/log" | tr '\n' ' ')"; return; fi
  if [ -n "$spid" ]; then
    read -r _ _ _ _ from to < "$res"
    echo "$(cat "$res") $(python3 "$D/frameworks.py" stats "$st/samples" "$(py "$from + 0.5")" "$to" | sed 's/ | process.*//')"
  else cat "$res"; fi
}

echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
for part in ${PARTS:-decode tiny shapes tokloop gpt2}; do case $part in
decode)
  for mode in graph eager; do
    r=$(w 0 decode $mode "$SECS"); read -r b50 b99 bmax brate _ _ bnv <<< "$r"
    echo "== decode $mode ($SECS s measured): bare p50 $b50 p99 $b99 max $bmax ms, $brate steps/s, NVML $bnv"
    echo "| cap | steps/s of bare | p50 ms | p99 ms | max ms | paced ideal (bare p50 / cap) ms | p99 / ideal | NVML device utilization |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
    for cap in $CAPS; do
      r=$(w "$cap" decode $mode "$SECS"); read -r c50 c99 cmax crate _ _ cnv <<< "$r"
      case $r in FAILED*) echo "| $cap | $r |"; continue ;; esac
      echo "| $cap | $(py "round($crate / $brate, 3)") | $c50 | $c99 | $cmax | $(py "round($b50 * 100 / $cap, 2)") | $(py "round($c99 / ($b50 * 100 / $cap), 2)") | $cnv |"
    done
  done ;;
clock)
  echo "== clock: decode graph ($SECS s measured), bare at the cap's duty cycle against capped"
  echo "| cap | bare-at-duty p50 ms | its NVML | capped steps/s | cap x bare-at-duty steps/s | capped / bare-at-duty, points over cap | capped p50 ms | capped NVML |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
  for cap in $CAPS; do
    r=$(STEP_DUTY=$cap w 0 decode graph "$SECS"); read -r d50 _ _ _ _ _ dnv <<< "$r"
    r=$(w "$cap" decode graph "$SECS"); read -r c50 _ _ crate _ _ cnv <<< "$r"
    case $r in FAILED*) echo "| $cap | $r |"; continue ;; esac
    echo "| $cap | $d50 | $dnv | $crate | $(py "round($cap * 10 / $d50, 1)") | $(py "round($crate * $d50 / 10 - $cap, 2)") | $c50 | $cnv |"
  done ;;
tiny|shapes)
  a=(); [ $part = tiny ] && a=(3)
  echo "== $part (us: p50 p99): bare $(w 0 $part "${a[@]}") | cap 50 $(w 50 $part "${a[@]}") | bare $(w 0 $part "${a[@]}") | cap 50 $(w 50 $part "${a[@]}")" ;;
tokloop)
  echo "== tokloop (ms: mean std p99): bare $(w 0 tokloop 3) | cap 50 $(w 50 tokloop 3)" ;;
gpt2)
  for i in $(seq "${GPT2_RUNS:-5}"); do
    echo "== gpt2 run $i (ms/token: median min max of 5 generates): bare $(w 0 gpt2 "${TOKENS:-64}") cap 50 $(w 50 gpt2 "${TOKENS:-64}")"
  done ;;
esac; done
