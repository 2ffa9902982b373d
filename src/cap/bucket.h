/* The token bucket on one shared line (include/cudacap/compute_region.h).
 * Tokens are nanoseconds of device time. Consumers take with one CAS; every
 * other change is an add of a delta (CAS loop): nothing ever stores over the
 * bucket, so a deduction made by another process between our read and our
 * write is never erased (the seed's "bypass SET wipes tokens" bug). */
#ifndef CC_CAP_BUCKET_H
#define CC_CAP_BUCKET_H

#include <stdint.h>

/* Largest single charge (10 s): keeps cur - cost far from overflow whatever a
 * caller passes. */
#define CC_BUCKET_MAX_COST 10000000000ll
/* Debt floor: a bucket never goes below this (-1000 s). */
#define CC_BUCKET_MIN (-1000000000000ll)

/* Admission: when the bucket holds tokens (> 0), deduct cost and return 1;
 * the deduction may drive it negative (debt later refills repay). Returns 0
 * without touching it when it is empty. Cost when tokens are there: one
 * relaxed load and one CAS (retried only if another thread changed the line
 * in between). Relaxed: the bucket publishes no other data. */
static inline int cc_bucket_try_take(int64_t *b, int64_t cost)
{
    if (cost < 0) cost = 0;
    if (cost > CC_BUCKET_MAX_COST) cost = CC_BUCKET_MAX_COST;
    int64_t cur = __atomic_load_n(b, __ATOMIC_RELAXED);
#ifdef CC_TEST_PLAIN_TAKE /* negative control of tests/compute_bucket.c only */
    if (cur <= 0) return 0;
    __atomic_store_n(b, cur - cost, __ATOMIC_RELAXED);
    return 1;
#endif
    while (cur > 0) {
        int64_t next = cur - cost < CC_BUCKET_MIN ? CC_BUCKET_MIN : cur - cost;
        if (__atomic_compare_exchange_n(b, &cur, next, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            return 1;
    }
    return 0;
}

/* Adds delta (either sign). A positive delta never lifts the bucket above
 * hi (a bucket already above hi keeps its value); a negative one never
 * takes it below CC_BUCKET_MIN. Returns the new value. */
int64_t cc_bucket_add(int64_t *b, int64_t delta, int64_t hi);

/* Brings the bucket to target by a delta computed from one read (the
 * anti-jitter bypass): deductions made after that read survive. It never
 * lifts the bucket above target. Returns the delta applied. */
static inline int64_t cc_bucket_bring_to(int64_t *b, int64_t target)
{
    int64_t cur = __atomic_load_n(b, __ATOMIC_RELAXED);
#ifdef CC_TEST_BYPASS_STORE /* negative control: the seed's bug, a store */
    __atomic_store_n(b, target, __ATOMIC_RELAXED);
    return target - cur;
#endif
    cc_bucket_add(b, target - cur, cur > target ? INT64_MAX : target);
    return target - cur;
}

/* Unconditional charge (correction of an estimate, debt): add -cost. */
static inline void cc_bucket_charge(int64_t *b, int64_t cost)
{
    if (cost != 0) cc_bucket_add(b, -cost, INT64_MAX);
}

/* Blocking admission: waits (sleeping, never spinning hot) until the bucket
 * admits. *throttled is set (once per wait) so the controller knows demand
 * exceeded supply. rate_ns_per_s: current refill rate, to size the sleep.
 * Returns the nanoseconds waited. */
uint64_t cc_bucket_take(int64_t *b, int64_t cost, uint32_t *throttled, int64_t rate_ns_per_s);

#endif
