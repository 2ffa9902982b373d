/* The token bucket on one shared line (include/cudacap/abi_compute_region.h).
 * Tokens are nanoseconds of device time. Consumers take with one CAS; every
 * other change is an add of a delta (CAS loop): nothing ever stores over the
 * bucket, so a deduction made by another process between our read and our
 * write is never erased (the seed's "bypass SET wipes tokens" bug). */
#ifndef CC_CAP_BUCKET_H
#define CC_CAP_BUCKET_H

#include <stdint.h>

#include "common/controls.h"
#include "cudacap/abi_compute_region.h"

/* Largest single charge (10 s): keeps cur - cost far from overflow whatever a
 * caller passes. */
#define CC_BUCKET_MAX_COST 10000000000ll
/* Debt floor: a bucket never goes below this (-1000 s). */
#define CC_BUCKET_MIN (-1000000000000ll)

/* Admission against a floor: when the bucket holds more than floor, deduct
 * cost and return 1; the deduction may drive it below (debt later refills
 * repay). Returns 0 without touching it otherwise. Cost when tokens are
 * there: one relaxed load and one CAS (retried only if another thread
 * changed the line in between). Relaxed: the bucket publishes no other
 * data. The launch path's admission is floor 0 (cc_bucket_try_take); a
 * step's later launches are admitted against a negative one (bucket.c). */
static inline int CC_CONTROL_POINT(cc_bucket_take_above)(int64_t *b, int64_t cost, int64_t floor)
{
    if (cost < 0) cost = 0;
    if (cost > CC_BUCKET_MAX_COST) cost = CC_BUCKET_MAX_COST;
    int64_t cur = __atomic_load_n(b, __ATOMIC_RELAXED);
    while (cur > floor) {
        int64_t next = cur - cost < CC_BUCKET_MIN ? CC_BUCKET_MIN : cur - cost;
        if (__atomic_compare_exchange_n(b, &cur, next, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            return 1;
    }
    return 0;
}

/* Admission: when the bucket holds tokens (> 0). */
static inline int cc_bucket_try_take(int64_t *b, int64_t cost) { return cc_bucket_take_above(b, cost, 0); }

/* Adds delta (either sign). A positive delta never lifts the bucket above
 * hi (a bucket already above hi keeps its value); a negative one never
 * takes it below CC_BUCKET_MIN. Returns the new value. */
int64_t cc_bucket_add(int64_t *b, int64_t delta, int64_t hi);

/* Brings a bucket above target down to it (the anti-jitter bypass) by a
 * delta computed from one read: deductions made after that read survive. A
 * bucket at or below target is left alone: the bypass never adds tokens.
 * (The first version also raised a bucket in debt to target; on a real GPU
 * NVML may attribute a whole sample to another container's process, so a
 * busy container reads 0 % now and then, and every such reading handed it
 * a period of tokens: 47 % at cap 30 on the H200, tests/compute_twocont.c.)
 * Returns the delta applied (<= 0). */
static inline int64_t CC_CONTROL_POINT(cc_bucket_trim_to)(int64_t *b, int64_t target)
{
    int64_t cur = __atomic_load_n(b, __ATOMIC_RELAXED);
    if (cur <= target) return 0;
    cc_bucket_add(b, target - cur, INT64_MAX);
    return target - cur;
}

/* Unconditional charge (correction of an estimate, debt): add -cost. */
static inline void cc_bucket_charge(int64_t *b, int64_t cost)
{
    if (cost != 0) cc_bucket_add(b, -cost, INT64_MAX);
}

/* The supply, paid continuously. The controller sets share (ns of device
 * time per nominal period, CC_PERIOD_NS); tokens accrue at that rate from
 * *accrued_ns on, and whoever advances that stamp by CAS pays the interval
 * in: the refill winner once a period, and launches that find the bucket
 * empty, between refills. Why not only at the refill: a whole period's
 * tokens at once let the waiting processes spend them in one burst (the
 * device at 100 % for cap x 100 ms, then idle), which averages to the cap
 * but swings NVML's shorter, unaligned windows from 0 to 100 % (the H200's
 * p90 was cap + 17; tests/compute_smooth.c).
 *
 * How a waiter is paid (docs/compute.md, "Pacing"): while one process of
 * the container waits for tokens, it sleeps exactly until the tokens it
 * needs have accrued and pays them in (paced: a decode step waits what its
 * share implies, no more). While two or more processes' waits overlap
 * (cc_compute_pace_t), waiters pay in lumps of CC_DRIP_LUMP launches like
 * their own, at least CC_DRIP_LUMP_MIN_NS, never more often than every
 * CC_DRIP_STEP_NS (bucket.c says why lumps). */
#define CC_DRIP_STEP_NS 500000ull
#ifndef CC_DRIP_LUMP /* -D overrides: for measurements on a real GPU */
#define CC_DRIP_LUMP 8
#endif
#ifndef CC_DRIP_LUMP_MIN_NS /* and at least this, or a quarter period's share */
#define CC_DRIP_LUMP_MIN_NS 5000000
#endif
/* Paced: a waiter pays at most every CC_PACE_STEP_NS (several threads of
 * one process then CAS the stamp at most 50000 times a second) and sleeps at
 * most CC_PACE_MAX_SLEEP_NS at a time (it looks at the share and the other
 * processes again after that). Two processes' waits within
 * CC_PACE_WINDOW_NS of each other mean lumps for that long. */
#define CC_PACE_STEP_NS 20000ull
#define CC_PACE_MAX_SLEEP_NS 5000000ull
#define CC_PACE_WINDOW_NS 200000000ull
/* A step's launches wait once: a launch that comes within
 * CC_PACE_GROUP_GAP_NS of this thread's previous waited-for admission is
 * admitted while the bucket's debt is under CC_PACE_GROUP_MAX_NS (or the
 * burst, if smaller), so an eager step of several kernels sleeps before its
 * first launch only (bucket.c, cc_bucket_take). */
#ifndef CC_PACE_GROUP_GAP_NS /* -D overrides: for measurements on a real GPU */
#define CC_PACE_GROUP_GAP_NS 100000ull
#endif
#define CC_PACE_GROUP_MAX_NS 2000000ll
typedef struct cc_drip {
    uint64_t *accrued_ns; /* shared stamp (compute region) or a private one */
    const int64_t *share; /* controller output, ns per nominal period */
    int64_t capacity;     /* ceiling of what accrual may fill the bucket to */
    int64_t share_ceiling; /* an elastic line's: its soft limit's capacity (0: capacity) */
    /* CUDACAP_SM_BURST_MS in ns (0: not set): the most the bucket may hold
     * (the device time the container may run ahead of its share), and the
     * largest lump. */
    int64_t burst;
    cc_compute_pace_t *pace; /* who waited last (region or private); NULL: always paced */
} cc_drip_t;

/* 1 when pace says another process than pid waited within
 * CC_PACE_WINDOW_NS of now (then notes it); records pid's wait at now. A
 * hint from a shared file: any value gives 0 or 1, nothing else. */
int cc_pace_contended(cc_compute_pace_t *pace, uint32_t pid, uint64_t now);

/* Pays share x (now - *accrued_ns) / period into the bucket b, never past
 * the burst when one is set, else max(capacity, one period's share) (an
 * idle bucket fills to capacity),
 * when at least min_step has passed; share < 0 means "read *d->share".
 * The interval is capped at 10 periods. A first call only sets the stamp.
 * Returns the tokens added. */
int64_t cc_drip_pay(int64_t *b, const cc_drip_t *d, uint64_t now, uint64_t min_step, int64_t share);

/* The line's share as this code could have written it (bucket.c says
 * which bounds), and the bucket brought back into what it could have held
 * (a CAS from the value read; nothing written when in range). Run by every
 * payment, so a forged value lasts at most until the next one. */
int64_t cc_drip_share(const cc_drip_t *d);
void cc_bucket_sanitize(int64_t *b, const cc_drip_t *d);

/* Blocking admission: waits (sleeping, never spinning hot) until the bucket
 * admits, paying the drip in while it waits (drip may be NULL: then only
 * others refill). *throttled is set (once per wait) so the controller knows
 * demand exceeded supply. Returns the nanoseconds waited. */
uint64_t cc_bucket_take(int64_t *b, int64_t cost, uint32_t *throttled, const cc_drip_t *drip);

#endif
