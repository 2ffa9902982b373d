#!/usr/bin/env bash
# The negative controls' switchboard (src/common/controls.h) against the code
# (docs/design.md, "Negative controls"):
#  - every test-only switch (CC_TEST_*, CC_ML_TEST_*) that src/ or a
#    wrapper in tests/controls/ tests with #if/#ifdef/#ifndef/#elif has a row;
#  - every row's files either hold that switch (a branch: only the files
#    CC_CONTROL_BRANCHES lists, at most 3) or define a control point
#    (CC_CONTROL_POINT) that a wrapper redirects under it; every file whose
#    control points its wrappers redirect is named in its row;
#  - a wrapper redirects only control points of the source it includes (or
#    of a header under src/ that the source includes);
#  - with a build folder: every row's tests are registered, with WILL_FAIL,
#    and the control libraries still recompile what the switches reach.
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
ctl = os.path.join(root, "tests", "controls")
board = open(os.path.join(src, "common", "controls.h")).read().replace("\\\n", " ")
rows = {m.group(1): (m.group(2).split(), m.group(3).split())
        for m in re.finditer(r'X\((CC_[A-Z]*_?TEST_[A-Z0-9_]+),\s*"([^"]*)",\s*"([^"]*)"\)', board)}
m = re.search(r'#define CC_CONTROL_BRANCHES\s+"([^"]*)"', board)
branched_ok = set(m.group(1).split()) if m else set()
cond = re.compile(r'^\s*#\s*(?:if|ifdef|ifndef|elif)\b(.*)$', re.M)
switch = re.compile(r'\bCC_(?:[A-Z]+_)?TEST_[A-Z0-9_]+\b')
files = []
for d, _, names in os.walk(src):
    files += [os.path.join(d, n) for n in names if n.endswith((".c", ".h")) and n != "controls.h"]
if extra:
    files.append(extra)
wrappers = sorted(os.path.join(ctl, n) for n in os.listdir(ctl) if n.endswith(".c")) if os.path.isdir(ctl) else []
bad = []
branched = set()
for f in files + wrappers:
    for line in cond.findall(open(f, errors="replace").read()):
        for m in switch.findall(line):
            if f not in wrappers and f != extra:
                branched.add(os.path.relpath(f, src))
            if m not in rows:
                bad.append(f"{m} is tested in {os.path.relpath(f, root)} but has no row in src/common/controls.h")
for f in sorted(branched - branched_ok):
    bad.append(f"src/{f} holds a test branch but is not in CC_CONTROL_BRANCHES (src/common/controls.h): "
               "move it to a control point and a wrapper in tests/controls/")
if len(branched_ok) > 3:
    bad.append(f"CC_CONTROL_BRANCHES lists {len(branched_ok)} files: at most 3 production files may hold "
               "test branches (docs/design.md, \"Negative controls\")")
for f in sorted(branched_ok - branched):
    bad.append(f"CC_CONTROL_BRANCHES names src/{f}, which holds no test branch: take it off the list")
# A wrapper: the production source it includes, and per switch the names it
# redirects (function-like macros defined under that switch's #ifdef).
wrapped, points = {}, {}
for w in wrappers:
    text = open(w).read()
    inc = re.search(r'^#include "([^"]+\.c)"', text, re.M)
    if not inc:
        bad.append(f"{os.path.relpath(w, root)} includes no source of src/")
        continue
    per, stack = {}, []
    for line in text.splitlines():
        c = re.match(r'\s*#\s*(ifdef|ifndef|if|endif|define)\b\s*(.*)', line)
        if not c:
            continue
        if c.group(1) in ("ifdef", "ifndef", "if"):
            stack.append(switch.findall(c.group(2)))
        elif c.group(1) == "endif":
            stack.pop()
        else:
            d = re.match(r'([A-Za-z_]\w*)\(', c.group(2))
            for sw in (x for s in stack for x in s):
                per.setdefault(sw, set()).update([d.group(1)] if d else [])
    wrapped[inc.group(1)] = (w, per)
    p = os.path.join(src, inc.group(1))
    if not os.path.isfile(p):
        bad.append(f"{os.path.relpath(w, root)} includes src/{inc.group(1)}, which does not exist")
        continue
    # Where the redirected names are control points: the source, or a
    # header under src/ that it includes.
    homes = [inc.group(1)]
    for h in re.findall(r'^\s*#\s*include\s*"([^"]+\.h)"', open(p).read(), re.M):
        for cand in (os.path.join(os.path.dirname(inc.group(1)), h), h):
            if os.path.isfile(os.path.join(src, cand)):
                homes.append(os.path.normpath(cand))
                break
    for sw, names in per.items():
        for n in sorted(names):
            at = [h for h in homes
                  if re.search(r'\bCC_CONTROL_POINT\(' + n + r'\)', open(os.path.join(src, h)).read())]
            if not at:
                bad.append(f"{sw}: {os.path.relpath(w, root)} redirects {n}, not a control point "
                           f"(CC_CONTROL_POINT) of src/{inc.group(1)} or a header it includes")
            for h in at:
                points.setdefault(sw, set()).add(h)
tests = None
if jpath:
    tests = {}
    for t in json.load(open(jpath)).get("tests", []):
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        tests[t["name"]] = bool(props.get("WILL_FAIL"))
for m, (fs, ts) in sorted(rows.items()):
    for f in fs:
        p = os.path.join(src, f)
        held = os.path.isfile(p) and re.search(r'\b' + m + r'\b', open(p).read())
        if not held and f not in points.get(m, ()):
            bad.append(f"{m}: src/{f} neither holds it nor has a control point that a wrapper "
                       "in tests/controls/ redirects under it")
    for f in sorted(points.get(m, set()) - set(fs)):
        bad.append(f"{m}: its wrappers redirect control points of src/{f}, which its row does not name")
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
        r = {os.path.relpath(f, root) for f in r} & lib
        # A wrapper that names a switch is compiled in the place of its source.
        for inc, (w, _) in wrapped.items():
            t = open(w).read()
            if "src/" + inc in lib and any(d in t for d in defs):
                r.discard("src/" + inc)
                r.add(os.path.relpath(w, root))
        return r
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
print(f"check_controls: {len(rows)} controls, each held by its files or their wrappers"
      + (" and failed by its registered tests" if tests is not None else "")
      + f"; {len(branched)} production files hold test branches")
PY
