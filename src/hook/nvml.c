/* NVML entry points. Pass-through until the memory cap lands (issue 3). */
#include "hook.h"

CC_EXPORT nvmlReturn_t nvmlInit_v2(void) { CC_PASS_NVML(nvmlInit_v2); }

CC_EXPORT nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
    CC_PASS_NVML(nvmlInitWithFlags, flags);
}

CC_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t dev, nvmlMemory_t *mem)
{
    CC_PASS_NVML(nvmlDeviceGetMemoryInfo, dev, mem);
}

CC_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t dev, nvmlMemory_v2_t *mem)
{
    CC_PASS_NVML(nvmlDeviceGetMemoryInfo_v2, dev, mem);
}
