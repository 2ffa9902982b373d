/* CUDACAP_SIM_PROC_SAMPLE_MS: per-process samples per completed period, as
 * NVIDIA documents them. A child runs a 40 % duty cycle (4 ms of every 10 ms)
 * for 3 s; the parent polls every 100 ms with lastSeen = the newest timestamp
 * seen, as cudacap's watcher does. Checks: timestamps are period ends (> lastSeen,
 * multiples of the period), some polls are empty (167 ms > 100 ms), and
 * sum(smUtil x period) over the samples after the first poll's, divided by the
 * time they cover, reads back the duty cycle within 2 pp.
 *
 * The device-wide values in the same mode, as the H200 gives them (the
 * watcher's cheap path relies on it): nvmlDeviceGetUtilizationRates is one
 * stepped value per period, the same when read twice within a period, the
 * duty cycle (+-3: 16 or 17 cycles fall in a period); nvmlDeviceGetSamples
 * gives one sample per completed period, stamped with its end, newest first,
 * and its newest value is what UtilizationRates reads in that period.
 *
 * A period into or out of which the child's late launches (another suite
 * on the machine; a launch call that took over 0.3 ms counts its whole
 * span, as the kernel was stamped somewhere in it; a launch not made yet
 * when the period is judged counts all it was due to run in it) moved more
 * than 1.5 ms
 * of kernel time (0.9 points: the
 * kernels' runs as launched, queued behind each other, against the same
 * kernels as scheduled) did not run 40 % and is not judged against it; at
 * least half the periods must be judged, else the run is skipped (77).
 * A period not all inside the child's schedule is not judged either, nor
 * are samples missing after a poll that came over NVML's window (1 s)
 * after the one before: those periods are gone.
 * Timestamps and counts are judged in every period. */
#include "simtest.h"

#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "cudacap/nvml_api.h"

#define PERIOD_MS 167
#define RUN_MS 3000.0
#define LAUNCHES 300

static unsigned long long real_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (unsigned long long)ts.tv_sec * 1000000ull + (unsigned long long)ts.tv_nsec / 1000;
}

/* The child's launches (shared): when each was made and when it was
 * scheduled (realtime us, NVML's clock). */
static struct {
    unsigned long long at_us[LAUNCHES], sched_us[LAUNCHES], ret_us[LAUNCHES];
    unsigned long long base_us; /* when launch 0 is due (realtime us); launch i 10 ms after */
} *L;
static int judged, unjudged;

static int duty(void *arg)
{
    double t0 = *(double *)arg;
    st_ctx();
    CUfunction f = st_func("spin_4000us");
    for (int i = 0; i < LAUNCHES; i++) {
        st_sleep_until_ms(t0 + i * 10.0);
        double late_ms = st_ms() - (t0 + i * 10.0);
        unsigned long long at = real_us();
        L->sched_us[i] = at - (unsigned long long)(late_ms * 1000.0);
        __atomic_store_n(&L->at_us[i], at, __ATOMIC_RELEASE); /* last: clean() reads it first */
        CU(cuLaunchKernel(f, 132, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
        L->ret_us[i] = real_us();
    }
    st_sleep_until_ms(t0 + RUN_MS + 100);
    return 0;
}

static double overlap(double a, double b, double lo, double hi)
{
    double x = a > lo ? a : lo, y = b < hi ? b : hi;
    return y > x ? y - x : 0;
}

/* Whether the period ending at end_us (P us long) ran the duty cycle as
 * scheduled: the kernels' time in it as run (4 ms each, from its launch or
 * the previous one's end) within 1.5 ms of their time in it as scheduled.
 * Counted in judged/unjudged unless quiet. */
static int clean_q(unsigned long long end_us, unsigned long long P, int quiet)
{
    double lo = (double)(end_us - P), hi = (double)end_us, moved = 0, prev_end = 0;
    /* Not all inside the child's schedule: no duty cycle to read there (a
     * parent that woke late, past the run's end, read 0 % in a period with
     * nothing scheduled to move, beside a CI run, 2026-12-05). */
    if (end_us - P < L->base_us || end_us > L->base_us + 10000ull * LAUNCHES) {
        if (!quiet) unjudged++;
        return 0;
    }
    for (int i = 0; i < LAUNCHES; i++) {
        if (!__atomic_load_n(&L->at_us[i], __ATOMIC_ACQUIRE)) {
            /* Not launched yet (the child starved): what was due in the
             * period did not run in it. */
            double s0 = (double)(L->base_us + 10000ull * (unsigned long long)i);
            moved += overlap(s0, s0 + 4000, lo, hi);
            continue;
        }
        double run = (double)L->at_us[i] > prev_end ? (double)L->at_us[i] : prev_end;
        prev_end = run + 4000;
        double s0 = (double)L->sched_us[i];
        double d = overlap(run, run + 4000, lo, hi) - overlap(s0, s0 + 4000, lo, hi);
        moved += d < 0 ? -d : d;
        /* Preempted inside the launch call (or between the stamp and the
         * call): the simulator stamped the kernel somewhere in between, so
         * all of that span is counted as moved. */
        if (L->ret_us[i] && L->ret_us[i] - L->at_us[i] > 300)
            moved += overlap((double)L->at_us[i], (double)L->ret_us[i] + 4000, lo, hi);
    }
    if (moved > 1500) {
        if (!quiet) unjudged++;
        return 0;
    }
    if (!quiet) judged++;
    return 1;
}

static int clean(unsigned long long end_us, unsigned long long P) { return clean_q(end_us, P, 0); }

/* The device-wide checks at one poll; *dseen: the GetSamples lastSeen. */
static void device_wide(nvmlDevice_t h, unsigned long long P, unsigned long long *dseen, int *dsamples,
                        int *steps_same)
{
    /* NVML keeps samples for its window (the simulator's 1 s): a poll later
     * than that after the last one finds the oldest periods gone (a parent
     * starved past it, beside a suite loop, 2026-12-05); then continuity
     * from lastSeen is not judged. */
    static unsigned long long last_us;
    unsigned long long now_us = real_us();
    int kept = !last_us || now_us - last_us + P < 1000000ull;
    last_us = now_us;
    unsigned long long before = now_us / P;
    if (!*dseen) *dseen = (before - 1) * P; /* from the newest period on: older ones predate the child */
    nvmlUtilization_t u1, u2;
    CHECK(nvmlDeviceGetUtilizationRates(h, &u1) == NVML_SUCCESS);
    nvmlSample_t smp[8];
    unsigned n = 8;
    nvmlValueType_t vt;
    nvmlReturn_t r = nvmlDeviceGetSamples(h, NVML_GPU_UTILIZATION_SAMPLES, *dseen, &vt, &n, smp);
    CHECK(nvmlDeviceGetUtilizationRates(h, &u2) == NVML_SUCCESS);
    unsigned long long after = real_us() / P;
    if (before == after) {
        /* Only then is u1 the period ending at before * P: a parent
         * preempted past a period's end between the two read the next one
         * (0 % against a period judged clean, beside two suites). */
        if (clean(before * P, P)) NEAR((double)u1.gpu, 40.0, 3.0);
        CHECK(u1.gpu == u2.gpu); /* stepped: one value per period */
        (*steps_same)++;
    }
    if (r == NVML_ERROR_NOT_FOUND) {
        CHECK(after == *dseen / P); /* none newer only while no period ended */
        return;
    }
    CHECK(r == NVML_SUCCESS && vt == NVML_VALUE_TYPE_UNSIGNED_INT && n >= 1);
    for (unsigned i = 0; i < n; i++) {
        CHECK(smp[i].timeStamp > *dseen && smp[i].timeStamp % P == 0);
        CHECK(i == 0 || smp[i].timeStamp == smp[i - 1].timeStamp - P); /* newest first, none skipped */
        if (clean(smp[i].timeStamp, P)) NEAR((double)smp[i].sampleValue.uiVal, 40.0, 3.0);
    }
    if (kept) CHECK(smp[n - 1].timeStamp == *dseen + P);
    if (before == after) CHECK(smp[0].sampleValue.uiVal == u1.gpu && smp[0].timeStamp == after * P);
    *dsamples += (int)n;
    *dseen = smp[0].timeStamp;
}

int main(void)
{
    st_setup();
    L = mmap(NULL, sizeof *L, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(L != MAP_FAILED);
    setenv("CUDACAP_SIM_PROC_SAMPLE_MS", "167", 1);
    CHECK(nvmlInit_v2() == NVML_SUCCESS);
    nvmlDevice_t h;
    CHECK(nvmlDeviceGetHandleByIndex_v2(0, &h) == NVML_SUCCESS);
    double t0 = st_ms() + 50;
    L->base_us = real_us() + (unsigned long long)((t0 - st_ms()) * 1000.0);
    int pid = st_fork(duty, &t0);
    unsigned long long seen = 0, first_ts = 0;
    double sum_us = 0;
    int empty = 0, polls = 0, samples = 0, clean_samples = 0, dsamples = 0, steps_same = 0;
    unsigned long long dseen = 0, last_poll_us = 0;
    int window_lost = 0;
    const unsigned long long P = PERIOD_MS * 1000ull;
    /* poll from 300 ms (steady state) to the end of the run */
    for (double t = t0 + 300; t < t0 + RUN_MS; t += 100) {
        st_sleep_until_ms(t);
        if (t >= t0 + 400) /* the last completed period began after the child's first kernel */
            device_wide(h, PERIOD_MS * 1000ull, &dseen, &dsamples, &steps_same);
        nvmlProcessUtilizationSample_t s[16];
        unsigned n = 16;
        /* A poll over NVML's window (1 s) after the last: older samples gone. */
        unsigned long long pu = real_us();
        if (last_poll_us && pu - last_poll_us + P >= 1000000ull) window_lost++;
        last_poll_us = pu;
        nvmlReturn_t r = nvmlDeviceGetProcessUtilization(h, s, &n, seen);
        polls++;
        if (r == NVML_ERROR_NOT_FOUND) {
            empty++;
            continue;
        }
        CHECK(r == NVML_SUCCESS);
        unsigned long long newest = seen;
        for (unsigned i = 0; i < n; i++) {
            CHECK(s[i].timeStamp > seen);
            CHECK(s[i].timeStamp % P == 0);
            CHECK(s[i].pid == (unsigned)pid);
            if (first_ts) {
                samples++;
                if (clean(s[i].timeStamp, P)) sum_us += s[i].smUtil / 100.0 * (double)P, clean_samples++;
            }
            if (s[i].timeStamp > newest) newest = s[i].timeStamp;
        }
        if (!first_ts) first_ts = newest;
        seen = newest;
    }
    CHECK(st_wait(pid) == 0);
    CHECK(first_ts && seen > first_ts);
    double util = clean_samples ? 100.0 * sum_us / ((double)clean_samples * (double)P) : 0;
    printf("%d polls, %d empty, %d samples, duty read back %.2f%% over the %d periods the child "
           "ran as scheduled (want 40)\n", polls, empty, samples, util, clean_samples);
    printf("readings judged against the duty cycle: %d; not (late launches moved its kernel time): %d\n", judged, unjudged);
    CHECK(empty > 0);
    /* One sample per period, none lost: a period the starved child left
     * without a kernel has no sample for it (beside two suites, once), so
     * only the periods it ran as scheduled must each have one. */
    int periods = (int)((seen - first_ts) / P), moved = 0;
    for (unsigned long long e = first_ts + P; e <= seen; e += P) moved += !clean_q(e, P, 1);
    printf("%d periods after the first poll's, %d of them moved by late launches; %d polls came over "
           "NVML's window after the last\n", periods, moved, window_lost);
    CHECK(samples <= periods && (window_lost || samples >= periods - moved));
    if (judged < unjudged) {
        printf("SKIPPED: late launches moved the kernel time of most periods (the machine was loaded)\n");
        return 77;
    }
    NEAR(util, 40.0, 2.0);
    printf("device-wide: %d samples, %d polls read one value twice\n", dsamples, steps_same);
    CHECK(steps_same > polls / 2);
    CHECK(dsamples >= 14); /* 2.6 s of 167 ms periods */
    nvmlShutdown();
    return 0;
}
