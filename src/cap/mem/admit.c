/* The memory cap's admission and view (mem.h): the reserve with its one
 * retry, and what cuMemGetInfo and NVML show the container. */
#include "cap/cfg.h"
#include "cap/live.h"
#include "cap/mem/bind.h"
#include "cap/mem/mem.h"
#include "cap/memledger.h"
#include "cap/port.h"
#include "common/clock.h"
#include "common/log.h"

/* Overhead grown without a bound (modules): measured before the next
 * allocation on that device (the record's mem_stale: one relaxed load on
 * the hot path, cc_mem_reserve). */
#define CC_REMEASURE_NS 50000000ull /* at most one refusal-path measure per 50 ms */

void cc_mem_overhead_stale(int ordinal)
{
    struct cc_devrec *r = cc_devrec(ordinal);
    if (r) __atomic_store_n(&r->mem_stale, 1, __ATOMIC_RELAXED);
}

void cc_mem_overhead_stale_all(void)
{
    for (int i = 0; i < CC_MAX_DEVICES; i++) cc_mem_overhead_stale(i);
}

static void fresh(int ordinal)
{
    struct cc_devrec *r = cc_devrec(ordinal);
    if (r && __atomic_load_n(&r->mem_stale, __ATOMIC_RELAXED)) {
        __atomic_store_n(&r->mem_stale, 0, __ATOMIC_RELAXED);
        cc_mem_refresh_overhead(ordinal);
    }
}

int cc_mem_reserve_overhead(const struct cc_mem_device *m, int ordinal, uint64_t bytes)
{
    if (cc_ml_reserve_overhead(m->h, bytes, cc_mem_cap(m)) == 0) return 0;
    cc_port()->mem_refresh_own();
    cc_ml_sweep();
    cc_mem_refresh_overhead(ordinal);
    if (cc_ml_reserve_overhead(m->h, bytes, cc_mem_cap(m)) == 0) return 0;
    cc_ml_count_refusal(m->h);
    return -1;
}

int cc_mem_reserve_slow(const struct cc_mem_device *m, int ordinal, uint64_t bytes, int count)
{
    fresh(ordinal);
    if (__builtin_expect(cc_ml_reserve(m->h, bytes, cc_mem_cap(m)) == 0, 1)) return 0;
    /* Refused (the reserve has swept the dead and waited out contention):
     * drop what of ours may have shrunk meanwhile, and try again only if
     * something did. The overhead is re-measured at most every 50 ms here
     * (CC_REMEASURE_NS): NVML's process list costs 6 us of CPU but blocks
     * for longer on the H200, and a loop retrying at the cap paid it every
     * 5 ms at first: 20-22 us a refusal there against 4.8 here. A shrink
     * of the context's memory (a module unloaded says so at once:
     * cc_mem_overhead_stale) is seen by the first refusal 50 ms later. */
    /* The cap may have been raised without the region's word (no region
     * then, or a file replaced by hand): one lstat says. */
    cc_live_poll(0);
    if (cc_ml_reserve(m->h, bytes, cc_mem_cap(m)) == 0) return 0;
    uint64_t mine = cc_ml_own(m->h) + cc_ml_overhead(m->h);
    cc_port()->mem_refresh_own();
    struct cc_devrec *r = cc_devrec(ordinal);
    if (r) {
        uint64_t now = cc_mono_ns(), last = __atomic_load_n(&r->mem_measured_ns, __ATOMIC_RELAXED);
        if (now - last >= CC_REMEASURE_NS) {
            __atomic_store_n(&r->mem_measured_ns, now, __ATOMIC_RELAXED);
            cc_mem_refresh_overhead(ordinal);
        }
    }
    if (cc_ml_own(m->h) + cc_ml_overhead(m->h) < mine && cc_ml_reserve(m->h, bytes, cc_mem_cap(m)) == 0)
        return 0;
    if (count) cc_ml_count_refusal(m->h);
    cc_debug("memory cap: refusing %llu bytes on device %d (container uses %llu of %llu)",
             (unsigned long long)bytes, ordinal, (unsigned long long)cc_ml_used(m->h),
             (unsigned long long)cc_mem_cap(m));
    return -1;
}

/* The one computation behind cc_mem_info and cc_mem_info_ledger. o: the
 * ordinal whose overhead to re-measure, or -1. With oversubscription the
 * total is cap + over and the used counts the host part too; the free is
 * the device's (never above its real free) plus what is left beyond it. */
static void view(int h, uint64_t cap, uint64_t over, int o, uint64_t phys_free, uint64_t phys_total,
                 uint64_t *free_b, uint64_t *total_b, uint64_t *used_b)
{
    cc_ml_sweep();
    cc_port()->mem_refresh_own();
    if (o >= 0) cc_mem_refresh_overhead(o);
    uint64_t total = cap < phys_total ? cap : phys_total;
    uint64_t used = cc_ml_used(h), host = over ? cc_ml_host_used(h) : 0;
    uint64_t fr = used < total ? total - used : 0;
    if (fr > phys_free) fr = phys_free; /* the device itself is the other bound */
    fr += host < over ? over - host : 0;
    *free_b = fr, *total_b = total + over, *used_b = used + host;
}

void cc_mem_info(int o, uint64_t phys_free, uint64_t phys_total, uint64_t *free_b,
                 uint64_t *total_b, uint64_t *used_b)
{
    const struct cc_mem_device *m = cc_mem_dev(o);
    if (!m) {
        *free_b = phys_free, *total_b = phys_total;
        *used_b = phys_total - (phys_free < phys_total ? phys_free : phys_total);
        return;
    }
    view(m->h, cc_mem_cap(m), cc_mem_over(m), o, phys_free, phys_total, free_b, total_b, used_b);
}

void cc_mem_info_ledger(int h, uint64_t cap, uint64_t over, uint64_t phys_free, uint64_t phys_total,
                        uint64_t *free_b, uint64_t *total_b, uint64_t *used_b)
{
    int o = cc_mem_bound_ordinal(h);
    const struct cc_mem_device *m = o >= 0 ? cc_mem_dev(o) : NULL;
    if (m) cap = cc_mem_cap(m), over = cc_mem_over(m); /* as bound: resolved and checked */
    view(h, cap, over, o, phys_free, phys_total, free_b, total_b, used_b);
}
