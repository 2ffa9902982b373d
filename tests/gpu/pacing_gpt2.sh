#!/usr/bin/env bash
# The pacing figures in one run, each part bounded in time: the decode table at caps
# 20-90 (graphs and eager), the below-the-cap costs (tiny, shapes, tokloop),
# and GPT-2 generate under cap 50 in pairs against a bare-against-bare
# control (tests/gpu/gpt2_pairs.sh). Usage, from the repository root:
#   tests/gpu/pacing_gpt2.sh BUILD_DIR OUT_DIR
#   BUDGET_S=480: no GPT-2 pair chunk is started past this many seconds
#   from the start; PAIRS=8 capped pairs and 8 bare-against-bare pairs.
# The GPT-2 part: first 4 bare-against-bare pairs with address-space layout
# randomization off (NOASLR=1) and 4 with it on, interleaved (only where
# setarch -R fixes the layout and the first chunk shows time for it all); the setting
# whose ratios spread less (rms of ln ratio, NOASLR chosen only below 0.7x
# of the other's) is kept; then capped and control pairs, interleaved two
# at a time (one pinning swap), the capped ones first; the control set is
# the kept setting's pairs, the first 4 included. Prints everything; the
# summary gives, per set, n, the geometric mean and median ratio, min, max,
# the rms of ln ratio, and Welch's t on ln ratio (capped against control).
set -u
B=$1; O=${2:-/tmp/pacing_gpt2}; mkdir -p "$O"
T0=$(date +%s); END=$((T0 + ${BUDGET_S:-480})); NP=${PAIRS:-8}
D=$(cd "$(dirname "$0")" && pwd); R=$(cd "$D/../.." && pwd); cd "$R"
el() { echo $(( $(date +%s) - T0 )); }
echo "== pacing_gpt2 $(date -u +%FT%TZ) rev ${REV:-$(git rev-parse --short HEAD 2>/dev/null)}"
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) cores; kernel $(uname -r)"
python3 -c 'import torch, transformers, cupy; print("== torch", torch.__version__, "transformers", transformers.__version__, "cupy", cupy.__version__)' 2>&1 | tail -1

echo "== [$(el) s] part 1: decode"
timeout -k 5 "${DECODE_S:-170}" env PARTS=decode SECS=3 tests/gpu/pacing.sh "$B" "$O/x" || echo "decode: rc $?"
echo "== [$(el) s] part 2: tiny shapes tokloop"
timeout -k 5 "${TINY_S:-90}" env PARTS="tiny shapes tokloop" tests/gpu/pacing.sh "$B" "$O/y" || echo "tiny/shapes: rc $?"

echo "== [$(el) s] part 3: GPT-2 pairs, cap 50"
echo "randomize_va_space $(cat /proc/sys/kernel/randomize_va_space 2>/dev/null)"
a1=$(setarch "$(uname -m)" -R sh -c 'grep -m1 "\[stack\]" /proc/self/maps' 2>&1)
a2=$(setarch "$(uname -m)" -R sh -c 'grep -m1 "\[stack\]" /proc/self/maps' 2>&1)
n1=$(sh -c 'grep -m1 "\[stack\]" /proc/self/maps'); n2=$(sh -c 'grep -m1 "\[stack\]" /proc/self/maps')
echo "stack, setarch -R twice: $a1 | $a2"; echo "stack, plain twice: $n1 | $n2"
NOASLR_OK=0; [ -n "$a1" ] && [ "$a1" = "$a2" ] && [ "$n1" != "$n2" ] && NOASLR_OK=1
echo "NOASLR effective: $NOASLR_OK"
: > "$O/cap.txt"; : > "$O/ctl1.txt"; : > "$O/ctl0.txt"
LAST=30
# chunk FILE FIRST ENV...: two pairs (one pinning swap) into FILE, unless
# the budget would be passed.
chunk() {
  local f=$1 first=$2; shift 2
  if [ $(( $(date +%s) + LAST + 5 )) -gt "$END" ]; then
    echo "[$(el) s] skipped ($f from $first): budget"; return 1; fi
  local t=$(date +%s)
  timeout -k 5 120 env FIRST="$first" "$@" tests/gpu/gpt2_pairs.sh "$B" 2 50 | tee -a "$O/$f" \
    | sed "s/^/[$(el) s] $f: /"
  LAST=$(( $(date +%s) - t ))
}
S=0
if [ "$NOASLR_OK" = 1 ]; then
  chunk ctl1.txt 1 CONTROL=1 NOASLR=1
  # the trial's other 3 chunks and the 6 after it must fit, else no trial
  if [ $(( $(date +%s) + 9 * LAST + 10 )) -gt "$END" ]; then
    echo "[$(el) s] a chunk took $LAST s: no time for the trial, ASLR left on"; NOASLR_OK=0
  fi
fi
if [ "$NOASLR_OK" = 1 ]; then
  chunk ctl0.txt 1 CONTROL=1 NOASLR=0
  chunk ctl1.txt 3 CONTROL=1 NOASLR=1; chunk ctl0.txt 3 CONTROL=1 NOASLR=0
  S=$(python3 - "$O" <<'EOF'
import math, re, sys
def rms(f):
    r = [float(m.group(1)) for m in re.finditer(r"ratio ([0-9.]+)", open(f).read())]
    return math.sqrt(sum(math.log(x) ** 2 for x in r) / len(r)) if r else float("nan")
a, b = rms(sys.argv[1] + "/ctl1.txt"), rms(sys.argv[1] + "/ctl0.txt")
print(1 if a < 0.7 * b else 0, file=sys.stdout)
print("trial rms ln(ratio): NOASLR %.3f, ASLR on %.3f" % (a, b), file=sys.stderr)
EOF
)
  echo "kept: NOASLR=$S"
  chunk cap.txt 1 NOASLR=$S; chunk ctl$S.txt 5 CONTROL=1 NOASLR=$S
  chunk cap.txt 3 NOASLR=$S; chunk ctl$S.txt 7 CONTROL=1 NOASLR=$S
  c=5; while [ $c -lt "$NP" ]; do chunk cap.txt $c NOASLR=$S || break; c=$((c + 2)); done
else
  c=1; while [ $c -lt "$NP" ]; do
    chunk cap.txt $c NOASLR=0 || break; chunk ctl0.txt $c CONTROL=1 NOASLR=0 || break; c=$((c + 2))
  done
fi
echo "== [$(el) s] GPT-2 summary (ratio = second process / first: capped / bare, or bare-b / bare)"
python3 - "$O" "$S" <<'EOF'
import math, re, statistics, sys
o, s = sys.argv[1], sys.argv[2]
def ratios(f):
    try: t = open(f).read()
    except OSError: return []
    return [float(m.group(1)) for m in re.finditer(r"ratio ([0-9.]+)", t)]
sets = [("capped/bare, NOASLR=" + s, ratios(o + "/cap.txt")),
        ("bare/bare, NOASLR=" + s, ratios(o + "/ctl%s.txt" % s)),
        ("bare/bare, NOASLR=" + ("0" if s == "1" else "1"), ratios(o + "/ctl%s.txt" % ("0" if s == "1" else "1")))]
print("| set | n | ratios | geomean | median | min | max | rms ln |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for name, r in sets:
    if not r: print("| %s | 0 | - |" % name); continue
    l = [math.log(x) for x in r]
    print("| %s | %d | %s | %.3f | %.3f | %.3f | %.3f | %.3f |" % (name, len(r), ", ".join("%.3f" % x for x in r),
          math.exp(statistics.mean(l)), statistics.median(r), min(r), max(r), math.sqrt(statistics.mean([x * x for x in l]))))
a, b = [math.log(x) for x in sets[0][1]], [math.log(x) for x in sets[1][1]]
if len(a) > 1 and len(b) > 1:
    try:
        from scipy import stats
        t = stats.ttest_ind(a, b, equal_var=False)
        u = stats.mannwhitneyu(a, b)
        print("capped vs control, ln ratio: Welch t %.2f p %.3f; Mann-Whitney U %.1f p %.3f" % (t.statistic, t.pvalue, u.statistic, u.pvalue))
    except Exception as e:
        print("no test:", e)
    ma, mb = statistics.mean(a), statistics.mean(b)
    se = math.sqrt(statistics.variance(a) / len(a) + statistics.variance(b) / len(b))
    print("geomean capped / geomean control %.3f, 95%% interval about %.3f-%.3f" % (
        math.exp(ma - mb), math.exp(ma - mb - 2 * se), math.exp(ma - mb + 2 * se)))
EOF
echo "== [$(el) s] done"
