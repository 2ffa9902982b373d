/* Who refills a device this period, and whether the sampling owner is alive.
 * Two mechanisms, deliberately different (seed design):
 * - the refill stamp CAS is HARD: at most one refill per period per device,
 *   whatever the sampling lock says;
 * - sampling ownership (sampling_lock.h) is SOFT: it decides who pays for
 *   NVML; getting it wrong costs redundant sampling, never over-supply.
 * Every threshold is a multiple of the nominal period or of the owner's own
 * measured cadence ("beats"), never a fixed number of milliseconds. */
#ifndef CC_CAP_ELECTION_H
#define CC_CAP_ELECTION_H

#include <stdint.h>

#include "common/controls.h"
#include "cudacap/abi_compute_region.h"

#define CC_PERIOD_NS 100000000ull /* nominal refill / sampling period */

/* A stamp from the shared line more than slack ahead of now: forged, or
 * random bytes (processes' clock reads may legitimately differ by less);
 * nobody took it. */
static inline int CC_CONTROL_POINT(cc_stamp_ahead)(uint64_t at, uint64_t now, uint64_t slack)
{
    return at > now && at - now > slack;
}

/* How far ahead of this process's clock a refill stamp may be and still be
 * another process's honest clock, waited for rather than taken as "now".
 * The processes of one container may read CLOCK_MONOTONIC with offsets
 * (time namespaces; one process's clock jumping 2 s, the fault loop's
 * `clock` point). Taking such a stamp as "now" let the process whose clock
 * is ahead credit the same two seconds again after every reset: the device
 * 47-55 % busy at cap 30 (fault_loop --only clock --at 650, 2026-12-03).
 * Waited for, the refills follow the clock furthest ahead, at its rate, and
 * if its process leaves the others wait at most that offset. Further ahead
 * than this a stamp is forged (or the offset so large that waiting would
 * park the container): "now", as before, and said once. */
#define CC_STAMP_FAR_NS 10000000000ull

void cc_stamp_forged_said(uint64_t ahead_ns);

static inline uint64_t CC_CONTROL_POINT(cc_stamp_far_ns)(void) { return CC_STAMP_FAR_NS; }

/* A refill stamp read as last, more than a period ahead of now: 1, and
 * the caller credits nothing now; a forged one is first moved to now. */
static inline int cc_stamp_future(uint64_t *stamp, uint64_t last, uint64_t now)
{
    if (!cc_stamp_ahead(last, now, CC_PERIOD_NS)) return 0;
    if (last - now > cc_stamp_far_ns()) {
        /* Acq_rel, as the refill's own CAS: a rare path. */
        if (__atomic_compare_exchange_n(stamp, &last, now, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            cc_stamp_forged_said(last - now);
    }
    return 1;
}

/* The owner's cadence: its published interval clamped to 1..10 nominal
 * periods (0 = not yet published = nominal). */
uint64_t cc_owner_cadence_ns(const cc_compute_dev_t *d, uint64_t nominal_ns);

/* The sample is stale when the publisher missed two beats (3 beats old). */
int cc_sample_stale(const cc_compute_dev_t *d, uint64_t now, uint64_t nominal_ns);

/* Refill threshold: the owner, or everyone when there is no lock file
 * (symmetric per-cycle election), at 0.9 nominal; standbys only after the
 * owner missed a beat (2 beats). */
uint64_t cc_refill_threshold(const cc_compute_dev_t *d, int owner_or_nolock, uint64_t nominal_ns);

/* Wins this period's refill: CAS of the stamp from its last value to now,
 * when now is at least threshold past it. On success *elapsed is the time
 * since the previous refill (capped at 10 periods), and the caller owns the
 * line's controller state until it calls cc_refill_done. */
int cc_refill_try(cc_compute_dev_t *d, uint64_t now, uint64_t threshold, uint64_t *elapsed);

/* Ends a winner's update: release store that the next winner acquires. */
void cc_refill_done(cc_compute_dev_t *d);
/* Start of a winner's update: acquire the previous winner's state. */
void cc_refill_begin(cc_compute_dev_t *d);

/* Publishes a sample (owner, or a standby that found it stale). prev_own_ns:
 * this process's previous publication (0 = none, or ownership changed:
 * then the cadence is not updated, the gap measures a takeover). */
void cc_sample_publish(cc_compute_dev_t *d, uint32_t user_pm, uint32_t sys_pm, uint64_t now,
                       uint64_t prev_own_ns);

/* Reads the published sample; returns 0 when none was ever published. */
int cc_sample_read(const cc_compute_dev_t *d, uint32_t *user_pm, uint32_t *sys_pm,
                   uint64_t *at_ns);

#endif
