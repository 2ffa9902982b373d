/* What the watcher learns of NVML's sampling period (src/cap/compute/
 * nvml_clock.c) where a period has no sample: the first kernel, a pause of
 * one period, then work in every period. NVML's per-process answers are
 * modelled here (a sample of each busy period, stamped with its end,
 * visible LAG after it; an answer holds every visible sample since
 * lastSeen), and so is the watcher's poll (nvml_sample.c, cc_watch_sample:
 * every 100 ms; the first poll only sets lastSeen; a poll skipped while
 * cc_nvml_not_due; an empty answer moves lastSeen by cc_nvml_empty_seen;
 * once the cheap path's grid stands, per-process queries only every 5 s).
 * Deterministic: no clock, no threads.
 *   h200   200 ms periods shown 30 ms late (the H200's).
 *   lag300 167 ms periods shown 300 ms late (compute.deepq.warm.lag300's).
 *   alternate  the H200's periods, the process busy in every other one for
 *          its first 1.2 s (two gaps of 400 ms agree), then in every one.
 *   paced  NVML answering at the poll's pace (the simulator's default: one
 *          sample stamped now for a process that ran since lastSeen), the
 *          process running 30 ms at 350 ms, then from 750 ms on: its first
 *          gap spans three empty answers (400 ms); its period is the
 *          poll's, 100 ms.
 * Checked: after 8 s the learned period and the grid are the true period
 * (within 2 %), and but for alternate (where two gaps of 400 ms agree, and
 * the cheap path reads on that grid until its next per-process query, 5 s
 * on) the grid did not stand on the first gap alone.
 * Controls (WILL_FAIL): CC_TEST_ONE_GAP_GRID, the period trusted on one
 * gap: the grid stands on the gap across the pause (two periods) and
 * per-process queries stop, and polls wait out the paced first gap (400 ms
 * for good); CC_TEST_NEWEST_GAPS_ONLY, only the newest timestamps of
 * successive polls teach the period: with two periods agreed on, each poll
 * waits for two and the period is never seen (checked by running them:
 * the first stood its grid on 400 and 334 ms at h200 and lag300 and kept
 * 400 ms at paced; the second kept 400 ms at alternate). */
#include <stdio.h>
#include <string.h>

#include "cap/compute/nvml_clock.h"
#include "check.h"

#define POLL 100000ull
#define ANCHOR 5000000ull

/* The paced process: 30 ms at 350 ms, then from 750 ms on. */
static int paced_ran(unsigned long long from, unsigned long long to)
{
    return (from < 380000 && to > 350000) || to > 750000;
}

/* per 0: paced (the sample of a poll stamped at the poll); alt: busy in
 * every other period until 1.2 s, else all but period 1. */
static void run(const char *name, unsigned long long per, unsigned long long lag, int alt)
{
    struct cc_nvml_clock c;
    memset(&c, 0, sizeof c);
    unsigned long long seen = 0, poll = 0, query = 0;
    unsigned first_grid = 0;
    for (unsigned long long t = POLL; t <= 8000000ull; t += POLL) {
        unsigned grid = cc_nvml_grid_step_us(&c);
        if (grid && !first_grid) first_grid = grid;
        /* cheap_ready (nvml_sample.c): a grid slower than 1.3 polls */
        if (grid * 10ull > POLL * 13 && t - query < ANCHOR) continue;
        if (cc_nvml_not_due(&c, t, poll ? t - poll : 0)) continue;
        poll = t;
        if (!seen) {
            seen = t; /* the first poll: a window from now */
            continue;
        }
        nvmlProcessUtilizationSample_t b[64];
        unsigned n = 0;
        unsigned long long newest = 0;
        if (!per && paced_ran(seen, t)) {
            memset(&b[0], 0, sizeof b[0]);
            b[0].pid = 4242, b[0].timeStamp = t, b[0].smUtil = 30;
            n = 1, newest = t;
        }
        /* period k covers [k per, (k+1) per): busy but for k = 1 */
        for (unsigned long long k = 0; per && (k + 1) * per + lag <= t && n < 64; k++) {
            unsigned long long ts = (k + 1) * per;
            if ((alt ? (k % 2 && ts <= 1200000) : k == 1) || ts <= seen) continue;
            memset(&b[n], 0, sizeof b[n]);
            b[n].pid = 4242, b[n].timeStamp = ts, b[n].smUtil = 30;
            n++;
            if (ts > newest) newest = ts;
        }
        if (!n) {
            seen = cc_nvml_empty_seen(&c, seen, t);
            continue;
        }
        cc_nvml_clock_saw(&c, newest, cc_nvml_answer_step(b, n), t);
        seen = newest;
        query = t;
    }
    unsigned p = cc_nvml_period_us(&c), g = cc_nvml_grid_step_us(&c);
    if (!per) per = POLL;
    printf("%s: true period %.1f ms: learned %.1f ms, grid %.1f ms (first grid %.1f ms), lag %.1f ms\n", name,
           per / 1e3, p / 1e3, g / 1e3, first_grid / 1e3, cc_nvml_lag_us(&c) / 1e3);
    CHECK(p * 50ull >= per * 49 && p * 50ull <= per * 51, "%s: period learned %u us of %llu", name, p, per);
    CHECK(g * 50ull >= per * 49 && g * 50ull <= per * 51, "%s: grid %u us of %llu", name, g, per);
    if (!alt) CHECK(first_grid * 50ull <= per * 51, "%s: the grid first stood on %u us", name, first_grid);
}

int main(void)
{
    run("h200", 200000, 30000, 0);
    run("lag300", 167000, 300000, 0);
    run("alternate", 200000, 30000, 1);
    run("paced", 0, 0, 0);
    CHECK_EXIT();
}
