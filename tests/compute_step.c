/* Step latency under a compute cap: a decode loop, one 0.8 ms
 * step (one launch: plain; the replay of a two-kernel graph: graph; four
 * 0.2 ms launches: eager) then a synchronize, alone in its container at
 * CUDACAP_SM_LIMIT (30 here). Paced
 * evenly, a step takes 0.8 ms / cap (2.67 ms at 30): the tokens a step
 * needs accrue in that time, and the launch sleeps until they have.
 *
 * Bounds: the p50 step within 1.5x that ideal, the p99 within 2.5x (room
 * for a loaded 2-core machine's wake-ups; measured here 1.0-1.1x and
 * 1.05-1.3x), and the rate within 0.8..1.2 of cap x bare.
 * Control (compute.step.*.control, WILL_FAIL): the library built with
 * CC_TEST_LUMP_ALWAYS, every waiter paid in lumps of at least 5 ms of
 * device time as before pacing: half the steps run at once, then one
 * sleeps 5 ms / cap (p99 16.7 ms at cap 30: 6.3x the ideal). Checked by
 * running it: it fails every run on the p99 bound.
 *
 * eager: a step's launches sleep once, before the first (bucket.c, the
 * step group): the p90 time inside a step's 2nd-4th launch calls stays
 * under 100 us (measured: a few us). Control (compute.step.eager.control):
 * CC_TEST_NO_GROUP, every launch paced alone, each of the three sleeps
 * 0.2 ms x (1 - cap) / cap = 0.47 ms at cap 30; it fails every run on that
 * bound. */
#include <cuda.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "runq.h"
#include "spin_setup.h"
#include "step_loop.h"

/* shapes: work below its cap pays nothing for new shapes. After 0.3 s
 * idle (the bucket refilled), 16 never-timed shapes (grid sizes of a 0.2 ms
 * kernel), each launched once on a stream of its own, no sync: a launch of
 * a new shape on a drained stream runs beside the pending probe (gate.c, 16
 * slots beside it) instead of waiting for its timing, so no launch call
 * takes 150 us (a wait for a queued 0.2 ms probe takes at least that;
 * measured: none). With 8 slots (as before 2026-12-02's second pacing
 * change) the last 7 waited. One stream is not this case any more: a new
 * shape queued behind unknown work waits for it (compute.deepq.warmnew).
 * Control (compute.step.shapes.control): CC_TEST_NO_HEADROOM, every new
 * shape waits for the probe: 15 of the 16 launches wait; it fails every
 * run. */
static int shapes(void)
{
    CUfunction fn;
    CUstream s, own[16];
    int sms;
    if (spin_setup("spin_200us", &fn, &s, &sms) != 0) CHECK_EXIT();
    for (int i = 0; i < 16; i++) CHECK_CU(cuStreamCreate(&own[i], CU_STREAM_NON_BLOCKING));
    CHECK_CU(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL)); /* the watcher starts */
    CHECK_CU(cuStreamSynchronize(s));
    struct timespec idle = {0, 300000000};
    int slow = 0, rq = runq_open();
    double worst = 0;

    /* A call's time less what its thread spent runnable without a core: a
     * wait in the gate sleeps, a preemption does not (beside CI, 5 calls of
     * 150-689 us with no wait in the gate, 2026-12-05). A thread the call
     * waits on (the simulator's, the watcher) can still be preempted while
     * it holds a lock: beside CI 1 run in 12 had 2 calls of 150-279 us
     * (2026-12-05). So up to 3 tries, each with 16 shapes never launched
     * before and after its own idle spell; the test passes on the first try
     * with at most one slow call. The control's 15 waits recur every try.
     * A call that was runnable without a core for over 150 us tells
     * nothing: the gate's wait is sleeps of 10 us doubling, and on a busy
     * host each wake-up waits for a core, so a whole 3 ms wait can read as
     * run-queue time (the control passed so beside CI, 2026-12-06: 15
     * calls waited 47.7 ms together, none over 150 us less its run-queue
     * wait). Such a call is unknown; a try with slow + unknown over one is
     * made again, and where no try is clean and none failed outright the
     * run exits 77 (ctest: skipped, the control alike). */
    int unknown = 0, clean = 0, failed = 0; /* failed: the slow calls of the last try with over one */
    double failed_worst = 0;
    for (int t = 0; t < 3 && !clean; t++) {
        nanosleep(&idle, NULL);
        slow = 0;
        unknown = 0;
        worst = 0;
        for (int i = 0; i < 16; i++) {
            uint64_t q = runq_fd_ns(rq), a = step_now_ns();
            CHECK_CU(cuLaunchKernel(fn, 2 + (unsigned)(16 * t + i), 1, 1, 32, 1, 1, 0, own[i],
                                    NULL, NULL));
            double waitq = (double)(runq_fd_ns(rq) - q) / 1e3;
            double us = (double)(step_now_ns() - a) / 1e3 - waitq;
            slow += us > 150;
            unknown += us <= 150 && waitq > 150;
            if (us > worst) worst = us;
        }
        CHECK_CU(cuCtxSynchronize());
        printf("try %d, 16 new shapes below the cap: %d launch calls over 150 us, the longest %.0f us; "
               "%d more runnable without a core over 150 us\n",
               t + 1, slow, worst, unknown);
        clean = slow + unknown <= 1;
        if (slow > 1) failed = slow, failed_worst = worst;
    }
    if (rq >= 0) close(rq);
    if (!clean && !failed) {
        printf("no try without calls that waited for a core: cannot judge (skipped)\n");
        return 77;
    }
    CHECK(clean, "%d launch calls waited (the longest %.0f us)", failed, failed_worst);
    CHECK_EXIT();
}

/* burst: CUDACAP_SM_BURST_MS bounds the run-ahead. After 0.4 s idle (the
 * bucket refilled: to one nominal period, 30 ms at cap 30, or to the
 * burst), 50 synchronised steps of 1 ms: a step that finds tokens runs at
 * full speed (under 1.5 ms), the others are paced (3.3 ms).
 * With the burst at 2 ms, at most 15 fast steps (measured 4-8 in 20 runs
 * beside another suite: two from the burst, the rest from what accrues
 * meanwhile; a bound of 4 failed 1 run in 20 there, where a preempted test
 * process saves up to the burst again, 2 ms a time). Unset, at least 20 (compute.step.
 * burst.default: about 30 ms of savings, and the controller's share grown
 * over the first wait). Control (compute.step.burst.control):
 * CC_TEST_NO_BURST, the knob ignored: 46-50 fast steps (default: 47-50);
 * it fails every run. */
static int burst(void)
{
    CUfunction fn;
    CUstream s;
    int sms;
    if (spin_setup("spin_1000us", &fn, &s, &sms) != 0) CHECK_EXIT();
    CHECK_CU(cuLaunchKernel(fn, (unsigned)sms, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
    CHECK_CU(cuStreamSynchronize(s));
    struct timespec idle = {0, 400000000};
    nanosleep(&idle, NULL);
    int fast = 0;
    for (int i = 0; i < 50; i++) {
        uint64_t a = step_now_ns();
        CHECK_CU(cuLaunchKernel(fn, (unsigned)sms, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
        CHECK_CU(cuStreamSynchronize(s));
        fast += step_now_ns() - a < 1500000;
    }
    const char *b = getenv("CUDACAP_SM_BURST_MS");
    printf("after an idle spell, burst %s: %d of 50 steps at full speed\n", b ? b : "unset", fast);
    if (b) CHECK(fast <= 15, "%d fast steps with a %s ms burst", fast, b);
    else CHECK(fast >= 20, "%d fast steps with the default burst", fast);
    CHECK_EXIT();
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "plain";
    const char *cap_s = getenv("CUDACAP_SM_LIMIT");
    double cap = cap_s ? atof(cap_s) / 100.0 : 0;
    if (cap <= 0 || cap >= 1) {
        fprintf(stderr, "set CUDACAP_SM_LIMIT to 1..99\n");
        return 2;
    }
    if (strcmp(mode, "shapes") == 0) return shapes();
    if (strcmp(mode, "burst") == 0) return burst();
    int graph = strcmp(mode, "graph") == 0, eager = strcmp(mode, "eager") == 0;
    CUfunction fn;
    CUstream s;
    int sms;
    if (spin_setup(graph ? "spin_400us" : eager ? "spin_200us" : "spin_800us", &fn, &s, &sms) != 0)
        CHECK_EXIT();
    CUgraphExec x = graph ? step_graph(fn, (unsigned)sms, s, 2) : NULL;
    CHECK(!graph || x, "graph capture failed");
    struct step_stats st = {0};
    double ideal = 0.8 / cap, bare_rate = 1000.0 / 0.8;
    /* A run over the p99 bound is run again, up to 3 in all, the others
     * judged on the last: beside a CI run an eager loop's p99 less its CPU
     * waits read 8.62 ms (bound 6.7) once in 20 suite runs (2026-12-05),
     * late wake-ups that the run queue does not show. The controls' p99
     * (6.3x) and later launches recur every run. */
    for (int t = 0; t < 3; t++) {
        memset(&st, 0, sizeof st);
        CHECK_CU(step_loop(fn, (unsigned)sms, eager ? 4 : 1, x, s, 1.0, 3.0, &st));
        if (check_failures) CHECK_EXIT();
        if (st.p99_cpu_ms <= 2.5 * ideal) break;
        printf("try %d: p99 %.2f ms less CPU waits, over 2.5 x %.2f ms; again\n", t + 1, st.p99_cpu_ms, ideal);
    }
    printf("%s steps at cap %.0f%%: p50 %.2f ms, p99 %.2f ms, max %.2f ms (ideal %.2f ms: p99 "
           "%.2fx); %.0f steps/s = %.3f of bare (cap %.2f); later launches p90 %.1f us; less the "
           "waits for a CPU: p50 %.2f ms, p99 %.2f ms\n",
           mode, cap * 100, st.p50_ms, st.p99_ms, st.max_ms, ideal, st.p99_ms / ideal,
           st.steps_per_s, st.steps_per_s / bare_rate, cap, st.later_p90_us, st.p50_cpu_ms, st.p99_cpu_ms);
    CHECK(st.n > 100, "%u steps measured", st.n);
    /* Judged without the time the loop waited for a CPU (step_loop.h): a
     * second suite on 2 cores woke steps late (p99 17 ms against 6.7 in a
     * suite run) where the cap had paced them right. */
    CHECK(st.p50_cpu_ms <= 1.5 * ideal, "p50 %.2f ms less CPU waits, ideal %.2f ms", st.p50_cpu_ms, ideal);
    CHECK(st.p99_cpu_ms <= 2.5 * ideal, "p99 %.2f ms less CPU waits, bound 2.5 x %.2f ms", st.p99_cpu_ms,
          ideal);
    double share = st.steps_per_s / bare_rate;
    CHECK(share > 0.8 * cap && share < 1.2 * cap, "%.3f of bare at cap %.2f", share, cap);
    CHECK(!eager || st.later_p90_us < 100, "a step's later launches: p90 %.1f us inside the call",
          st.later_p90_us);
    CHECK_EXIT();
}
