/* Elastic caps on the simulator: containers of saturating
 * processes (one-wave 1.5 ms kernels, 4 per sync), each container its own
 * state folder, as on a node. Every worker records the device time of the
 * batches it completed in 10 ms bins; a container's share of a window is
 * the sum over its workers. Modes (tests/compute.cmake runs each, and a
 * control built without the mechanism, WILL_FAIL):
 *   alone     elastic 30/100 (2 processes) alone: >= 90 % of the device;
 *             the region says it borrows and counts the borrowed time.
 *             Control: CC_TEST_NO_ELASTIC (the soft limit ignored): 30 %.
 *   newcomer  elastic 30/100 (3 processes) alone for 2 s, then a hard 50
 *             container (2 processes) starts beside it: from 1 s after
 *             its start the newcomer has >= 47 % and the borrower <= 55 %;
 *             the borrower never has under 30 % (every 0.5 s window, less
 *             the quantization of a batch per process). Control:
 *             CC_TEST_NO_YIELD (others' work never seen): the device split
 *             by queues, about 60/40.
 *   two       elastic 30/100 (1 process, 3 kernels in flight) and 20/100
 *             (4 processes, 6 each), both busy: each at least its hard
 *             share, the device >= 85 % busy. Controls: CC_TEST_NO_YIELD
 *             (split by queues: the 30 % one under its guarantee) and CC_TEST_NO_GROW (back to
 *             hard beside others and no borrowing of idle time: 50 %).
 *   bursts    elastic 30/100 (4 processes) busy; a hard 50 neighbour (2
 *             processes) on and off every 2 s: its share in each on
 *             window within 3 points of 50 (the first, its start, may add
 *             its bucket: 3.1 points), and in the first second of each at
 *             least 47. Control: CC_TEST_SEED_YIELD,
 *             the seed's 10-sample exclusivity debounce both ways (it
 *             yields a second late and takes the device back a second
 *             after each burst). ARG: seconds (20; 8 under sanitizers,
 *             16 for the control). A pass needs every onset counted.
 * Windows in which the machine did not run the test (2 % of the time lost
 * in the parent's late wake-ups, the workers' gaps between calls, their
 * waits for the simulator's lock and, since 2026-12-03, their waits on a run
 * queue: other suites on 2 cores) are not counted; at least half of them must
 * count (compute_elastic_run.c: worker, wait_watching). The harness is
 * compute_elastic_run.c (tests/compute_elastic.h).
 * Figures measured are in docs/compute.md ("Elastic caps"). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK_SHARED_DEFINE
#include "compute_elastic.h"

static void mode_alone(void)
{
    struct cont *e = add(30, 100, 2, 0, 4000, 0);
    start_all();
    mp_sleep_until(t0 + 3 * SEC);
    uint32_t target = 0;
    const cc_compute_elastic_t *el = elastic_of(e, &target);
    CHECK(el != NULL, "no compute region in %s", e->state);
    uint8_t borrowing = el ? __atomic_load_n(&el->borrowing, __ATOMIC_RELAXED) : 0;
    uint64_t borrowed = el ? __atomic_load_n(&el->borrowed_ns, __ATOMIC_RELAXED) : 0;
    finish();
    if (el) {
        printf("at 3 s: target %u permille, borrowing %u, %.2f device-s borrowed\n", target,
               borrowing, borrowed / 1e9);
        CHECK(el->hard_pm == 300 && el->soft_pm == 1000, "limits %u/%u", el->hard_pm, el->soft_pm);
        /* Judged when the machine ran the second before (a starved
         * container's demand is under its hard share: target hard). */
        if (starved(2000, 3000)) {
            printf("at 3 s: starved, not judged\n");
            short_of_windows = 1;
        } else {
            CHECK(target == 1000 && borrowing == 1, "alone: target %u, borrowing %u", target,
                  borrowing);
            /* About (share - 30 %) x 2.5 s by now: at least a second of it. */
            CHECK(borrowed > SEC, "borrowed %.2f device-s", borrowed / 1e9);
        }
    }
    int n, of;
    double s = share_counted(e, 1000, 4000, &n, &of);
    check_counted("alone", n, of);
    printf("elastic 30/100 alone: %.1f %% of the device over 1..4 s\n", s);
    CHECK(s >= 90.0, "alone: %.1f %% < 90 %%", s);
}

static void mode_newcomer(void)
{
    struct cont *e = add(30, 100, 3, 0, 6000, 0);
    struct cont *n = add(50, 0, 2, 2000, 6000, 0);
    start_all();
    mp_sleep_until(t0 + 3500 * 1000000ull);
    uint32_t target = 0;
    const cc_compute_elastic_t *el = elastic_of(e, &target);
    uint8_t cont = el ? __atomic_load_n(&el->contended, __ATOMIC_RELAXED) : 0;
    finish();
    printf("1.5 s after the newcomer: target %u permille, contended %u\n", target, cont);
    if (el && !starved(2500, 3500))
        CHECK(cont == 1 && target <= 550, "target %u contended %u", target, cont);
    int k, of;
    double before = share(e, 1000, 2000), sn = share_counted(n, 3000, 6000, &k, &of);
    double se = share_counted(e, 3000, 6000, &k, &of);
    check_counted("newcomer", k, of);
    printf("borrower alone %.1f %%; from 1 s after the newcomer: newcomer %.1f %%, borrower %.1f %%\n",
           before, sn, se);
    /* Borrowing before (the alone test asks for 90 %; under load the
     * three processes' start may take a part of this window). */
    CHECK(before >= 70.0, "borrower alone: %.1f %%", before);
    CHECK(sn >= 47.0, "newcomer %.1f %% < 47 %%", sn);
    CHECK(se <= 55.0, "borrower %.1f %% > 55 %%", se);
    double lo = 100;
    uint64_t lo_at = 0;
    for (uint64_t a = 500; a + 500 <= 6000; a += 250) {
        double x = share(e, a, a + 500);
        if (x < lo && !starved(a, a + 500)) lo = x, lo_at = a;
    }
    printf("borrower's least 0.5 s window: %.1f %% at %.2f s (slack %.1f)\n", lo, lo_at / 1e3,
           slack(e, 500));
    /* CC_TEST_SERIES=1: both containers' shares per 0.1 s around the
     * arrival (how the dip of the step group on elastic lines was found). */
    if (getenv("CC_TEST_SERIES")) {
        for (uint64_t a = 1500; a < 4000; a += 100)
            printf("  %.1f s: borrower %.0f %% newcomer %.0f %%\n", a / 1e3, share(e, a, a + 100),
                   share(n, a, a + 100));
    }
    CHECK(lo >= 30.0 - slack(e, 500), "borrower at %.1f %% < its hard 30 %%", lo);
}

/* The median of x[0..n) (sorted in place); 0 for none. */
static double median(double *x, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && x[j - 1] > x[j]; j--) {
            double t = x[j];
            x[j] = x[j - 1], x[j - 1] = t;
        }
    return n ? (n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2) : 0;
}

static void mode_two(void)
{
    /* Queues of 3 and 4 x 6 kernels: split by queues (no yield), the 30 %
     * one gets about a tenth of the device. */
    struct cont *a = add(30, 100, 1, 0, 6000, 0);
    struct cont *b = add(20, 100, 4, 0, 6000, 0);
    a->depth = 3;
    b->depth = 6;
    start_all();
    finish();
    int n, of;
    double sa = share_counted(a, 2000, 6000, &n, &of), sb = share_counted(b, 2000, 6000, &n, &of);
    check_counted("two", n, of);
    /* The device's bar judged by the median over the half of the counted
     * windows in which the probes lost the least time: a window the machine
     * starved below their bar (the device at 80-86 % in 4 of them beside
     * load 10-18, 2026-12-03) moves a mean, and may be half the counted ones
     * under such load; what the no-growth control removes is missing from
     * every window (the device at 41-50 %). The hard shares stay judged by
     * the means over the counted windows: the no-yield control's 30 % one
     * varies by window (12-30 %; 21.3 % on average once where the least
     * starved half's median was 26.9). */
    double wd[8], wl[8];
    int k = 0;
    for (uint64_t w = 2000; w + 500 <= 6000 && k < 8; w += 500)
        if (!starved(w, w + 500)) {
            double l = lost_ms(w, w + 500), x = share(a, w, w + 500), y = share(b, w, w + 500);
            int j = k++;
            for (; j > 0 && wl[j - 1] > l; j--) /* sorted by lost time */
                wl[j] = wl[j - 1], wd[j] = wd[j - 1];
            wl[j] = l, wd[j] = x + y;
        }
    int h = (k + 1) / 2;
    double md = median(wd, h);
    printf("over 2..6 s: 30/100 %.1f %%, 20/100 %.1f %%, device %.1f %% (its median over the %d least "
           "starved of %d windows: %.1f)\n", sa, sb, sa + sb, h, k, md);
    CHECK(sa >= 30.0 - slack(a, 500), "30/100 at %.1f %%", sa);
    CHECK(sb >= 20.0 - slack(b, 500), "20/100 at %.1f %%", sb);
    /* 85, not 90: the least starved half's median was 88.5 % in 1 of 20
     * runs under load (2026-12-03), while what the control removes leaves
     * the device at 41-50 % in every window: 85 keeps that gap wide. */
    CHECK_LOADED(md >= 85.0, "device %.1f %% busy < 85 %%", md);
}

static void mode_bursts(int secs)
{
    uint64_t end = 2000 + (uint64_t)secs * 1000;
    add(30, 100, 4, 0, end, 0);
    struct cont *n = add(50, 0, 2, 2000, end, 2000);
    start_all();
    /* The neighbour's line just before its first onset (printed: a share
     * wound up by its start, or a full bucket, shows here). */
    mp_sleep_until(t0 + 1950 * 1000000ull);
    const cc_compute_region_t *nr = mp_map_compute_region(n->state);
    if (nr)
        printf("neighbour before its first onset: share %.1f ms, tokens %.1f ms a period\n",
               __atomic_load_n(&nr->dev[0].share, __ATOMIC_RELAXED) / 1e6,
               __atomic_load_n(&nr->dev[0].tokens, __ATOMIC_RELAXED) / 1e6);
    finish();
    /* The first on window is the neighbour's start: a new line starts with
     * a period's share in its bucket and may hold its capacity, 1.25 x that
     * (compute_region.h, compute_setup.c), which a fresh container may spend
     * on top of its cap once. Over a 2 s window that is 3.1 points, allowed
     * there beside the 3 of every window: that first window measured
     * 50.7-51.5 % alone and 53.6-54.5 % a few times in suites (one at
     * 53.6 % in CI on 2026-12-03: 69.3 % in its first 0.5 s, 48-50 % after).
     * A line that started full and overshot by more than its bucket would
     * still fail. */
    const double period_ms = 100.0; /* CC_PERIOD_NS, src/cap/compute/election.h */
    const double start_pts = 100.0 * 1.25 * (0.5 * period_ms) / 2000.0;
    double worst = 0, first = 100, first_on = 0;
    int counted = 0, windows = 0;
    for (uint64_t a = 2000; a + 2000 <= end; a += 4000) {
        double x = share(n, a, a + 2000), dev = x + share(&C[0], a, a + 2000);
        double x1 = share(n, a, a + 1000); /* its first second: the yield's part */
        int ok = !starved(a, a + 2000);
        windows++;
        counted += ok;
        printf("neighbour on at %.0f s: %.1f %%, first second %.1f %% (device %.1f %%%s)\n",
               a / 1000.0, x, x1, dev, ok ? "" : ": starved, not counted");
        if (ok && x1 < first) first = x1;
        if (!ok) continue;
        if (a == 2000) {
            first_on = x;
            continue;
        }
        if (worst == 0 || (x > 50 ? x - 50 : 50 - x) > (worst > 50 ? worst - 50 : 50 - worst)) worst = x;
    }
    printf("neighbour's least first second: %.1f %%\n", first);
    printf("neighbour's worst on window after its start: %.1f %%, its start's %.1f %% (cap 50; "
           "%.1f points of bucket allowed there), %d of %d windows counted\n",
           worst, first_on, start_pts, counted, windows);
    check_counted("bursts", counted, windows);
    CHECK_LOADED(worst == 0 || (worst >= 47.0 && worst <= 53.0), "neighbour %.1f %% while on", worst);
    CHECK(first_on == 0 || (first_on >= 47.0 && first_on <= 53.0 + start_pts),
          "neighbour %.1f %% in its first on window", first_on);
    /* And in the first second of each: the borrower gave the share back
     * within a sample or two, not a second later (52-55 % measured; the
     * seed's debounce: 20-35 %). */
    CHECK(first >= 47.0 - slack(n, 1000), "neighbour %.1f %% in a first second", first);
    /* A pass needs every onset counted: with two of four starved the
     * control passed once (beside a CI run, 2026-12-04); such a run is run
     * again (main), then skipped. A failure stands. */
    if (counted < windows && !check_failures) short_of_windows = 1;
}

/* yields: the borrower's target read every 10 ms while a hard 50 neighbour
 * toggles every 2 s, run with NVML as the H200 gives it (one sample per
 * 200 ms naming one pid; tests/compute.cmake). For each onset after the
 * first (its context is made then) at which the borrower borrowed (target
 * over 400 permille 50 ms before), the time until its target is back at the
 * hard 300: every yield within 0.6 s (a period to end, one more if the first
 * saw little of the work, a poll, a refill). Beside: the yields while the
 * neighbour is off (false ones: its idle context and the borrower's own
 * lumps), and the borrower's mean target then, printed. */
#define YIELD_POLL_MS 10
static void mode_yields(int secs)
{
    uint64_t end = 2000 + (uint64_t)secs * 1000;
    struct cont *e = add(30, 100, 4, 0, end, 0);
    add(50, 0, 2, 2000, end, 2000);
    start_all();
    static uint16_t tg[64 * 1000 / YIELD_POLL_MS];
    unsigned nt = 0;
    for (uint64_t t = 0; t < end && nt < sizeof tg / sizeof tg[0]; t += YIELD_POLL_MS, nt++) {
        mp_sleep_until(t0 + t * 1000000ull);
        uint32_t target = 0;
        tg[nt] = elastic_of(e, &target) ? (uint16_t)target : 0;
    }
    finish();
    double worst = 0, off_sum = 0;
    int judged = 0, false_yields = 0, off_n = 0, starved_n = 0;
    for (uint64_t on = 6000; on + 2000 < end; on += 4000) {
        unsigned i0 = (unsigned)(on / YIELD_POLL_MS);
        if (tg[i0 - 50 / YIELD_POLL_MS] <= 400) {
            printf("onset at %.0f s: not borrowing before it (target %u), not judged\n", on / 1000.0,
                   tg[i0 - 5]);
            continue;
        }
        /* A yield the machine delayed is not the library's: 1.3-2.0 s
         * beside two suites, its workers starved (as the other modes'
         * windows, starved()). */
        if (starved(on, on + 1000)) {
            printf("onset at %.0f s: the second after it starved, not judged\n", on / 1000.0);
            starved_n++;
            continue;
        }
        double y = -1;
        for (unsigned i = i0; i < i0 + 2000 / YIELD_POLL_MS && i < nt; i++)
            if (tg[i] <= 300) {
                y = (double)(i - i0) * YIELD_POLL_MS / 1000.0;
                break;
            }
        judged++;
        printf("onset at %.0f s: yield after %.3f s\n", on / 1000.0, y);
        if (y < 0 || y > worst) worst = y < 0 ? 2.0 : y;
    }
    /* Off windows [on + 2, on + 4) after the first burst: yields there are
     * false (the first 0.3 s are the burst's tail, not counted). */
    for (uint64_t off = 4000; off + 2000 <= end; off += 4000)
        for (unsigned i = (unsigned)((off + 300) / YIELD_POLL_MS); i < (off + 2000) / YIELD_POLL_MS && i < nt; i++) {
            false_yields += tg[i] <= 300 && tg[i - 1] > 400;
            off_sum += tg[i], off_n++;
        }
    printf("worst yield %.3f s over %d onsets; while the neighbour was off: %d yields, mean target %.0f permille\n",
           worst, judged, false_yields, off_n ? off_sum / off_n : 0.0);
    CHECK(worst <= 0.6, "a yield took %.3f s", worst);
    if (judged < 2 && starved_n && !check_failures) {
        short_of_windows = 1; /* run again (main), at most three times */
        return;
    }
    CHECK(judged >= 2, "only %d onsets judged", judged);
}

/* guard: an elastic 30/100 container beside a foreign context with no work
 * (a process that made its context and waits): it borrows up to the guard
 * (85 %, elastic.h) and leaves the rest idle, so that the context's work,
 * when it comes, saturates the device; its own lumps must not make it yield
 * again and again. Checks: its share over 2..8 s within [78, 88] % (late, cold: 4..10 s, [60, 88]) (control
 * CC_TEST_NO_SAT_ARRIVAL: no guard, 96-100 %), and at most one yield. */
/* late: the idle context made at 1 s, while the borrower alone saturates
 * the device at its soft limit (an idle notebook opening beside it): one
 * provisional yield then, and none after; counted from 4 s to 10 s (after
 * the false alarm the target grows back to the guard from the hard share,
 * elastic.h: over 2..8 s the share was 77.6-78.0 %, under the bar).
 * cold: the idle context made at T0 with the borrower's, on a device whose
 * kernels slow down under load (CUDACAP_SIM_SLOWDOWN_PCT, the H200's power
 * limit): the borrower goes to the guard at once with kernels timed on a
 * cool device, the device saturates, and after a provisional yield (0.4 s at
 * its hard share, the kernels fast again) the old target must come back
 * with the share those saturated samples called for, not the one that
 * saturated it (control CC_TEST_RESTORE_NOMINAL: a yield every 0.8 s, as
 * the H200 did in the 2026-12-02 guard run). Kernels take up to 1.5x their nominal time
 * there, so its share is the device's busy time (cuSimTestBusyNs), not
 * its kernels at their nominal time; counted from 4 s to 10 s (the growth
 * to the guard takes 2-3 s there: over 2..8 s, 78.5-82.4 %). */
enum { GUARD, GUARD_LATE, GUARD_COLD };
static void mode_guard(int variant)
{
    uint64_t from = variant == GUARD ? 2000 : 4000, end = from + 6000;
    struct cont *e = add(30, 100, 4, 0, end, 0);
    if (variant == GUARD_LATE) {
        add(50, 0, 1, 1000, end, 0)->depth = IDLE_DEPTH;
    } else if (variant == GUARD_COLD) {
        add(50, 0, 1, 0, end, 0)->depth = IDLE_DEPTH;
    } else {
        add(50, 0, 1, end, end, 1); /* toggling: its context made at T0; start = end: no work */
    }
    start_all();
    int yields = 0, ny = 0, polls = 0;
    uint64_t yield_at[256];
    uint32_t prev = 0;
    double target_sum = 0;
    for (uint64_t t = 2000; t < end; t += YIELD_POLL_MS) {
        mp_sleep_until(t0 + t * 1000000ull);
        uint32_t target = 0;
        if (!elastic_of(e, &target)) continue;
        if (prev > 400 && target <= 300 && ny < 256) yield_at[ny++] = t;
        prev = target;
        if (t >= from) target_sum += target, polls++;
    }
    finish();
    /* A yield counts unless the machine starved the second before it (the
     * borrower's processes, run again at once after a stall, saturate the
     * device: a provisional yield the cap did not cause; 4 such yields in
     * guard.slow beside two other engineers' builds, load 10, 2026-12-03). */
    int unjudged = 0;
    for (int i = 0; i < ny; i++) {
        int judged = !starved(yield_at[i] - 1000, yield_at[i]);
        yields += judged;
        unjudged += !judged;
        printf("yield at %.2f s%s\n", yield_at[i] / 1e3, judged ? "" : " (the second before starved: not counted)");
    }
    int n, of;
    double x = share_counted(e, from, end, &n, &of);
    check_counted("guard", n, of);
    double mean = polls ? target_sum / polls / 10.0 : 0;
    /* On a slowed device: the device's busy time, from the simulator, over
     * the same windows as the share (the starved ones left out). */
    uint64_t (*busy_ns)(uint32_t, uint64_t, uint64_t) =
        (uint64_t (*)(uint32_t, uint64_t, uint64_t))dlsym(RTLD_DEFAULT, "cuSimTestBusyNs");
    double dev = -1, busy = 0;
    int nb = 0;
    for (uint64_t w = from; busy_ns && w + 500 <= end; w += 500)
        if (!starved(w, w + 500))
            busy += (double)busy_ns(0, t0 + w * 1000000ull, t0 + (w + 500) * 1000000ull), nb++;
    if (nb) dev = 100.0 * busy / ((double)nb * 500e6);
    printf("beside an idle context from %.0f s: %.1f %% of the device (%.1f %% in nominal kernel time), "
           "mean target %.1f %%, %d yields from 2 s (%d in all)\n", from / 1000.0, dev, x, mean, yields, ny);
    if (variant == GUARD_COLD) x = dev; /* (only the borrower runs kernels) */
    /* late, cold: one false alarm (allowed below) costs the regrowth from
     * the hard share, up to 4.5 s of the 6 counted: 69.5-75.9 % in the runs
     * that had one, beside a build. The bar still fails a borrower left at
     * its hard share, and the yields' bar the cycle of the former jump. */
    /* guard: the one yield allowed (below) costs the same regrowth: 73.5 %
     * with one yield in 8 counted windows, beside CI and a suite loop
     * (2026-12-06), so the 78 % bar holds only where none came. */
    double lo = variant == GUARD && yields == 0 ? 78.0 : 60.0;
    /* A yield the machine caused costs the regrowth from the hard share
     * too, in windows it did not starve: with two such yields the counted
     * windows held 68.4 % (a CI run beside a suite loop, 2026-12-05). Then
     * the lower bar says nothing, and a run that passed the rest is run
     * again (main), then skipped. */
    if (unjudged) printf("%d yield(s) after a starved second: the lower bar not judged\n", unjudged);
    /* A window the machine took a fifth of (100 ms or more) from a second
     * before the count on: the borrower looked idle to its samples, and its
     * target may fall back to the hard share with no yield seen by the
     * polls, then grow back over the counted windows (beside a suite loop
     * and CI, 2026-12-06: 395 ms lost in one window, the next at 37.5 %,
     * the mean target 77 %, 74.7 % counted). The lower bar says nothing
     * then either (only where it failed: a run above it stands). */
    for (uint64_t w = from - 1000; !unjudged && x < lo && w + 500 <= end; w += 500)
        if (lost_ms(w, w + 500) >= 100.0) {
            printf("%.0f ms of the window at %.1f s starved: the lower bar not judged\n", lost_ms(w, w + 500),
                   w / 1e3);
            unjudged = 1;
        }
    CHECK((unjudged || x >= lo) && x <= 88.0, "elastic %.1f %% beside an idle context (guard 85, at least %.0f)", x,
          lo);
    CHECK(yields <= 1, "%d yields beside an idle context", yields);
    if (unjudged && !check_failures) short_of_windows = 1;
}

int main(int argc, char **argv)
{
    if (argc == 8 && !strcmp(argv[1], "--worker"))
        return worker(argv[2], strtoull(argv[3], NULL, 10), strtoull(argv[4], NULL, 10),
                      strtoull(argv[5], NULL, 10), strtoull(argv[6], NULL, 10),
                      (unsigned)atoi(argv[7]));
    base = getenv("CUDACAP_STATE_DIR");
    if (!base || argc < 2) return 77;
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl <= 0) return 1;
    self[sl] = 0;
    mkdir(base, 0700);
    /* Each attempt in a child of its own: one the machine starved (fewer
     * than half its windows counted) is run again, up to 4 in all (a
     * starved attempt and one failing only CHECK_LOADED share them: beside
     * a CI run two starved then one read 53.8 %, 2026-12-05); then the
     * test is skipped (77), never passed, and says why. */
    for (int attempt = 1; attempt <= 4; attempt++) {
        fflush(stdout);
        pid_t p = fork();
        if (p == 0) {
            if (!strcmp(argv[1], "alone")) mode_alone();
            else if (!strcmp(argv[1], "newcomer")) mode_newcomer();
            else if (!strcmp(argv[1], "two")) mode_two();
            else if (!strcmp(argv[1], "bursts")) mode_bursts(argc > 2 ? atoi(argv[2]) : 20);
            else if (!strcmp(argv[1], "yields")) mode_yields(argc > 2 ? atoi(argv[2]) : 26);
            else if (!strcmp(argv[1], "guard"))
                mode_guard(argc < 3 ? GUARD : !strcmp(argv[2], "late") ? GUARD_LATE : GUARD_COLD);
            else _exit(2);
            fflush(stdout);
            if (short_of_windows) _exit(77);
            if (check_failures && check_failures == loaded_failures && attempt < 4) _exit(3);
            _exit(check_failures ? 1 : 0);
        }
        int st = 0;
        if (p < 0 || waitpid(p, &st, 0) < 0) return 1;
        if (!WIFEXITED(st)) { /* (once in a suite run, 2026-12-03, with no word) */
            printf("attempt %d: ended by signal %d\n", attempt, WIFSIGNALED(st) ? WTERMSIG(st) : 0);
            return 1;
        }
        if (WEXITSTATUS(st) == 3) {
            printf("attempt %d: only checks a loaded machine can fail failed; again\n", attempt);
            continue;
        }
        if (WEXITSTATUS(st) != 77) {
            if (WEXITSTATUS(st) == 1) printf("checks failed (attempt %d)\n", attempt);
            return WEXITSTATUS(st);
        }
        printf("attempt %d: the machine starved the test (other suites on it); again\n", attempt);
    }
    printf("SKIPPED: four attempts starved by the machine\n");
    return 77;
}
