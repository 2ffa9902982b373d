#!/usr/bin/env bash
# Work below a 50 % compute cap, measured so that what one process happens
# to draw is not what decides (the pacing bar "below the cap, no cost", docs/compute.md):
#   shapes  ROUNDS rounds of one bare and one capped process (which goes
#           first alternates), step_latency.py shapes: 16 new grid sizes x
#           62 launches of an empty kernel, no sync. Every launch call's time
#           is pooled per kind: p50, p90, p99 and p99.9 of the pool, beside
#           the median of the per-run p99s. One run's p99 is its 10th
#           slowest launch; bare's moved 8-25 us between runs on the H200.
#   gpt2    step_latency.py gpt2live: GPT-2 generate in one process, cap
#           CAP and no cap alternating (C U U C), BLOCKS blocks.
# Usage, from the repository root: tests/gpu/below_cap_pooled.sh BUILD OUT
#   PARTS="shapes gpt2" ROUNDS=10 BLOCKS=20 CAP=50
set -u
B=$(cd "${1:-build}" && pwd); O=${2:-/tmp/below_cap_pooled}; mkdir -p "$O"
LIB=$B/lib/libcudacap.so; D=$(cd "$(dirname "$0")" && pwd); CAP=${CAP:-50}
export PYTHONUNBUFFERED=1 CLI=$B/bin/cudacap
echo "== below_cap_pooled $(date -u +%FT%TZ) rev ${REV:-$(git rev-parse --short HEAD 2>/dev/null)}"
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) cores"
shape_run() { # shape_run KIND N
  local st; st=$(mktemp -d)
  if [ "$1" = bare ]; then timeout -k 5 60 python3 "$D/step_latency.py" shapes "$O/$1_$2" > "$st/log" 2>&1
  else timeout -k 5 60 env CUDACAP_STATE_DIR="$st" CUDACAP_SM_LIMIT="$CAP" LD_PRELOAD="$LIB" \
         python3 "$D/step_latency.py" shapes "$O/$1_$2" > "$st/log" 2>&1; fi
  [ -s "$O/$1_$2" ] && echo "$1 $2: $(cat "$O/$1_$2")" || echo "$1 $2 FAILED: $(tail -2 "$st/log" | tr '\n' ' ')"
  rm -rf "$st"
}
for part in ${PARTS:-shapes gpt2}; do case $part in
shapes)
  echo "== shapes, cap $CAP, ${ROUNDS:-10} rounds (launch call us: p50 p99)"
  for i in $(seq "${ROUNDS:-10}"); do
    if [ $((i % 2)) = 1 ]; then shape_run bare "$i"; shape_run cap "$i"
    else shape_run cap "$i"; shape_run bare "$i"; fi
  done
  python3 - "$O" <<'PY'
import glob, statistics, sys
o = sys.argv[1]
def q(v, f): return v[min(len(v) - 1, int(len(v) * f))]
res = {}
for kind in ("bare", "cap"):
    runs = [[float(x) for x in open(f)] for f in sorted(glob.glob(f"{o}/{kind}_*.raw"))]
    pool = sorted(x for r in runs for x in r)
    per99 = statistics.median(q(sorted(r), 0.99) for r in runs)
    res[kind] = [q(pool, f) for f in (0.5, 0.9, 0.99, 0.999)] + [per99]
    print(f"{kind}: {len(runs)} runs, {len(pool)} launches; pooled p50 {res[kind][0]:.2f} p90 {res[kind][1]:.2f} "
          f"p99 {res[kind][2]:.2f} p99.9 {res[kind][3]:.2f} us; median of per-run p99 {per99:.2f} us")
b, c = res["bare"], res["cap"]
print(f"capped/bare: pooled p50 {c[0]/b[0]:.3f} (bar 1.1), p90 {c[1]/b[1]:.3f}, p99 {c[2]/b[2]:.3f} (bar 2), "
      f"p99.9 {c[3]/b[3]:.3f}; median per-run p99 {c[4]/b[4]:.3f}")
PY
  ;;
gpt2)
  echo "== GPT-2 in one process, cap $CAP against none, ${BLOCKS:-20} blocks"
  st=$(mktemp -d); "$CLI" prepare --sm "$CAP" "$st/c" > /dev/null || { echo "prepare failed"; continue; }
  CUDACAP_STATE_DIR=$st/c CAP=$CAP LD_PRELOAD=$LIB timeout -k 5 400 \
    python3 "$D/step_latency.py" gpt2live "${BLOCKS:-20}" "$O/gpt2live" 2>&1 | grep -v -i warn
  rm -rf "$st" ;;
esac; done
