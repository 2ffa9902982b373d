#include "cap/compute/bucket.h"

#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "cap/compute/election.h"
#include "common/clock.h"
#include "common/controls.h"
#include "os/os.h"

int64_t cc_bucket_add(int64_t *b, int64_t delta, int64_t hi)
{
    int64_t cur = __atomic_load_n(b, __ATOMIC_RELAXED), next;
    do {
        if (delta >= 0) {
            next = cur > INT64_MAX - delta ? INT64_MAX : cur + delta;
            if (next > hi) next = cur > hi ? cur : hi;
        } else {
            next = cur < CC_BUCKET_MIN - delta ? CC_BUCKET_MIN : cur + delta;
            if (next > cur) next = cur; /* cur already below the floor */
        }
    } while (!__atomic_compare_exchange_n(b, &cur, next, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    return next;
}

/* ---- what a value read from the region may be ------------------------------
 * Every field of the shared line is clamped to what this code could have
 * written before it is used (the file is shared with every process of the
 * container and with anything that can write the folder):
 *  share   [ceiling / 20, 8 x ceiling]: the controller keeps it within
 *          nominal / 16 .. 8 x nominal, and ceiling = capacity = 1.25 x
 *          nominal; never 0, so the drip always pays something;
 *  tokens  [-(CC_BUCKET_MAX_COST + 4 periods' ceiling), max(capacity,
 *          share)]: one admission deducts at most CC_BUCKET_MAX_COST from a
 *          positive bucket, the cost model's debt is bounded at 3 periods,
 *          and accrual never fills past that ceiling. A forged debt is then
 *          repaid in at most (10 s + 4 periods) / share: bounded, and the
 *          same wait a 10 s kernel would legitimately cause;
 *  stamps  a stamp more than a period in the future is another process's
 *          clock, waited for up to CC_STAMP_FAR_NS (10 s); further it is
 *          "now" (the CAS moves it back; election.h).
 * CC_TEST_NO_CLAMP (tests/compute.cmake) removes these: the control of
 * compute.forged. */
static int64_t ceiling_of(const cc_drip_t *d)
{
    /* Relaxed loads: the watcher changes them when the caps do (compute_live.c). */
    int64_t c = __atomic_load_n(&d->capacity, __ATOMIC_RELAXED);
    return c > 0 ? c : (int64_t)(CC_PERIOD_NS / 10);
}

/* What the share is clamped by: the capacity, or for an elastic line the
 * soft limit's capacity (its controller runs against targets up to the soft
 * limit: elastic.h). A forged share then buys at most what the soft limit
 * allows anyway. */
static int64_t share_ceiling_of(const cc_drip_t *d)
{
    int64_t c = ceiling_of(d);
    int64_t s = __atomic_load_n(&d->share_ceiling, __ATOMIC_RELAXED);
    return s > c ? s : c;
}

/* share within [capacity / 20, 8 x the share ceiling] (the top also
 * bounds a caller's copy of it, cc_drip_pay). */
static inline int64_t CC_CONTROL_POINT(share_within)(const cc_drip_t *d, int64_t s, int bottom)
{
    int64_t c = ceiling_of(d), lo = c / 20 > 0 ? c / 20 : 1, hi = 8 * share_ceiling_of(d);
    if (bottom && s < lo) s = lo;
    return s > hi ? hi : s;
}

int64_t cc_drip_share(const cc_drip_t *d)
{
    int64_t s = __atomic_load_n(d->share, __ATOMIC_RELAXED);
    return share_within(d, s, 1);
}

static inline void CC_CONTROL_POINT(bucket_within)(int64_t *b, const cc_drip_t *d)
{
    int64_t c = ceiling_of(d), share = cc_drip_share(d);
    int64_t hi = c > share ? c : share;
    if (d->burst > hi) hi = d->burst;
    int64_t lo = -(CC_BUCKET_MAX_COST + 4 * hi);
    int64_t cur = __atomic_load_n(b, __ATOMIC_RELAXED);
    /* A CAS from the value read: a deduction made meanwhile is never lost
     * (it fails the CAS and we look again). Nothing written when in range. */
    while (cur < lo || cur > hi) {
        int64_t next = cur < lo ? lo : hi;
        if (__atomic_compare_exchange_n(b, &cur, next, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) break;
    }
}

void cc_bucket_sanitize(int64_t *b, const cc_drip_t *d) { bucket_within(b, d); }

int64_t cc_drip_pay(int64_t *b, const cc_drip_t *d, uint64_t now, uint64_t min_step, int64_t share)
{
    cc_bucket_sanitize(b, d);
    uint64_t last = __atomic_load_n(d->accrued_ns, __ATOMIC_RELAXED);
    if (cc_stamp_future(d->accrued_ns, last, now)) return 0; /* another clock's, or forged */
    if (last != 0 && (now < last || now - last < min_step)) return 0;
    /* Strong CAS: the winner alone pays [last, now); a loser's interval is
     * the winner's, so nothing is paid twice and nothing is lost. Relaxed:
     * the stamp guards no other data. */
    if (!__atomic_compare_exchange_n(d->accrued_ns, &last, now, 0, __ATOMIC_RELAXED,
                                     __ATOMIC_RELAXED))
        return 0;
    if (last == 0) return 0;
    uint64_t dt = now - last;
    if (dt > 10 * CC_PERIOD_NS) dt = 10 * CC_PERIOD_NS;
    if (share < 0) share = cc_drip_share(d);
    else share = share_within(d, share, 0); /* the caller's copy of the line's share */
    int64_t add = (int64_t)((double)share * (double)dt / (double)CC_PERIOD_NS);
    if (add <= 0) return 0;
    /* Ceiling: capacity, or one period's share when that is larger (a share
     * above capacity must still be payable each period), never more: after
     * a long gap (the container idle, or a region left by processes that
     * have exited) the bucket holds one period, not ten (seen: 1 s of
     * tokens, the device at 100 % for a second). */
    int64_t hi = add < share ? add : share;
    int64_t cap = __atomic_load_n(&d->capacity, __ATOMIC_RELAXED);
    hi = cap > hi ? cap : hi;
    /* The operator's burst replaces that ceiling: the container never runs
     * further ahead of its share than it says. Tokens are lost only when the
     * bucket already holds that much, i.e. while the container is not using
     * its share. */
    if (d->burst > 0) hi = d->burst;
    cc_bucket_add(b, add, hi);
    return add;
}

/* Lumps (while several processes of the container wait, cc_pace_contended):
 * a waiter lets tokens accrue until they cover CC_DRIP_LUMP launches like
 * its own (at most one period's share, at least CC_DRIP_STEP_NS) before
 * paying them in. Paid one launch at a time, the supply would reach each
 * process as single kernels spread evenly over every sample, and NVML's
 * per-process figures, whole percents, round such a trickle the same way
 * every time: 8 processes at cap 10 each ran one 1.54 ms kernel per 100 ms
 * sample, read as 2 %, and the container got 0.84-0.87 of its cap
 * (bench/compute_accuracy; 0.95-0.97 with lumps of 4 launches, 1.00 with 8).
 * A lump lets the process that pays it run a burst of its launches, and its
 * figures vary from sample to sample.
 * And at least CC_DRIP_LUMP_MIN_NS (5 ms; a quarter of the period's share at
 * low caps): on the H200, four processes alternating 1 ms lumps of 0.25 ms
 * kernels got 0.26 of their uncapped throughput at cap 30 where 5 ms lumps
 * got 0.31, at the same NVML utilization and p90 (docs/validation.md):
 * switching between processes' contexts costs device time. The burst, when
 * set, bounds the lump (a latency-bound container asks for small ones). */
static uint64_t drip_step(const cc_drip_t *d, int64_t cost)
{
    int64_t share = cc_drip_share(d);
    if (share <= 0) return CC_PERIOD_NS;
    int64_t lump = cost * CC_DRIP_LUMP, least = share / 4;
    if (least > CC_DRIP_LUMP_MIN_NS) least = CC_DRIP_LUMP_MIN_NS;
    if (lump < least) lump = least;
    if (lump > share) lump = share;
    if (d->burst > 0 && lump > d->burst) lump = d->burst;
    uint64_t step = (uint64_t)((double)lump * (double)CC_PERIOD_NS / (double)share);
    return step < CC_DRIP_STEP_NS ? CC_DRIP_STEP_NS : step;
}

static int CC_CONTROL_POINT(pace_contended)(cc_compute_pace_t *p, uint32_t pid, uint64_t now)
{
    if (!p) return 0;
    /* Relaxed throughout: a hint about who waits, guarding no data. Stores
     * only when something changes or once per CC_PACE_STEP_NS, so that
     * waiters of one process do not bounce the line for nothing. */
    uint32_t who = __atomic_load_n(&p->pid, __ATOMIC_RELAXED);
    uint64_t when = __atomic_load_n(&p->wait_ns, __ATOMIC_RELAXED);
    if (who != pid) {
        if (who && when <= now && now - when < CC_PACE_WINDOW_NS)
            __atomic_store_n(&p->multi_ns, now, __ATOMIC_RELAXED);
        __atomic_store_n(&p->pid, pid, __ATOMIC_RELAXED);
        __atomic_store_n(&p->wait_ns, now, __ATOMIC_RELAXED);
    } else if (when > now || now - when >= CC_PACE_STEP_NS) {
        __atomic_store_n(&p->wait_ns, now, __ATOMIC_RELAXED);
    }
    uint64_t m = __atomic_load_n(&p->multi_ns, __ATOMIC_RELAXED);
    /* A stamp in the future (another process's clock read a little later,
     * or a forged one) counts only within one window of now. */
    return m && m < now + CC_PACE_WINDOW_NS && m + CC_PACE_WINDOW_NS > now;
}

int cc_pace_contended(cc_compute_pace_t *p, uint32_t pid, uint64_t now) { return pace_contended(p, pid, now); }

static uint32_t rnd_next(uint64_t seed)
{
    static __thread uint32_t rnd;
    if (!rnd) rnd = (uint32_t)(uintptr_t)&rnd ^ (uint32_t)seed ^ 0x9e3779b9u;
    rnd ^= rnd << 13;
    rnd ^= rnd >> 17;
    rnd ^= rnd << 5;
    return rnd;
}

/* Threads of this process inside a wait (paced waits jitter only when
 * there are several: one waiter sleeps exactly what it needs). */
static int waiting_here;

/* Paced: how long until the tokens this waiter needs have accrued. The
 * bucket holds cur (<= floor: the previous launches' debt); the stamp says
 * up to when the share was paid in; the bucket then passes floor at
 * last + (floor + 1 - cur) x period / share. */
static int64_t paced_sleep(int64_t *b, const cc_drip_t *d, int64_t floor, uint64_t now)
{
    int64_t cur = __atomic_load_n(b, __ATOMIC_RELAXED);
    uint64_t last = __atomic_load_n(d->accrued_ns, __ATOMIC_RELAXED);
    int64_t share = cc_drip_share(d);
    if (cur > floor) cur = floor;
    if (last == 0 || last > now) last = now;
    double wake = (double)last + ((double)floor + 1.0 - (double)cur) * (double)CC_PERIOD_NS / (double)share;
    double ns = wake - (double)now;
    if (ns < (double)CC_PACE_STEP_NS) ns = (double)CC_PACE_STEP_NS;
    if (ns > (double)CC_PACE_MAX_SLEEP_NS) ns = (double)CC_PACE_MAX_SLEEP_NS;
    if (__atomic_load_n(&waiting_here, __ATOMIC_RELAXED) > 1) /* x1..1.25: threads take turns */
        ns += ns * (double)(rnd_next(now) % 256) / 1024.0;
    return (int64_t)ns;
}

/* Lumps: sleep about the time the supply takes to repay the debt, between
 * 0.2 ms (latency) and 5 ms (a refill period is 100 ms; finer steps keep
 * equal waiters equally likely to win the next tokens). */
static int64_t lump_sleep(int64_t *b, const cc_drip_t *d, uint64_t t0, uint64_t now)
{
    int64_t rate_ns_per_s = d ? cc_drip_share(d) * (int64_t)(1000000000ull / CC_PERIOD_NS) : 0;
    int64_t cur = __atomic_load_n(b, __ATOMIC_RELAXED);
    int64_t ns = 5000000;
    if (rate_ns_per_s > 0 && cur <= 0) {
        double need = (1.0 - (double)cur) * 1e9 / (double)rate_ns_per_s;
        ns = need > 5e6 ? 5000000 : need < 2e5 ? 200000 : (int64_t)need;
    }
    /* Jitter (x0.5..1.5): equal waiters must not keep the same phase
     * against the refill grid, or the same one always wins. */
    ns = ns / 2 + (int64_t)((uint64_t)ns * (rnd_next(t0) % 1024) / 1024);
    /* Aging: the longer a waiter has waited, the more often it looks, so
     * that among many waiters at a low cap none starves behind luckier
     * ones (8 processes at 10 %: Jain's index 0.72 without it in one
     * run). 20 ms of waiting halves the sleep. */
    uint64_t waited = now - t0;
    ns = (int64_t)((double)ns * 20e6 / (20e6 + (double)waited));
    return ns < 100000 ? 100000 : ns;
}

/* Until when this thread's launches belong to the step whose first launch
 * waited (paced mode only). An eager decode step is several launches
 * issued microseconds apart, then a synchronize: paced one by one, each
 * launch slept its own few hundred microseconds, and each sleep is a
 * chance for a late wake-up (on the H200's host, an eager step of four
 * kernels had a p99 of 1.6-1.8x the paced ideal where one graph replay a
 * step had 0.9-1.06x). A step's later launches are admitted into a debt
 * of at most CC_PACE_GROUP_MAX_NS instead; the next step's first launch,
 * which comes after the synchronize, waits until all of it is repaid, so
 * the step takes what its share allows, with one sleep. A deep queue stays
 * in one group and is paced launch by launch at that floor. */
static __thread uint64_t group_until;

/* The supply that pays a wait: the line's drip (NULL: the refills only). */
static inline const cc_drip_t *CC_CONTROL_POINT(wait_supply)(const cc_drip_t *drip) { return drip; }

/* This wait joins the thread's step group (group_until) when the step has
 * a drip and is not on an elastic line (cc_bucket_take says why not). */
static inline int CC_CONTROL_POINT(in_step)(const cc_drip_t *drip, uint64_t t0)
{
    return drip && t0 < group_until && __atomic_load_n(&drip->share_ceiling, __ATOMIC_RELAXED) == 0;
}

uint64_t cc_bucket_take(int64_t *b, int64_t cost, uint32_t *throttled, const cc_drip_t *drip)
{
    if (cc_bucket_try_take(b, cost)) return 0;
    uint64_t t0 = cc_mono_ns(), now = t0;
    drip = wait_supply(drip);
    /* One syscall per wait (not per wake): fork children differ. */
    uint32_t me = (uint32_t)getpid();
    /* Not on an elastic line (share_ceiling set): there the group's debt
     * dropped the borrower to 3-12 % of the device for 0.3 s when a
     * newcomer's arrival made it yield (hard 30 %; compute.elastic.newcomer
     * failed 2 runs in 10, none in 12 without the group). Its steps' latency
     * is the hard caps' concern; a borrower's share moves every period. */
    int in_group = in_step(drip, t0);
    int64_t floor = 0;
    if (in_group) {
        floor = -CC_PACE_GROUP_MAX_NS;
        if (drip->burst > 0 && drip->burst < CC_PACE_GROUP_MAX_NS) floor = -drip->burst;
    }
    uint64_t slept = 0;
    __atomic_add_fetch(&waiting_here, 1, __ATOMIC_RELAXED);
    for (;;) {
        int lumps = drip && cc_pace_contended(drip->pace, me, now);
        if (lumps) floor = 0;
        /* Tokens since the last payment: often enough that nobody sleeps. */
        uint64_t step = !drip ? 0 : lumps ? drip_step(drip, cost) : CC_PACE_STEP_NS;
        if (drip) cc_drip_pay(b, drip, now, step, -1);
        if (cc_bucket_take_above(b, cost, floor)) break;
        /* Only store when clear: a line every waiter writes every wake
         * would bounce between processes for nothing. The refill winner
         * clears the flag each period: a waiter still waiting says so
         * again, or the controller would see an idle container and bypass. */
        if (throttled && !__atomic_load_n(throttled, __ATOMIC_RELAXED))
            __atomic_store_n(throttled, 1, __ATOMIC_RELAXED);
        int64_t ns = drip && !lumps ? paced_sleep(b, drip, floor, now) : lump_sleep(b, drip, t0, now);
        cc_os_sleep_ns(ns > 0 ? (uint64_t)ns : 0);
        slept = 1;
        now = cc_mono_ns();
    }
    __atomic_sub_fetch(&waiting_here, 1, __ATOMIC_RELAXED);
    now = cc_mono_ns();
    group_until = now + CC_PACE_GROUP_GAP_NS;
    return slept ? now - t0 : 0;
}
