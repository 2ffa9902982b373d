/* What the exporter knows of a device beyond the containers' state files. */
#ifndef CC_CLI_GPU_INFO_H
#define CC_CLI_GPU_INFO_H

#include <stdint.h>

/* The device's memory in bytes (NVML, by UUID "GPU-..."): 1 and *total, or
 * 0 when NVML cannot be loaded or does not know the device. Loads NVML on
 * the first call only; a known total is cached. Not thread-safe (the
 * exporter renders from one thread). */
int gpu_mem_total(const char *uuid, uint64_t *total);

#endif
