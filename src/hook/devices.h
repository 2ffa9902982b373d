/* The devices as this process sees them (after CUDA_VISIBLE_DEVICES), each
 * keyed by UUID so processes with different visible sets share state
 * correctly. Filled lazily on first use, after the application's cuInit. */
#ifndef CC_DEVICES_H
#define CC_DEVICES_H

#include <cuda.h>

#include "cudacap/config.h"
#include "cudacap/nvml_api.h"

#define CC_UUID_LEN 48 /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" + NUL, padded */

/* One device's identity in this process: its ordinal, UUID (the key across
 * processes), NVML handle, and the shape numbers read with them. */
struct cc_device_id {
    int ordinal;          /* CUDA ordinal in this process */
    char uuid[CC_UUID_LEN];
    int sm_count;
    int max_threads_per_sm;
    nvmlDevice_t nvml;    /* NULL when NVML is unavailable */
};

/* Number of visible devices (0 when the driver cannot tell; never fails
 * hard). Triggers discovery the first time; needs cuInit done. */
int cc_devices_count(void);

/* Device by CUDA ordinal, or NULL. */
const struct cc_device_id *cc_device(int ordinal);

/* The ordinal of the calling thread's current context; 0 when there is only
 * one device (no driver call), -1 when there is no current context. */
int cc_device_current(void);

/* The ordinal of the device that work on stream s runs on (ptsz: s was
 * passed to a per-thread-default-stream entry point): the current
 * context's for the special handles (NULL, CU_STREAM_LEGACY,
 * CU_STREAM_PER_THREAD), else the stream's own, whatever is current. -1
 * when it cannot tell. One device: 0, no driver call; else one driver call
 * (cuStreamGetDevice, CUDA 12.8), or three on an older driver (the stream's
 * context pushed, its device read, popped). The rule and every wrapper
 * that follows it: docs/interception.md, "Which device". */
int cc_device_of_stream(CUstream s, int ptsz);

#endif
