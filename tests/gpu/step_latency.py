#!/usr/bin/env python3
"""What a latency-sensitive client feels under the compute cap,
run by tests/gpu/pacing.sh. Each worker writes one line of results to OUT
(and prints it):
  step_latency.py decode graph|eager SECS OUT   an inference server's decode
      loop: one step = 3 chained bf16 4096^2 matmuls (~0.6 ms on the H200),
      replayed from a torch.cuda.graph (graph) or launched (eager), then a
      synchronize; 2 s warm-up, SECS measured.
      OUT: p50_ms p99_ms max_ms steps_per_s t_from t_to (the measured
      window in wall-clock seconds, for the NVML sampler beside it)
      STEP_DUTY=D (percent): after each step the host idles so that the
      device is busy D % of the time (the step's own time x (100/D - 1)),
      and a step is timed alone: bare at a cap's duty cycle, so at the
      clock the device runs at under that cap.
  step_latency.py tiny SECS OUT          an empty CuPy kernel, launched and
      synchronised one by one: launch-to-completion. OUT: p50_us p99_us
  step_latency.py shapes OUT             16 grid sizes x 62 launches of an
      empty CuPy kernel, round-robin, no sync: the time inside each launch
      call. OUT: p50_us p99_us; every launch's µs in OUT.raw
  step_latency.py gpt2 TOKENS OUT        GPT-2 small (random weights: no
      download), fp16, batch 1, generate TOKENS tokens greedily: one warm-up
      generate, then GPT2_GENS (5). OUT: median_ms_per_token min max (one
      generate varied 1.75x between bare runs on the H200); every
      generate's ms/token in OUT.raw. Under the library with
      CUDACAP_COUNT_CALLS=1, OUT gains a fourth field: the share of the
      timed generates' wall time that their launches spent in the compute
      cap's gate (cudacap_gate_ns), so that capped throughput / bare is at
      least 1 - that share for this launch-bound loop; "-" otherwise.
  step_latency.py tokloop SECS OUT       a token-generation loop of tiny
      kernels (64 small ops a token on 1x768 tensors, a sync a token).
      OUT: mean_ms std_ms p99_ms
  step_latency.py gpt2live BLOCKS OUT    GPT-2 as above in ONE preloaded
      process whose folder (CUDACAP_STATE_DIR) was prepared with an SM cap,
      that cap and none (`$CLI set --sm 100`) alternating in blocks C U U C,
      BLOCKS times: each phase 0.3 s after its set, one generate untimed,
      then the median ms/token of three. Paired in one process, the cap's
      cost is told apart from the 1.0-2.1x that separate processes differ
      by. OUT: one line per block: capped uncapped ratio (means of its two
      phases each); the summary is printed."""
import os, statistics, sys, time


def out_line(path, s):
    open(path, "w").write(s + "\n")
    print(s, flush=True)


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(len(v) * q))]


def decode(mode, secs, out):
    import torch
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16) / 64
    x = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    y = torch.empty_like(x)

    def step():
        t = x @ a
        t = t @ a
        y.copy_(t @ a)

    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    run = step
    if mode == "graph":
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            step()
        run = g.replay
    duty = float(os.environ.get("STEP_DUTY", "0") or 0)
    times, t_end_warm = [], time.perf_counter() + 2.0
    t_end = t_end_warm + secs
    wall_from = time.time() + 2.0
    prev = time.perf_counter()
    while True:
        run()
        torch.cuda.synchronize()
        now = time.perf_counter()
        if prev >= t_end_warm:
            times.append(now - prev)
        if duty:
            spin_until = now + (now - prev) * (100.0 / duty - 1)
            time.sleep(max(0.0, spin_until - time.perf_counter() - 0.0002))
            while time.perf_counter() < spin_until:
                pass
            now = time.perf_counter()
        prev = now
        if now >= t_end:
            break
    out_line(out, "%.3f %.3f %.3f %.1f %.3f %.3f" % (
        pct(times, 0.5) * 1e3, pct(times, 0.99) * 1e3, max(times) * 1e3, len(times) / secs,
        wall_from, time.time()))


def empty_kernel():
    import cupy as cp
    return cp, cp.RawKernel(r'extern "C" __global__ void k() {}', "k")


def tiny(secs, out):
    cp, k = empty_kernel()
    dev = cp.cuda.Device()
    for _ in range(2000):
        k((1,), (32,), ())
        dev.synchronize()
    times, t_end = [], time.perf_counter() + secs
    while time.perf_counter() < t_end:
        a = time.perf_counter()
        k((1,), (32,), ())
        dev.synchronize()
        times.append(time.perf_counter() - a)
    out_line(out, "%.2f %.2f" % (pct(times, 0.5) * 1e6, pct(times, 0.99) * 1e6))


def shapes(out):
    cp, k = empty_kernel()
    k((1,), (32,), ())  # the module loaded: not a first launch of any of the 16 shapes below
    cp.cuda.Device().synchronize()
    times = []
    for i in range(16 * 62):
        a = time.perf_counter()
        k((100 + i % 16,), (32,), ())
        times.append(time.perf_counter() - a)
    cp.cuda.Device().synchronize()
    open(out + ".raw", "w").write("\n".join("%.3f" % (t * 1e6) for t in times) + "\n")
    out_line(out, "%.2f %.2f" % (pct(times, 0.5) * 1e6, pct(times, 0.99) * 1e6))


def gpt2(tokens, out):
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    m = GPT2LMHeadModel(GPT2Config()).cuda().half().eval()
    ids = torch.randint(0, 50000, (1, 16), device="cuda")
    kw = dict(max_new_tokens=tokens, min_new_tokens=tokens, do_sample=False, pad_token_id=0)
    gate = gate_clock()
    per, g0, t_all = [], None, 0.0
    with torch.no_grad():
        m.generate(ids, **kw)
        torch.cuda.synchronize()
        if gate: g0 = gate()
        for _ in range(int(os.environ.get("GPT2_GENS", "5"))):
            t = time.perf_counter()
            m.generate(ids, **kw)
            torch.cuda.synchronize()
            t_all += time.perf_counter() - t
            per.append((time.perf_counter() - t) * 1e3 / tokens)
    share = "-"
    if gate:
        (ns, n), (ns0, n0) = gate(), g0
        share = "%.5f" % ((ns - ns0) / 1e9 / t_all)
        print("gate: %.3f ms in %d launches over %.1f ms of timed generates (%.2f us a launch)"
              % ((ns - ns0) / 1e6, n - n0, t_all * 1e3, (ns - ns0) / 1e3 / max(1, n - n0)), flush=True)
    open(out + ".raw", "w").write("\n".join("%.3f" % p for p in per) + "\n")
    out_line(out, "%.3f %.3f %.3f %s" % (statistics.median(per), min(per), max(per), share))


def gate_clock():
    """cudacap_gate_ns of the preloaded library, counting (CUDACAP_COUNT_CALLS=1),
    as a function returning (ns, launches); None when absent or not counting."""
    import ctypes
    if os.environ.get("CUDACAP_COUNT_CALLS") != "1":
        return None
    try:
        f = ctypes.CDLL(None).cudacap_gate_ns
    except (AttributeError, OSError):
        return None
    f.restype, f.argtypes = ctypes.c_longlong, [ctypes.POINTER(ctypes.c_longlong)]

    def read():
        n = ctypes.c_longlong(0)
        ns = f(ctypes.byref(n))
        return ns, n.value
    return read


def gpt2live(blocks, out):
    import math, os, subprocess, torch
    from transformers import GPT2Config, GPT2LMHeadModel
    cli, folder = os.environ.get("CLI", "cudacap"), os.environ["CUDACAP_STATE_DIR"]
    cap = os.environ.get("CAP", "50")
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}

    def set_cap(pct):
        r = subprocess.run([cli, "set", "--sm", pct, folder], env=env, capture_output=True, text=True)
        if r.returncode:
            sys.exit("cudacap set --sm %s failed: %s" % (pct, (r.stdout + r.stderr).strip()))

    torch.manual_seed(0)
    m = GPT2LMHeadModel(GPT2Config()).cuda().half().eval()
    ids = torch.randint(0, 50000, (1, 16), device="cuda")
    tokens = 48
    kw = dict(max_new_tokens=tokens, min_new_tokens=tokens, do_sample=False, pad_token_id=0)

    def gen():
        t = time.perf_counter()
        m.generate(ids, **kw)
        torch.cuda.synchronize()
        return (time.perf_counter() - t) * 1e3 / tokens

    def phase(pct):
        set_cap(pct)
        time.sleep(0.3)
        gen()
        return statistics.median(gen() for _ in range(3))

    lines, lr, lc = [], [], []
    with torch.no_grad():
        gen()
        for b in range(blocks):
            c1, u1, u2, c2 = phase(cap), phase("100"), phase("100"), phase(cap)
            c, u = (c1 + c2) / 2, (u1 + u2) / 2
            lr.append(math.log(c / u))
            lc.append(math.log(u2 / u1))  # the null: two uncapped phases side by side
            lines.append("%.3f %.3f %.4f" % (c, u, c / u))
            print("block %d: capped %.3f uncapped %.3f ms/token, ratio %.4f (uncapped pair %.4f)"
                  % (b + 1, c, u, c / u, u2 / u1), flush=True)
    open(out, "w").write("\n".join(lines) + "\n")

    def summary(name, v):
        g, se = statistics.mean(v), statistics.stdev(v) / math.sqrt(len(v))
        print("%s: n %d, geometric mean %.4f, about %.4f-%.4f at two standard errors, rms ln %.4f"
              % (name, len(v), math.exp(g), math.exp(g - 2 * se), math.exp(g + 2 * se),
                 math.sqrt(statistics.mean(x * x for x in v))), flush=True)
    summary("capped/uncapped (ms per token)", lr)
    summary("uncapped/uncapped, the null", lc)
    print("throughput capped/uncapped: %.4f" % math.exp(-statistics.mean(lr)), flush=True)


def tokloop(secs, out):
    import torch
    h = torch.randn(1, 768, device="cuda")
    w = torch.randn(768, device="cuda")
    for _ in range(200):
        for _ in range(16):
            h = torch.tanh(h * w + 0.1) * 0.5
        torch.cuda.synchronize()
    times, t_end = [], time.perf_counter() + secs
    while time.perf_counter() < t_end:
        a = time.perf_counter()
        for _ in range(16):  # 4 kernels each: 64 a token
            h = torch.tanh(h * w + 0.1) * 0.5
        torch.cuda.synchronize()
        times.append(time.perf_counter() - a)
    ms = [t * 1e3 for t in times]
    out_line(out, "%.4f %.4f %.4f" % (statistics.mean(ms), statistics.pstdev(ms), pct(ms, 0.99)))


if __name__ == "__main__":
    w = sys.argv[1]
    if w == "decode":
        decode(sys.argv[2], float(sys.argv[3]), sys.argv[4])
    elif w == "tiny":
        tiny(float(sys.argv[2]), sys.argv[3])
    elif w == "shapes":
        shapes(sys.argv[2])
    elif w == "gpt2":
        gpt2(int(sys.argv[2]), sys.argv[3])
    elif w == "gpt2live":
        gpt2live(int(sys.argv[2]), sys.argv[3])
    elif w == "tokloop":
        tokloop(float(sys.argv[2]), sys.argv[3])
    else:
        sys.exit("unknown worker " + w)
