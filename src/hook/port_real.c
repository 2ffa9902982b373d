/* The real port (cap/port.h): the driver's and NVML's entries, and the hook
 * layer's device and host-pid services, for the cap layer. Installed
 * by cc_port_real_install() once the driver is open (init.c). The driver
 * entries are the driver's own functions, resolved here once (a missing one
 * is the default port's failing entry), so a call through the port is the
 * one indirect call the cap made before through its own cached pointer. */
#include <string.h>

#include "cap/port.h"
#include "cap/port_fault.h"
#include "common/fault.h"
#include "devices.h"
#include "hook.h"
#include "hook/hostpid.h"
#include "memory_track.h"
#include "nvml_procs.h"

static int real_nvml_open(void);
static int real_process_memory(int ordinal, uint32_t pid, uint64_t *bytes)
{
    nvmlProcessInfo_t p[64];
    unsigned n = 64;
    if (cc_nvml_procs(ordinal, p, &n) != 0) return 0;
    if (n > 64) n = 64;
    for (unsigned i = 0; i < n; i++) {
        if (p[i].pid != pid || p[i].usedGpuMemory == (unsigned long long)NVML_VALUE_NOT_AVAILABLE)
            continue;
        *bytes = p[i].usedGpuMemory;
        return 1;
    }
    return 0;
}

static nvmlReturn_t real_proc_util(nvmlDevice_t, nvmlProcessUtilizationSample_t *, unsigned int *,
                                   unsigned long long);
static int real_device_info(int, char[CC_PORT_UUID_LEN], nvmlDevice_t *);
static int real_device_memory(int, uint64_t *, int *);
static nvmlReturn_t real_dev_util(nvmlDevice_t, unsigned int *);
static int real_running_pids(int, uint32_t *, unsigned int *);
static int real_process_memory(int, uint32_t, uint64_t *);

/* The hook layer's services; the driver entries are filled at install. */
static cc_port_t real = {
    .nvml_open = real_nvml_open,
    .nvml_process_utilization = real_proc_util,
    .nvml_device_utilization = real_dev_util,
    .nvml_running_pids = real_running_pids,
    .nvml_process_memory = real_process_memory,
    .mem_refresh_own = cc_mem_refresh_own,
    .device_current = cc_device_current,
    .device_of_stream = cc_device_of_stream,
    .device_info = real_device_info,
    .device_memory = real_device_memory,
    .host_pid_known = cc_hostpid_known,
    .host_pid_discover = cc_hostpid,
};

static nvmlReturn_t (*proc_util)(nvmlDevice_t, nvmlProcessUtilizationSample_t *, unsigned int *,
                                 unsigned long long);

typedef nvmlReturn_t (*rates_fn)(nvmlDevice_t, nvmlUtilization_t *);
static rates_fn rates;

static int real_nvml_open(void)
{
    cc_nvml_init();
    void *f = cc_lib_sym(CC_LIB_NVML, "nvmlDeviceGetProcessUtilization");
    /* Release: pairs with the acquires below (another thread's call). */
    __atomic_store_n(&rates, (rates_fn)cc_lib_sym(CC_LIB_NVML, "nvmlDeviceGetUtilizationRates"),
                     __ATOMIC_RELEASE);
    __atomic_store_n(&proc_util, (__typeof__(proc_util))f, __ATOMIC_RELEASE);
    return f ? 0 : -1;
}

static nvmlReturn_t real_dev_util(nvmlDevice_t d, unsigned int *pct)
{
    rates_fn f = __atomic_load_n(&rates, __ATOMIC_ACQUIRE);
    nvmlUtilization_t u;
    if (!f) return NVML_ERROR_FUNCTION_NOT_FOUND;
    nvmlReturn_t r = f(d, &u);
    if (r == NVML_SUCCESS) *pct = u.gpu;
    return r;
}

static int real_running_pids(int ordinal, uint32_t *pids, unsigned int *n)
{
    unsigned got[CC_NVML_PROCS_MAX], k = CC_NVML_PROCS_MAX;
    if (cc_nvml_pids(ordinal, got, &k) != 0 || k > *n) return -1;
    for (unsigned i = 0; i < k; i++) pids[i] = got[i];
    *n = k;
    return 0;
}

static nvmlReturn_t real_proc_util(nvmlDevice_t d, nvmlProcessUtilizationSample_t *b,
                                   unsigned int *n, unsigned long long since)
{
    __typeof__(proc_util) f = __atomic_load_n(&proc_util, __ATOMIC_ACQUIRE);
    return f ? f(d, b, n, since) : NVML_ERROR_FUNCTION_NOT_FOUND;
}

static int real_device_info(int ordinal, char uuid[CC_PORT_UUID_LEN], nvmlDevice_t *nvml)
{
    _Static_assert(CC_PORT_UUID_LEN == CC_UUID_LEN, "port.h's UUID length is devices.h's");
    const struct cc_device_id *dv = cc_device(ordinal);
    if (!dv) return -1;
    memcpy(uuid, dv->uuid, CC_UUID_LEN);
    uuid[CC_UUID_LEN - 1] = 0;
    *nvml = dv->nvml;
    return 0;
}

static int real_device_memory(int ordinal, uint64_t *total, int *concurrent)
{
    __typeof__(&cuDeviceGet) get = (__typeof__(&cuDeviceGet))cc_lib_sym(CC_LIB_CUDA, "cuDeviceGet");
    __typeof__(&cuDeviceGetAttribute) attr =
        (__typeof__(&cuDeviceGetAttribute))cc_lib_sym(CC_LIB_CUDA, "cuDeviceGetAttribute");
    __typeof__(&cuDeviceTotalMem_v2) tot = CC_REAL(cuDeviceTotalMem_v2); /* the card's, not our view */
    CUdevice dev;
    size_t t;
    int c;
    if (!get || !attr || !tot || get(&dev, ordinal) != CUDA_SUCCESS || tot(&t, dev) != CUDA_SUCCESS ||
        attr(&c, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, dev) != CUDA_SUCCESS)
        return -1;
    *total = t, *concurrent = c;
    return 0;
}

/* name resolved in the driver, else the fallback entry. */
#define CC_SYM(field, name, fallback)                                          \
    do {                                                                       \
        void *f_ = cc_lib_sym(CC_LIB_CUDA, name);                              \
        real.field = f_ ? (__typeof__(real.field))f_ : (fallback);             \
    } while (0)

void cc_port_real_install(void)
{
    const cc_port_t *d = &cc_port_default;
    CC_SYM(event_create, "cuEventCreate", d->event_create);
    CC_SYM(event_record, "cuEventRecord", d->event_record);
    CC_SYM(event_query, "cuEventQuery", d->event_query);
    CC_SYM(event_elapsed, "cuEventElapsedTime", d->event_elapsed);
    CC_SYM(event_destroy, "cuEventDestroy_v2", d->event_destroy);
    CC_SYM(stream_query, "cuStreamQuery", d->stream_query);
    CC_SYM(ctx_get_current, "cuCtxGetCurrent", d->ctx_get_current);
    CC_SYM(stream_is_capturing, "cuStreamIsCapturing", d->stream_is_capturing);
    CC_SYM(exchange_capture_mode, "cuThreadExchangeStreamCaptureMode", d->exchange_capture_mode);
    /* No _ptsz variant (an old driver): the legacy one, as before. */
    CC_SYM(event_record_ptsz, "cuEventRecord_ptsz", real.event_record);
    CC_SYM(stream_is_capturing_ptsz, "cuStreamIsCapturing_ptsz", real.stream_is_capturing);
    CC_SYM(stream_query_ptsz, "cuStreamQuery_ptsz", real.stream_query);
    /* Fault injection armed (tests only): every entry through its point. */
    cc_port_install(__atomic_load_n(&cc_fault_active, __ATOMIC_RELAXED) ? cc_port_with_faults(&real) : &real);
}
