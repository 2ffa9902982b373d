/* The cap holds over windows shorter than the refill period, not only on
 * average: NVML's device utilization on a real GPU covers a window that is
 * not aligned with our 100 ms refills (about 1/6 s on the H200), and a bucket
 * that receives a whole period's tokens at once lets the waiting processes
 * spend them in one burst: full device for cap x 100 ms, then nothing. Such
 * a signal averages to the cap while its short windows swing from 0 to 100 %
 * (the H200's p90 was cap + 17 with four processes of long kernels).
 *
 * Four processes of one container, CUDACAP_SM_LIMIT=30, each saturating the
 * device with one-wave 1.5 ms kernels. The simulator's device utilization
 * over a 40 ms window (CUDACAP_SIM_UTIL_WINDOW_MS=40 in the reader), read
 * every 13 ms (out of phase with the refill grid) for 3 s after 2 s: mean
 * near 30, p90 at most cap + 20 (45 measured: tokens come in lumps of 8
 * launches, 12 ms here). And the controller's share stays near nominal
 * (30 ms per period): tokens are device time, so a share far above it means the cost
 * model overcharges and the controller is compensating (seen when the start
 * event was recorded before the wait for tokens: share 3.8x, the signal
 * oscillating between 10 and 75 %; checked by moving cc_cost_begin back
 * before cc_bucket_take: share 58-99 ms, the test fails).
 * Control (compute.smooth.control, WILL_FAIL): the library built with
 * CC_TEST_NO_DRIP (tokens only at the period refill, the previous design)
 * gives p90 71-75 here; checked by running it (ctest reports the control
 * passing because the test fails). */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "compute_mp.h"
#include "cudacap/nvml_api.h"
#include "runq.h"
#include "spin_setup.h"

#define NPROC 4
#define WARM_NS 2000000000ull
#define RUN_NS 3000000000ull

static double *starved; /* each worker's run-queue wait over the measured 3 s */

static int child(int k, uint64_t from, uint64_t until)
{
    CUfunction fn;
    CUstream stream;
    int sms;
    spin_setup("spin_1500us", &fn, &stream, &sms);
    if (check_failures) return 1;
    double q0 = -1;
    while (mp_now() < until) {
        if (q0 < 0 && mp_now() >= from) q0 = runq_s();
        for (int i = 0; i < 4; i++)
            CHECK_CU(cuLaunchKernel(fn, (unsigned)sms, 1, 1, 32, 1, 1, 0, stream, NULL, NULL));
        CHECK_CU(cuStreamSynchronize(stream));
        if (check_failures) return 1;
    }
    starved[k] = q0 < 0 ? 0 : runq_s() - q0;
    return 0;
}

static int cmp_u(const void *a, const void *b)
{
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return (x > y) - (x < y);
}

int main(void)
{
    uint64_t t0 = mp_now(), until = t0 + WARM_NS + RUN_NS;
    starved = mp_shared(NPROC * sizeof *starved);
    pid_t pids[NPROC];
    for (int i = 0; i < NPROC; i++) {
        pids[i] = fork();
        if (pids[i] == 0) _exit(child(i, t0 + WARM_NS, until));
        CHECK(pids[i] > 0, "fork failed");
    }
    /* The short window for this reader only: the simulator's per-process
     * samples are clipped to the window too, and the workers' watchers
     * must see the default. Read at the first simulator call, which is
     * next. */
    setenv("CUDACAP_SIM_UTIL_WINDOW_MS", "40", 1);
    CHECK(nvmlInit_v2() == NVML_SUCCESS, "nvmlInit failed");
    nvmlDevice_t h;
    CHECK(nvmlDeviceGetHandleByIndex_v2(0, &h) == NVML_SUCCESS, "no NVML device 0");
    static unsigned u[400];
    int n = 0;
    double sum = 0;
    for (uint64_t t = t0 + WARM_NS; t + 13000000ull < until && n < 400; t += 13000000ull) {
        mp_sleep_until(t);
        nvmlUtilization_t r;
        if (nvmlDeviceGetUtilizationRates(h, &r) != NVML_SUCCESS) continue;
        u[n++] = r.gpu;
        sum += r.gpu;
    }
    CHECK(mp_wait_all(pids, NPROC) == 0, "a worker failed");
    qsort(u, (size_t)n, sizeof u[0], cmp_u);
    double mean = n ? sum / n : -1;
    unsigned p90 = n ? u[(int)(0.9 * (n - 1))] : 999;
    printf("4 processes, cap 30%%: 40 ms windows: mean %.1f%%, p90 %u%%, max %u%% (%d reads)\n", mean,
           p90, n ? u[n - 1] : 0, n);
    CHECK(n > 100, "only %d utilization reads", n);
    /* 22..40: as compute.nvmlperiod, room for a sanitizer build; from
     * below only where the workers had their cores (judged, below). */
    CHECK(mean < 40, "mean %.1f%% at cap 30%%", mean);
    /* Smooth only where the workers had their cores: one woken late
     * spends what accrued meanwhile in a burst (p90 60 %, mean 35.4 %,
     * beside two suites once). A starved run that passed everything else
     * is not judged (77), which the control needs too: it must exceed
     * this bar on its own. */
    double most = 0;
    for (int i = 0; i < NPROC; i++) most = starved[i] > most ? starved[i] : most;
    printf("workers runnable without a core: at most %.2f s of 3\n", most);
    int judged = most <= RUNQ_STARVED_FRACTION * 3.0;
    if (judged) CHECK(mean > 22, "mean %.1f%% at cap 30%%", mean);
    if (judged) CHECK(p90 <= 50, "p90 of 40 ms windows %u%% at cap 30%% (bar: cap + 20)", p90);
    const char *state = getenv("CUDACAP_STATE_DIR");
    const cc_compute_region_t *r = state ? mp_map_compute_region(state) : NULL;
    CHECK(r != NULL, "no compute region in %s", state ? state : "(CUDACAP_STATE_DIR unset)");
    if (r) {
        double share = (double)__atomic_load_n(&r->dev[0].share, __ATOMIC_RELAXED) / 1e6;
        printf("controller share %.1f ms per 100 ms period (nominal 30)\n", share);
        CHECK(share > 20 && share < 45, "share %.1f ms: the cost model is off", share);
    }
    if (!check_failures && !judged) {
        printf("SKIPPED: starved of a core over a fifth of the window; smoothness not judged\n");
        return 77;
    }
    CHECK_EXIT();
}
