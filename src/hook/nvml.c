/* NVML entry points. Memory queries report the container's view, computed
 * by the memory policy (cap/mem/admit.c) as for cuMemGetInfo (cc_mem_info_ledger): total =
 * min(cap, physical), used = the container's use from the ledger (context
 * overheads, pools and graph memory refreshed first), free = total - used
 * (clamped, and never above the device's real free). Works without CUDA
 * (nvidia-smi): the device is found by UUID, the cap by NVML index (the
 * index the process would see). */
#include "cap/memledger.h"
#include "hook.h"
#include "hook/process.h"
#include "memory_track.h"

CC_EXPORT nvmlReturn_t nvmlInit_v2(void)
{
    __typeof__(&nvmlInit_v2) real = CC_NVML_REAL(nvmlInit_v2);
    if (__builtin_expect(!real, 0)) return cc_nvml_missing(CC_FN_nvmlInit_v2);
    return real();
}

CC_EXPORT nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
    __typeof__(&nvmlInitWithFlags) real = CC_NVML_REAL(nvmlInitWithFlags);
    if (__builtin_expect(!real, 0)) return cc_nvml_missing(CC_FN_nvmlInitWithFlags);
    return real(flags);
}

/* The container's view of dev, cap/mem/admit.c's (the same as cuMemGetInfo's);
 * 0 when dev is not capped. Finds the ledger by UUID, the cap by index. */
static int capped_view(nvmlDevice_t dev, uint64_t phys_total, uint64_t phys_free, uint64_t *total,
                       uint64_t *used, uint64_t *free_b)
{
    static __typeof__(&nvmlDeviceGetIndex) get_index;
    static __typeof__(&nvmlDeviceGetUUID) get_uuid;
    if (!get_index) get_index = cc_lib_sym(CC_LIB_NVML, "nvmlDeviceGetIndex");
    if (!get_uuid) get_uuid = cc_lib_sym(CC_LIB_NVML, "nvmlDeviceGetUUID");
    unsigned idx;
    char uuid[96];
    if (!get_index || !get_uuid || get_index(dev, &idx) != NVML_SUCCESS || idx >= CC_MAX_DEVICES ||
        get_uuid(dev, uuid, sizeof uuid) != NVML_SUCCESS)
        return 0;
    uint64_t cap = cc_cfg_mem_cap((int)idx);
    if (!cap) return 0;
    int h = cc_ml_device(cc_cfg.state_dir, uuid, cap);
    if (h < 0) return 0; /* no ledger at all (said): the device's own figures */
    cc_mem_info_ledger(h, cap, cc_cfg_mem_over((int)idx), phys_free, phys_total, free_b, total, used);
    return 1;
}

CC_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t dev, nvmlMemory_t *mem)
{
    __typeof__(&nvmlDeviceGetMemoryInfo) real = CC_NVML_REAL(nvmlDeviceGetMemoryInfo);
    if (!real) return cc_nvml_missing(CC_FN_nvmlDeviceGetMemoryInfo);
    nvmlReturn_t r = real(dev, mem);
    uint64_t t, u, f;
    if (r == NVML_SUCCESS && mem && capped_view(dev, mem->total, mem->free, &t, &u, &f)) {
        mem->total = t;
        mem->used = u;
        mem->free = f;
    }
    return r;
}

CC_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t dev, nvmlMemory_v2_t *mem)
{
    __typeof__(&nvmlDeviceGetMemoryInfo_v2) real = CC_NVML_REAL(nvmlDeviceGetMemoryInfo_v2);
    if (!real) return cc_nvml_missing(CC_FN_nvmlDeviceGetMemoryInfo_v2);
    nvmlReturn_t r = real(dev, mem);
    uint64_t t, u, f;
    if (r == NVML_SUCCESS && mem && capped_view(dev, mem->total, mem->free, &t, &u, &f)) {
        mem->total = t;
        mem->used = u;
        mem->free = f;
        mem->reserved = 0; /* folded into used: the cap covers it */
    }
    return r;
}
