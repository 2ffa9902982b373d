#!/usr/bin/env python3
"""Real clients under the compute cap run by tests/gpu/frameworks.sh.
Workers (run under the preload; each writes one line of results to OUT):
  frameworks.py capture N REPLAY_S OUT   N torch.cuda.graph captures of a unit
      of 8 kernels (4 x bf16 8192^2 mm + add), warmed up on a side stream as
      torch's own helpers do; counts failed captures; then replays the last
      good graph for REPLAY_S seconds.
  frameworks.py compile SECONDS OUT      torch.compile(mode="reduce-overhead")
      MLP, trained-step-free inference loop.
  frameworks.py jax SECONDS OUT          a jitted JAX loop of matmuls.
  frameworks.py triton SECONDS OUT       a Triton matmul kernel in a loop.
  frameworks.py eager SECONDS OUT        bf16 8192^2 matmuls, sync every 4.
  frameworks.py deepq N OUT              at start, N ~40 ms matmuls queued with
      no sync, then one sync; writes the wall time of the queue start (go).
  frameworks.py deepqnew N OUT           as deepq after a warm-up (one small
      matmul, a sync, 0.5 s idle: the bucket refilled), N matmuls of N new
      shapes (24576 - 256 i rows, ~40 ms each): the slots beside the probe.
      OUT.ends: when each matmul ended (ms after the first); PROFILE=1 adds
      OUT.prof, CUPTI's kernel records through torch.profiler: the device's
      busy time over the kernels' span, and each kernel's duration.
Sampler (not preloaded):
  frameworks.py sample SECONDS OUT PIDFILE   NVML every 100 ms: device
      utilization and the per-process samples of the pids in PIDFILE, one
      line per poll: t dev_util group_util|-  (- : no new per-process sample)
  frameworks.py trace SECONDS OUT REGION    the bucket, the share and the
      published sample of a compute region's first line every 10 ms.
  frameworks.py stats OUT FROM TO            avg and p90 of both columns of a
      sample file over [FROM, TO) seconds of wall time."""
import os, sys, time

SPAN = None  # (start, end) wall time of the measured steps, set by rate()

def rate(secs, step, sync):
    """step() four times, then sync(), until secs have passed: steps per second."""
    global SPAN
    t0, k = time.time(), 0
    while time.time() - t0 < secs:
        for _ in range(4):
            step()
        sync()
        k += 4
    SPAN = (t0, time.time())
    return k / (SPAN[1] - t0)

def out_line(path, s):
    """The result line; with it, the measured steps' span in PATH.span
    (frameworks.sh reads NVML over the span's end, not the process's: a
    torch.compile process takes ~11 s to exit)."""
    open(path, "w").write(s + "\n")
    if SPAN:
        open(path + ".span", "w").write("%.3f %.3f\n" % SPAN)
    print(s, flush=True)

def torch_capture(n, replay_s, out):
    import torch
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn_like(a)
    c = torch.zeros_like(a)

    def unit():
        x = c
        for _ in range(4):
            x = torch.mm(a, b).add_(x)
        return x
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            unit()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    fails, first, good, t_cap = 0, "", None, 0.0
    for i in range(n):
        g = torch.cuda.CUDAGraph()
        t0 = time.time()
        try:
            with torch.cuda.graph(g):
                unit()
            good = g
        except Exception as e:  # noqa: BLE001 - counting is the point
            fails += 1
            first = first or repr(e)[:200]
            torch.cuda.synchronize()
        t_cap += time.time() - t0
    replays = 0
    if good is not None and replay_s > 0:
        t0 = time.time()
        while time.time() - t0 < replay_s:
            for _ in range(10):
                good.replay()
            torch.cuda.synchronize()
            replays += 10
        rate = replays / (time.time() - t0)
    else:
        rate = 0.0
    out_line(out, f"captures {n} failures {fails} capture_ms_each {1e3 * t_cap / max(1, n):.2f} "
                  f"replays_per_s {rate:.2f} first_error {first or '-'}")

def torch_compile(secs, out):
    import torch
    m = torch.nn.Sequential(*[torch.nn.Linear(4096, 4096) for _ in range(8)]).cuda().to(torch.bfloat16)
    x = torch.randn(8192, 4096, device="cuda", dtype=torch.bfloat16)
    f = torch.compile(m, mode="reduce-overhead")
    t0 = time.time()
    with torch.no_grad():
        for _ in range(3):
            f(x)
        torch.cuda.synchronize()
        warm = time.time() - t0
        r = rate(secs, lambda: f(x), torch.cuda.synchronize)
        y = f(x)
    out_line(out, f"compile_warmup_s {warm:.1f} steps_per_s {r:.2f} "
                  f"finite {bool(torch.isfinite(y.float()).all())}")

def jax_loop(secs, out):
    import jax, jax.numpy as jnp

    @jax.jit
    def step(a, b):
        for _ in range(4):
            a = jnp.tanh(a @ b)
        return a
    k0 = jax.random.PRNGKey(0)
    a = jax.random.normal(k0, (8192, 8192), dtype=jnp.bfloat16)
    b = jax.random.normal(k0, (8192, 8192), dtype=jnp.bfloat16) / 100
    st = {"a": step(a, b)}
    st["a"].block_until_ready()

    def one():
        st["a"] = step(st["a"], b)
    r = rate(secs, one, lambda: st["a"].block_until_ready())
    out_line(out, f"jax_steps_per_s {r:.2f} device {jax.devices()[0].platform}")

def triton_matmul(n=8192):
    """A Triton bf16 n x n matmul kernel on fresh tensors: (run, sync)."""
    import torch, triton, triton.language as tl

    @triton.jit
    def mm(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        pm, pn = tl.program_id(0), tl.program_id(1)
        rm = pm * BM + tl.arange(0, BM)
        rn = pn * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            x = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
            y = tl.load(b + (k + rk)[:, None] * N + rn[None, :])
            acc += tl.dot(x, y)
        tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.bfloat16))
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn_like(a)
    c = torch.empty_like(a)
    grid = (n // 128, n // 128)
    run = lambda: mm[grid](a, b, c, n, n, n, BM=128, BN=128, BK=64)
    run(); torch.cuda.synchronize()
    return run, torch.cuda.synchronize

def triton_loop(secs, out):
    run, sync = triton_matmul()
    out_line(out, f"triton_per_s {rate(secs, run, sync):.2f}")

def eager(secs, out):
    import torch
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn_like(a)
    torch.mm(a, b); torch.cuda.synchronize()
    out_line(out, f"eager_per_s {rate(secs, lambda: torch.mm(a, b), torch.cuda.synchronize):.2f}")

def deepq(n, out):
    import torch
    # 2 x 24576^3 = 3.0e13 flop: ~40 ms per matmul on an H200 in bf16.
    a = torch.randn(24576, 24576, device="cuda", dtype=torch.bfloat16)
    b = torch.randn_like(a)
    torch.cuda.synchronize()
    go = time.time()
    for _ in range(n):
        torch.mm(a, b)
    queued = time.time() - go
    torch.cuda.synchronize()
    out_line(out, f"go {go:.3f} queued_s {queued:.3f} done_s {time.time() - go:.2f}")

def deepqnew(n, out):
    import torch
    a = torch.randn(24576, 24576, device="cuda", dtype=torch.bfloat16)
    b = torch.randn_like(a)
    torch.mm(a[:64, :64], b[:64, :64])
    torch.cuda.synchronize()
    time.sleep(0.5)
    prof = None
    if os.environ.get("PROFILE"):  # CUPTI's kernel records: the device time itself
        from torch.profiler import profile, ProfilerActivity
        prof = profile(activities=[ProfilerActivity.CUDA])
        prof.__enter__()
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    go = time.time()
    for i in range(n):
        torch.mm(a[: 24576 - 256 * i], b)  # a row slice: a view, a new grid each
        ends[i].record()
    queued = time.time() - go
    torch.cuda.synchronize()
    done = time.time() - go
    # When each matmul ended, ms after the first one ended.
    open(out + ".ends", "w").write(" ".join(f"{ends[0].elapsed_time(e):.0f}" for e in ends) + "\n")
    if prof:
        prof.__exit__(None, None, None)
        ks = sorted((e.time_range.start, e.time_range.end) for e in prof.events()
                    if e.device_type == torch.autograd.DeviceType.CUDA and e.time_range.end > e.time_range.start)
        busy, cur = 0.0, None
        for s, e in ks:  # the union of kernel intervals, us
            if cur and s <= cur[1]:
                cur[1] = max(cur[1], e)
            else:
                busy += cur[1] - cur[0] if cur else 0
                cur = [s, e]
        busy += cur[1] - cur[0] if cur else 0
        span = ks[-1][1] - ks[0][0] if ks else 0
        open(out + ".prof", "w").write(
            f"kernels {len(ks)} busy_ms {busy / 1e3:.1f} span_ms {span / 1e3:.1f} busy_pct "
            f"{100 * busy / span if span else 0:.1f} durations_ms "
            + " ".join(f"{(e - s) / 1e3:.1f}" for s, e in ks) + "\n")
    out_line(out, f"go {go:.3f} queued_s {queued:.3f} done_s {done:.2f}")

def trace(secs, out, region):
    """The container's first compute line (compute.region, dev[0]) every
    10 ms: t tokens_ms share_ms user_pct device_pct throttled."""
    import struct
    while not os.path.exists(region):
        time.sleep(0.01)
    t0 = time.time()
    with open(out, "w", buffering=1) as f, open(region, "rb", buffering=0) as r:  # unbuffered: a buffered seek would re-read its own copy
        while time.time() - t0 < secs:
            r.seek(64)
            b = r.read(64)
            if len(b) == 64:
                tok, _, share = struct.unpack_from("<qQq", b, 0)
                sample, = struct.unpack_from("<I", b, 36)
                thr, = struct.unpack_from("<I", b, 48)
                f.write(f"{time.time():.3f} {tok / 1e6:.2f} {share / 1e6:.2f} "
                        f"{(sample & 0xffff) / 10:.1f} {(sample >> 16) / 10:.1f} {thr}\n")
            time.sleep(0.01)

def sample(secs, out, pidfile):
    import pynvml
    while not os.path.exists(pidfile):
        time.sleep(0.05)
    time.sleep(0.2)
    pids = {int(x) for x in open(pidfile).read().split()}
    pynvml.nvmlInit()
    h = pynvml.nvmlDeviceGetHandleByIndex(0)
    last = int(time.time() * 1e6)
    t0 = time.time()
    with open(out, "w", buffering=1) as f:  # line-buffered: the sampler is killed
        while time.time() - t0 < secs:
            time.sleep(0.1)
            try:
                ss = pynvml.nvmlDeviceGetProcessUtilization(h, last)
            except pynvml.NVMLError:
                ss = []
            last = int(time.time() * 1e6)
            dev = pynvml.nvmlDeviceGetUtilizationRates(h).gpu
            per = {}
            for s in ss:
                per.setdefault(s.pid, []).append(s.smUtil)
            grp = sum(sum(v) / len(v) for p, v in per.items() if p in pids) if ss else None
            f.write(f"{time.time():.3f} {dev} {'-' if grp is None else f'{grp:.1f}'}\n")

def stats(path, t_from, t_to):
    dev, grp = [], []
    for line in open(path):
        t, d, g = line.split()
        if t_from <= float(t) < t_to:
            dev.append(float(d))
            if g != "-":
                grp.append(float(g))
    def s(v):
        if not v:
            return "no samples"
        v = sorted(v)
        return f"avg {sum(v) / len(v):.1f} p90 {v[int(0.9 * (len(v) - 1))]:.1f} max {v[-1]:.0f} ({len(v)})"
    print(f"device: {s(dev)} | process: {s(grp)}")

if __name__ == "__main__":
    m, a = sys.argv[1], sys.argv[2:]
    if m == "capture": torch_capture(int(a[0]), float(a[1]), a[2])
    elif m == "compile": torch_compile(float(a[0]), a[1])
    elif m == "jax": jax_loop(float(a[0]), a[1])
    elif m == "triton": triton_loop(float(a[0]), a[1])
    elif m == "eager": eager(float(a[0]), a[1])
    elif m == "deepq": deepq(int(a[0]), a[1])
    elif m == "deepqnew": deepqnew(int(a[0]), a[1])
    elif m == "sample": sample(float(a[0]), a[1], a[2])
    elif m == "stats": stats(a[0], float(a[1]), float(a[2]))
    elif m == "trace": trace(float(a[0]), a[1], a[2])
    else: sys.exit(__doc__)
