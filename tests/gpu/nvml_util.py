#!/usr/bin/env python3
"""The watcher's cheap path, checked: while a container is alone
on the device, does NVML's device-wide utilization (16 us a call) read what
the per-process samples (2.4 ms a call) read, for kernels that fill one SM as
well as for full waves? One process runs KIND at a duty cycle; the parent
samples both queries for SECS and prints their means.
  nvml_util.py KIND DUTY SECS     KIND: one-sm (torch.cuda._sleep, 1 block)
                                  or wave (bf16 8192^2 matmuls)
  nvml_util.py step KIND          the device query's window: KIND idle, then
      busy at 100 % from a known instant; device utilization read every 20 ms
      and the per-process samples' times, against the onset"""
import ctypes, multiprocessing as mp, sys, time


class Util(ctypes.Structure):
    _fields_ = [("gpu", ctypes.c_uint), ("memory", ctypes.c_uint)]


class Sample(ctypes.Structure):
    _fields_ = [("pid", ctypes.c_uint), ("ts", ctypes.c_ulonglong), ("sm", ctypes.c_uint),
                ("mem", ctypes.c_uint), ("enc", ctypes.c_uint), ("dec", ctypes.c_uint)]


def worker(kind, duty, secs, ready, idle_first=0.0):
    import torch
    if kind == "wave":
        a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
        b = torch.randn_like(a)
        torch.mm(a, b)
    torch.cuda.synchronize()
    # _sleep spins a clock count: calibrate to ~2 ms a kernel
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record(); torch.cuda._sleep(2_000_000); e.record(); torch.cuda.synchronize()
    cycles = int(2_000_000 * 2.0 / max(s.elapsed_time(e), 1e-3))
    ready.set()
    time.sleep(idle_first)
    end = time.time() + secs
    while time.time() < end:
        t0 = time.time()
        while time.time() - t0 < 0.1 * duty:  # busy part of a 100 ms period
            for _ in range(4):
                torch.cuda._sleep(cycles) if kind == "one-sm" else torch.mm(a, b)
            torch.cuda.synchronize()
        rest = 0.1 - (time.time() - t0)
        if rest > 0:
            time.sleep(rest)


def step(kind):
    ready = mp.get_context("spawn").Event()
    p = mp.get_context("spawn").Process(target=worker, args=(kind, 1.0, 3.0, ready, 2.0))
    p.start()
    ready.wait(60)
    onset = time.time() + 2.0  # the worker's idle 2 s start now
    nv = ctypes.CDLL("libnvidia-ml.so.1")
    nv.nvmlInit_v2()
    dev = ctypes.c_void_p()
    nv.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(dev))
    buf = (Sample * 64)()
    rows, procs, seen = [], [], 0
    while time.time() < onset + 4.0:
        u = Util()
        nv.nvmlDeviceGetUtilizationRates(dev, ctypes.byref(u))
        rows.append((time.time() - onset, u.gpu))
        n = ctypes.c_uint(64)
        if nv.nvmlDeviceGetProcessUtilization(dev, buf, ctypes.byref(n), ctypes.c_ulonglong(seen)) == 0:
            for i in range(n.value):
                if buf[i].ts > seen:
                    procs.append((buf[i].ts / 1e6 - onset, buf[i].sm))
            seen = max([buf[i].ts for i in range(n.value)] + [seen])
        time.sleep(0.02)
    p.join()
    first = lambda lvl: next((f"{t:.3f}" for t, g in rows if t > 0 and g >= lvl), "never")
    last0 = max((t for t, g in rows if t <= 0 and g > 5), default=None)
    print(f"step {kind}: device util >= 50 % at {first(50)} s, >= 95 % at {first(95)} s after the onset "
          f"(busy before it: {last0}); after the stop (onset + 3 s): "
          f"{' '.join(f'{t:.2f}:{g}' for t, g in rows if 2.9 < t < 4.0)[:400]}")
    print("  device util around the onset: " + " ".join(f"{t:.2f}:{g}" for t, g in rows if -0.3 < t < 1.3))
    print("  per-process samples (end time, smUtil): " + " ".join(f"{t:.2f}:{v}" for t, v in procs if -0.5 < t < 3.5))


def main():
    if sys.argv[1] == "step":
        return step(sys.argv[2])
    kind, duty, secs = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    ready = mp.get_context("spawn").Event()
    p = mp.get_context("spawn").Process(target=worker, args=(kind, duty, secs + 1.5, ready))
    p.start()
    ready.wait(60)
    time.sleep(1.0)
    nv = ctypes.CDLL("libnvidia-ml.so.1")
    nv.nvmlInit_v2()
    dev = ctypes.c_void_p()
    nv.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(dev))
    buf = (Sample * 64)()
    last = ctypes.c_ulonglong(0)
    dev_u, proc_u = [], []
    end = time.time() + secs
    while time.time() < end:
        time.sleep(0.5)
        u = Util()
        if nv.nvmlDeviceGetUtilizationRates(dev, ctypes.byref(u)) == 0:
            dev_u.append(u.gpu)
        n = ctypes.c_uint(64)
        if nv.nvmlDeviceGetProcessUtilization(dev, buf, ctypes.byref(n), last) == 0:
            # every sample: the worker is the GPU's only process, and its pid as NVML
            # names it is the host's (the device machine's container has its own)
            sm = [buf[i].sm for i in range(n.value) if buf[i].ts > last.value]
            last = ctypes.c_ulonglong(max([buf[i].ts for i in range(n.value)] + [last.value]))
            if sm:
                proc_u.append(sum(sm) / len(sm))
    p.join()
    mean = lambda v: sum(v) / len(v) if v else float("nan")
    print(f"{kind} duty {duty:.2f}: device util {mean(dev_u):.1f} % ({len(dev_u)} reads), "
          f"per-process smUtil {mean(proc_u):.1f} % ({len(proc_u)} reads)")


if __name__ == "__main__":
    main()
