/* What the exporter knows of a device beyond the containers' state files. */
#ifndef CC_CLI_GPU_INFO_H
#define CC_CLI_GPU_INFO_H

#include <stdint.h>

/* The device's memory in bytes (NVML, by UUID "GPU-..."): 1 and *total, or
 * 0 when NVML cannot be loaded or does not know the device. Loads NVML on
 * the first call only; a known total is cached. Not thread-safe (the
 * exporter renders from one thread). */
int gpu_mem_total(const char *uuid, uint64_t *total);
/* The largest device memory of this node and the device count (NVML):
 * 1, or 0 when NVML cannot be loaded or has no device (cudacap set). */
int gpu_mem_largest(uint64_t *largest, unsigned *count);

#include "cli/snapshot.h"

/* One device, over every container of a snapshot (gpu_totals.c). */
struct gpu_total {
    const struct snap_dev *d; /* the first container's view of it: index, UUID */
    uint64_t mem_used;        /* the containers' device memory in use */
    uint64_t host_used;       /* and what they oversubscribed into host memory */
    uint64_t mem_caps;        /* the sum of their memory caps */
    uint32_t sm_caps_pm;      /* the sum of their SM caps (hard shares), permille */
    int containers;           /* with a memory or SM cap there */
    int mem_capped;           /* with a memory cap there */
    int has_util;             /* util_pm is known */
    uint32_t util_pm;         /* the device's utilization (every user), freshest sample */
    uint64_t util_age_ns;
};
/* The devices of s[0..n), in the order first seen, at most max: their
 * count. A device no container caps is listed (containers 0). */
int gpu_totals(struct snap *const *s, int n, struct gpu_total *t, int max);

#endif
