/* libnvidia-ml.so.1 of the simulator: devices, memory, processes and
 * utilisation read from the shared state. */
#include "cudacap/nvml_api.h"
#include "sim_shared.h"
#include "nvml_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

struct nvml_dev {
    unsigned idx;
};
static struct nvml_dev g_devs[SIM_MAX_DEV];
static int g_refs;


static void fill_devs(void)
{
    for (unsigned i = 0; i < SIM_MAX_DEV; i++)
        g_devs[i].idx = i;
}

/* Thread-safe as NVIDIA's: a second nvmlInit while another thread uses the
 * handles must not rewrite them (a TSan race in a client that initialises
 * NVML beside cudacap's watcher). */
static nvmlReturn_t init(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    if (!sim_shm())
        return NVML_ERROR_DRIVER_NOT_LOADED;
    pthread_once(&once, fill_devs);
    __atomic_add_fetch(&g_refs, 1, __ATOMIC_ACQ_REL);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlInit_v2(void) { return init(); }
nvmlReturn_t nvmlInit(void) { return init(); }
nvmlReturn_t nvmlInitWithFlags(unsigned int flags) { (void)flags; return init(); }

nvmlReturn_t nvmlShutdown(void)
{
    CHECK_INIT();
    __atomic_sub_fetch(&g_refs, 1, __ATOMIC_ACQ_REL);
    return NVML_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t r)
{
    switch ((int)r) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case NVML_ERROR_NO_DATA: return "No Data";
    case 25: return "Argument Version Mismatch";
    default: return "Unknown Error";
    }
}

static nvmlReturn_t copy_str(char *dst, unsigned len, const char *src)
{
    if (!dst)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (strlen(src) + 1 > len)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(dst, src, strlen(src) + 1);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    return copy_str(version, length, "999.99-sim");
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *v)
{
    if (!v)
        return NVML_ERROR_INVALID_ARGUMENT;
    *v = 13000;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v) { return nvmlSystemGetCudaDriverVersion(v); }

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
    CHECK_INIT();
    if (!count)
        return NVML_ERROR_INVALID_ARGUMENT;
    *count = sim_ndev();
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount(unsigned int *count) { return nvmlDeviceGetCount_v2(count); }

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    CHECK_INIT();
    if (!device || index >= sim_ndev())
        return NVML_ERROR_INVALID_ARGUMENT;
    *device = (nvmlDevice_t)&g_devs[index];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device)
{
    return nvmlDeviceGetHandleByIndex_v2(index, device);
}

int sim_nvml_ready(void) { return __atomic_load_n(&g_refs, __ATOMIC_ACQUIRE) > 0; }

int sim_nvml_dev_of(nvmlDevice_t d)
{
    struct nvml_dev *x = (struct nvml_dev *)d;
    if (!x || x < g_devs || x >= g_devs + SIM_MAX_DEV || x->idx >= sim_ndev())
        return -1;
    return (int)x->idx;
}

static void uuid_str(unsigned idx, char out[NVML_DEVICE_UUID_V2_BUFFER_SIZE])
{
    /* Same bytes as cuDeviceGetUuid: 5ac1ca00-0000-4000-8000-0000000000XX */
    snprintf(out, NVML_DEVICE_UUID_V2_BUFFER_SIZE, "GPU-5ac1ca00-0000-4000-8000-0000000000%02x", idx & 0xffu);
}

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device)
{
    CHECK_INIT();
    if (!uuid || !device)
        return NVML_ERROR_INVALID_ARGUMENT;
    for (unsigned i = 0; i < sim_ndev(); i++) {
        char u[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
        uuid_str(i, u);
        if (strcmp(u, uuid) == 0) {
            *device = (nvmlDevice_t)&g_devs[i];
            return NVML_SUCCESS;
        }
    }
    return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index)
{
    CHECK_INIT();
    int d = dev_of(device);
    if (d < 0 || !index)
        return NVML_ERROR_INVALID_ARGUMENT;
    *index = (unsigned)d;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
    CHECK_INIT();
    int d = dev_of(device);
    if (d < 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    char u[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
    uuid_str((unsigned)d, u);
    return copy_str(uuid, length, u);
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
    CHECK_INIT();
    if (dev_of(device) < 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    return copy_str(name, length, "cudacap simulated GPU");
}

static void mem_of(int d, unsigned long long *total, unsigned long long *used)
{
    struct sim_shared *s = sim_shm();
    sim_lock(s);
    sim_sweep_locked(s);
    *total = s->dev[d].total;
    *used = sim_used_locked(s, (uint32_t)d);
    sim_unlock(s);
    if (*used > *total)
        *used = *total;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
    CHECK_INIT();
    int d = dev_of(device);
    if (d < 0 || !memory)
        return NVML_ERROR_INVALID_ARGUMENT;
    mem_of(d, &memory->total, &memory->used);
    memory->free = memory->total - memory->used;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory)
{
    CHECK_INIT();
    int d = dev_of(device);
    if (d < 0 || !memory)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (memory->version != nvmlMemory_v2)
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    mem_of(d, &memory->total, &memory->used);
    memory->reserved = 0;
    memory->free = memory->total - memory->used;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *util)
{
    CHECK_INIT();
    int d = dev_of(device);
    if (d < 0 || !util)
        return NVML_ERROR_INVALID_ARGUMENT;
    uint64_t w = sim_config()->util_window_ns, P = sim_config()->proc_sample_us;
    struct sim_shared *s = sim_shm();
    uint64_t now, now_us;
    sim_clock_pair(&now, &now_us);
    uint64_t from = now > w ? now - w : 0, to = now;
    if (P) {
        /* The H200: one stepped value per sampling period, the last
         * completed one's (docs/validation.md, the 2026-12-01 watcher run), periods aligned
         * as the per-process samples' are. */
        uint64_t end = sim_nvml_newest_end(now_us, P);
        int64_t off = (int64_t)(now_us * 1000ull) - (int64_t)now;
        if (end < P)
            return NVML_ERROR_UNKNOWN;
        from = (uint64_t)((int64_t)((end - P) * 1000ull) - off);
        to = (uint64_t)((int64_t)(end * 1000ull) - off);
        w = to - from;
    }
    sim_lock(s);
    uint64_t busy = sim_busy_locked(s, (uint32_t)d, from, to, -1);
    sim_unlock(s);
    util->gpu = (unsigned)((busy * 100 + w / 2) / w);
    if (util->gpu > 100)
        util->gpu = 100;
    util->memory = 0;
    return NVML_SUCCESS;
}

/* nvmlDeviceGetSamples, NVML_GPU_UTILIZATION_SAMPLES only (the others:
 * NOT_SUPPORTED). Like the per-process samples: with
 * CUDACAP_SIM_PROC_SAMPLE_MS = P, one sample per completed period of P
 * ending after lastSeen (within the window), the busy share of the device in
 * it (every process), stamped with the period's end, as the H200 gives one
 * stepped value every ~200 ms (docs/validation.md); otherwise one sample
 * covering [max(lastSeen, now - window), now] stamped now. Newest first in
 * periodic mode, as a full buffer keeps the newest. NOT_FOUND: none newer. */
nvmlReturn_t nvmlDeviceGetSamples(nvmlDevice_t device, nvmlSamplingType_t type,
                                  unsigned long long lastSeenTimeStamp, nvmlValueType_t *sampleValType,
                                  unsigned int *sampleCount, nvmlSample_t *samples)
{
    CHECK_INIT();
    int d = dev_of(device);
    if (d < 0 || !sampleCount)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (type != NVML_GPU_UTILIZATION_SAMPLES)
        return NVML_ERROR_NOT_SUPPORTED;
    uint64_t w = sim_config()->util_window_ns, P = sim_config()->proc_sample_us;
    uint64_t now, now_us;
    sim_clock_pair(&now, &now_us);
    int64_t off = (int64_t)(now_us * 1000ull) - (int64_t)now; /* realtime ns - monotonic ns */
    struct { uint64_t a, b, ts; } span[64];
    unsigned n = 0;
    if (P) {
        for (uint64_t end = sim_nvml_newest_end(now_us, P); end > lastSeenTimeStamp && end + w / 1000 > now_us && end >= P &&
                                            n < 64; end -= P) {
            span[n].a = (uint64_t)((int64_t)((end - P) * 1000ull) - off);
            span[n].b = (uint64_t)((int64_t)(end * 1000ull) - off);
            span[n++].ts = end;
        }
    } else if (lastSeenTimeStamp < now_us) {
        uint64_t from = now > w ? now - w : 0;
        if (lastSeenTimeStamp && (now_us - lastSeenTimeStamp) * 1000ull < now - from)
            from = now - (now_us - lastSeenTimeStamp) * 1000ull;
        span[0].a = from, span[0].b = now, span[0].ts = now_us;
        n = now > from;
    }
    if (n == 0)
        return NVML_ERROR_NOT_FOUND;
    if (!samples || *sampleCount < n) {
        *sampleCount = n;
        return samples ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS;
    }
    struct sim_shared *s = sim_shm();
    sim_lock(s);
    for (unsigned j = 0; j < n; j++) {
        uint64_t len = span[j].b - span[j].a;
        uint64_t busy = sim_busy_locked(s, (uint32_t)d, span[j].a, span[j].b, -1);
        unsigned u = (unsigned)((busy * 100 + len / 2) / len);
        memset(&samples[j], 0, sizeof samples[j]);
        samples[j].timeStamp = span[j].ts;
        samples[j].sampleValue.uiVal = u > 100 ? 100 : u;
    }
    sim_unlock(s);
    if (sampleValType)
        *sampleValType = NVML_VALUE_TYPE_UNSIGNED_INT;
    *sampleCount = n;
    return NVML_SUCCESS;
}
