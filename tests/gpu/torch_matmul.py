"""A PyTorch matmul loop: prints a checksum of the results and what it did.

Run bare and under the preload (CUDACAP_COUNT_CALLS=1 prints, at exit, how
many calls went through each cudacap wrapper): the checksums must agree and
the counters must show PyTorch's launches and allocations reaching cudacap
through the CUDA runtime's cuGetProcAddress.
"""
import hashlib
import sys
import time

import torch


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    torch.manual_seed(0)
    dev = torch.device("cuda")
    a = torch.randn(2048, 2048, device=dev)
    b = torch.randn(2048, 2048, device=dev)
    h = hashlib.sha256()
    t0 = time.time()
    for i in range(steps):
        c = a @ b
        a = torch.tanh(c / 64.0)
        if i % 50 == 0:
            h.update(a.cpu().numpy().tobytes())
    torch.cuda.synchronize()
    dt = time.time() - t0
    h.update(a.cpu().numpy().tobytes())
    free, total = torch.cuda.mem_get_info()
    print(f"checksum {h.hexdigest()[:16]} steps {steps} seconds {dt:.3f} "
          f"mem_get_info free {free} total {total}", flush=True)


if __name__ == "__main__":
    main()
