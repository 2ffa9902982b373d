/* Glue between the memory wrappers and the ledger: which ledger device and
 * cap apply to a CUDA ordinal, the context/library overhead, OOM decisions.
 * Hot path (cc_mem_here on a one-device process): a load, a branch. */
#ifndef CC_MEMORY_ACCT_H
#define CC_MEMORY_ACCT_H

#include <cuda.h>
#include <stdint.h>

#include "alloc_track.h"

struct cc_mdev {
    int h;          /* ledger handle */
    uint64_t cap;   /* 0: this device is not capped */
};

/* The capped device of ordinal o (binding it on first use), or NULL when
 * that device has no cap (then the wrappers pass through uncounted). */
const struct cc_mdev *cc_mem_dev(int ordinal);
/* Same for the calling thread's current context; *ordinal set. */
const struct cc_mdev *cc_mem_here(int *ordinal);

/* Reserve bytes against the cap; on refusal refresh what may have shrunk
 * (overhead, pools, dead processes) and try once more. 0 or -1. */
int cc_mem_reserve(const struct cc_mdev *m, int ordinal, uint64_t bytes);

/* Re-measures this process's overhead on ordinal (NVML per-process memory
 * minus what we track). */
void cc_mem_refresh_overhead(int ordinal);

/* Container use of ordinal's device (after a sweep) and the reported total
 * (min(cap, physical)). */
void cc_mem_info(int ordinal, uint64_t phys_free, uint64_t phys_total, uint64_t *free_b,
                 uint64_t *total_b, uint64_t *used_b);

/* Pools (memory_pool.c): shrink what they counted to what they reserve. */
void cc_mem_pools_refresh(void);

/* Allocation helpers shared by the wrappers. */
void cc_mem_track(int kind, uint64_t key, const struct cc_mdev *m, uint64_t bytes);
/* Gives back what key counted (after the real free succeeded). */
void cc_mem_untrack_release(int kind, uint64_t key);

#endif
