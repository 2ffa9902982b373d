/* The memory wrappers' bookkeeping (memory_track.h). */
#include "memory_track.h"

#include "cap/memledger.h"
#include "common/log.h"
#include "memory_graph.h"

/* An allocation the table could not remember stays counted (never
 * under-count): said once. */
void cc_mem_track_lost(void)
{
    cc_log_once(CC_LOG_WARN, "memory cap: out of memory tracking allocations; some frees "
                             "will not be credited");
}

void cc_mem_untrack_release(int kind, uint64_t key)
{
    struct cc_at_val v;
    if (cc_at_take(kind, key, &v)) cc_ml_release(v.h, v.bytes);
}

void cc_mem_refresh_own(void)
{
    cc_mem_pools_refresh();
    cc_mem_graph_refresh();
}

void cc_mem_track_managed(uint64_t key, const struct cc_mem_device *m, int o, uint64_t bytes)
{
    struct cc_devrec *r = cc_devrec(o);
    struct cc_at_val v = {.h = m->h, .refs = 1, .bytes = bytes,
                          .aux = CC_AT_AUX_MANAGED | ((uint64_t)(r ? o : 0) << 8)};
    if (r) __atomic_add_fetch(&r->mem_managed, bytes, __ATOMIC_RELAXED);
    else v.aux = 0; /* no record to note it in: an ordinary entry */
    if (__builtin_expect(cc_at_put(CC_AT_PTR, key, &v) != 0, 0)) cc_mem_track_lost();
}

void cc_mem_untrack_managed(const struct cc_at_val *v)
{
    struct cc_devrec *r = cc_devrec((int)(v->aux >> 8));
    if (!r) return;
    /* Never below zero (a fork child forgot the parent's). */
    uint64_t cur = __atomic_load_n(&r->mem_managed, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(&r->mem_managed, &cur, cur > v->bytes ? cur - v->bytes : 0, 0,
                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}
