/* Two containers on one device, caps 30 and 50, two processes each, every
 * process saturating. NVML as the H200 reported it while both containers
 * saturated it (simulator: CUDACAP_SIM_PROC_SAMPLE_MS=167 and
 * CUDACAP_SIM_PROC_SAMPLE_ONE=1): one per-process sample per 1/6 s, the
 * device's whole busy share under a single pid, so each container reads
 * 99 % in some samples and 0 % in the others. Each container's work over
 * 12 s after 3 s must be its cap within 12 pp (the signal is that noisy: the
 * two errors add up to 1.5-7.2 pp in runs of the library alone on the
 * machine; beside another suite on 2 cores one container ran 10.0-10.5 pp
 * over its cap over 8 s in 3 of about 20 runs, before and after the port
 * layer alike, which failed CI at a 10 pp bar: the run is now 12 s,
 * and the bar 12 pp, still far from the first controller's 24 pp). On the H200 the
 * first controller ran the two at 47 % and 52 %.
 * No WILL_FAIL control here: on this simulator the first controller misses
 * these bars in most runs but not all (its two errors add up to 0.6-24 pp),
 * so a control would flake. The controller's part has a deterministic test
 * and control (compute.controller.noisy: the same attribution against a
 * model plant; the first controller winds both containers up to 94-96 %);
 * the bypass's part is cc_bucket_trim_to (compute.bucket.bypass). */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "compute_mp.h"
#include "containers_run.h"
#include "saturate_worker.h"

#define WARM_NS 3000000000ull
#define RUN_NS 12000000000ull


int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "--worker"))
        return saturate_worker(argv[2], strtoull(argv[3], NULL, 10), WARM_NS, RUN_NS);
    const char *base = getenv("CUDACAP_STATE_DIR");
    if (!base) return 77;
    struct cont c[2] = {{.cap = 30, .nproc = 2}, {.cap = 50, .nproc = 2}};
    mkdir(base, 0700); /* the library makes its folder only when it maps */
    for (int j = 0; j < 2; j++) snprintf(c[j].state, sizeof c[j].state, "%s/container%d", base, j);
    containers_run(argv[0], c, 2, WARM_NS, RUN_NS);
    double err = 0;
    for (int j = 0; j < 2; j++) {
        double pct = c[j].pct;
        printf("container %d, cap %d%%: %.1f%% of the device; starved %.2f s of %.0f\n", j, c[j].cap, pct,
               c[j].starved, RUN_NS / 1e9);
        CHECK(pct < c[j].cap + 12, "container %d: %.1f%% at cap %d%%", j, pct, c[j].cap);
        /* From below only where its workers had their cores (1.9 % at cap
         * 30 once, its workers stalled for seconds beside two suites). */
        if (runq_judged("twocont", c[j].starved, RUN_NS / 1e9))
            CHECK(pct > c[j].cap - 12, "container %d: %.1f%% at cap %d%%", j, pct, c[j].cap);
        err += pct > c[j].cap ? pct - c[j].cap : c[j].cap - pct;
    }
    printf("sum of the two errors: %.1f pp\n", err);
    CHECK_EXIT();
}
