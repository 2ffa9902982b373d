/* The watcher's refill: the period's supply and the controller run on the
 * published sample (controller.c), an elastic line's target first
 * (elastic.c). Run by the refill's winner (election.c), one per period and
 * line; watcher.c decides when. */
#include <stdint.h>

#include "cap/compute/refill.h"
#include "cap/compute/bucket.h"
#include "cap/compute/compute.h"
#include "cap/compute/compute_region.h"
#include "cap/compute/elastic.h"
#include "cap/compute/election.h"
#include "common/log.h"

/* An elastic line's target for this refill (elastic.h), its state loaded
 * from and stored back to v->el, the borrowed device time counted. Returns
 * the target; *yield: back to the hard share now. */
static uint32_t elastic(struct cc_compute_device *d, const struct cc_compute_view *v,
                        const cc_ctrl_input_t *in, uint64_t at, cc_elastic_output_t *eo)
{
    cc_compute_elastic_t *el = v->el;
    cc_elastic_state_t es = {
        .up_pm = __atomic_load_n(&v->line->up_limit_pm, __ATOMIC_RELAXED),
        .contended = __atomic_load_n(&el->contended, __ATOMIC_RELAXED),
        .calm = __atomic_load_n(&el->calm, __ATOMIC_RELAXED),
        .seen = __atomic_load_n(&el->seen, __ATOMIC_RELAXED),
        .saturated = __atomic_load_n(&el->saturated, __ATOMIC_RELAXED),
        .low = __atomic_load_n(&el->low, __ATOMIC_RELAXED),
        .prov = __atomic_load_n(&el->prov, __ATOMIC_RELAXED),
        .restore_pm = __atomic_load_n(&el->restore_pm, __ATOMIC_RELAXED),
    };
    cc_elastic_input_t ei = {.hard_pm = d->cap_pm, .soft_pm = d->soft_pm, .user_pm = in->user_pm,
                             .sys_pm = in->sys_pm, .sample_valid = in->sample_valid,
                             .throttled = in->throttled,
                             .foreign = __atomic_load_n(&el->foreign, __ATOMIC_RELAXED) == 1};
    es = cc_elastic_step(es, &ei, eo);
    __atomic_store_n(&el->contended, es.contended, __ATOMIC_RELAXED);
    __atomic_store_n(&el->calm, es.calm, __ATOMIC_RELAXED);
    __atomic_store_n(&el->seen, es.seen, __ATOMIC_RELAXED);
    __atomic_store_n(&el->saturated, es.saturated, __ATOMIC_RELAXED);
    __atomic_store_n(&el->low, es.low, __ATOMIC_RELAXED);
    __atomic_store_n(&el->prov, es.prov, __ATOMIC_RELAXED);
    __atomic_store_n(&el->restore_pm, es.restore_pm, __ATOMIC_RELAXED);
    if (in->sample_valid) {
        /* Device time above the hard cap since the last sample counted
         * (saturating: the counter is in a file anyone in the container
         * can write). */
        __atomic_store_n(&el->borrowing, (uint8_t)eo->borrowing, __ATOMIC_RELAXED);
        uint64_t last = __atomic_load_n(&el->counted_ns, __ATOMIC_RELAXED);
        if (last && at > last && at - last <= 10 * CC_PERIOD_NS && eo->borrowed_pm) {
            uint64_t add = (at - last) / 1000 * eo->borrowed_pm;
            uint64_t b = __atomic_load_n(&el->borrowed_ns, __ATOMIC_RELAXED);
            __atomic_store_n(&el->borrowed_ns, b > UINT64_MAX - add ? UINT64_MAX : b + add,
                             __ATOMIC_RELAXED);
        }
        __atomic_store_n(&el->counted_ns, at, __ATOMIC_RELAXED);
    }
    return es.up_pm;
}

/* The nominal supply of a target (permille): the hard nominal scaled. */
static int64_t nominal_of(const struct cc_compute_device *d, uint32_t target_pm)
{
    return d->cap_pm ? (int64_t)((double)d->nominal * target_pm / d->cap_pm) : d->nominal;
}

void cc_watch_refill(struct cc_compute_device *d, const struct cc_compute_view *v, uint64_t now,
                     cc_controller_t kind, int quiet, uint64_t since)
{
    cc_compute_dev_t *line = v->line;
    cc_refill_begin(line);
    cc_ctrl_state_t st = {
        .share = __atomic_load_n(&line->share, __ATOMIC_RELAXED),
        .up_limit_pm = __atomic_load_n(&line->up_limit_pm, __ATOMIC_RELAXED),
        .md_cooldown = __atomic_load_n(&line->md_cooldown, __ATOMIC_RELAXED),
        .excl_debounced = __atomic_load_n(&line->excl_debounced, __ATOMIC_RELAXED),
        .excl_streak = __atomic_load_n(&line->excl_streak, __ATOMIC_RELAXED),
        .lost_excl_pending = __atomic_load_n(&line->lost_excl_pending, __ATOMIC_RELAXED),
    };
    /* From a shared file: clamped to what cc_ctrl_step stores. */
    uint32_t run = v->drip.pace ? __atomic_load_n(&v->drip.pace->throttle_run, __ATOMIC_RELAXED) : 0;
    st.throttle_run = run > 255 ? 255 : (uint8_t)run;
    /* The cap moved (the limits file, compute_live.c): the target the line
     * ran against is outside the new hard..soft range. The share learned
     * there moves with it in proportion, once (whoever refills first stores
     * the new target), so a cap raised from 30 to 60 % runs at about 60 %
     * from this period on instead of the law climbing there. */
    uint32_t lo = d->cap_pm, hi = d->soft_pm ? d->soft_pm : d->cap_pm;
    if (st.up_limit_pm && lo && (st.up_limit_pm < lo || st.up_limit_pm > hi)) {
        uint32_t to = st.up_limit_pm < lo ? lo : hi;
        st.share = (int64_t)((double)st.share * to / st.up_limit_pm);
        st.up_limit_pm = to;
    }
    cc_ctrl_input_t in = {.kind = kind, .cap_pm = d->cap_pm, .nominal = d->nominal, .quiet = quiet,
                          .resumed = since >= CC_CTRL_RESUME_PERIODS * CC_PERIOD_NS};
    uint64_t at;
    int have = cc_sample_read(line, &in.user_pm, &in.sys_pm, &at);
    uint32_t stamp = (uint32_t)(at >> 10);
    /* A sample feeds the controller once: a standby refilling on an old
     * sample must not integrate the same error twice. */
    in.sample_valid = have && !cc_sample_stale(line, now, CC_PERIOD_NS) &&
                      stamp != __atomic_load_n(&line->ctrl_sample, __ATOMIC_RELAXED);
    in.throttled = __atomic_exchange_n(&line->throttled, 0, __ATOMIC_RELAXED) != 0;
    int yield = 0, hold = 0;
    if (d->soft_pm) {
        /* The controller runs against the elastic target, its share moved
         * with it (cc_elastic_share): reset to the hard nominal on a yield
         * (a share wound up against an unreachable soft 100 % must not
         * follow us down; keeping the learned ratio there instead, 1..2,
         * was tried in the 2026-12-02 elastic-yield run: on the H200 the hard 50 neighbour then got
         * 40 % in two bursts of three and the borrower's target never
         * reached its hard share), else scaled keeping the learned ratio. */
        uint32_t prev = st.up_limit_pm < d->cap_pm ? d->cap_pm
                        : st.up_limit_pm > d->soft_pm ? d->soft_pm : st.up_limit_pm;
        cc_elastic_output_t eo;
        uint32_t target = elastic(d, v, &in, at, &eo);
        yield = eo.yield, hold = eo.hold;
        if (hold) in.sample_valid = 0; /* (elastic.h) */
        if (eo.contended) st = cc_ctrl_shared(st);
        /* On a yield the law also holds this once: the sample shows the
         * soft share just left, and read against the hard one it cut the
         * share to a third (the borrower at 10 % for a sample). */
        if (yield) in.sample_valid = 0;
        st.share = cc_elastic_share(st.share, nominal_of(d, prev), nominal_of(d, target), d->nominal, &eo);
        st.up_limit_pm = target;
        in.cap_pm = target;
        in.nominal = nominal_of(d, target);
    }
    cc_ctrl_output_t out;
    st = cc_ctrl_step(st, &in, &out);
    if (in.sample_valid || yield || hold) __atomic_store_n(&line->ctrl_sample, stamp, __ATOMIC_RELAXED);
    /* What has accrued since the last payment (by us or by waiters), at the
     * share that was in force over it; the new share applies from now on. */
    int64_t old_share = __atomic_load_n(&line->share, __ATOMIC_RELAXED);
    cc_drip_pay(&line->tokens, &v->drip, now, 0, old_share);
    /* A delta, never a store (bucket.h). */
    if (out.bypass) cc_bucket_trim_to(&line->tokens, out.bucket_target);
    /* Yielding: what was paid in at the soft share goes too, down to one
     * hard period. */
    if (yield) cc_bucket_trim_to(&line->tokens, d->nominal);
    __atomic_store_n(&line->share, st.share, __ATOMIC_RELAXED);
    __atomic_store_n(&line->up_limit_pm, st.up_limit_pm, __ATOMIC_RELAXED);
    __atomic_store_n(&line->md_cooldown, st.md_cooldown, __ATOMIC_RELAXED);
    __atomic_store_n(&line->excl_debounced, st.excl_debounced, __ATOMIC_RELAXED);
    if (v->drip.pace) __atomic_store_n(&v->drip.pace->throttle_run, st.throttle_run, __ATOMIC_RELAXED);
    __atomic_store_n(&line->excl_streak, st.excl_streak, __ATOMIC_RELAXED);
    __atomic_store_n(&line->lost_excl_pending, st.lost_excl_pending, __ATOMIC_RELAXED);
    cc_refill_done(line);
    cc_debug("refill dev %d: user %u sys %u valid %d thr %d share %lld tokens %lld target %u%s%s",
             d->ordinal, in.user_pm, in.sys_pm, in.sample_valid, in.throttled,
             (long long)st.share, (long long)line->tokens, st.up_limit_pm,
             out.bypass ? " bypass" : "", yield ? " yield" : "");
}
