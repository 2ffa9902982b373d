/* Device memory totals for the exporter, from NVML when it can be loaded
 * (gpu_info.h). The one other place the CLI loads a driver library is
 * cudacap doctor; the exporter does so lazily, once, and lives without it
 * (an exporter pod without NVIDIA's libraries still exports every
 * container's figures, only not the device's own size). */
#include "cli/gpu_info.h"

#include <dlfcn.h>
#include <string.h>

#include "cudacap/nvml_api.h"

static int tried;
static nvmlReturn_t (*get_by_uuid)(const char *, nvmlDevice_t *);
static nvmlReturn_t (*get_mem)(nvmlDevice_t, nvmlMemory_t *);
static nvmlReturn_t (*get_count)(unsigned *);
static nvmlReturn_t (*get_by_index)(unsigned, nvmlDevice_t *);

/* A total, once known, is kept: a device's memory does not change size. */
#define GPU_CACHE 16
static struct {
    char uuid[64];
    uint64_t total;
} cache[GPU_CACHE];
static int ncache;

static void load(void)
{
    tried = 1;
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) return;
    nvmlReturn_t (*init)(void) = (nvmlReturn_t (*)(void))dlsym(h, "nvmlInit_v2");
    get_by_uuid = (nvmlReturn_t (*)(const char *, nvmlDevice_t *))dlsym(h, "nvmlDeviceGetHandleByUUID");
    get_mem = (nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t *))dlsym(h, "nvmlDeviceGetMemoryInfo");
    get_count = (nvmlReturn_t (*)(unsigned *))dlsym(h, "nvmlDeviceGetCount_v2");
    get_by_index = (nvmlReturn_t (*)(unsigned, nvmlDevice_t *))dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
    if (!init || !get_by_uuid || !get_mem || init() != NVML_SUCCESS) get_by_uuid = NULL, get_mem = NULL;
}

int gpu_mem_total(const char *uuid, uint64_t *total)
{
    for (int i = 0; i < ncache; i++)
        if (!strcmp(cache[i].uuid, uuid)) return *total = cache[i].total, 1;
    if (!tried) load();
    if (!get_by_uuid || strncmp(uuid, "GPU-", 4) != 0) return 0;
    nvmlDevice_t d;
    nvmlMemory_t m;
    if (get_by_uuid(uuid, &d) != NVML_SUCCESS || get_mem(d, &m) != NVML_SUCCESS || m.total == 0) return 0;
    if (ncache < GPU_CACHE && strlen(uuid) < sizeof cache[0].uuid) {
        strcpy(cache[ncache].uuid, uuid);
        cache[ncache++].total = m.total;
    }
    *total = m.total;
    return 1;
}

int gpu_mem_largest(uint64_t *largest, unsigned *count)
{
    if (!tried) load();
    unsigned n;
    if (!get_mem || !get_count || !get_by_index || get_count(&n) != NVML_SUCCESS || n == 0) return 0;
    uint64_t best = 0;
    for (unsigned i = 0; i < n; i++) {
        nvmlDevice_t d;
        nvmlMemory_t m;
        if (get_by_index(i, &d) == NVML_SUCCESS && get_mem(d, &m) == NVML_SUCCESS && m.total > best)
            best = m.total;
    }
    if (!best) return 0;
    *largest = best, *count = n;
    return 1;
}
