"""Context and limit probes on a real GPU (run by tests/gpu/ctx_limits.sh).

  ctx                    a bare context's NVML size, then cuCtxSetLimit heap and
                         stack growth measured by NVML (ctypes on libcuda)
  fill CAPFILE           PyTorch: allocate 64 MiB tensors, then 1 MiB, until
                         out of memory; write "ready" to CAPFILE; hold 30 s
  late                   PyTorch: first CUDA use; prints ok or the error
  jax FRACTION           JAX with XLA_PYTHON_CLIENT_MEM_FRACTION, one array op
  sample OUT PIDFILE     every 100 ms: sum of NVML per-process memory of the
                         pids listed in PIDFILE (and their children), to OUT
"""
import ctypes, os, sys, time

MIB = 1 << 20


def nvml():
    import pynvml
    pynvml.nvmlInit()
    return pynvml, pynvml.nvmlDeviceGetHandleByIndex(0)


def proc_mem(pv, h, pids=None):
    tot = 0
    for p in pv.nvmlDeviceGetComputeRunningProcesses(h):
        if pids is None or p.pid in pids:
            tot += p.usedGpuMemory or 0
    return tot


def ctx():
    pv, h = nvml()
    cu = ctypes.CDLL("libcuda.so.1")
    dev, c = ctypes.c_int(), ctypes.c_void_p()
    assert cu.cuInit(0) == 0 and cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
    r = cu.cuDevicePrimaryCtxRetain(ctypes.byref(c), dev)
    cu.cuCtxSetCurrent(c)
    me = {os.getpid()}
    base = proc_mem(pv, h, me)
    print(f"ctx: retain rc {r}, NVML {base / MIB:.1f} MiB for the context alone")
    free, total = ctypes.c_size_t(), ctypes.c_size_t()
    cu.cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(total))
    print(f"ctx: cuMemGetInfo free {free.value / MIB:.0f} of {total.value / MIB:.0f} MiB")
    for name, lim, val in (("heap 256 MiB", 2, 256 * MIB), ("stack 2 KiB", 0, 2048),
                           ("stack 4 KiB", 0, 4096), ("printf fifo 64 MiB", 1, 64 * MIB)):
        before = proc_mem(pv, h, me)
        r = cu.cuCtxSetLimit(lim, ctypes.c_size_t(val))
        time.sleep(0.2)
        after = proc_mem(pv, h, me)
        print(f"ctx: cuCtxSetLimit {name}: rc {r}, NVML +{(after - before) / MIB:.1f} MiB")


def fill(capfile):
    import torch
    keep = []
    for sz in (64 * MIB, MIB):
        while True:
            try:
                keep.append(torch.empty(sz, dtype=torch.uint8, device="cuda"))
            except torch.cuda.OutOfMemoryError:
                break
    print(f"fill: holds {sum(t.numel() for t in keep) / MIB:.0f} MiB of tensors", flush=True)
    open(capfile, "w").write("ready")
    time.sleep(30)


def late():
    t0 = time.time()
    try:
        import torch
        torch.zeros(1, device="cuda")
        print(f"late {os.getpid()}: ok (a context was created)")
    except Exception as e:  # the clean failure expected under a full cap
        msg = str(e).splitlines()[0][:120]
        print(f"late {os.getpid()}: {type(e).__name__}: {msg} after {time.time() - t0:.2f} s")


def jax_run(frac):
    os.environ["XLA_PYTHON_CLIENT_MEM_FRACTION"] = frac
    t0 = time.time()
    try:
        import jax, jax.numpy as jnp
        x = jnp.ones((4096, 4096), jnp.float32)
        y = (x @ x).block_until_ready()
        print(f"jax {frac}: ok, sum {float(y[0, 0]):.0f}, {time.time() - t0:.1f} s")
    except Exception as e:
        print(f"jax {frac}: {type(e).__name__}: {str(e).splitlines()[0][:160]}")


def sample(out, pidfile):
    pv, h = nvml()
    with open(out, "w") as f:
        while True:
            pids = set()
            try:
                for ln in open(pidfile):
                    if ln.strip():
                        pids.add(int(ln))
            except OSError:
                pass
            f.write(f"{time.time():.3f} {proc_mem(pv, h, pids)}\n")
            f.flush()
            time.sleep(0.1)


if __name__ == "__main__":
    a = sys.argv[1:]
    {"ctx": lambda: ctx(), "fill": lambda: fill(a[1]), "late": lambda: late(),
     "jax": lambda: jax_run(a[1]), "sample": lambda: sample(a[1], a[2])}[a[0]]()
