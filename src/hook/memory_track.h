/* The memory wrappers' side of an allocation (hook/memory*.c): what each
 * allocation charged, remembered so its free gives exactly that back
 * (alloc_track.h), and the port's mem_refresh_own, which drops what this
 * process's pools and graphs no longer hold. The policy (bindings, the
 * reserve, the view, context admission) is the cap's: cap/mem/mem.h. */
#ifndef CC_HOOK_MEMORY_TRACK_H
#define CC_HOOK_MEMORY_TRACK_H

#include <stdint.h>

#include "alloc_track.h"
#include "cap/mem/mem.h"

void cc_mem_track_lost(void);
/* Remembers that key (of kind) counted bytes on m. */
static inline void cc_mem_track(int kind, uint64_t key, const struct cc_mem_device *m,
                                uint64_t bytes)
{
    struct cc_at_val v = {.h = m->h, .refs = 1, .bytes = bytes, .aux = 0};
    if (__builtin_expect(cc_at_put(kind, key, &v) != 0, 0)) cc_mem_track_lost();
}
/* The same for managed memory counted at the cap on ordinal o. */
void cc_mem_track_managed(uint64_t key, const struct cc_mem_device *m, int o, uint64_t bytes);
/* Gives back what a linear allocation's entry v counted (after the real
 * free succeeded): device bytes, managed ones noted apart. Inline: the
 * free's one call into the ledger, as before managed bytes were noted. */
void cc_mem_untrack_managed(const struct cc_at_val *v);
static inline void cc_mem_untrack_linear(const struct cc_at_val *v)
{
    cc_ml_release(v->h, v->bytes);
    if (__builtin_expect((v->aux & 0xff) == CC_AT_AUX_MANAGED, 0)) cc_mem_untrack_managed(v);
}
/* Gives back what key counted (after the real free succeeded). */
void cc_mem_untrack_release(int kind, uint64_t key);

/* Pools (memory_pool.c): shrink what they counted to what they reserve. */
void cc_mem_pools_refresh(void);
/* The port's mem_refresh_own (port_real.c): pools, then graphs. */
void cc_mem_refresh_own(void);

#endif
