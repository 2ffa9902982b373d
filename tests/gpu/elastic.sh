#!/usr/bin/env bash
# On a real GPU: elastic caps with PyTorch processes
# (tests/gpu/elastic.py), each container its own state folder under one
# ROOT, NVML and `cudacap status --json ROOT` sampled beside them. Usage:
#   tests/gpu/elastic.sh BUILD_DIR OUT_DIR
#   PARTS="alone newcomer two bursts neighbour guard" (the default: all;
#   also newcomer_hard: the newcomer beside a hard 30 container)
#   KINDS="long short": ~1.7 ms bf16 8192^2 matmuls (4 per sync), or
#   ~10 us 1024^2 ones (64 per sync). SECS=10 (per phase), BURSTS=20 s.
# Shares are throughput against one bare process of the same kind (100 %).
# Prints figures; docs/validation.md judges them.
set -u
B=${1:-build}; O=${2:-/tmp/elastic}; mkdir -p "$O"
B=$(cd "$B" && pwd); LIB=$B/lib/libcudacap.so; CLI=$B/bin/cudacap
D=$(cd "$(dirname "$0")" && pwd); E="python3 $D/elastic.py"
SECS=${SECS:-10}; BURSTS=${BURSTS:-20}; WARM=${WARM:-20}
export PYTHONUNBUFFERED=1
KIDS=()
trap 'for p in "${KIDS[@]}"; do kill -9 "$p" 2>/dev/null; done' EXIT
py() { python3 -c "print($1)"; }

# cont ROOT NAME HARD SOFT NPROC KIND START END TOGGLE: a container's
# workers (SOFT 0: hard cap only; HARD 0: bare, no preload); outputs
# ROOT/NAME.w<k>, pids in ROOT/NAME.pids.
cont() {
  local root=$1 name=$2 hard=$3 soft=$4 n=$5 kind=$6 s=$7 e=$8 t=$9 k
  mkdir -p "$root/$name"; : > "$root/$name.pids"
  for k in $(seq "$n"); do
    if [ "$hard" = 0 ]; then
      $E work "$kind" "$s" "$e" "$t" "$root/$name.w$k" > "$root/$name.log$k" 2>&1 &
    else
      local sv=(); [ "$soft" != 0 ] && sv=(CUDACAP_SM_SOFT_LIMIT="$soft")
      env CUDACAP_STATE_DIR="$root/$name" CUDACAP_SM_LIMIT="$hard" "${sv[@]}" LD_PRELOAD="$LIB" \
        $E work "$kind" "$s" "$e" "$t" "$root/$name.w$k" > "$root/$name.log$k" 2>&1 &
    fi
    KIDS+=($!); echo $! >> "$root/$name.pids"
  done
}
outs() { ls "$1/$2".w* 2>/dev/null; }
share() { $E share "$BARE" "$3" "$4" $(outs "$1" "$2"); }
# samplers ROOT SECS NAME...: NVML per container and the status poller.
samplers() {
  local root=$1 secs=$2; shift 2
  local pf=(); for n in "$@"; do pf+=("$root/$n.pids"); done
  $E nvml "$secs" "$root/nvml" "${pf[@]}" & KIDS+=($!)
  $E status "$secs" "$root/status" "$CLI" "$root" & KIDS+=($!)
}
finish() { wait "${KIDS[@]}" 2>/dev/null; KIDS=(); }
nvml_avg() { # ROOT FROM TO COL: average of NVML column COL (2: device) over [FROM, TO)
  awk -v a="$2" -v b="$3" -v c="$4" '$1>=a && $1<b && $c!="-" {s+=$c; n++} END {if (n) printf "%.1f", s/n; else print "-"}' "$1/nvml"
}

echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
for kind in ${KINDS:-long short}; do
  R=$(mktemp -d "$O/$kind.XXXX"); T0=$(py "$(date +%s.%N) + $WARM")
  cont "$R" bare 0 0 1 "$kind" "$T0" "$(py "$T0 + 8")" 0; finish
  BARE=$($E rate "$R/bare.w1" "$(py "$T0 + 1")" "$(py "$T0 + 8")")
  echo "== $kind: bare $BARE kernels/s (100 %)"
  for part in ${PARTS:-alone newcomer two bursts neighbour guard}; do
    R=$(mktemp -d "$O/$kind.$part.XXXX"); T0=$(py "$(date +%s.%N) + $WARM")
    case $part in
    alone)
      cont "$R" e 30 100 2 "$kind" "$T0" "$(py "$T0 + $SECS")" 0
      samplers "$R" $((WARM + SECS)) e; finish
      echo "== $kind alone: elastic 30/100 $(share "$R" e "$(py "$T0 + 2")" "$(py "$T0 + $SECS")") %," \
           "NVML device $(nvml_avg "$R" "$(py "$T0 + 2")" "$(py "$T0 + $SECS")" 2) %;" \
           "status: $(grep ' e ' "$R/status" | tail -1 | cut -d' ' -f3-)" ;;
    newcomer|newcomer_hard)
      # newcomer_hard: the same with the borrower hard-capped at 30 (no
      # soft limit), the reference for its windows after the yield.
      soft=100; [ $part = newcomer_hard ] && soft=0
      cont "$R" e 30 $soft 2 "$kind" "$T0" "$(py "$T0 + 6 + $SECS")" 0
      cont "$R" n 50 0 2 "$kind" "$(py "$T0 + 6")" "$(py "$T0 + 6 + $SECS")" 0
      samplers "$R" $((WARM + 6 + SECS)) e n; finish
      first=$(for w in $(outs "$R" n); do $E first "$w"; done | sort -n | head -1)
      a=$(py "$T0 + 7"); b=$(py "$T0 + 6 + $SECS")
      echo "== $kind $part: borrower alone $(share "$R" e "$(py "$T0 + 2")" "$(py "$T0 + 6")") %;" \
           "from 1 s after the newcomer: newcomer $(share "$R" n "$a" "$b") %, borrower $(share "$R" e "$a" "$b") %"
      echo "   yield (newcomer's first sync -> borrower's target at 30 %): $($E yield "$R/status" e "$first" 30) s;" \
           "borrower's throughput under 35 % (0.2 s windows): $($E drop "$BARE" "$first" 35 0.2 $(outs "$R" e)) s"
      echo "   borrower's 0.5 s windows after: $($E windows "$BARE" "$a" "$b" 0.5 $(outs "$R" e));" \
           "newcomer's: $($E windows "$BARE" "$a" "$b" 0.5 $(outs "$R" n))" ;;
    two)
      cont "$R" a 30 100 1 "$kind" "$T0" "$(py "$T0 + $SECS + 2")" 0
      cont "$R" b 20 100 2 "$kind" "$T0" "$(py "$T0 + $SECS + 2")" 0
      samplers "$R" $((WARM + SECS + 2)) a b; finish
      a=$(py "$T0 + 2"); b=$(py "$T0 + $SECS + 2")
      echo "== $kind two: 30/100 $(share "$R" a "$a" "$b") %, 20/100 $(share "$R" b "$a" "$b") %," \
           "NVML device $(nvml_avg "$R" "$a" "$b" 2) %" ;;
    bursts)
      end=$(py "$T0 + 2 + $BURSTS")
      cont "$R" e 30 100 2 "$kind" "$T0" "$end" 0
      cont "$R" n 50 0 1 "$kind" "$(py "$T0 + 2")" "$end" 2
      samplers "$R" $((WARM + 2 + BURSTS)) e n; finish
      for k in $(seq 0 4 $((BURSTS - 2))); do
        a=$(py "$T0 + 2 + $k"); b=$(py "$T0 + 4 + $k")
        echo "== $kind bursts: neighbour (hard 50) on at $((k + 2)) s: $(share "$R" n "$a" "$b") %," \
             "elastic $(share "$R" e "$a" "$b") %; yield $($E yield "$R/status" e "$a" 30) s;" \
             "yields while it was off after: $($E drops "$R/status" e "$(py "$b + 0.3")" "$(py "$b + 2")" 30)"
      done ;;
    guard)
      # Beside an idle foreign context (a process that made its context
      # and waits): what the elastic container gets, and its yields (each a
      # provisional one on its own saturated sample, elastic.h).
      cont "$R" e 30 100 2 "$kind" "$T0" "$(py "$T0 + $SECS")" 0
      cont "$R" n 50 0 1 "$kind" "$(py "$T0 + $SECS")" "$(py "$T0 + $SECS")" 0
      samplers "$R" $((WARM + SECS)) e n; finish
      echo "== $kind guard: elastic 30/100 beside an idle context $(share "$R" e "$(py "$T0 + 2")" "$(py "$T0 + $SECS")") %," \
           "NVML device $(nvml_avg "$R" "$(py "$T0 + 2")" "$(py "$T0 + $SECS")" 2) %;" \
           "yields from 2 s: $($E drops "$R/status" e "$(py "$T0 + 2")" "$(py "$T0 + $SECS")" 30)" ;;
    neighbour)
      # A hard 50 neighbour alone, beside a hard 30 container, beside an
      # elastic 30/100 one: its throughput (the last two must agree).
      for beside in none hard elastic; do
        R=$(mktemp -d "$O/$kind.neighbour-$beside.XXXX"); T0=$(py "$(date +%s.%N) + $WARM")
        cont "$R" n 50 0 1 "$kind" "$T0" "$(py "$T0 + $SECS")" 0
        [ $beside = hard ] && cont "$R" e 30 0 2 "$kind" "$T0" "$(py "$T0 + $SECS")" 0
        [ $beside = elastic ] && cont "$R" e 30 100 2 "$kind" "$T0" "$(py "$T0 + $SECS")" 0
        # (beside none there is no e: its pid file would never appear)
        if [ $beside = none ]; then samplers "$R" $((WARM + SECS)) n; else samplers "$R" $((WARM + SECS)) n e; fi
        finish
        echo "== $kind neighbour (hard 50) beside $beside: $(share "$R" n "$(py "$T0 + 2")" "$(py "$T0 + $SECS")") %" \
             "(0.5 s windows: $($E windows "$BARE" "$(py "$T0 + 2")" "$(py "$T0 + $SECS")" 0.5 $(outs "$R" n)))"
      done ;;
    esac
  done
done
