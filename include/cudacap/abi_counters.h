/* Counters for the node's exporter (cudacap metrics), kept in a fixed place
 * of each region FILE beyond every layout's struct, so that adding them
 * moves nothing and needs no new layout: files made before them hold zeros
 * there (the files are created by ftruncate), a library without them never
 * writes there, and the node side reads them at the same offset whatever
 * the layout. Monotonic; relaxed atomic adds; a rebuild may zero them (a
 * counter reset, which Prometheus handles). Written only through a shared
 * mapping of the whole file (a private, per-process ledger has no file).
 *
 *   memory.region,  at CC_MEM_COUNTERS_OFFSET: per device entry (the index
 *                   of cc_mem_region_t.dev), allocations refused at the cap
 *   compute.region, at CC_COMPUTE_COUNTERS_OFFSET: per device line (the
 *                   index of cc_compute_region_t.dev), nanoseconds launches
 *                   waited for tokens, summed over waiting threads
 *   memory.region,  at CC_CONFIG_COUNTERS_OFFSET: configuration errors the
 *                   container's processes found (each process adds its
 *                   count once, at its CUDA start), and how many of those
 *                   processes were refused the GPU for them */
#ifndef CUDACAP_COUNTERS_H
#define CUDACAP_COUNTERS_H

#include <stdint.h>

#include "cudacap/abi_compute_region.h"
#include "cudacap/abi_mem_region.h"

#define CC_MEM_COUNTERS_OFFSET (512u << 10)  /* PERMANENT */
#define CC_COMPUTE_COUNTERS_OFFSET 49152u     /* PERMANENT */
#define CC_CONFIG_COUNTERS_OFFSET (CC_MEM_COUNTERS_OFFSET + 4096u) /* PERMANENT */

typedef struct cc_mem_counters {
    uint64_t refusals[CC_MEM_DEVS];
} cc_mem_counters_t;

typedef struct cc_compute_counters {
    uint64_t throttled_ns[CC_COMPUTE_DEVICES];
} cc_compute_counters_t;

typedef struct cc_config_counters {
    uint64_t errors;  /* configuration errors, summed over processes */
    uint64_t refused; /* processes refused the GPU for a configuration error */
} cc_config_counters_t;

/* Room for every layout to grow before them, and inside the permanent sizes. */
_Static_assert(sizeof(cc_mem_region_t) <= CC_MEM_COUNTERS_OFFSET, "memory counters past the layout");
_Static_assert(CC_MEM_COUNTERS_OFFSET + sizeof(cc_mem_counters_t) <= CC_MEM_FILE_SIZE,
               "memory counters inside the file");
_Static_assert(CC_MEM_COUNTERS_OFFSET % 64 == 0, "memory counters on a cache line");
_Static_assert(sizeof(cc_mem_counters_t) == 8 * 16, "memory counters: one word per device");
_Static_assert(sizeof(cc_compute_region_t) <= CC_COMPUTE_COUNTERS_OFFSET, "compute counters past the layout");
_Static_assert(CC_COMPUTE_COUNTERS_OFFSET + sizeof(cc_compute_counters_t) <= CC_COMPUTE_FILE_SIZE,
               "compute counters inside the file");
_Static_assert(CC_COMPUTE_COUNTERS_OFFSET % 64 == 0, "compute counters on a cache line");
_Static_assert(sizeof(cc_compute_counters_t) == 8 * 16, "compute counters: one word per device");

_Static_assert(CC_CONFIG_COUNTERS_OFFSET >= CC_MEM_COUNTERS_OFFSET + sizeof(cc_mem_counters_t),
               "configuration counters after the memory counters");
_Static_assert(CC_CONFIG_COUNTERS_OFFSET + sizeof(cc_config_counters_t) <= CC_MEM_FILE_SIZE,
               "configuration counters inside the file");
_Static_assert(sizeof(cc_config_counters_t) == 16, "configuration counters: two words");

static inline cc_config_counters_t *cc_config_counters(void *file_base)
{
    return (cc_config_counters_t *)((char *)file_base + CC_CONFIG_COUNTERS_OFFSET);
}
static inline cc_mem_counters_t *cc_mem_counters(void *file_base)
{
    return (cc_mem_counters_t *)((char *)file_base + CC_MEM_COUNTERS_OFFSET);
}
static inline cc_compute_counters_t *cc_compute_counters(void *file_base)
{
    return (cc_compute_counters_t *)((char *)file_base + CC_COMPUTE_COUNTERS_OFFSET);
}

#endif
