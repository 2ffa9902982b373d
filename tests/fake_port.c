/* The scripted port (fake_port.h): events are counters, every event is
 * complete (but for fake.not_ready queries), timings are fake.elapsed_ms,
 * one context, one device. */
#include "fake_port.h"

#include <string.h>

struct fake_port_script fake = {.mode = CU_STREAM_CAPTURE_MODE_GLOBAL};
static int ctx_token, ev_tokens[256];

static CUresult ev_create(CUevent *ev, unsigned int flags)
{
    (void)flags;
    if (fake.events_made >= 256) return CUDA_ERROR_OUT_OF_MEMORY;
    *ev = (CUevent)&ev_tokens[fake.events_made++];
    return CUDA_SUCCESS;
}
static CUresult ev_record(CUevent ev, CUstream s)
{
    (void)ev, (void)s;
    fake.records++;
    return CUDA_SUCCESS;
}
static CUresult ev_done(CUevent ev)
{
    (void)ev;
    fake.queries++;
    if (fake.not_ready > 0) return fake.not_ready--, CUDA_ERROR_NOT_READY;
    return CUDA_SUCCESS;
}
static CUresult ev_destroy(CUevent ev)
{
    (void)ev;
    fake.events_destroyed++;
    return CUDA_SUCCESS;
}
static CUresult ev_elapsed(float *ms, CUevent a, CUevent b)
{
    (void)a, (void)b;
    *ms = fake.elapsed_ms;
    return CUDA_SUCCESS;
}
static CUresult ctx_current(CUcontext *ctx)
{
    *ctx = (CUcontext)&ctx_token;
    return CUDA_SUCCESS;
}
static CUresult is_cap(CUstream s, CUstreamCaptureStatus *st)
{
    (void)s;
    *st = fake.capture;
    return CUDA_SUCCESS;
}
static CUresult is_cap_ptsz(CUstream s, CUstreamCaptureStatus *st)
{
    (void)s;
    *st = fake.capture_ptsz;
    return CUDA_SUCCESS;
}
static CUresult exchange(CUstreamCaptureMode *m)
{
    CUstreamCaptureMode old = fake.mode;
    fake.mode = *m;
    *m = old;
    fake.exchanges++;
    return CUDA_SUCCESS;
}
static int dev_current(void) { return fake.no_current ? -1 : 0; }
static int dev_of_stream(CUstream s, int ptsz)
{
    (void)s, (void)ptsz;
    return 0;
}
static int dev_info(int ordinal, char uuid[CC_PORT_UUID_LEN], nvmlDevice_t *nvml)
{
    if (ordinal != 0) return -1;
    strcpy(uuid, "GPU-fake0000-0000-0000-0000-000000000000");
    *nvml = NULL;
    return 0;
}

static uint32_t host_pid(int ordinal)
{
    (void)ordinal;
    return fake.host_pid;
}
static uint32_t host_pid_known(void) { return fake.host_pid; }
static int proc_mem(int ordinal, uint32_t pid, uint64_t *bytes)
{
    if (ordinal != 0 || !fake.proc_mem_known || pid != fake.host_pid) return 0;
    *bytes = fake.proc_mem;
    return 1;
}
static void refresh(void)
{
    fake.refreshes++;
    if (fake.on_refresh) fake.on_refresh();
}

static cc_port_t port;

void fake_port_install(void)
{
    port = cc_port_default; /* NVML sampling: the failing defaults */
    port.event_create = ev_create;
    port.event_record = port.event_record_ptsz = ev_record;
    port.event_query = ev_done;
    port.event_elapsed = ev_elapsed;
    port.event_destroy = ev_destroy;
    port.ctx_get_current = ctx_current;
    port.stream_is_capturing = is_cap;
    port.stream_is_capturing_ptsz = is_cap_ptsz;
    port.exchange_capture_mode = exchange;
    port.device_current = dev_current;
    port.device_of_stream = dev_of_stream;
    port.device_info = dev_info;
    port.host_pid_discover = host_pid;
    port.host_pid_known = host_pid_known;
    port.nvml_process_memory = proc_mem;
    port.mem_refresh_own = refresh;
    cc_port_install(&port);
}
