/* The memory cap's policy (docs/memory.md): which ledger device and cap
 * apply to a CUDA ordinal, this process's overhead (contexts, modules) as
 * NVML measures it, the reserve with its one retry, the container's view
 * (cuMemGetInfo, NVML), and context admission. It reaches the driver, NVML
 * and the hook layer's trackers only through the port (cap/port.h), so it
 * links in libcudacap_core and runs under tests/fake_port.c. The hook
 * layer's wrappers call it and keep only what is theirs: the driver call
 * and the table of what each allocation charged (hook/alloc_track.h).
 *
 * Hot path (cc_mem_dev on a bound device): one acquire load, one branch. */
#ifndef CC_CAP_MEM_H
#define CC_CAP_MEM_H

#include <stdint.h>

#include "cap/device.h"
#include "cap/live.h"
#include "cap/mem/mem_device.h"
#include "cap/memledger.h"
#include "cap/port.h"

/* The slow paths of the inline functions below (bind.c, admit.c). */
const struct cc_mem_device *cc_mem_bind(int ordinal, int measure);
int cc_mem_untold(void);
int cc_mem_reserve_slow(const struct cc_mem_device *m, int ordinal, uint64_t bytes, int count);

/* Oversubscription (over.c). At bind, the device lock held: m->over (and
 * m->cap where a spilling cap is larger than the card) from the
 * configuration, after the safety checks (concurrent managed access, the
 * container's memory limit), each refusal said. */
void cc_mem_over_bind(struct cc_mem_device *m, int ordinal);
/* A new oversubscription from the limits file (cap/live.h), the device
 * lock held: a raise after the same checks as at bind (refused, said, it
 * stays as it was), a lowering at once (what is in host memory stays; new
 * host allocations are refused until frees bring it under). What m allows
 * now. */
uint64_t cc_mem_over_rebind(struct cc_mem_device *m, int ordinal, uint64_t over);
/* Admits bytes beyond the cap in host memory: what the node and the
 * container's cgroup have left must back them, and the container's
 * oversubscription in use stays <= m->over (the ledger's exact check).
 * 0, or -1 counted as a refusal. */
int cc_mem_over_admit(const struct cc_mem_device *m, int ordinal, uint64_t bytes);

/* The capped device of ordinal o (binding it on first use, and charging
 * this process's overhead there the first time), or NULL when that device
 * has no cap (the wrappers then pass through uncounted) or is not known
 * yet (before cuInit: bound at a later call). Bound: one acquire load. */
static inline const struct cc_mem_device *cc_mem_dev(int ordinal)
{
    struct cc_devrec *r = cc_devrec(ordinal);
    /* Acquire: pairs with the release that published the binding. */
    if (__builtin_expect(r && __atomic_load_n(&r->mem_state, __ATOMIC_ACQUIRE) == CC_MEM_BOUND, 1))
        return &r->mem;
    return cc_mem_bind(ordinal, 1);
}
/* The same, binding without measuring the overhead (context admission: the
 * context being created is not there yet). */
static inline const struct cc_mem_device *cc_mem_dev_unmeasured(int ordinal)
{
    return cc_mem_bind(ordinal, 0);
}
/* The same for the calling thread's current context (the port's
 * device_current: one call); *ordinal set (-1: none). A device the port
 * cannot tell is the only capped one, if one (cc_mem_untold). */
static inline const struct cc_mem_device *cc_mem_here(int *ordinal)
{
    int o = cc_port()->device_current();
    if (__builtin_expect(o < 0, 0)) o = cc_mem_untold();
    *ordinal = o;
    return o >= 0 ? cc_mem_dev(o) : NULL;
}

/* Reserves bytes against the cap; on refusal drops what of ours may have
 * shrunk (the port's mem_refresh_own: pools and graphs; the overhead,
 * re-measured at most every 50 ms) and tries once more. 0, or -1 counted
 * as a refusal. When it fits and the overhead is not stale: one relaxed
 * load and the ledger's reserve. */
static inline int cc_mem_reserve_n(const struct cc_mem_device *m, int ordinal, uint64_t bytes, int count)
{
    const struct cc_devrec *r = cc_devrec(ordinal);
    cc_live_check(m->h); /* caps changed while running (cap/live.h) */
    if (__builtin_expect(r && !__atomic_load_n(&r->mem_stale, __ATOMIC_RELAXED), 1) &&
        __builtin_expect(cc_ml_reserve(m->h, bytes, cc_mem_cap(m)) == 0, 1))
        return 0;
    return cc_mem_reserve_slow(m, ordinal, bytes, count);
}
static inline int cc_mem_reserve(const struct cc_mem_device *m, int ordinal, uint64_t bytes)
{
    return cc_mem_reserve_n(m, ordinal, bytes, 1);
}
/* The same for an allocation that may go beyond the cap into host memory
 * (m->over): a refusal here is not counted, the host admission counts its own. */
static inline int cc_mem_reserve_or_over(const struct cc_mem_device *m, int ordinal, uint64_t bytes)
{
    return cc_mem_reserve_n(m, ordinal, bytes, !cc_mem_over(m));
}
/* Reserves bytes of overhead (a context, a module's heap) with the same
 * exact check and retry. 0 or -1. */
int cc_mem_reserve_overhead(const struct cc_mem_device *m, int ordinal, uint64_t bytes);

/* This process's overhead on ordinal as NVML measures it now (its
 * per-process memory minus what we track): 1 with *ovh set, 0 when it
 * cannot tell (no NVML, host pid unknown, MIG). */
int cc_mem_measure_overhead(int ordinal, uint64_t *ovh);
/* Re-measures it into the ledger (the configured estimate when it cannot
 * be measured and nothing was before). */
void cc_mem_refresh_overhead(int ordinal);
/* Overhead grew by an unknown amount (a module load): re-measured before
 * the next allocation on ordinal. A relaxed store. */
void cc_mem_overhead_stale(int ordinal);
/* Overhead may have changed on any device (an unload, a context destroyed,
 * a library's constructors): re-measured before the next allocation on each. */
void cc_mem_overhead_stale_all(void);

/* The container's view of ordinal's device, what cuMemGetInfo reports
 * (with oversubscription: total cap + over, used the device's and the host
 * part's, free the rest of both):
 * used = the container's use (after a sweep, and with this process's pools,
 * graph memory and overhead re-measured), total = min(cap, physical),
 * free = total - used (clamped, and never above the device's real free).
 * An uncapped device: the physical numbers. */
void cc_mem_info(int ordinal, uint64_t phys_free, uint64_t phys_total, uint64_t *free_b,
                 uint64_t *total_b, uint64_t *used_b);
/* The same view for NVML's memory queries (hook/nvml.c), which know a
 * device by its ledger handle h (its UUID) and its cap by NVML index: one
 * computation, so NVML and cuMemGetInfo report the same numbers. This
 * process's overhead is re-measured when it has bound h to an ordinal (it
 * has a context there); without CUDA (nvidia-smi) there is none to measure. */
void cc_mem_info_ledger(int h, uint64_t cap, uint64_t over, uint64_t phys_free, uint64_t phys_total,
                        uint64_t *free_b, uint64_t *total_b, uint64_t *used_b);

/* Context admission (ctx_admit.c): admit before the driver creates a
 * context on ordinal (0, or -1: fail the creation with out-of-memory),
 * settle after it with whether it was created. exists: the context is
 * there already (an active primary context costs nothing again). */
struct cc_ctx_adm {
    int armed, ordinal;
    const struct cc_mem_device *m;
    uint64_t pend, before;
};
int cc_mem_ctx_admit(int ordinal, int exists, struct cc_ctx_adm *a);
void cc_mem_ctx_settle(struct cc_ctx_adm *a, int created);
/* A capped device whose context size the container has not learned yet. */
int cc_mem_ctx_unlearned(int ordinal);
/* The size a new context on m is expected to take. */
uint64_t cc_mem_ctx_expected(const struct cc_mem_device *m);

#endif
