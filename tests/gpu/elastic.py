#!/usr/bin/env python3
"""Elastic caps on a real GPU run by tests/gpu/elastic.sh.
Worker (under the preload):
  elastic.py work KIND START END TOGGLE OUT   from wall time START to END,
      KIND long (bf16 8192^2 matmuls, ~1.7 ms each on an H200, 4 per sync)
      or short (bf16 1024^2 matmuls, ~10 us each, 64 per sync); with
      TOGGLE > 0 on for TOGGLE s, off for TOGGLE s from START on (the
      context made and warmed before START). One line per sync: wall time
      and the kernels it completed.
Samplers (not preloaded):
  elastic.py nvml SECONDS OUT PIDFILE...   every 100 ms: device utilization
      and, per PIDFILE (a container), the sum of its pids' per-process
      samples ('-': no new sample), one line per poll.
  elastic.py status SECONDS OUT CUDACAP ROOT   every 50 ms `cudacap status
      --json ROOT`: per container, target percent and borrowing.
Analysis:
  elastic.py rate OUT FROM TO                kernels per second in [FROM, TO)
  elastic.py yield STATUS NAME FROM HARD     first time after FROM at which
      NAME's target is at most HARD + 0.5: seconds after FROM
  elastic.py drops STATUS NAME FROM TO HARD  yields in [FROM, TO): how many,
      at which seconds after FROM
  elastic.py first OUT                       wall time of the first sync
  elastic.py windows BARE FROM TO WIN OUT...  min and max over windows of WIN
      s in [FROM, TO) of the share (percent of BARE kernels/s) of OUT...
  elastic.py drop BARE FROM LEVEL WIN OUT...  seconds after FROM until the
      share of OUT... over a window of WIN s is at most LEVEL percent"""
import json, os, subprocess, sys, time


def work(kind, start, end, toggle, out):
    import torch
    n, per = (8192, 4) if kind == "long" else (1024, 64)
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn_like(a)
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
            for _ in range(per):
                torch.mm(a, b)
            torch.cuda.synchronize()
            f.write(f"{time.time():.4f} {per}\n")


def nvml(secs, out, pidfiles):
    import pynvml
    groups = []
    for p in pidfiles:
        while not os.path.exists(p):
            time.sleep(0.05)
    time.sleep(0.2)
    pynvml.nvmlInit()
    h = pynvml.nvmlDeviceGetHandleByIndex(0)
    last = int(time.time() * 1e6)
    t0 = time.time()
    # OUT.raw: every sample NVML returned (poll time, pid, smUtil, its
    # timeStamp, the container it belongs to: how the driver attributes).
    with open(out, "w", buffering=1) as f, open(out + ".raw", "w", buffering=1) as raw:
        while time.time() - t0 < secs:
            time.sleep(0.1)
            groups = [{int(x) for x in open(p).read().split()} for p in pidfiles]
            try:
                ss = pynvml.nvmlDeviceGetProcessUtilization(h, last)
            except pynvml.NVMLError:
                ss = []
            if ss:
                last = max(s.timeStamp for s in ss)
            dev = pynvml.nvmlDeviceGetUtilizationRates(h).gpu
            now = time.time()
            per = {}
            for s in ss:
                per.setdefault(s.pid, []).append(s.smUtil)
                g = next((i for i, grp in enumerate(groups) if s.pid in grp), -1)
                raw.write(f"{now:.3f} {s.pid} {s.smUtil} {s.timeStamp / 1e6:.3f} {g}\n")
            cols = []
            for g in groups:
                cols.append("-" if not ss else f"{sum(sum(v) / len(v) for p, v in per.items() if p in g):.1f}")
            f.write(f"{now:.3f} {dev} {' '.join(cols)}\n")


def status(secs, out, cli, root):
    t0 = time.time()
    with open(out, "w", buffering=1) as f:
        while time.time() - t0 < secs:
            try:
                j = json.loads(subprocess.run([cli, "status", "--json", root], capture_output=True,
                                              text=True, timeout=2).stdout)
            except Exception:
                time.sleep(0.05)
                continue
            t = time.time()
            for c in j.get("containers", []):
                for d in c.get("devices", [])[:1]:
                    f.write(f"{t:.3f} {c['name']} {d.get('sm_limit_percent')} {d.get('sm_target_percent')} "
                            f"{int(bool(d.get('borrowing')))} {d.get('borrowed_device_seconds')}\n")
            time.sleep(0.05)


def lines(path):
    try:
        return [l.split() for l in open(path)]
    except OSError:
        return []


def rate(path, t_from, t_to):
    k = sum(int(n) for t, n in lines(path) if t_from <= float(t) < t_to)
    return k / (t_to - t_from)


def yield_time(path, name, t_from, hard):
    for l in lines(path):
        if l[1] == name and float(l[0]) >= t_from and l[3] != "None" and float(l[3]) <= hard + 0.5:
            return float(l[0]) - t_from
    return None


def drops(path, name, t_from, t_to, hard):
    """Times in [t_from, t_to) at which the target fell from above hard + 10
    to hard (a yield, provisional or not)."""
    out, prev = [], None
    for l in lines(path):
        if l[1] != name or l[3] == "None":
            continue
        t, x = float(l[0]), float(l[3])
        if t_from <= t < t_to and prev is not None and prev > hard + 10 and x <= hard + 0.5:
            out.append(t)
        prev = x
    return out


def share(outs, bare, t0, t1):
    return sum(rate(o, t0, t1) for o in outs) / bare * 100.0


def windows(bare, t_from, t_to, win, outs):
    v = []
    t = t_from
    while t + win <= t_to:
        v.append(share(outs, bare, t, t + win))
        t += win / 2
    return (min(v), max(v)) if v else (None, None)


def drop(bare, t_from, level, win, outs):
    t = t_from
    while t < t_from + 30:
        if share(outs, bare, t, t + win) <= level:
            return t - t_from
        t += 0.02
    return None


if __name__ == "__main__":
    m, a = sys.argv[1], sys.argv[2:]
    if m == "work": work(a[0], float(a[1]), float(a[2]), float(a[3]), a[4])
    elif m == "nvml": nvml(float(a[0]), a[1], a[2:])
    elif m == "status": status(float(a[0]), a[1], a[2], a[3])
    elif m == "rate": print(f"{rate(a[0], float(a[1]), float(a[2])):.1f}")
    elif m == "yield":
        y = yield_time(a[0], a[1], float(a[2]), float(a[3]))
        print("never" if y is None else f"{y:.3f}")
    elif m == "drops":
        d = drops(a[0], a[1], float(a[2]), float(a[3]), float(a[4]))
        print(f"{len(d)}" + (" at " + " ".join(f"{t - float(a[2]):.2f}" for t in d) if d else ""))
    elif m == "first":
        l = lines(a[0])
        print(l[0][0] if l else "none")
    elif m == "windows":
        lo, hi = windows(float(a[0]), float(a[1]), float(a[2]), float(a[3]), a[4:])
        print("no windows" if lo is None else f"min {lo:.1f} max {hi:.1f}")
    elif m == "drop":
        y = drop(float(a[0]), float(a[1]), float(a[2]), float(a[3]), a[4:])
        print("never" if y is None else f"{y:.3f}")
    elif m == "share":
        print(f"{share(a[3:], float(a[0]), float(a[1]), float(a[2])):.1f}")
    else: sys.exit(__doc__)
