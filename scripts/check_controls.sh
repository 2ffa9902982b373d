#!/usr/bin/env bash
# The negative controls' switchboard (src/common/controls.h) against the code:
#  - every test-only switch (CC_TEST_*, CC_ML_TEST_*) that src/ tests with
#    #if/#ifdef/#ifndef/#elif has a row;
#  - every row's files hold that switch;
#  - with a build folder: every row's tests are registered, with WILL_FAIL.
#   scripts/check_controls.sh [BUILD_DIR] [EXTRA_SOURCE]
# EXTRA_SOURCE (the check's own control): one more file scanned as if in src/.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build=${1:-}
json=""
if [ -n "$build" ]; then
  json=$(mktemp)
  trap 'rm -f "$json"' EXIT
  ctest --test-dir "$build" --show-only=json-v1 > "$json"
fi
CC_CONTROLS_BUILD="$build" exec python3 - "$root" "$json" "${2:-}" <<'PY'
import json, os, re, sys
root, jpath, extra = sys.argv[1], sys.argv[2], sys.argv[3]
src = os.path.join(root, "src")
board = open(os.path.join(src, "common", "controls.h")).read().replace("\\\n", " ")
rows = {m.group(1): (m.group(2).split(), m.group(3).split())
        for m in re.finditer(r'X\((CC_[A-Z]*_?TEST_[A-Z0-9_]+),\s*"([^"]*)",\s*"([^"]*)"\)', board)}
cond = re.compile(r'^\s*#\s*(?:if|ifdef|ifndef|elif)\b(.*)$', re.M)
switch = re.compile(r'\bCC_(?:[A-Z]+_)?TEST_[A-Z0-9_]+\b')
files = []
for d, _, names in os.walk(src):
    files += [os.path.join(d, n) for n in names if n.endswith((".c", ".h")) and n != "controls.h"]
if extra:
    files.append(extra)
bad = []
for f in files:
    for line in cond.findall(open(f, errors="replace").read()):
        for m in switch.findall(line):
            if m not in rows:
                bad.append(f"{m} is tested in {os.path.relpath(f, root)} but has no row in src/common/controls.h")
tests = None
if jpath:
    tests = {}
    for t in json.load(open(jpath)).get("tests", []):
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        tests[t["name"]] = bool(props.get("WILL_FAIL"))
for m, (fs, ts) in sorted(rows.items()):
    for f in fs:
        p = os.path.join(src, f)
        if not os.path.isfile(p) or not re.search(r'\b' + m + r'\b', open(p).read()):
            bad.append(f"{m}: src/{f} does not hold it")
    if not ts:
        bad.append(f"{m}: no test named")
    for t in ts if tests is not None else []:
        if t not in tests:
            bad.append(f"{m}: test {t} is not registered")
        elif not tests[t]:
            bad.append(f"{m}: test {t} is not WILL_FAIL")
# The control libraries recompile only the sources a switch reaches
# (tests/memory.cmake, cc_control_reach): what cmake recorded must still be
# what the sources reach (a switch or an include added since: re-run cmake).
bdir = os.environ.get("CC_CONTROLS_BUILD", "")
cdir = os.path.join(bdir, "tests", "control_sources") if bdir else ""
if cdir and os.path.isfile(os.path.join(cdir, "library.list")):
    lib = set(open(os.path.join(cdir, "library.list")).read().split())
    allf = [f for f in files if f != extra]
    text = {f: open(f, errors="replace").read() for f in allf}
    def reach(defs):
        r = {f for f in allf for d in defs if d in text[f]}
        todo = [f for f in r if f.endswith(".h")]
        while todo:
            b = re.escape(os.path.basename(todo.pop()))
            inc = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]*/)?' + b + '"', re.M)
            for f in allf:
                if f not in r and inc.search(text[f]):
                    r.add(f)
                    if f.endswith(".h"):
                        todo.append(f)
        return {os.path.relpath(f, root) for f in r} & lib
    for n in sorted(os.listdir(cdir)):
        if not n.endswith(".txt"):
            continue
        words = open(os.path.join(cdir, n)).read().split()
        defs = [w for w in words if w.startswith("CC_")]
        have = set(words) - set(defs)
        want = reach(defs)
        if have != want:
            bad.append(f"control library {n[:-4]} ({' '.join(defs)}) recompiles {sorted(have)}, the "
                       f"sources now reach {sorted(want)}: re-run cmake")
for b in sorted(set(bad)):
    print("check_controls:", b, file=sys.stderr)
if bad:
    sys.exit(1)
print(f"check_controls: {len(rows)} controls, each held by its files"
      + (" and failed by its registered tests" if tests is not None else ""))
PY
