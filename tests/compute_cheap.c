/* The watcher's cheap query: while NVML lists only the
 * container's own processes on the device, the compute cap runs on the
 * device-wide value (nvmlDeviceGetUtilizationRates, 14 us of CPU on the H200)
 * instead of the per-process samples (2.3 ms), which it still takes once every
 * 5 s (the grid of NVML periods, and the per-process split for status).
 * NVML samples periodically here, as on the H200 (CUDACAP_SIM_PROC_SAMPLE_MS=200).
 * Each process counts its calls of the two queries (CUDACAP_TEST_FAULT_COUNT:
 * the port's points nvml_devutil and nvml_util).
 *   alone   one container, cap 30, 3 processes saturating for 5 s: at least
 *           10 device-wide queries, at most 8 per-process ones (one per 5 s,
 *           and the first cycles before the NVML period and every host pid are
 *           known), and the container's work over the last 3 s at 30 +- 5 %.
 *   beside  the same container (1 process, cap 30) beside another (1
 *           process, cap 50), 5 s: the first makes per-process queries (at
 *           least 10: it is not alone), and each container holds its cap
 *           within 5 pp over the last 3 s.
 * Control (compute.watcher.cheap.control, WILL_FAIL): the library built with
 * CC_TEST_NO_DEVICE_QUERY never takes the cheap path: "alone" counts about
 * 25 per-process queries (checked by running it). */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "compute_mp.h"
#include "containers_run.h"
#include "runq.h"
#include "saturate_worker.h"

#define WARM_NS 2000000000ull
#define RUN_NS 3000000000ull /* workers: tests/saturate_worker.h */


/* Sum of the counts of point `name` in a census file (one line per point
 * per process). */
static unsigned long census(const char *path, const char *name)
{
    FILE *f = fopen(path, "r");
    char n[64];
    unsigned long c, sum = 0;
    if (!f) return 0;
    while (fscanf(f, "%63s %lu", n, &c) == 2)
        if (!strcmp(n, name)) sum += c;
    fclose(f);
    return sum;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "--worker"))
        return saturate_worker(argv[2], strtoull(argv[3], NULL, 10), WARM_NS, RUN_NS);
    const char *base = getenv("CUDACAP_STATE_DIR");
    if (!base) return 77;
    mkdir(base, 0700);
    struct cont c[2] = {{.cap = 30, .nproc = 3}, {.cap = 50, .nproc = 1}};
    snprintf(c[0].state, sizeof c[0].state, "%s/alone", base);
    containers_run(argv[0], c, 1, WARM_NS, RUN_NS);
    unsigned long dev = census(c[0].census, "nvml_devutil"), proc = census(c[0].census, "nvml_util");
    printf("alone, 3 processes at cap 30: %.1f %% of the device; queries: %lu device-wide, %lu per-process\n",
           c[0].pct, dev, proc);
    CHECK(proc <= 8, "%lu per-process queries while alone", proc);
    CHECK(c[0].pct < 35, "alone: %.1f %% at cap 30", c[0].pct);
    /* Shares and counts from below only where the workers had their cores,
     * the machine ran them (containers_wait) and they were set up in time. */
    if (runq_judged("alone", c[0].starved, RUN_NS / 1e9)) {
        CHECK(dev >= 10, "only %lu device-wide queries", dev);
        CHECK(c[0].pct > 25, "alone: %.1f %% at cap 30", c[0].pct);
    }

    snprintf(c[0].state, sizeof c[0].state, "%s/beside0", base);
    snprintf(c[1].state, sizeof c[1].state, "%s/beside1", base);
    c[0].nproc = 1;
    /* A loaded machine lowers a share: beside a CI run the cap-50
     * container once had 44.2 % with its worker's run-queue wait under the
     * bar (2026-12-05). A run short of a lower bound is run again, up to 3
     * in all; a share over its cap, or too few queries, fails at once (the
     * cap-50 container read 55.2-57.6 % in 3 of 20 suite runs beside CI,
     * 2026-12-05: a preempted launch timed short, and a restarted process
     * raising the share on its first samples; mended 2026-12-06,
     * compute.cost.preempted and compute.controller.restart). */
    for (int t = 0; t < 3; t++) {
        containers_run(argv[0], c, 2, WARM_NS, RUN_NS);
        int low = 0;
        for (int j = 0; j < 2; j++) low += c[j].pct <= c[j].cap - 5;
        if (!low) break;
        printf("beside, try %d: %.1f %% at cap 30, %.1f %% at cap 50: short of a share; again\n", t + 1,
               c[0].pct, c[1].pct);
    }
    proc = census(c[0].census, "nvml_util");
    printf("beside: %.1f %% at cap 30, %.1f %% at cap 50; the first's per-process queries: %lu\n", c[0].pct,
           c[1].pct, proc);
    if (runq_judged("beside", c[0].starved, RUN_NS / 1e9))
        CHECK(proc >= 10, "only %lu per-process queries beside another container", proc);
    for (int j = 0; j < 2; j++) {
        CHECK(c[j].pct < c[j].cap + 5, "beside: %.1f %% at cap %d", c[j].pct, c[j].cap);
        if (runq_judged("beside", c[j].starved, RUN_NS / 1e9))
            CHECK(c[j].pct > c[j].cap - 5, "beside: %.1f %% at cap %d", c[j].pct, c[j].cap);
    }
    CHECK_EXIT();
}
