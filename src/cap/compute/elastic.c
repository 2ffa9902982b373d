#include "cap/compute/elastic.h"

#include "common/controls.h"

cc_elastic_state_t cc_elastic_initial(uint32_t hard_pm, uint32_t soft_pm)
{
    (void)soft_pm;
    /* At the hard share until a first sample says the device is ours: an
     * elastic container starting beside busy ones must not take their
     * shares for the first samples (alone, the first sample lifts it). */
    cc_elastic_state_t st = {.up_pm = hard_pm, .contended = 0, .calm = 0, .seen = 0, .saturated = 0,
                             .low = 0, .prov = 0, .restore_pm = (uint16_t)hard_pm};
    return st;
}

static uint32_t clamp_u(uint32_t v, uint32_t lo, uint32_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Growth into idle time (or shrinking, within the margin of idle time to
 * leave), in proportion to the hard share: gains add up to at most GAIN
 * over all containers (hard shares sum to at most 100 %), which a lag of a
 * sample or two keeps stable; within [hard, ceiling]. */
static uint32_t grown(uint32_t up, uint32_t hard, uint32_t ceiling, uint32_t idle, uint32_t margin)
{
    double step = CC_ELASTIC_GAIN * (double)hard / 1000.0 * ((double)idle - (double)margin);
    double u = (double)up + step;
    return u <= (double)hard ? hard : u >= (double)ceiling ? ceiling : (uint32_t)(u + 0.5);
}

/* Others' work in a sample: the device's busy time that is not ours. */
static inline uint32_t CC_CONTROL_POINT(others_work)(uint32_t sys, uint32_t user) { return sys - user; }

/* Saturated beside a foreign context whose work was not seen: that work
 * arriving, NVML not naming it yet. */
static inline int CC_CONTROL_POINT(unseen_arrival)(int foreign, uint32_t idle, int quiet, int borrowing)
{
    return foreign && idle < CC_ELASTIC_SAT_PM && quiet && borrowing;
}

/* A foreign context listed, others' work not seen for about ten samples
 * (the level alone: on the H200 NVML may name one busy container for 13
 * samples in a row, and the guard then held an elastic one of two at its
 * hard share for 2.5 s: the device 86.6 % busy): the guard. */
static inline int CC_CONTROL_POINT(guard_on)(int foreign, uint32_t level)
{
    return foreign && level < CC_ELASTIC_GONE_PM;
}

/* The target after a provisional yield found to be our own lump. Beside
 * the foreign context, back to the guard by growth from the hard share
 * (guard_by_growth): restored at once, with kernels timed at the hard
 * share's low duty cycle, the H200's borrower saturated the device again
 * within two samples and yielded every 0.8 s (the 2026-12-02 guard run;
 * control CC_TEST_GUARD_JUMP). Without it (the context left meanwhile)
 * nobody can arrive unseen: the old target at once. */
static inline uint32_t CC_CONTROL_POINT(restored)(int foreign, uint32_t hard, uint32_t restore)
{
    return foreign ? hard : restore;
}

/* Up to the guard by growth, not at once (elastic.h), leaving the guard's
 * idle time as NVML reads it (on the H200 the device read up to 10 points
 * above the target while it grew, and a target of 81 % saturated it: a
 * false yield). */
static inline int CC_CONTROL_POINT(guard_by_growth)(int guarded, uint32_t up, uint32_t guard)
{
    return guarded && up < guard;
}

/* The restored target's first sample covers time at the hard share: read
 * against the old target it wound the share up by a fifth, the device
 * saturated, and the borrower yielded again every 0.75 s (the simulator's
 * guard.h200: 64 % where the guard is 85). */
static inline void CC_CONTROL_POINT(hold_straddled)(cc_elastic_output_t *out) { out->hold = 1; }

/* Beside others' work: borrowing on from up, or half of it given back when
 * the device is saturated (somebody may be waiting behind us). */
static inline uint32_t CC_CONTROL_POINT(contended_up)(uint32_t up, uint32_t hard, uint32_t soft, uint32_t idle,
                                                      int saturated, int guarded, uint32_t guard)
{
    if (saturated) return hard + (up - hard) / 2;
    up = grown(up, hard, soft, idle, CC_ELASTIC_MARGIN_PM);
    return guarded && up > guard ? guard : up;
}

/* The step's rule on a valid sample (cc_elastic_step, elastic.h). */
static cc_elastic_state_t CC_CONTROL_POINT(elastic_rule)(cc_elastic_state_t st, const cc_elastic_input_t *in,
                                                         cc_elastic_output_t *out, uint32_t hard, uint32_t soft,
                                                         uint32_t user, uint32_t idle, uint32_t others)
{
    /* Others' work: a sample shows it at 2 % of the device; it arrives when
     * the recent samples showed none: their level (an average over about
     * three samples, kept in 4-permille units) under 1 %. An average, not
     * the last sample: NVML may name one process per sample (the H200
     * under two saturating containers), so others' work that is there shows
     * in every second or third sample, and each such sample taken for an
     * arrival made every borrower yield again and again (two elastic
     * containers on the simulator's model of it: the device 77 % busy). */
    uint32_t level = (uint32_t)st.seen * 4u;
    /* Quiet: others' work not seen lately: their level under 1 %, or (the
     * level remembers a busy neighbour for about ten samples, which spans a
     * pause of 2 s on the H200's 200 ms samples) CC_ELASTIC_QUIET samples in
     * a row without it. */
    int quiet = level < CC_ELASTIC_GONE_PM || (st.contended && st.calm >= CC_ELASTIC_QUIET);
    int arrival = others >= CC_ELASTIC_OTHERS_PM && quiet;
    uint32_t next = (2u * level + others) / 3u;
    st.seen = (uint8_t)(next / 4u > CC_ELASTIC_SEEN_MAX ? CC_ELASTIC_SEEN_MAX : next / 4u);
    int present = others >= CC_ELASTIC_GONE_PM;
    /* Others' work named in this sample: the controller at its shared gain
     * from now on (controller.h, cc_ctrl_shared). Not on a saturated sample
     * alone: beside an idle context, the borrower's own lumps then left it
     * at the shared gain, its share corrected ten times slower, the device
     * saturated and it yielded every 0.8 s (the H200, the 2026-12-02 elastic-rule run). */
    out->contended = present;
    /* Saturated: no idle time in two samples in a row (one alone is often
     * the lumps of the supply, bucket.c, not a neighbour waiting). */
    st.saturated = idle < CC_ELASTIC_SAT_PM ? (uint8_t)(st.saturated >= 1 ? 2 : 1) : 0;
    int saturated = st.saturated >= 2;
    if (present) {
        st.calm = 0;
    } else if (st.contended && ++st.calm >= CC_ELASTIC_ALONE) {
        st.contended = 0;
        st.calm = 0;
    }
    /* Someone's work arrived: back to the guaranteed share now, not in
     * steps (their kernels may be queued behind ours); the idle time left
     * is borrowed again from the next samples on. */
    if (arrival) {
        st.contended = 1;
        out->hold = st.prov == CC_ELASTIC_PROV; /* the first sample after a provisional yield */
        st.prov = 0;
        out->yield = st.up_pm > hard;
        st.up_pm = hard;
        return st;
    }
    int foreign = in->foreign == 1;
    /* The ceiling beside a foreign context whose work is not seen. */
    uint32_t guard = clamp_u(1000 - CC_ELASTIC_GUARD_PM, hard, soft);
    if (st.prov) {
        /* A provisional yield judged (elastic.h): its first sample still
         * covers time at the old target, so only others' work or a
         * saturated device confirm it there. */
        int confirmed = others >= CC_ELASTIC_OTHERS_PM || idle < CC_ELASTIC_SAT_PM ||
                        (st.prov == 1 && user > hard + CC_ELASTIC_EXCESS_PM);
        /* Read against the hard share, that first sample's tail at the old
         * target cut the share by half: the borrower under its hard share
         * for 0.5 s (27.9 % on the simulator) and at half the old target
         * after a false alarm. */
        out->hold = st.prov == CC_ELASTIC_PROV;
        if (confirmed) {
            st.prov = 0;
            st.contended = 1;
            st.calm = 0;
        } else if (--st.prov == 0) { /* our own lump */
            st.up_pm = restored(foreign, hard, st.restore_pm);
            hold_straddled(out);
        }
        return st;
    }
    if (unseen_arrival(foreign, idle, quiet, st.up_pm > hard)) {
        st.prov = CC_ELASTIC_PROV;
        st.restore_pm = (uint16_t)st.up_pm;
        out->yield = 1;
        st.up_pm = hard;
        return st;
    }
    if (present) st.contended = 1; /* (seen without contended: a forged state) */
    /* Demand under the hard share for a second: nothing to borrow. */
    st.low = !in->throttled && user < hard ? (uint8_t)(st.low + 1) : 0;
    if (st.low >= CC_ELASTIC_LOW) {
        st.low = CC_ELASTIC_LOW;
        st.up_pm = hard;
        return st;
    }
    int guarded = guard_on(foreign, level);
    if (!st.contended) {
        /* A target above the guard comes down at once. */
        int step = guard_by_growth(guarded, st.up_pm, guard);
        st.up_pm = step ? grown(st.up_pm, hard, guard, idle, CC_ELASTIC_GUARD_PM) : guarded ? guard : soft;
        return st;
    }
    st.up_pm = contended_up(st.up_pm, hard, soft, idle, saturated, guarded, guard);
    return st;
}

cc_elastic_state_t cc_elastic_step(cc_elastic_state_t st, const cc_elastic_input_t *in,
                                   cc_elastic_output_t *out)
{
    out->yield = 0;
    out->borrowing = 0;
    out->borrowed_pm = 0;
    out->hold = 0;
    out->contended = 0;
    uint32_t hard = in->hard_pm > 1000 ? 1000 : in->hard_pm;
    uint32_t soft = clamp_u(in->soft_pm, hard, 1000);
    /* From the shared line: clamp to what this function returns. */
    st.up_pm = clamp_u(st.up_pm, hard, soft);
    st.contended = st.contended != 0;
    if (st.seen > CC_ELASTIC_SEEN_MAX) st.seen = CC_ELASTIC_SEEN_MAX;
    if (st.calm > CC_ELASTIC_ALONE) st.calm = CC_ELASTIC_ALONE;
    if (st.saturated > 2) st.saturated = 2;
    if (st.low > CC_ELASTIC_LOW) st.low = CC_ELASTIC_LOW;
    if (st.prov > CC_ELASTIC_PROV) st.prov = CC_ELASTIC_PROV;
    st.restore_pm = (uint16_t)clamp_u(st.restore_pm, hard, soft);
    if (!in->sample_valid || soft == hard) return st;
    uint32_t user = in->user_pm > 1000 ? 1000 : in->user_pm;
    uint32_t sys = in->sys_pm > 1000 ? 1000 : in->sys_pm;
    if (sys < user) sys = user;
    uint32_t others = others_work(sys, user), idle = 1000 - sys;
    /* What was borrowed over the sample: under the target then in force
     * (read above it, the H200's one-pid naming counted seconds borrowed
     * by a borrower held at its hard share). */
    uint32_t used = user < st.up_pm ? user : st.up_pm;
    out->borrowed_pm = used > hard ? used - hard : 0;
    out->borrowing = out->borrowed_pm > CC_ELASTIC_BORROW_PM;
    return elastic_rule(st, in, out, hard, soft, user, idle, others);
}

int64_t cc_elastic_share(int64_t share, int64_t nominal_prev, int64_t nominal_target,
                         int64_t hard_nominal, const cc_elastic_output_t *out)
{
    if (out->yield) return hard_nominal;
    if (nominal_prev == nominal_target || nominal_prev <= 0) return share;
    double r = (double)share / (double)nominal_prev;
    r = r < 0.5 ? 0.5 : r > 2.0 ? 2.0 : r;
    return (int64_t)(r * (double)nominal_target);
}
