#!/usr/bin/env python3
"""Does a context's own kernel time stretch when another context's work
arrives on a time-sliced GPU? (elastic caps: a contention signal that does not
wait for NVML to name the newcomer.) Run by tests/gpu/stretch.sh.
  stretch.py work KIND START END TOGGLE OUT   like elastic.py's worker, but
      every kernel between two events: one line per kernel, the wall time of
      the sync that completed it and its event-timed duration (ms).
  stretch.py report BASE_FROM BASE_TO ONSET... -- OUT...   per onset (wall
      time a neighbour's work began): the median duration in the baseline
      window, and the first 25 ms bin after the onset whose median is over
      1.5x the baseline (the delay), for the kernels of OUT... together."""
import statistics, sys, time


def work(kind, start, end, toggle, out):
    import torch
    n, per = (8192, 4) if kind == "long" else (1024, 64)
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn_like(a)
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(per)]
    for _ in range(per):
        torch.mm(a, b)
    torch.cuda.synchronize()
    with open(out, "w", buffering=1) as f:
        while time.time() < start:
            time.sleep(0.005)
        while True:
            now = time.time()
            if now >= end:
                break
            if toggle > 0 and int((now - start) / toggle) % 2 == 1:
                time.sleep(min(end, start + (int((now - start) / toggle) + 1) * toggle) - now)
                continue
            for s, e in ev:
                s.record()
                torch.mm(a, b)
                e.record()
            torch.cuda.synchronize()
            t = time.time()
            f.write("".join(f"{t:.4f} {s.elapsed_time(e):.4f}\n" for s, e in ev))


def load(paths):
    v = []
    for p in paths:
        try:
            v += [(float(a), float(b)) for a, b in (l.split() for l in open(p))]
        except OSError:
            pass
    return sorted(v)


def report(base_from, base_to, onsets, outs):
    v = load(outs)
    base = [d for t, d in v if base_from <= t < base_to]
    if not base:
        print("no baseline kernels")
        return
    m = statistics.median(base)
    print(f"baseline median {m:.3f} ms over {len(base)} kernels (p90 {sorted(base)[int(len(base) * 0.9)]:.3f})")
    for on in onsets:
        row = []
        delay = None
        for k in range(40):  # 1 s in 25 ms bins
            b = [d for t, d in v if on + k * 0.025 <= t < on + (k + 1) * 0.025]
            md = statistics.median(b) if b else None
            row.append("-" if md is None else f"{md / m:.2f}")
            if delay is None and md is not None and md > 1.5 * m:
                delay = k * 0.025
        after = [d for t, d in v if on + 0.2 <= t < on + 1.5]
        print(f"onset {on:.3f}: 1.5x after {delay} s; median 0.2-1.5 s after "
              f"{(statistics.median(after) / m) if after else float('nan'):.2f}x; bins {' '.join(row[:16])}")


if __name__ == "__main__":
    m, a = sys.argv[1], sys.argv[2:]
    if m == "work":
        work(a[0], float(a[1]), float(a[2]), float(a[3]), a[4])
    elif m == "report":
        i = a.index("--")
        report(float(a[0]), float(a[1]), [float(x) for x in a[2:i]], a[i + 1:])
