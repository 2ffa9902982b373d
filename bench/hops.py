#!/usr/bin/env python3
"""Calls per wrapper call, from a callgrind profile of one thread.

   bench/hops.py PROFILE WRAPPER [WRAPPER...]

Walks the call graph below each named wrapper of libcudacap.so (inclusive
call arcs, as callgrind records them: caller -> callee, count) and prints,
per call of the wrappers, how many calls were made inside libcudacap.so
(the hops) and how many left it for the driver, NVML or libc. A function
reached from two wrappers is counted under each in proportion to its
callers' counts. Used by bench/hops.sh; docs/design.md ("The walk")."""
import re
import sys
from collections import defaultdict


def parse(path):
    names = {"ob": {}, "fn": {}, "cob": {}, "cfn": {}, "fl": {}, "fi": {}, "fe": {}, "cfi": {}, "cfl": {}}
    shared = {}  # callgrind compresses fn and cfn into one table, ob and cob into another

    def name(kind, val):
        table = "fn" if kind in ("fn", "cfn") else ("ob" if kind in ("ob", "cob") else "fl")
        m = re.match(r"\((\d+)\)(?: (.*))?$", val)
        if not m:
            return val
        key = (table, m.group(1))
        if m.group(2) is not None:
            shared[key] = m.group(2)
        return shared.get(key, val)

    arcs = defaultdict(int)  # (caller_ob, caller_fn, callee_ob, callee_fn) -> calls
    ob = fn = cob = cfn = None
    pending = None
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("ob="):
                ob = name("ob", line[3:])
            elif line.startswith("fn="):
                fn = name("fn", line[3:])
                cob = None
            elif line.startswith("cob="):
                cob = name("cob", line[4:])
            elif line.startswith("cfn="):
                cfn = name("cfn", line[4:])
            elif line.startswith("calls="):
                pending = int(line[6:].split()[0])
            elif pending is not None:
                arcs[(ob, fn, cob or ob, cfn)] += pending
                pending = None
                cob = None
    return arcs


def main():
    path, wrappers = sys.argv[1], sys.argv[2:]
    arcs = parse(path)
    out = defaultdict(list)
    into = defaultdict(int)
    for (o, f, co, cf), n in arcs.items():
        out[(o, f)].append(((co, cf), n))
        into[(co, cf)] += n
    ours = lambda o: o and "libcudacap" in o
    for w in wrappers:
        roots = [k for k in into if ours(k[0]) and k[1] == w]
        calls = sum(into[k] for k in roots)
        if not calls:
            print(f"{w}: not called")
            continue
        inside = defaultdict(float)
        leaving = defaultdict(float)
        # Breadth-first over the call graph, each function's calls scaled by
        # the share of its calls that came from this walk.
        frontier = {k: float(into[k]) for k in roots}
        seen = 0
        while frontier and seen < 64:
            seen += 1
            nxt = defaultdict(float)
            for k, reached in frontier.items():
                share = reached / into[k] if into[k] else 0.0
                for callee, n in out.get(k, []):
                    c = n * share
                    if ours(callee[0]):
                        inside[callee[1]] += c
                        nxt[callee] += c
                    else:
                        leaving[callee[1]] += c
            frontier = nxt
        hops = sum(inside.values()) / calls
        left = sum(leaving.values()) / calls
        print(f"{w}: {calls} calls; per call {hops:.1f} calls inside cudacap, {left:.1f} out")
        for fn_, c in sorted(inside.items(), key=lambda x: -x[1]):
            if c / calls >= 0.05:
                print(f"    {c / calls:5.2f}  {fn_}")
        for fn_, c in sorted(leaving.items(), key=lambda x: -x[1]):
            if c / calls >= 0.05:
                print(f"    {c / calls:5.2f}  -> {fn_}")


if __name__ == "__main__":
    main()
