/* The memory cap's part of a device record (cap/device.h), apart from the
 * policy's functions (mem.h) so that the record and the policy's inline
 * fast paths can include it both. */
#ifndef CC_CAP_MEM_DEVICE_H
#define CC_CAP_MEM_DEVICE_H

#include <stdint.h>

/* The memory cap's per-process state of one capped device (one per CUDA
 * ordinal, bound on first use, bind.c): which ledger device counts its
 * memory and the cap it is held to. */
struct cc_mem_device {
    int h;        /* ledger handle (cap/memledger.h), one per device UUID */
    /* bytes, > 0: read with cc_mem_cap (relaxed; the limits file may change
     * it while the process runs, cap/live.c). UINT64_MAX: the cap was
     * removed after binding; what this process allocates is still counted. */
    uint64_t cap;
    uint64_t over; /* bytes allowed beyond cap in host memory (oversubscription); 0 none;
                    * read with cc_mem_over (relaxed; the limits file may change it) */
};

/* The oversubscription m allows now. */
static inline uint64_t cc_mem_over(const struct cc_mem_device *m)
{
    return __atomic_load_n(&m->over, __ATOMIC_RELAXED);
}

/* The cap m is held to now. */
static inline uint64_t cc_mem_cap(const struct cc_mem_device *m)
{
    return __atomic_load_n(&m->cap, __ATOMIC_RELAXED);
}

/* Where a record's binding stands (its mem_state; acquire/release: the
 * record's mem is written before the release store that publishes
 * CC_MEM_BOUND or CC_MEM_UNMEASURED). */
enum cc_mem_bind_state {
    CC_MEM_UNBOUND = 0,    /* not looked at yet, or no device yet (bound later) */
    CC_MEM_BOUND = 1,      /* capped: the record's mem is handed out (the fast path) */
    CC_MEM_UNCAPPED = 2,   /* the device has no cap: passed through uncounted */
    CC_MEM_UNMEASURED = 3, /* capped, mem set, this process's overhead not yet
                            * charged (first use here, or a fork child):
                            * cc_mem_dev measures it and makes it BOUND */
};

#endif
