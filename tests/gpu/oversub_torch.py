#!/usr/bin/env python3
"""Real GPU, run by tests/gpu/oversub.sh under the preload with a device cap
and oversubscription (docs/memory.md, "Oversubscription").
  oversub_torch.py alloc GIB      256 MiB blocks (each written) until OOM:
                                  expects about GIB allocated and
                                  mem_get_info total == GIB (cap + beyond);
                                  prints READY, holds 3 s (the shell samples
                                  nvidia-smi meanwhile).
  oversub_torch.py matmul N       fills the device part with 64 MiB ballast
                                  until the next block is managed memory
                                  (cuPointerGetAttribute IS_MANAGED), puts
                                  two N x N fp32 matrices beyond the cap,
                                  multiplies them, then again on device
                                  copies: results must agree; prints both
                                  throughputs.
  oversub_torch.py train HIDDEN   one training step (forward, backward,
                                  Adam) of an MLP whose parameters, grads
                                  and Adam states need ~5.5 GiB at 8192:
                                  prints STEP OK and the step time, or OOM."""
import ctypes, sys, time
import torch

mode, arg = sys.argv[1], sys.argv[2]
G, M = 1 << 30, 1 << 20
torch.cuda.init()
cuda = ctypes.CDLL("libcuda.so.1")
CU_POINTER_ATTRIBUTE_IS_MANAGED = 8


def managed(t):
    v = ctypes.c_uint(0)
    r = cuda.cuPointerGetAttribute(ctypes.byref(v), CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                   ctypes.c_ulonglong(t.data_ptr()))
    return r == 0 and v.value == 1


if mode == "alloc":
    gib = float(arg)
    free, total = torch.cuda.mem_get_info()
    print(f"mem_get_info: free {free / G:.2f} GiB, total {total / G:.2f} GiB")
    assert abs(total - gib * G) < M, f"total {total}, want {gib} GiB"
    blocks, on_host = [], 0
    try:
        while True:
            b = torch.empty(256 * M, dtype=torch.uint8, device="cuda")
            b.fill_(len(blocks) & 0xff)  # written by the GPU: host pages through the mapping
            on_host += managed(b)
            blocks.append(b)
    except torch.cuda.OutOfMemoryError:
        pass
    torch.cuda.synchronize()
    got = len(blocks) * 256 / 1024
    ok = all(int(b[-1].item()) == (i & 0xff) for i, b in enumerate(blocks))
    print(f"ALLOC {got:.2f} GiB in {len(blocks)} blocks, {on_host * 256 / 1024:.2f} GiB of it managed "
          f"(beyond the cap); contents {'ok' if ok else 'WRONG'}")
    print("READY", flush=True)
    time.sleep(3)
    sys.exit(0 if ok and got >= gib - 1.0 else 1)

if mode == "matmul":
    n = int(arg)
    ballast = []
    while True:  # the device part, until the allocator's next block is beyond the cap
        b = torch.empty(64 * M, dtype=torch.uint8, device="cuda")
        if managed(b):
            del b
            break
        ballast.append(b)
    print(f"ballast {len(ballast) * 64} MiB on the device")
    torch.manual_seed(0)
    x = torch.randn(n, n, device="cuda")
    w = torch.randn(n, n, device="cuda")
    print(f"x managed {managed(x)}, w managed {managed(w)}")

    def rate(a, b, reps=10):
        y = a @ b
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(reps):
            y = a @ b
        torch.cuda.synchronize()
        dt = (time.perf_counter() - t) / reps
        return y, 2 * n ** 3 / dt / 1e12, dt

    y_host, tf_host, dt_host = rate(x, w)
    del ballast
    torch.cuda.empty_cache()  # back to the driver: the device part is free for the copies
    xd, wd = x.clone(), w.clone()
    print(f"copies managed: {managed(xd)}, {managed(wd)}")
    y_dev, tf_dev, dt_dev = rate(xd, wd)
    err = (y_host - y_dev).abs().max().item()
    same = torch.allclose(y_host, y_dev, rtol=1e-4, atol=1e-3)
    print(f"MATMUL {n}x{n} fp32: beyond the cap {tf_host:.2f} TFLOP/s ({dt_host * 1e3:.1f} ms), "
          f"on the device {tf_dev:.2f} TFLOP/s ({dt_dev * 1e3:.1f} ms), ratio {tf_dev / tf_host:.1f}x; "
          f"max |diff| {err:.2e} {'agree' if same else 'DIFFER'}")
    sys.exit(0 if same and managed(x) and managed(w) else 1)

if mode == "train":
    h = int(arg)
    model = torch.nn.Sequential(*[torch.nn.Linear(h, h) for _ in range(5)]).cuda()
    params = sum(p.numel() for p in model.parameters())
    print(f"MLP 5 x {h}: {params / 1e6:.0f} M parameters, {params * 16 / G:.2f} GiB with grads and Adam")
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    x = torch.randn(64, h, device="cuda")
    try:
        t = time.perf_counter()
        for step in range(2):
            opt.zero_grad(set_to_none=True)
            loss = model(x).pow(2).mean()
            loss.backward()
            opt.step()
        torch.cuda.synchronize()
        print(f"STEP OK: 2 steps in {time.perf_counter() - t:.2f} s, loss {loss.item():.4f}, "
              f"reserved {torch.cuda.memory_reserved() / G:.2f} GiB")
    except torch.cuda.OutOfMemoryError as e:
        print(f"OOM: {str(e).splitlines()[0]}")
        sys.exit(3)
    sys.exit(0)
print(__doc__)
sys.exit(2)
