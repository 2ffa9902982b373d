/* Launch overhead: empty-kernel launches per second, bare vs preloaded with
 * no cap set, from one run (alternating rounds, medians).
 *
 *   build/bench/bench_launch_overhead [rounds]
 *
 * On the simulator (LD_LIBRARY_PATH=build/sim) the figure includes the
 * simulator's own launch cost; on a GPU it is the real driver's. Goal on the
 * H200: preloaded/bare time per launch <= 1.03. */
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"

static int worker(void)
{
    CUfunction fn;
    CUstream s;
    if (bench_cuda_setup("spin_0us", &fn, &s) != 0) return 1;
    const int batch = 1000;
    const char *secs = getenv("BENCH_SECONDS");
    double budget = secs ? atof(secs) : 1.0;
    /* Warm-up: first launches pay for lazy loading. */
    for (int i = 0; i < batch; i++) BENCH_CU(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
    BENCH_CU(cuStreamSynchronize(s));
    long n = 0;
    double t0 = bench_now(), t;
    do {
        for (int i = 0; i < batch; i++)
            BENCH_CU(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
        BENCH_CU(cuStreamSynchronize(s));
        n += batch;
        t = bench_now();
    } while (t - t0 < budget);
    printf("%.1f\n", (double)n / (t - t0));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--worker")) return worker();
    int rounds = argc > 1 ? atoi(argv[1]) : 7;
    if (rounds < 1) rounds = 7;
    double bare, pre;
    const char *lib = bench_library(argv[0]);
    if (bench_compare("/proc/self/exe", "--worker", rounds, &bare, &pre, lib) != 0) {
        fprintf(stderr, "a worker failed\n");
        return 1;
    }
    printf("launch overhead (empty kernel, no cap), median of %d rounds\n", rounds);
    printf("  bare       %12.0f launches/s  %8.3f us/launch\n", bare, 1e6 / bare);
    printf("  preloaded  %12.0f launches/s  %8.3f us/launch\n", pre, 1e6 / pre);
    printf("  ratio preloaded/bare time per launch: %.4f\n", bare / pre);
    return 0;
}
