/* The default port and its installation (port.h). The default's entries
 * fail cleanly: what the cap does with a driver or NVML that lacks the
 * entry (no timing, "cannot tell" for captures, no samples, no device). */
#include "cap/port.h"

#include <stddef.h>

static CUresult no_event_create(CUevent *ev, unsigned int flags)
{
    (void)ev, (void)flags;
    return CUDA_ERROR_NOT_SUPPORTED;
}
static CUresult no_event_record(CUevent ev, CUstream s)
{
    (void)ev, (void)s;
    return CUDA_ERROR_NOT_SUPPORTED;
}
static CUresult no_stream_query(CUstream s)
{
    (void)s;
    return CUDA_ERROR_NOT_SUPPORTED;
}
static CUresult no_event(CUevent ev)
{
    (void)ev;
    return CUDA_ERROR_NOT_SUPPORTED;
}
static CUresult no_event_elapsed(float *ms, CUevent a, CUevent b)
{
    (void)ms, (void)a, (void)b;
    return CUDA_ERROR_NOT_SUPPORTED;
}
static CUresult no_ctx(CUcontext *ctx)
{
    (void)ctx;
    return CUDA_ERROR_NOT_SUPPORTED;
}
static CUresult no_is_capturing(CUstream s, CUstreamCaptureStatus *st)
{
    (void)s, (void)st;
    return CUDA_ERROR_NOT_SUPPORTED;
}
static CUresult no_exchange(CUstreamCaptureMode *m)
{
    (void)m;
    return CUDA_ERROR_NOT_SUPPORTED;
}
static int no_nvml_open(void) { return -1; }
static nvmlReturn_t no_proc_util(nvmlDevice_t d, nvmlProcessUtilizationSample_t *b, unsigned int *n,
                                 unsigned long long since)
{
    (void)d, (void)b, (void)n, (void)since;
    return NVML_ERROR_FUNCTION_NOT_FOUND;
}
static nvmlReturn_t no_dev_util(nvmlDevice_t d, unsigned int *pct)
{
    (void)d, (void)pct;
    return NVML_ERROR_FUNCTION_NOT_FOUND;
}
static int no_running_pids(int ordinal, uint32_t *pids, unsigned int *n)
{
    (void)ordinal, (void)pids, (void)n;
    return -1;
}
static int no_process_memory(int ordinal, uint32_t pid, uint64_t *bytes)
{
    (void)ordinal, (void)pid, (void)bytes;
    return 0;
}
static void no_refresh(void) {}
static int no_device_current(void) { return -1; }
static int no_device_of_stream(CUstream s, int ptsz)
{
    (void)s, (void)ptsz;
    return -1;
}
static int no_device_info(int ordinal, char uuid[CC_PORT_UUID_LEN], nvmlDevice_t *nvml)
{
    (void)ordinal, (void)uuid, (void)nvml;
    return -1;
}
static int no_device_memory(int ordinal, uint64_t *total, int *concurrent)
{
    (void)ordinal, (void)total, (void)concurrent;
    return -1;
}
static uint32_t no_host_pid(void) { return 0; }
static uint32_t no_host_pid_discover(int ordinal)
{
    (void)ordinal;
    return 0;
}

const cc_port_t cc_port_default = {
    .event_create = no_event_create,
    .event_record = no_event_record,
    .event_record_ptsz = no_event_record,
    .event_query = no_event,
    .event_elapsed = no_event_elapsed,
    .event_destroy = no_event,
    .stream_query = no_stream_query,
    .stream_query_ptsz = no_stream_query,
    .ctx_get_current = no_ctx,
    .stream_is_capturing = no_is_capturing,
    .stream_is_capturing_ptsz = no_is_capturing,
    .exchange_capture_mode = no_exchange,
    .nvml_open = no_nvml_open,
    .nvml_process_utilization = no_proc_util,
    .nvml_device_utilization = no_dev_util,
    .nvml_running_pids = no_running_pids,
    .nvml_process_memory = no_process_memory,
    .mem_refresh_own = no_refresh,
    .device_current = no_device_current,
    .device_of_stream = no_device_of_stream,
    .device_info = no_device_info,
    .device_memory = no_device_memory,
    .host_pid_known = no_host_pid,
    .host_pid_discover = no_host_pid_discover,
};

const cc_port_t *cc_port_installed = &cc_port_default;

int cc_port_install(const cc_port_t *p)
{
    const cc_port_t *expect = &cc_port_default;
    if (!p) return -1;
    /* Release: a thread that loads the pointer (acquire) sees the entries. */
    return __atomic_compare_exchange_n(&cc_port_installed, &expect, p, 0, __ATOMIC_ACQ_REL,
                                       __ATOMIC_ACQUIRE) || expect == p
               ? 0
               : -1;
}
