/* Cost of a cuMemAlloc/cuMemFree pair, bare vs under cudacap with a memory
 * cap (simulator or a real GPU). Prints pairs per second for both and the
 * ratio (preloaded time / bare time; goal on the H200: <= 1.10).
 *   bench_alloc_overhead [SIZE_BYTES] [ROUNDS]
 * The preloaded run gets CUDACAP_MEM_LIMIT (default 64g when unset) and its
 * own state folder; worker mode: bench_alloc_overhead --worker=SIZE.
 *   bench_alloc_overhead --refusal
 * (under the preload, with CUDACAP_MEM_LIMIT set: 1g when unset) fills the
 * cap with 64 MiB allocations, then times refused 64 MiB allocations: the
 * cost of saying CUDA_ERROR_OUT_OF_MEMORY at the cap. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_common.h"

/* cuInit and device 0's primary context made current; 0, or 1 after an error. */
static int ctx_up(void)
{
    CUdevice d;
    CUcontext c;
    BENCH_CU(cuInit(0));
    BENCH_CU(cuDeviceGet(&d, 0));
    BENCH_CU(cuDevicePrimaryCtxRetain(&c, d));
    BENCH_CU(cuCtxSetCurrent(c));
    return 0;
}

static int worker(size_t size)
{
    if (ctx_up()) return 1;
    CUdeviceptr p;
    for (int i = 0; i < 200; i++) { /* warm up: first-use binding, driver caches */
        BENCH_CU(cuMemAlloc(&p, size));
        BENCH_CU(cuMemFree(p));
    }
    int n = 0;
    double t0 = bench_now(), t;
    do {
        for (int i = 0; i < 100; i++, n++) {
            BENCH_CU(cuMemAlloc(&p, size));
            BENCH_CU(cuMemFree(p));
        }
    } while ((t = bench_now()) - t0 < 0.5);
    printf("%f\n", n / (t - t0));
    return 0;
}

static int refusal(void)
{
    if (ctx_up()) return 1;
    CUdeviceptr p;
    int held = 0;
    while (held < 100000 && cuMemAlloc(&p, 64ull << 20) == CUDA_SUCCESS) held++;
    int n = 0;
    double t0 = bench_now(), t;
    do {
        for (int i = 0; i < 100; i++, n++)
            if (cuMemAlloc(&p, 64ull << 20) != CUDA_ERROR_OUT_OF_MEMORY) {
                fprintf(stderr, "an allocation past the cap was not refused\n");
                return 1;
            }
    } while ((t = bench_now()) - t0 < 0.5);
    printf("refusal at the cap (%d x 64 MiB held): %.2f us each (%d refusals)\n", held,
           (t - t0) * 1e6 / n, n);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--refusal")) {
        if (!getenv("CUDACAP_MEM_LIMIT")) {
            fprintf(stderr, "--refusal runs under the preload with CUDACAP_MEM_LIMIT set\n");
            return 2;
        }
        return refusal();
    }
    if (argc > 1 && !strncmp(argv[1], "--worker=", 9)) return worker((size_t)strtoull(argv[1] + 9, 0, 10));
    const char *size = argc > 1 ? argv[1] : "2097152";
    int rounds = argc > 2 ? atoi(argv[2]) : 5;
    char arg[64], dir[64];
    snprintf(arg, sizeof arg, "--worker=%s", size);
    snprintf(dir, sizeof dir, "/tmp/cudacap-bench-alloc-%d", (int)getpid());
    if (!getenv("CUDACAP_MEM_LIMIT")) setenv("CUDACAP_MEM_LIMIT", "64g", 1);
    setenv("CUDACAP_STATE_DIR", dir, 1);
    double bare, pre;
    if (bench_compare(argv[0], arg, rounds, &bare, &pre, bench_library(argv[0])) != 0) return 1;
    printf("alloc/free pair, %s bytes: bare %.0f/s (%.2f us), preloaded %.0f/s (%.2f us), "
           "ratio %.3f (cap %s)\n", size, bare, 1e6 / bare, pre, 1e6 / pre, bare / pre,
           getenv("CUDACAP_MEM_LIMIT"));
    return 0;
}
