/* What the watcher learns of NVML's sampling on one device (nvml_clock.h). */
#include "cap/compute/nvml_clock.h"

#include "common/controls.h"

/* NVML's sampling period as observed on clock c (the smallest gap); 0 while
 * unknown (then an empty poll means idle, the simulator's rule). The next
 * sample is due one period after the newest one's timestamp, which is the
 * END of the period it covers; an empty poll before that is no data. (A
 * first version subtracted a margin and so declared samples due before
 * their period had ended: 30 % caps held at up to 40 % on the simulator's
 * periodic-NVML mode.) */
unsigned cc_nvml_period_us(const struct cc_nvml_clock *c)
{
    unsigned m = 0;
    for (int i = 0; i < 16; i++)
        if (c->gap_us[i] && (!m || c->gap_us[i] < m)) m = c->gap_us[i];
    return m;
}

/* NVML's publication lag on clock c: how long after its timestamp (the end
 * of its period) a sample appears, the least of the recent observations
 * (each is the lag plus up to one poll interval); 0 while unknown. A
 * simulator with CUDACAP_SIM_NVML_LAG_MS shows each period 30-300 ms late;
 * read as due at its period's end, every sample there was "missing" when
 * first asked for, an empty answer published 0 % and moved lastSeen past
 * the sample still to come, and the watcher read 0 % for seconds while the
 * container ran: a deep queue at cap 30 took 40-87 % of the device. The
 * H200's samples came within the cheap path's 50 ms allowance. */
unsigned cc_nvml_lag_us(const struct cc_nvml_clock *c)
{
    unsigned k = c->lag_i < 8 ? c->lag_i : 8, m = k ? c->lag_us[0] : 0;
    for (unsigned i = 1; i < k; i++)
        if (c->lag_us[i] < m) m = c->lag_us[i];
    return m;
}

int cc_nvml_lag_known(const struct cc_nvml_clock *c)
{
    return c->lag_i > 0;
}

/* lastSeen after an empty answer at now (the container idle): not past
 * what may still be published, samples of periods that ended within the
 * lag; before any sample has shown the lag, where it was (bounded to 1 s
 * back by the caller): a lag longer than a poll interval was never learned
 * when each empty answer moved it to now. */
static unsigned long long CC_CONTROL_POINT(empty_seen)(const struct cc_nvml_clock *c, unsigned long long seen,
                                                       unsigned long long now)
{
    if (!cc_nvml_lag_known(c)) return seen;
    unsigned lag = cc_nvml_lag_us(c);
    unsigned long long upto = now > lag ? now - lag : 0;
    return upto > seen ? upto : seen;
}

unsigned long long cc_nvml_empty_seen(const struct cc_nvml_clock *c, unsigned long long seen, unsigned long long now)
{
    return empty_seen(c, seen, now);
}

/* NVML sampling slower than we poll (a real GPU: ~200 ms against 100 ms)
 * and its next sample on clock c not due yet (one period after the newest
 * one's timestamp, plus the publication lag): asking would find nothing
 * (and the per-process query costs 2.4 ms of CPU on the H200). While the
 * period is under 260 ms at most one poll in a row is skipped: the gap then
 * reads two cycles, and the rule no longer holds. Only on a period two
 * gaps agree on (cc_nvml_grid_step_us): a skip makes the next gap as long
 * as the period believed, so one gap too long taught a period that every
 * later poll confirmed. Where NVML answers at the watcher's pace (the
 * simulator's default), a gap across the first polls' empty answers, or a
 * poll late on a loaded machine, taught 400 ms for good: the sampling
 * owner of 8 processes at cap 10 then called NVML 4 times a second and the
 * container ran 12.5 % (bench_compute_accuracy on 2 loaded cores,
 * 2026-12-05; compute.period.unit, "paced"). */
static int CC_CONTROL_POINT(not_due)(const struct cc_nvml_clock *c, unsigned long long now,
                                     unsigned long long poll_gap)
{
    unsigned per = cc_nvml_grid_step_us(c) ? cc_nvml_period_us(c) : 0;
    return per && (unsigned long long)per * 10 > poll_gap * 13 && now < c->last_ts + per + cc_nvml_lag_us(c);
}

int cc_nvml_not_due(const struct cc_nvml_clock *c, unsigned long long now, unsigned long long poll_gap)
{
    return not_due(c, now, poll_gap);
}

/* Whether an answer's own timestamps teach the period (cc_nvml_clock_saw). */
static inline int CC_CONTROL_POINT(in_answer_steps)(void) { return 1; }

/* The newest timestamps of successive polls alone can only overstate the
 * period: a period may have no sample of the container (the simulator gives
 * none for a process that ran nothing in it), so a first gap across a pause
 * spans two periods, and with a learned period of two not_due makes each
 * poll wait for two, so each poll's newest is two periods after the last
 * and the true period is never seen (compute.period.unit: the H200's
 * 200 ms periods, a pause after the first kernel: 400 ms for good). An
 * answer holds every sample since lastSeen: two consecutive periods of one
 * process in it show the period itself. */
void cc_nvml_clock_saw(struct cc_nvml_clock *c, unsigned long long newest, unsigned long long step,
                       unsigned long long now)
{
    if (step && in_answer_steps()) c->gap_us[c->gap_i++ % 16] = step > 2000000ull ? 2000000u : (unsigned)step;
    if (newest <= c->last_ts) return;
    unsigned long long lag = now > newest ? now - newest : 0;
    c->lag_us[c->lag_i++ % 8] = lag > 1000000ull ? 1000000u : (unsigned)lag;
    if (c->last_ts) {
        unsigned long long gap = newest - c->last_ts;
        c->gap_us[c->gap_i++ % 16] = gap > 2000000ull ? 2000000u : (unsigned)gap;
    }
    c->last_ts = newest;
}

/* Per process: another process's sample may carry a timestamp of its own
 * close by. */
unsigned long long cc_nvml_answer_step(const nvmlProcessUtilizationSample_t *b, unsigned n)
{
    unsigned long long m = 0;
    if (n > 64) n = 64;
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = i + 1; j < n; j++) {
            if (b[i].pid != b[j].pid || !b[i].timeStamp || !b[j].timeStamp) continue;
            unsigned long long g = b[i].timeStamp > b[j].timeStamp ? b[i].timeStamp - b[j].timeStamp
                                                                   : b[j].timeStamp - b[i].timeStamp;
            if (g && (!m || g < m)) m = g;
        }
    return m;
}

/* How many learned gaps must agree (cc_nvml_grid_step_us) before the cheap path's
 * grid stands. */
static inline unsigned CC_CONTROL_POINT(grid_gaps_needed)(void) { return 2; }

/* The period as a grid's step: the mean of the learned gaps within 5/4 of
 * the smallest (a longer one spans a skipped sample). The smallest alone is
 * the safe bound for "not due" but runs short of the mean (198.2 against
 * 200.0 ms on the H200): 25 periods on it would drift 45 ms off the grid.
 * 0 until two gaps agree: a first gap may span a period without a sample
 * (cc_nvml_clock_saw), and the cheap path, once on, queries per process
 * only every 5 s (nvml_sample.c, CC_ANCHOR_US): its grid would stand on two
 * periods that long, reading every other one (compute.period.unit). */
unsigned cc_nvml_grid_step_us(const struct cc_nvml_clock *c)
{
    unsigned m = cc_nvml_period_us(c), n = 0;
    unsigned long long sum = 0;
    for (int i = 0; m && i < 16; i++)
        if (c->gap_us[i] && c->gap_us[i] * 4ull <= m * 5ull) sum += c->gap_us[i], n++;
    return n >= grid_gaps_needed() ? (unsigned)(sum / n) : 0;
}
