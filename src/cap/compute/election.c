#include "cap/compute/election.h"

#ifdef CC_TEST_NO_CAS
#include <unistd.h>
#endif

uint64_t cc_owner_cadence_ns(const cc_compute_dev_t *d, uint64_t nominal_ns)
{
    uint64_t iv = (uint64_t)__atomic_load_n(&d->sample_interval_us, __ATOMIC_RELAXED) * 1000ull;
    /* An owner cannot beat the nominal cadence, and an unknown one (0) is
     * treated as nominal: one rule covers the floor and the cold start. Past
     * 10 periods the owner misses its own contract by an order of magnitude;
     * scaling further would let one absurd interval park the limits. */
#ifdef CC_TEST_FIXED_CADENCE /* negative control: staleness fixed at nominal */
    iv = 0;
#endif
    if (iv < nominal_ns) iv = nominal_ns;
    if (iv > 10 * nominal_ns) iv = 10 * nominal_ns;
    return iv;
}

int cc_sample_stale(const cc_compute_dev_t *d, uint64_t now, uint64_t nominal_ns)
{
    uint64_t at = __atomic_load_n(&d->sample_ns, __ATOMIC_ACQUIRE);
#ifndef CC_TEST_NO_CLAMP
    /* From the future (a forged stamp): not a sample anybody took. */
    if (at > now && at - now > nominal_ns) return 1;
#endif
    return at == 0 || now > at + 3 * cc_owner_cadence_ns(d, nominal_ns);
}

uint64_t cc_refill_threshold(const cc_compute_dev_t *d, int owner_or_nolock, uint64_t nominal_ns)
{
    /* Not "owner ? 1x : 2x": with no lock file nobody owns, and that form
     * would put everyone on 2 beats and halve the refill rate. */
    if (owner_or_nolock) return nominal_ns * 9 / 10;
    return 2 * cc_owner_cadence_ns(d, nominal_ns);
}

int cc_refill_try(cc_compute_dev_t *d, uint64_t now, uint64_t threshold, uint64_t *elapsed)
{
    uint64_t last = __atomic_load_n(&d->refill_ns, __ATOMIC_ACQUIRE);
#ifndef CC_TEST_NO_CLAMP
    /* A stamp in the future (forged, or random bytes) would park the
     * refills until that time: it is "now", and the next period refills. */
    if (last > now && last - now > CC_PERIOD_NS) {
        __atomic_compare_exchange_n(&d->refill_ns, &last, now, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_RELAXED);
        return 0;
    }
#endif
    if (last != 0 && (now < last || now - last < threshold)) return 0;
#ifdef CC_TEST_NO_CAS /* negative control: check-then-store, no election; the
                       * pause stands for a preemption between check and store */
    usleep(200);
    __atomic_store_n(&d->refill_ns, now, __ATOMIC_RELAXED);
    if (elapsed) *elapsed = last ? now - last : CC_PERIOD_NS;
    return 1;
#endif
    /* Strong CAS: a spurious failure would skip a refill for a period. */
    if (!__atomic_compare_exchange_n(&d->refill_ns, &last, now, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_RELAXED))
        return 0;
    uint64_t e = last ? now - last : CC_PERIOD_NS;
    if (e > 10 * CC_PERIOD_NS) e = 10 * CC_PERIOD_NS;
    if (elapsed) *elapsed = e;
    return 1;
}

void cc_refill_begin(cc_compute_dev_t *d) { (void)__atomic_load_n(&d->refills, __ATOMIC_ACQUIRE); }

void cc_refill_done(cc_compute_dev_t *d) { __atomic_fetch_add(&d->refills, 1, __ATOMIC_RELEASE); }

void cc_sample_publish(cc_compute_dev_t *d, uint32_t user_pm, uint32_t sys_pm, uint64_t now,
                       uint64_t prev_own_ns)
{
    if (user_pm > 1000) user_pm = 1000;
    if (sys_pm > 1000) sys_pm = 1000;
    if (prev_own_ns && now > prev_own_ns) {
        uint64_t us = (now - prev_own_ns) / 1000;
        __atomic_store_n(&d->sample_interval_us, (uint32_t)(us > UINT32_MAX ? UINT32_MAX : us),
                         __ATOMIC_RELAXED);
    }
    __atomic_store_n(&d->sample, user_pm | (sys_pm << 16), __ATOMIC_RELAXED);
    /* Release: a reader that sees this stamp sees the sample and cadence. */
    __atomic_store_n(&d->sample_ns, now, __ATOMIC_RELEASE);
}

int cc_sample_read(const cc_compute_dev_t *d, uint32_t *user_pm, uint32_t *sys_pm, uint64_t *at_ns)
{
    uint64_t at = __atomic_load_n(&d->sample_ns, __ATOMIC_ACQUIRE);
    uint32_t s = __atomic_load_n(&d->sample, __ATOMIC_RELAXED);
    if (at_ns) *at_ns = at;
    /* Permille: at most 1000, whatever the file says. */
    if (user_pm) *user_pm = (s & 0xffff) > 1000 ? 1000 : s & 0xffff;
    if (sys_pm) *sys_pm = (s >> 16) > 1000 ? 1000 : s >> 16;
    return at != 0;
}
