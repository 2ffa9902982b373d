#!/usr/bin/env python3
"""Real GPU, run by tests/gpu/compute_matrix.sh.
  compute_torch.py work SECONDS N OUTFILE
      under the preload: back-to-back N x N fp16 matmuls (N=8192: ~1 wave of
      long blocks; N=1024 x 64 batched: many short blocks) for SECONDS; writes
      the matmuls done per second to OUTFILE.
  compute_torch.py long SECONDS OUTFILE
      under the preload: kernels of >= 50 ms each (one 32768^2 fp16 matmul
      per kernel), gpu_burn-like.
  compute_torch.py sample SECONDS WARM PIDFILE...
      not preloaded: NVML per-process utilization every 100 ms, summed per
      PIDFILE group (one group per container); prints avg and p90 per group
      over SECONDS after WARM."""
import os, sys, time

mode = sys.argv[1]
if mode in ("work", "long"):
    import torch
    secs = float(sys.argv[2])
    if mode == "work":
        n, out = int(sys.argv[3]), sys.argv[4]
        if n >= 4096:
            a = torch.randn(n, n, device="cuda", dtype=torch.float16); b = torch.randn_like(a)
            step = lambda: torch.mm(a, b)
        else:  # many short blocks: a batch of small matmuls
            a = torch.randn(64, n, n, device="cuda", dtype=torch.float16); b = torch.randn_like(a)
            step = lambda: torch.bmm(a, b)
    else:
        out = sys.argv[3]
        # 2 x 32768^3 = 7e13 flop: ~100 ms per kernel on an H200 in fp16
        # (16384^2 would be ~13 ms, not a long kernel there).
        a = torch.randn(32768, 32768, device="cuda", dtype=torch.float16); b = torch.randn_like(a)
        step = lambda: torch.mm(a, b)
    step(); torch.cuda.synchronize()
    t0, k = time.time(), 0
    while time.time() - t0 < secs:
        for _ in range(4):
            step()
        torch.cuda.synchronize()
        k += 4
    open(out, "w").write(f"{k / (time.time() - t0):.3f}\n")
elif mode == "sample":
    import pynvml
    secs, warm = float(sys.argv[2]), float(sys.argv[3])
    groups = []
    for f in sys.argv[4:]:
        while not os.path.exists(f):
            time.sleep(0.05)
        time.sleep(0.2)
        groups.append({int(x) for x in open(f).read().split()})
    pynvml.nvmlInit()
    h = pynvml.nvmlDeviceGetHandleByIndex(0)
    samples = [[] for _ in groups]
    dev = []  # NVML device utilization (what the bars are about)
    last = int(time.time() * 1e6)
    t0 = time.time()
    while time.time() - t0 < warm + secs:
        time.sleep(0.1)
        try:
            ss = pynvml.nvmlDeviceGetProcessUtilization(h, last)
        except pynvml.NVMLError:
            ss = []
        last = int(time.time() * 1e6)
        if time.time() - t0 < warm:
            continue
        dev.append(pynvml.nvmlDeviceGetUtilizationRates(h).gpu)
        if not ss:  # no new per-process sample since the last poll: no data
            continue
        per = {}
        for s in ss:
            per.setdefault(s.pid, []).append(s.smUtil)
        for g, out in zip(groups, samples):
            out.append(sum(sum(v) / len(v) for p, v in per.items() if p in g))
    dev.sort()
    if dev:
        print(f"device: avg {sum(dev) / len(dev):.1f} p90 {dev[int(0.9 * (len(dev) - 1))]:.1f} "
              f"({len(dev)} samples)")
    for i, out in enumerate(samples):
        out.sort()
        avg = sum(out) / max(1, len(out))
        p90 = out[int(0.9 * (len(out) - 1))] if out else 0
        print(f"group {i}: avg {avg:.1f} p90 {p90:.1f} ({len(out)} samples)")
