"""Caps changed while a process runs (cudacap set), on a real GPU.
Run preloaded, with CUDACAP_STATE_DIR prepared by `cudacap prepare` and
CLI naming the cudacap command (run here without the preload).

  live_caps.py mem    PyTorch: fill a 4 GiB cap in 256 MiB tensors; set --mem
                      8g and fill again; set --mem 2g (below use): one more
                      allocation must fail; free down to 0.5 GiB, empty the
                      cache: 512 MiB must fit. Prints GiB reached and
                      NVML's figure for the process at each step.
  live_caps.py sm BARE_PER_S   a Triton matmul loop, 4 s at the prepared cap,
                      set --sm 60, 4 s, set --sm 20, 4 s: the share of
                      bare throughput per 0.25 s window, and how long after
                      each set the window first lands within 10 % of the
                      new cap.
  live_caps.py bare   the same loop for 3 s without a cap: its rate."""
import os, subprocess, sys, time

CLI = os.environ.get("CLI", "cudacap")
DIR = os.environ["CUDACAP_STATE_DIR"] if len(sys.argv) > 1 and sys.argv[1] != "bare" else None

def cli(*args):
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    r = subprocess.run([CLI, *args], env=env, capture_output=True, text=True)
    print(f"$ cudacap {' '.join(args)} -> rc {r.returncode}: {(r.stdout + r.stderr).strip()}", flush=True)
    return r

def nvml_gib():
    try:
        out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True).stdout
        for line in out.splitlines():
            pid, mib = [x.strip() for x in line.split(",")]
            if int(pid) == os.getpid():
                return int(mib) / 1024
    except Exception:
        pass
    return float("nan")

def fill(torch, held, limit_gib):
    while len(held) * 0.25 < limit_gib:
        try:
            held.append(torch.empty(256 << 20, dtype=torch.uint8, device="cuda"))
        except torch.cuda.OutOfMemoryError:
            break
    torch.cuda.synchronize()
    return len(held) * 0.25

def mem():
    import torch
    held = []
    a = fill(torch, held, 16)
    print(f"cap 4 GiB: reached {a:.2f} GiB (nvidia-smi for the process {nvml_gib():.2f} GiB)", flush=True)
    cli("set", "--mem", "8g", DIR)
    b = fill(torch, held, 16)
    print(f"raised to 8 GiB: reached {b:.2f} GiB (nvidia-smi {nvml_gib():.2f} GiB)", flush=True)
    cli("set", "--mem", "2g", DIR)
    try:
        held.append(torch.empty(256 << 20, dtype=torch.uint8, device="cuda"))
        print("lowered to 2 GiB: one more 256 MiB ADMITTED (FAIL)", flush=True)
    except torch.cuda.OutOfMemoryError:
        print("lowered to 2 GiB: one more 256 MiB refused (ok), nothing taken back: "
              f"{len(held) * 0.25:.2f} GiB held", flush=True)
    st = cli("status", os.path.dirname(DIR))
    print("status says over cap:", "over cap after a decrease" in st.stdout, flush=True)
    # Down to 0.5 GiB of tensors: the context's ~0.5 GiB (NVML) counts too,
    # so 1 GiB left 2 GiB exactly full on 2026-12-03.
    del held[2:]
    torch.cuda.empty_cache()
    try:
        x = torch.empty(512 << 20, dtype=torch.uint8, device="cuda")
        torch.cuda.synchronize()
        print(f"after frees to 0.5 GiB: 512 MiB admitted (ok); nvidia-smi {nvml_gib():.2f} GiB", flush=True)
    except torch.cuda.OutOfMemoryError:
        print("after frees to 0.5 GiB: 512 MiB refused (FAIL)", flush=True)

def triton_step():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from frameworks import triton_matmul
    return triton_matmul(4096)

def loop(run, sync, secs, on_window=None):
    t0 = time.time(); k = 0; w0 = t0; wk = 0; out = []
    while time.time() - t0 < secs:
        run(); run(); sync(); k += 2; wk += 2
        now = time.time()
        if now - w0 >= 0.25:
            out.append((now - t0, wk / (now - w0)))
            w0, wk = now, 0
    return k / (time.time() - t0), out

def bare():
    run, sync = triton_step()
    loop(run, sync, 1)
    r, _ = loop(run, sync, 3)
    print(f"bare_per_s {r:.1f}", flush=True)

def sm(bare_rate):
    run, sync = triton_step()
    plan = [(None, 30), ("60", 60), ("20", 20)]
    t_start = time.time()
    for arg, cap in plan:
        t_set = time.time()
        if arg:
            cli("set", "--sm", arg, DIR)
        _, wins = loop(run, sync, 4)
        shares = [r / bare_rate for _, r in wins]
        took = next((t for (t, r) in wins if abs(r / bare_rate - cap / 100) <= 0.1 * cap / 100 + 0.02), None)
        settled = [s for (t, r), s in zip(wins, shares) if t >= 1.0]
        avg = sum(settled) / len(settled) if settled else float("nan")
        print(f"cap {cap}: share 1-4 s after the set {avg:.3f}; first window within 10 %: "
              f"{'%.2f s' % took if took is not None else 'never'}; windows "
              + " ".join(f"{s:.2f}" for s in shares), flush=True)

if __name__ == "__main__":
    m = sys.argv[1]
    if m == "mem": mem()
    elif m == "sm": sm(float(sys.argv[2]))
    elif m == "bare": bare()
