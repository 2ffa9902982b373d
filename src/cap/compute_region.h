/* Opening the compute region and claiming its slots: device lines by UUID,
 * process slots by pid. No CUDA here, so multi-process tests link it from
 * cudacap_core. */
#ifndef CC_CAP_COMPUTE_REGION_H
#define CC_CAP_COMPUTE_REGION_H

#include <stdint.h>

#include "cudacap/compute_region.h"

/* Maps DIR/compute.region (created, validated, rebuilt in place by
 * cc_region_open). NULL after one warning. */
cc_compute_region_t *cc_compute_region_open(const char *dir);

/* The line of the device with this UUID, claiming a free one (CAS) when no
 * line has it; a new line starts with tokens and share = nominal, published
 * before the claim is. Returns the index or -1 (table full, or bad uuid). */
int cc_compute_claim_device(cc_compute_region_t *r, const char *uuid, int64_t nominal,
                            uint32_t cap_pm);

/* Records this process (container pid, host pid as NVML reports it) in the
 * process table; a slot whose process is gone is reused. Returns the slot or
 * -1 when the table is full. */
int cc_compute_register_proc(cc_compute_region_t *r, uint32_t pid, uint32_t host_pid);

/* 1 when host_pid belongs to a process of this container. */
int cc_compute_is_member(const cc_compute_region_t *r, uint32_t host_pid);

#endif
