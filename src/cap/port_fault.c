/* The port with fault points (common/fault.h): each entry counts its call
 * and, when its point fires, returns the failure its contract (port.h)
 * documents instead of calling the port it wraps. The hook layer installs
 * it over the real port only when fault injection is active, so an
 * ordinary run calls the real entries directly. */
#include "cap/port_fault.h"

#include "common/fault.h"

static const cc_port_t *in;

static CUresult f_event_create(CUevent *ev, unsigned int flags)
{
    return cc_fault(CC_FP_EVENT_CREATE) ? CUDA_ERROR_OUT_OF_MEMORY : in->event_create(ev, flags);
}
static CUresult f_event_record(CUevent ev, CUstream s)
{
    return cc_fault(CC_FP_EVENT_RECORD) ? CUDA_ERROR_INVALID_HANDLE : in->event_record(ev, s);
}
static CUresult f_event_record_ptsz(CUevent ev, CUstream s)
{
    return cc_fault(CC_FP_EVENT_RECORD) ? CUDA_ERROR_INVALID_HANDLE : in->event_record_ptsz(ev, s);
}
/* A query that fails otherwise than NOT_READY: what a context's sticky
 * error (an illegal address in the application's kernel) returns. */
static CUresult f_event_query(CUevent ev)
{
    return cc_fault(CC_FP_EVENT_QUERY) ? CUDA_ERROR_ILLEGAL_ADDRESS : in->event_query(ev);
}
static CUresult f_event_elapsed(float *ms, CUevent a, CUevent b)
{
    return cc_fault(CC_FP_EVENT_ELAPSED) ? CUDA_ERROR_INVALID_HANDLE : in->event_elapsed(ms, a, b);
}
static CUresult f_event_destroy(CUevent ev)
{
    /* The event is still destroyed: a failed destroy that leaked would be a
     * fault of the test, not of the library. */
    CUresult r = in->event_destroy(ev);
    return cc_fault(CC_FP_EVENT_DESTROY) ? CUDA_ERROR_INVALID_HANDLE : r;
}
/* A stream's query failing as a context's sticky error makes it fail. */
static CUresult f_stream_query(CUstream s)
{
    return cc_fault(CC_FP_STREAM_QUERY) ? CUDA_ERROR_ILLEGAL_ADDRESS : in->stream_query(s);
}
static CUresult f_stream_query_ptsz(CUstream s)
{
    return cc_fault(CC_FP_STREAM_QUERY) ? CUDA_ERROR_ILLEGAL_ADDRESS : in->stream_query_ptsz(s);
}
static CUresult f_ctx_get_current(CUcontext *ctx)
{
    return cc_fault(CC_FP_CTX_CURRENT) ? CUDA_ERROR_NOT_INITIALIZED : in->ctx_get_current(ctx);
}
/* An implicit capture dependency: the legacy stream queried while another
 * thread captures globally. */
static CUresult f_is_capturing(CUstream s, CUstreamCaptureStatus *st)
{
    return cc_fault(CC_FP_IS_CAPTURING) ? CUDA_ERROR_STREAM_CAPTURE_IMPLICIT : in->stream_is_capturing(s, st);
}
static CUresult f_is_capturing_ptsz(CUstream s, CUstreamCaptureStatus *st)
{
    return cc_fault(CC_FP_IS_CAPTURING) ? CUDA_ERROR_STREAM_CAPTURE_IMPLICIT
                                        : in->stream_is_capturing_ptsz(s, st);
}
static CUresult f_exchange(CUstreamCaptureMode *m)
{
    return cc_fault(CC_FP_CAPTURE_MODE) ? CUDA_ERROR_NOT_SUPPORTED : in->exchange_capture_mode(m);
}
static int f_nvml_open(void) { return cc_fault(CC_FP_NVML_OPEN) ? -1 : in->nvml_open(); }
static nvmlReturn_t f_proc_util(nvmlDevice_t d, nvmlProcessUtilizationSample_t *b, unsigned int *n,
                                unsigned long long since)
{
    return cc_fault(CC_FP_NVML_UTIL) ? NVML_ERROR_UNKNOWN : in->nvml_process_utilization(d, b, n, since);
}
static nvmlReturn_t f_dev_util(nvmlDevice_t d, unsigned int *pct)
{
    return cc_fault(CC_FP_NVML_DEVUTIL) ? NVML_ERROR_UNKNOWN : in->nvml_device_utilization(d, pct);
}
/* The hook's process list has its own point (CC_FP_NVML_PROCS): the two
 * entries over it pass through. */
static int f_running_pids(int ordinal, uint32_t *pids, unsigned int *n)
{
    return in->nvml_running_pids(ordinal, pids, n);
}
static int f_process_memory(int ordinal, uint32_t pid, uint64_t *bytes)
{
    return in->nvml_process_memory(ordinal, pid, bytes);
}
static void f_refresh(void) { in->mem_refresh_own(); }
static int f_device_current(void) { return cc_fault(CC_FP_DEVICE_CURRENT) ? -1 : in->device_current(); }
static int f_device_of_stream(CUstream s, int ptsz)
{
    return cc_fault(CC_FP_DEVICE_CURRENT) ? -1 : in->device_of_stream(s, ptsz);
}
static int f_device_info(int ordinal, char uuid[CC_PORT_UUID_LEN], nvmlDevice_t *nvml)
{
    return cc_fault(CC_FP_DEVICE_INFO) ? -1 : in->device_info(ordinal, uuid, nvml);
}
static int f_device_memory(int ordinal, uint64_t *total, int *concurrent)
{
    return cc_fault(CC_FP_DEVICE_INFO) ? -1 : in->device_memory(ordinal, total, concurrent);
}
static uint32_t f_host_pid_known(void) { return in->host_pid_known(); }
static uint32_t f_host_pid_discover(int ordinal)
{
    return cc_fault(CC_FP_HOST_PID) ? 0 : in->host_pid_discover(ordinal);
}

static const cc_port_t faulty = {
    .event_create = f_event_create,
    .event_record = f_event_record,
    .event_record_ptsz = f_event_record_ptsz,
    .event_query = f_event_query,
    .event_elapsed = f_event_elapsed,
    .event_destroy = f_event_destroy,
    .stream_query = f_stream_query,
    .stream_query_ptsz = f_stream_query_ptsz,
    .ctx_get_current = f_ctx_get_current,
    .stream_is_capturing = f_is_capturing,
    .stream_is_capturing_ptsz = f_is_capturing_ptsz,
    .exchange_capture_mode = f_exchange,
    .nvml_open = f_nvml_open,
    .nvml_process_utilization = f_proc_util,
    .nvml_device_utilization = f_dev_util,
    .nvml_running_pids = f_running_pids,
    .nvml_process_memory = f_process_memory,
    .mem_refresh_own = f_refresh,
    .device_current = f_device_current,
    .device_of_stream = f_device_of_stream,
    .device_info = f_device_info,
    .device_memory = f_device_memory,
    .host_pid_known = f_host_pid_known,
    .host_pid_discover = f_host_pid_discover,
};

const cc_port_t *cc_port_with_faults(const cc_port_t *inner)
{
    if (!inner || in) return in ? &faulty : inner;
    in = inner;
    return &faulty;
}
