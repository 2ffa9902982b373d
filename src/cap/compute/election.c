#include "cap/compute/election.h"

#include "common/controls.h"
#include "common/log.h"

void cc_stamp_forged_said(uint64_t ahead_ns)
{
    static int said;
    /* Relaxed: one message per process, a race prints it twice at worst. */
    if (__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED)) return;
    cc_warn("compute region: a refill stamp %.1f s ahead of this process's clock, taken as now "
            "(a forged region file, or processes of the container whose clocks differ by more than "
            "%.0f s: the cap may then be passed)",
            (double)ahead_ns / 1e9, (double)CC_STAMP_FAR_NS / 1e9);
}

/* The owner's sampling interval as it publishes it (0: unknown). */
static inline uint64_t CC_CONTROL_POINT(owner_interval_ns)(const cc_compute_dev_t *d)
{
    return (uint64_t)__atomic_load_n(&d->sample_interval_us, __ATOMIC_RELAXED) * 1000ull;
}

/* The refill of this period taken: a strong CAS from the stamp read (a
 * spurious failure would skip a refill for a period); 0 when another
 * process took it first. */
static inline int CC_CONTROL_POINT(win_refill)(cc_compute_dev_t *d, uint64_t last, uint64_t now)
{
    return __atomic_compare_exchange_n(&d->refill_ns, &last, now, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

uint64_t cc_owner_cadence_ns(const cc_compute_dev_t *d, uint64_t nominal_ns)
{
    uint64_t iv = owner_interval_ns(d);
    /* An owner cannot beat the nominal cadence, and an unknown one (0) is
     * treated as nominal: one rule covers the floor and the cold start. Past
     * 10 periods the owner misses its own contract by an order of magnitude;
     * scaling further would let one absurd interval park the limits. */
    if (iv < nominal_ns) iv = nominal_ns;
    if (iv > 10 * nominal_ns) iv = 10 * nominal_ns;
    return iv;
}

int cc_sample_stale(const cc_compute_dev_t *d, uint64_t now, uint64_t nominal_ns)
{
    uint64_t at = __atomic_load_n(&d->sample_ns, __ATOMIC_ACQUIRE);
    if (cc_stamp_ahead(at, now, nominal_ns)) return 1;
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
    /* A stamp in the future: another process's clock, waited for; a forged
     * one would park the refills until that time: it is "now", and the next
     * period refills (election.h). */
    if (cc_stamp_future(&d->refill_ns, last, now)) return 0;
    if (last != 0 && (now < last || now - last < threshold)) return 0;
    if (!win_refill(d, last, now)) return 0;
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
