/* Memory accounting glue (memory_acct.h). */
#include "memory_acct.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "cap/memledger.h"
#include "common/clock.h"
#include "common/log.h"
#include "devices.h"
#include "hook.h"
#include "hook/process.h"
#include "hostpid.h"
#include "memory_graph.h"

/* Where ordinal o's binding stands (g_state[o]; acquire/release: g_md[o]
 * is written before the release store that publishes BOUND or UNMEASURED). */
enum bind_state {
    UNBOUND = 0,    /* not looked at yet, or no device yet (bound later) */
    BOUND = 1,      /* capped: g_md[o] is handed out (the fast path) */
    UNCAPPED = 2,   /* the device has no cap: passed through uncounted */
    UNMEASURED = 3, /* capped, g_md[o] set, this process's overhead not yet
                     * charged (first use here, or a fork child): cc_mem_dev
                     * measures it and makes it BOUND */
};

static struct cc_mem_device g_md[CC_MAX_DEVICES];
static int g_state[CC_MAX_DEVICES]; /* enum bind_state */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t g_fork_once = PTHREAD_ONCE_INIT;

static void fork_child(void)
{
    cc_at_reset();
    /* Bindings stay (same region, same devices); the overhead of the child
     * is measured again on its first use. */
    for (int i = 0; i < CC_MAX_DEVICES; i++)
        if (g_state[i] == BOUND) g_state[i] = UNMEASURED;
}

static void register_fork(void) { cc_fork_child_register(fork_child); }

int cc_mem_measure_overhead(int ordinal, uint64_t *ovh)
{
    if (ordinal < 0 || ordinal >= CC_MAX_DEVICES) return 0;
    const struct cc_mem_device *m = &g_md[ordinal];
    uint32_t hp = cc_hostpid(ordinal); /* 0 while ambiguous */
    nvmlProcessInfo_t p[64];
    unsigned n = 64;
    if (!hp || cc_nvml_procs(ordinal, p, &n) != 0) return 0;
    if (n > 64) n = 64;
    for (unsigned i = 0; i < n; i++) {
        if (p[i].pid != hp || p[i].usedGpuMemory == (unsigned long long)NVML_VALUE_NOT_AVAILABLE)
            continue;
        uint64_t own = cc_ml_own(m->h);
        *ovh = p[i].usedGpuMemory > own ? p[i].usedGpuMemory - own : 0;
        return 1;
    }
    return 0;
}

void cc_mem_refresh_overhead(int ordinal)
{
    if (ordinal < 0 || ordinal >= CC_MAX_DEVICES) return;
    const struct cc_mem_device *m = &g_md[ordinal];
    uint64_t ovh;
    if (cc_mem_measure_overhead(ordinal, &ovh)) {
        cc_ml_set_overhead(m->h, ovh);
        return;
    }
    /* Not measurable (no NVML, pid unknown, MIG...): the configured estimate,
     * only if nothing was measured before. */
    if (cc_ml_overhead(m->h) == 0) {
        cc_ml_set_overhead(m->h, cc_cfg.ctx_overhead);
    }
}

static __thread int t_unmeasured; /* cc_mem_dev binds without measuring */

const struct cc_mem_device *cc_mem_dev_unmeasured(int o)
{
    t_unmeasured = 1;
    const struct cc_mem_device *m = cc_mem_dev(o);
    t_unmeasured = 0;
    return m;
}

const struct cc_mem_device *cc_mem_dev(int o)
{
    if (__builtin_expect(o < 0 || o >= CC_MAX_DEVICES, 0)) return NULL;
    int s = __atomic_load_n(&g_state[o], __ATOMIC_ACQUIRE);
    if (__builtin_expect(s == BOUND, 1)) return &g_md[o];
    if (s == UNCAPPED) return NULL;
    pthread_once(&g_fork_once, register_fork);
    pthread_mutex_lock(&g_mu);
    s = g_state[o];
    if (s == UNBOUND) {
        const struct cc_device_id *dv = cc_device(o);
        uint64_t cap = cc_cfg.mem_limit[o];
        if (!dv || !cap) {
            s = dv ? UNCAPPED : UNBOUND; /* no device yet: try again later */
        } else {
            g_md[o].cap = cap;
            g_md[o].h = cc_ml_device(cc_cfg.state_dir, dv->uuid, cap);
            /* No ledger at all (said): uncapped rather than a bad handle. */
            s = g_md[o].h >= 0 ? UNMEASURED : UNCAPPED;
        }
    }
    if (s == UNMEASURED) { /* first use in this process: charge the context's memory */
        if (!t_unmeasured) cc_mem_refresh_overhead(o);
        s = BOUND;
    }
    __atomic_store_n(&g_state[o], s, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&g_mu);
    return s == BOUND ? &g_md[o] : NULL;
}

const struct cc_mem_device *cc_mem_here(int *ordinal)
{
    int o = cc_device_current();
    *ordinal = o;
    return o >= 0 ? cc_mem_dev(o) : NULL;
}

/* Overhead grown without a bound (modules): measured before the next
 * allocation on that device. One relaxed load on the hot path. */
static uint8_t g_stale[CC_MAX_DEVICES];
static uint64_t g_measured[CC_MAX_DEVICES]; /* last refusal-path measure (ns) */
#define CC_REMEASURE_NS 50000000ull            /* at most one such measure per 50 ms */

void cc_mem_overhead_stale(int ordinal)
{
    if (ordinal >= 0 && ordinal < CC_MAX_DEVICES)
        __atomic_store_n(&g_stale[ordinal], 1, __ATOMIC_RELAXED);
}

void cc_mem_overhead_stale_all(void)
{
    for (int i = 0; i < CC_MAX_DEVICES; i++) __atomic_store_n(&g_stale[i], 1, __ATOMIC_RELAXED);
}

static void fresh(int ordinal)
{
    if (__builtin_expect(ordinal >= 0 && ordinal < CC_MAX_DEVICES &&
                             __atomic_load_n(&g_stale[ordinal], __ATOMIC_RELAXED), 0)) {
        __atomic_store_n(&g_stale[ordinal], 0, __ATOMIC_RELAXED);
        cc_mem_refresh_overhead(ordinal);
    }
}

int cc_mem_reserve_overhead(const struct cc_mem_device *m, int ordinal, uint64_t bytes)
{
    if (cc_ml_reserve_overhead(m->h, bytes, m->cap) == 0) return 0;
    cc_mem_pools_refresh();
    cc_mem_graph_refresh();
    cc_ml_sweep();
    cc_mem_refresh_overhead(ordinal);
    if (cc_ml_reserve_overhead(m->h, bytes, m->cap) == 0) return 0;
    cc_ml_count_refusal(m->h);
    return -1;
}

int cc_mem_reserve(const struct cc_mem_device *m, int ordinal, uint64_t bytes)
{
    fresh(ordinal);
    if (__builtin_expect(cc_ml_reserve(m->h, bytes, m->cap) == 0, 1)) return 0;
    /* Refused (the reserve has swept the dead and waited out contention):
     * drop what of ours may have shrunk meanwhile, and try again only if
     * something did. The overhead is re-measured at most every 50 ms here
     * (CC_REMEASURE_NS): NVML's process list costs 6 us of CPU but blocks
     * for longer on the H200, and a loop retrying at the cap paid it every
     * 5 ms at first: 20-22 us a refusal there against 4.8 here. A shrink
     * of the context's memory (a module unloaded says so at once:
     * cc_mem_overhead_stale) is seen by the first refusal 50 ms later. */
    uint64_t mine = cc_ml_own(m->h) + cc_ml_overhead(m->h);
    cc_mem_pools_refresh();
    cc_mem_graph_refresh();
    if (ordinal >= 0 && ordinal < CC_MAX_DEVICES) {
        uint64_t now = cc_mono_ns(), last = __atomic_load_n(&g_measured[ordinal], __ATOMIC_RELAXED);
        if (now - last >= CC_REMEASURE_NS) {
            __atomic_store_n(&g_measured[ordinal], now, __ATOMIC_RELAXED);
            cc_mem_refresh_overhead(ordinal);
        }
    }
    if (cc_ml_own(m->h) + cc_ml_overhead(m->h) < mine && cc_ml_reserve(m->h, bytes, m->cap) == 0)
        return 0;
    cc_ml_count_refusal(m->h);
    cc_debug("memory cap: refusing %llu bytes on device %d (container uses %llu of %llu)",
             (unsigned long long)bytes, ordinal, (unsigned long long)cc_ml_used(m->h),
             (unsigned long long)m->cap);
    return -1;
}

/* The one computation behind cc_mem_info and cc_mem_info_ledger. o: the
 * ordinal whose overhead to re-measure, or -1. */
static void view(int h, uint64_t cap, int o, uint64_t phys_free, uint64_t phys_total,
                 uint64_t *free_b, uint64_t *total_b, uint64_t *used_b)
{
    cc_ml_sweep();
    cc_mem_pools_refresh();
    cc_mem_graph_refresh();
    if (o >= 0) cc_mem_refresh_overhead(o);
    uint64_t total = cap < phys_total ? cap : phys_total;
    uint64_t used = cc_ml_used(h);
    uint64_t fr = used < total ? total - used : 0;
    if (fr > phys_free) fr = phys_free; /* the device itself is the other bound */
    *free_b = fr, *total_b = total, *used_b = used;
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
    view(m->h, m->cap, o, phys_free, phys_total, free_b, total_b, used_b);
}

/* The ordinal this process bound to ledger handle h (binding it fully if a
 * fork left it unmeasured), or -1. Reads the bindings only: never starts
 * device discovery, which NVML-only processes must not do. */
static int bound_ordinal(int h)
{
    for (int o = 0; o < CC_MAX_DEVICES; o++) {
        int s = __atomic_load_n(&g_state[o], __ATOMIC_ACQUIRE);
        if ((s == BOUND || s == UNMEASURED) && g_md[o].h == h && cc_mem_dev(o)) return o;
    }
    return -1;
}

void cc_mem_info_ledger(int h, uint64_t cap, uint64_t phys_free, uint64_t phys_total,
                        uint64_t *free_b, uint64_t *total_b, uint64_t *used_b)
{
    view(h, cap, bound_ordinal(h), phys_free, phys_total, free_b, total_b, used_b);
}

void cc_mem_track(int kind, uint64_t key, const struct cc_mem_device *m, uint64_t bytes)
{
    struct cc_at_val v = {.h = m->h, .refs = 1, .bytes = bytes, .aux = 0};
    if (cc_at_put(kind, key, &v) != 0) {
        /* Cannot remember it: keep it counted (never under-count). */
        cc_log_once(CC_LOG_WARN, "memory cap: out of memory tracking allocations; some frees "
                                 "will not be credited");
    }
}

void cc_mem_untrack_release(int kind, uint64_t key)
{
    struct cc_at_val v;
    if (cc_at_take(kind, key, &v)) cc_ml_release(v.h, v.bytes);
}
