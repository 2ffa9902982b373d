#!/usr/bin/env python3
"""Real GPU, run by tests/gpu/mem_gpu.sh under the preload.
  mem_torch.py cap GIB     allocate 256 MiB blocks until OOM: expects
                           torch.cuda.OutOfMemoryError at <= GIB and
                           mem_get_info total == GIB.
  mem_torch.py hold GIB    allocate GIB, print READY, sleep (for kill tests).
  mem_torch.py share GIB   allocate until OOM, hold 5 s, exit (4 at once)."""
import os, sys, time
import torch

mode, gib = sys.argv[1], float(sys.argv[2])
G = 1 << 30
torch.cuda.init()
free, total = torch.cuda.mem_get_info()
blocks = []
if mode == "cap":
    assert abs(total - gib * G) < 1 << 20, f"mem_get_info total {total}, want {gib} GiB"
    try:
        while True:
            blocks.append(torch.empty(256 << 20, dtype=torch.uint8, device="cuda"))
    except torch.cuda.OutOfMemoryError:
        got = len(blocks) * 256 / 1024
        print(f"OOM after {got:.2f} GiB of a {gib} GiB cap")
        try:  # what nvidia-smi would show for this process, at the cap
            import pynvml
            pynvml.nvmlInit()
            h = pynvml.nvmlDeviceGetHandleByIndex(0)
            mine = [p.usedGpuMemory for p in pynvml.nvmlDeviceGetComputeRunningProcesses(h)
                    if p.pid == os.getpid()]
            if mine:
                print(f"NVML per-process memory at the cap: {mine[0] / G:.3f} GiB")
                assert mine[0] <= gib * G, "NVML per-process memory passed the cap"
        except ImportError:
            print("pynvml missing: per-process memory not checked")
        assert got <= gib, "allocated past the cap"
        assert got >= gib - 1.5, "refused far below the cap"
    print("PASS")
elif mode == "hold":
    blocks.append(torch.empty(int(gib * G), dtype=torch.uint8, device="cuda"))
    print("READY", flush=True)
    time.sleep(3600)
elif mode == "share":
    try:
        while True:  # slowly, so that the four processes interleave
            blocks.append(torch.empty(256 << 20, dtype=torch.uint8, device="cuda"))
            time.sleep(0.1)
    except torch.cuda.OutOfMemoryError:
        pass
    print(f"pid {os.getpid()} holds {len(blocks) * 256} MiB", flush=True)
    time.sleep(5)
