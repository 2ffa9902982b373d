/* Glue between the memory wrappers and the ledger: which ledger device and
 * cap apply to a CUDA ordinal, the context/library overhead, OOM decisions.
 * Hot path (cc_mem_here on a one-device process): a load, a branch. */
#ifndef CC_MEMORY_ACCT_H
#define CC_MEMORY_ACCT_H

#include <cuda.h>
#include <stdint.h>

#include "alloc_track.h"

/* The memory cap's per-process state of one capped device (one per CUDA
 * ordinal, bound on first use, memory_acct.c): which ledger device counts
 * its memory and the cap it is held to. Not the device's identity (UUID,
 * SM count, NVML handle: hook/devices.h's struct cc_device_id), nor its
 * compute cap (cap/compute/compute.h's struct cc_compute_device: bucket, line, shares). */
struct cc_mem_device {
    int h;        /* ledger handle (cap/memledger.h), one per device UUID */
    uint64_t cap; /* bytes, > 0 (an uncapped device is never handed out) */
};

/* The capped device of ordinal o (binding it on first use), or NULL when
 * that device has no cap (then the wrappers pass through uncounted). */
const struct cc_mem_device *cc_mem_dev(int ordinal);
/* Same for the calling thread's current context; *ordinal set. */
const struct cc_mem_device *cc_mem_here(int *ordinal);

/* Reserve bytes against the cap; on refusal refresh what may have shrunk
 * (overhead, pools, dead processes) and try once more. 0 or -1. */
int cc_mem_reserve(const struct cc_mem_device *m, int ordinal, uint64_t bytes);

/* Re-measures this process's overhead on ordinal (NVML per-process memory
 * minus what we track). */
void cc_mem_refresh_overhead(int ordinal);

/* The container's view of ordinal's device, what cuMemGetInfo reports:
 * used = the container's use (after a sweep, and with this process's pools,
 * graph memory and overhead re-measured), total = min(cap, physical),
 * free = total - used (clamped, and never above the device's real free).
 * An uncapped device: the physical numbers. */
void cc_mem_info(int ordinal, uint64_t phys_free, uint64_t phys_total, uint64_t *free_b,
                 uint64_t *total_b, uint64_t *used_b);
/* The same view for NVML's memory queries (nvml.c), which know a device by
 * its ledger handle h (its UUID) and its cap by NVML index: one computation,
 * so NVML and cuMemGetInfo report the same numbers. This process's
 * overhead is re-measured when it has bound h to an ordinal (it has a
 * context there); without CUDA (nvidia-smi) there is none to measure. */
void cc_mem_info_ledger(int h, uint64_t cap, uint64_t phys_free, uint64_t phys_total,
                        uint64_t *free_b, uint64_t *total_b, uint64_t *used_b);

/* Same, binding without measuring the overhead (context admission: the
 * context being created is not there yet). */
const struct cc_mem_device *cc_mem_dev_unmeasured(int ordinal);

/* This process's overhead on ordinal as NVML measures it now (per-process
 * memory minus what we track); 0 when it cannot tell. */
int cc_mem_measure_overhead(int ordinal, uint64_t *ovh);

/* Reserves bytes of overhead (a context, a heap) with the exact check; on
 * refusal drops what may have shrunk and tries once more. 0 or -1. */
int cc_mem_reserve_overhead(const struct cc_mem_device *m, int ordinal, uint64_t bytes);
/* Overhead grew by an unknown amount (a module load): re-measured before
 * the next allocation on ordinal. */
void cc_mem_overhead_stale(int ordinal);
/* Overhead may have shrunk on any device (an unload, a context destroyed):
 * re-measured before the next allocation on each. */
void cc_mem_overhead_stale_all(void);

/* Context admission (memory_ctx.c): admit before the driver creates a
 * context on dev (0, or -1: fail the creation with out-of-memory), settle
 * after it with the driver's result. primary: cuDevicePrimaryCtxRetain (an
 * active primary context costs nothing). */
struct cc_ctx_adm {
    int armed, ordinal;
    const struct cc_mem_device *m;
    uint64_t pend, before;
};
int cc_mem_ctx_admit(CUdevice dev, int primary, struct cc_ctx_adm *a);
void cc_mem_ctx_settle(struct cc_ctx_adm *a, CUresult r);
/* Test builds (-DCC_TEST_CTX_CONTROL): whether CC_TEST_CTX_CONTROL=what. */
int cc_mem_test_control(const char *what);
/* A capped device whose context size the container has not learned yet. */
int cc_mem_ctx_unlearned(CUdevice dev);
/* The size a new context on m is expected to take. */
uint64_t cc_mem_ctx_expected(const struct cc_mem_device *m);

/* Pools (memory_pool.c): shrink what they counted to what they reserve. */
void cc_mem_pools_refresh(void);

/* Allocation helpers shared by the wrappers. */
void cc_mem_track(int kind, uint64_t key, const struct cc_mem_device *m, uint64_t bytes);
/* Gives back what key counted (after the real free succeeded). */
void cc_mem_untrack_release(int kind, uint64_t key);

#endif
