/* Two processes of one container whose clocks differ (time namespaces, or
 * one process's CLOCK_MONOTONIC jumping 2 s: the fault loop's `clock`
 * point, which left the device 47-64 % busy at cap 30 before 2026-12-03).
 * Both run on one real compute.region line at a 30 % share (30 ms a
 * period), each paying the drip as a waiting launcher does (cc_drip_pay,
 * every millisecond, with its own clock) and admitting 1 ms launches while
 * the bucket is positive; process B reads its clock 2 s ahead of A's.
 *   0..1 s   both: together at most the share (300 launches) plus what the
 *            line started with and one bucket the jump credits once, and
 *            at least 70 % of the share (the supply does not stop);
 *   1..4 s   B has left: A waits while B's last stamp is ahead of its
 *            clock (at most the 2 s offset), then is paid again: over
 *            3.2..4 s at least 70 % of the share.
 * Negative control (compute.skew.control, WILL_FAIL): bucket.c built with
 * CC_TEST_STAMP_NOW, every stamp ahead taken as "now" (as before the fix):
 * A moves B's stamp back at each of its payments and B credits its 2 s
 * again, a bucket each time: 24304-33503 launches in the first second (a
 * bound of 369), every run (no timing decides: every payment of A
 * resets, every payment of B credits). */
#include <string.h>

#include "cap/compute/bucket.h"
#include "cap/compute/compute_region.h"
#include "cap/compute/election.h"
#include "check.h"
#include "compute_line.h"
#include "compute_mp.h"
#include "runq.h"

#define NOMINAL 30000000ll /* 30 % of a 100 ms period */
#define CAPACITY (NOMINAL + NOMINAL / 4)
#define COST 1000000ll
#define SKEW 2000000000ull
#define BINS 40 /* 100 ms each */

struct shm {
    uint32_t admitted[2][BINS];
    double starved[2][BINS]; /* s runnable without a core, by bin */
};
static struct shm *S;
static cc_compute_region_t *R;
static int L;

/* One process: until `until` on the test's clock (A's), pay the drip with
 * its own clock (offset ahead) and admit 1 ms launches from a positive
 * bucket, one try a millisecond. */
static void run(int who, uint64_t t0, uint64_t until, uint64_t offset)
{
    cc_drip_t d = {&R->accrued_ns[L], &R->dev[L].share, CAPACITY, 0, 0, NULL};
    int64_t *b = &R->dev[L].tokens;
    double q_last = runq_s();
    for (uint64_t t = mp_now(); t < until; t = mp_now()) {
        cc_drip_pay(b, &d, t + offset, 0, -1);
        /* Every launch the bucket admits now: the count follows the supply,
         * not how often a loaded machine runs this loop. */
        unsigned bin = (unsigned)((t - t0) / 100000000ull);
        double q = runq_s();
        if (bin < BINS) S->starved[who][bin] += q - q_last;
        q_last = q;
        for (int64_t cur = __atomic_load_n(b, __ATOMIC_RELAXED); cur > 0;) {
            if (!__atomic_compare_exchange_n(b, &cur, cur - COST, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
                continue;
            if (bin < BINS) __atomic_add_fetch(&S->admitted[who][bin], 1, __ATOMIC_RELAXED);
            cur -= COST;
        }
        usleep(1000);
    }
}

/* Run-queue wait over bins from..to; a wait is counted in the bin where
 * the loop ran again, so one bin later is taken in too. */
static double starved(int who, unsigned from, unsigned to)
{
    double s = 0;
    for (unsigned i = from; i <= to && i < BINS; i++) s += S->starved[who][i];
    return s;
}

static unsigned sum(int who, unsigned from, unsigned to)
{
    unsigned n = 0;
    for (unsigned i = from; i < to && i < BINS; i++) n += __atomic_load_n(&S->admitted[who][i], __ATOMIC_RELAXED);
    return n;
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    S = mp_shared(sizeof *S);
    L = mp_fresh_line(argv[1], "GPU-skew-0000", NOMINAL, 300, &R);
    if (L < 0) return 1;
    uint64_t t0 = mp_now() + 50000000ull;
    pid_t k[2];
    for (int i = 0; i < 2; i++)
        if ((k[i] = fork()) == 0) {
            mp_sleep_until(t0);
            if (i == 0) run(0, t0, t0 + 4000000000ull, 0);
            else run(1, t0, t0 + 1000000000ull, SKEW);
            _exit(0);
        }
    CHECK(mp_wait_all(k, 2) == 0, "a process failed");
    unsigned both = sum(0, 0, 10) + sum(1, 0, 10), wait = sum(0, 12, 28), after = sum(0, 32, 40);
    printf("0..1 s, both (B 2 s ahead): %u launches of 1 ms (A %u, B %u; the share: 300)\n", both,
           sum(0, 0, 10), sum(1, 0, 10));
    printf("1.2..2.8 s, A alone, B's stamp ahead of its clock: %u\n", wait);
    printf("3.2..4 s, A alone, paid again: %u (the share: 240)\n", after);
    printf("runnable without a core: A %.2f s, B %.2f s over 0..1 s; A %.2f s over 3.2..4 s\n",
           starved(0, 0, 10), starved(1, 0, 10), starved(0, 32, 40));
    /* The share, what the line started with (a period's), one bucket the
     * jump credits, and a launch each that passed a positive bucket. */
    unsigned hi = (unsigned)((10 * NOMINAL + NOMINAL + CAPACITY) / COST) + 2;
    CHECK(both <= hi, "both: %u launches > %u: the offset credited again", both, hi);
    /* Bounds from below only where the loops had their cores (a run
     * beside two suites once admitted A nothing over 3.2..4 s). */
    double sb = starved(0, 0, 10) > starved(1, 0, 10) ? starved(0, 0, 10) : starved(1, 0, 10);
    if (runq_judged("both", sb, 1.0)) CHECK(both >= 210, "both: %u launches < 70 %% of the share", both);
    if (runq_judged("after B left", starved(0, 32, 40), 0.8))
        CHECK(after >= 168, "after B left: %u launches in 0.8 s < 70 %% of the share", after);
    CHECK_EXIT();
}
