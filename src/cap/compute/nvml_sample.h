#ifndef CC_CAP_NVML_SAMPLE_H
#define CC_CAP_NVML_SAMPLE_H
/* The watcher's NVML sampling (nvml_sample.c). */
#include <stdint.h>

#include "cap/compute/compute.h"

/* Opens NVML through the port and notes whether per-process utilization can
 * be read (without it, no samples: the cap runs on its cost model alone). */
void cc_watch_nvml_open(void);

/* One NVML poll of device d: the container's utilization (*user_pm) and
 * everyone's (*sys_pm), permille. 1: a sample; 0: none this time. With
 * procs (the sampler of a shared line), each container process's share goes
 * into its slot of the process table (cudacap status). */
int cc_watch_sample(struct cc_compute_device *d, const struct cc_compute_view *v, uint32_t *user_pm,
                    uint32_t *sys_pm, int procs);

#endif
