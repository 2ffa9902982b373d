#!/usr/bin/env bash
# Work below a 50 % compute cap, in one bounded run: the launch-call
# latency of 16 new shapes without a sync (REPS times two bare/capped
# pairs), empty kernels with a sync, CUDA-graph captures and a deep queue
# at cap 30 (no regression), then GPT-2 generate in pairs (capped against
# bare, and bare against bare as the control) in LANES lanes at once, each
# lane's two processes on its own four cores. Usage, from the repository
# root (tests/gpu/callcost.c first: what each driver call of a timed launch
# costs):
#   tests/gpu/below_cap.sh BUILD_DIR OUT_DIR
#   BUDGET_S=540: no GPT-2 chunk (two pairs) is started past this many
#   seconds from the start; REPS=3; LANES=1 (three lanes at once gave three
#   times the pairs but three times the spread of one lane's ratios:
#   docs/validation.md, 2026-12-03, "below the cap").
# Prints everything; the summary gives, per GPT-2 set, n, the geometric
# mean and median ratio (second process / first), min, max, the rms of ln
# ratio, and capped against control (Welch's t, the geometric means'
# quotient with about two standard errors).
set -u
B=$1; O=${2:-/tmp/below_cap}; mkdir -p "$O"
T0=$(date +%s); END=$((T0 + ${BUDGET_S:-540}))
D=$(cd "$(dirname "$0")" && pwd); R=$(cd "$D/../.." && pwd); cd "$R"
el() { echo $(( $(date +%s) - T0 )); }
echo "== below_cap $(date -u +%FT%TZ) rev ${REV:-$(git rev-parse --short HEAD 2>/dev/null)}"
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) cores; kernel $(uname -r)"
echo "== [$(el) s] callcost"
gcc -O2 -I/usr/local/cuda/include "$D/callcost.c" -l:libcuda.so.1 -o "$O/callcost" && timeout -k 5 60 "$O/callcost"
for i in $(seq "${REPS:-3}"); do
  echo "== [$(el) s] shapes, round $i"
  timeout -k 5 60 env PARTS=shapes tests/gpu/pacing.sh "$B" "$O/s$i" || echo "shapes: rc $?"
done
echo "== [$(el) s] tiny"
timeout -k 5 60 env PARTS=tiny tests/gpu/pacing.sh "$B" "$O/t" || echo "tiny: rc $?"
echo "== [$(el) s] capture, deep queue (cap 30)"
timeout -k 5 90 env SECS=3 N=5 REPLAY=3 CAPS=30 PARTS="capture deepq" tests/gpu/frameworks.sh "$B" "$O/q" \
  || echo "frameworks: rc $?"
echo "== [$(el) s] GPT-2 pairs, cap 50, ${LANES:-1} lanes"
lane() { # lane K CORES_A CORES_B: capped and control chunks of two pairs, alternating
  local k=$1 a=$2 z=$3 c=1 t last=40
  while [ $(( $(date +%s) + last + 5 )) -le "$END" ]; do
    t=$(date +%s)
    timeout -k 5 120 env FIRST=$c CORES_A=$a CORES_B=$z tests/gpu/gpt2_pairs.sh "$B" 2 50 \
      | sed "s/^/lane $k cap: /" | tee -a "$O/cap.txt"
    timeout -k 5 120 env FIRST=$c CORES_A=$a CORES_B=$z CONTROL=1 tests/gpu/gpt2_pairs.sh "$B" 2 50 \
      | sed "s/^/lane $k ctl: /" | tee -a "$O/ctl.txt"
    last=$(( $(date +%s) - t )); c=$((c + 2))
  done
}
: > "$O/cap.txt"; : > "$O/ctl.txt"
set -- "2,3 6,7" "8,9 10,11" "12,13 14,15" "4,5 0,1"
for k in $(seq "${LANES:-1}"); do eval "lane $k \${$k}" & done
wait
echo "== [$(el) s] GPT-2 summary (ratio = second process / first)"
python3 - "$O" <<'PY'
import math, re, statistics, sys
o = sys.argv[1]
def ratios(f):
    return [float(m.group(1)) for m in re.finditer(r"ratio ([0-9.]+)", open(f).read())]
sets = [("capped/bare", ratios(o + "/cap.txt")), ("bare/bare", ratios(o + "/ctl.txt"))]
print("| set | n | geomean | median | min | max | rms ln |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for name, r in sets:
    if not r: print("| %s | 0 |" % name); continue
    l = [math.log(x) for x in r]
    print("| %s | %d | %.3f | %.3f | %.3f | %.3f | %.3f |" % (name, len(r), math.exp(statistics.mean(l)),
          statistics.median(r), min(r), max(r), math.sqrt(statistics.mean([x * x for x in l]))))
a, b = [math.log(x) for x in sets[0][1]], [math.log(x) for x in sets[1][1]]
if len(a) > 1 and len(b) > 1:
    ma, mb = statistics.mean(a), statistics.mean(b)
    se = math.sqrt(statistics.variance(a) / len(a) + statistics.variance(b) / len(b))
    print("Welch t %.2f; geomean capped / geomean control %.3f, about %.3f-%.3f at 2 standard errors"
          % ((ma - mb) / se if se else float("nan"), math.exp(ma - mb), math.exp(ma - mb - 2 * se),
             math.exp(ma - mb + 2 * se)))
    print("capped throughput relative to the control: %.3f (%.3f-%.3f)" % (
        math.exp(mb - ma), math.exp(mb - ma - 2 * se), math.exp(mb - ma + 2 * se)))
PY
echo "== [$(el) s] done"
