/* The two ways a process sees a capped device's memory, NVML's
 * (nvmlDeviceGetMemoryInfo and _v2) and CUDA's (cuMemGetInfo), must report
 * the same numbers (src/cap/mem/admit.c computes both). NVML is asked
 * first, so it cannot lean on a refresh that cuMemGetInfo just made: a view
 * that skips one (before the port layer, nvml.c re-read neither graph memory nor
 * this process's overhead) differs where that refresh matters. Device 0 of
 * the simulator, whose NVML index and CUDA ordinal are the same device. */
#ifndef CC_TEST_MEM_VIEWS_H
#define CC_TEST_MEM_VIEWS_H

#include <cuda.h>

#include "check.h"
#include "cudacap/nvml_api.h"

static void mem_views_agree(const char *what)
{
    nvmlDevice_t d;
    nvmlMemory_t m = {0};
    nvmlMemory_v2_t m2 = {.version = nvmlMemory_v2};
    size_t f = 0, t = 0;
    CHECK(nvmlDeviceGetHandleByIndex_v2(0, &d) == NVML_SUCCESS, "%s: NVML handle", what);
    CHECK(nvmlDeviceGetMemoryInfo(d, &m) == NVML_SUCCESS, "%s: nvmlDeviceGetMemoryInfo", what);
    CHECK(nvmlDeviceGetMemoryInfo_v2(d, &m2) == NVML_SUCCESS, "%s: nvmlDeviceGetMemoryInfo_v2",
          what);
    CHECK_CU(cuMemGetInfo(&f, &t));
    printf("%-28s NVML used %llu MiB (v2 %llu), CUDA used %llu MiB\n", what,
           (unsigned long long)(m.used >> 20), (unsigned long long)(m2.used >> 20),
           (unsigned long long)((t - f) >> 20));
    CHECK(m.total == t && m.free == f && m.used == t - f,
          "%s: NVML total/free/used %llu/%llu/%llu, cuMemGetInfo %llu/%llu/%llu", what,
          (unsigned long long)m.total, (unsigned long long)m.free, (unsigned long long)m.used,
          (unsigned long long)t, (unsigned long long)f, (unsigned long long)(t - f));
    CHECK(m2.total == t && m2.free == f && m2.used == t - f,
          "%s: NVML v2 total/free/used %llu/%llu/%llu, cuMemGetInfo %llu/%llu/%llu", what,
          (unsigned long long)m2.total, (unsigned long long)m2.free, (unsigned long long)m2.used,
          (unsigned long long)t, (unsigned long long)f, (unsigned long long)(t - f));
}

#endif
