/* Managed memory is host-resident: cuMemAllocManaged succeeds beyond the
 * device's total and shows in neither cuMemGetInfo's used nor NVML's device
 * or per-process memory; cuMemAdvise and cuMemPrefetchAsync check their
 * arguments and record the preferred location; the copy engine reaches it;
 * CUDACAP_SIM_NO_CONCURRENT_MANAGED=1 turns the device attribute off. */
#include "simtest.h"

#include <dlfcn.h>

#include "cudacap/nvml_api.h"
#include <string.h>
#include <unistd.h>

#define MiB (1ull << 20)
#define GiB (1ull << 30)

static size_t used(void) { return st_used(); }

static unsigned long long nvml_used(void)
{
    nvmlDevice_t d;
    nvmlMemory_t m;
    CHECK(nvmlDeviceGetHandleByIndex_v2(0, &d) == NVML_SUCCESS);
    CHECK(nvmlDeviceGetMemoryInfo(d, &m) == NVML_SUCCESS);
    return m.used;
}

static unsigned long long nvml_proc_used(void)
{
    nvmlDevice_t d;
    nvmlProcessInfo_t p[8];
    unsigned n = 8;
    unsigned long long s = 0;
    CHECK(nvmlDeviceGetHandleByIndex_v2(0, &d) == NVML_SUCCESS);
    CHECK(nvmlDeviceGetComputeRunningProcesses_v3(d, &n, p) == NVML_SUCCESS);
    for (unsigned i = 0; i < n; i++) s += p[i].usedGpuMemory;
    return s;
}

/* The simulator's test hook (sim/cuda_managed.c), not in cuda.h. */
static int cuSimTestManaged(unsigned long long *bytes, unsigned long long *host_pref)
{
    int (*f)(unsigned long long *, unsigned long long *) =
        (int (*)(unsigned long long *, unsigned long long *))dlsym(RTLD_DEFAULT, "cuSimTestManaged");
    CHECK(f != NULL);
    return f(bytes, host_pref);
}

static int attr(void)
{
    int v = -1;
    CU(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, 0));
    return v;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "noconc")) { /* the knob, read in a fresh process */
        CU(cuInit(0));
        CHECK(attr() == 0);
        CUdeviceptr p;
        CUcontext c;
        CU(cuDevicePrimaryCtxRetain(&c, 0));
        CU(cuCtxSetCurrent(c));
        CU(cuMemAllocManaged(&p, MiB, CU_MEM_ATTACH_GLOBAL)); /* still allocates */
        CUmemLocation dev = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0};
        CHECK(cuMemPrefetchAsync(p, MiB, dev, 0, 0) == CUDA_ERROR_INVALID_DEVICE);
        CU(cuMemFree(p));
        printf("no concurrent managed access: attribute 0, device prefetch refused\n");
        return 0;
    }
    st_setup();
    setenv("CUDACAP_SIM_MEM", "4g", 1);
    setenv("CUDACAP_SIM_CTX_MEM", "256m", 1);
    unsetenv("CUDACAP_SIM_NO_CONCURRENT_MANAGED");
    st_ctx();
    CHECK(nvmlInit_v2() == NVML_SUCCESS);
    CHECK(attr() == 1);
    size_t base = used();
    unsigned long long nbase = nvml_used(), pbase = nvml_proc_used();
    CHECK(base == 256 * MiB && pbase == 256 * MiB);

    /* 6 GiB of managed memory on a 4 GiB device: all of it host-resident */
    CUdeviceptr m[6];
    for (int i = 0; i < 6; i++) CU(cuMemAllocManaged(&m[i], GiB, CU_MEM_ATTACH_GLOBAL));
    CHECK(used() == base && nvml_used() == nbase && nvml_proc_used() == pbase);
    unsigned long long mb = 0, hb = 0;
    CHECK(cuSimTestManaged(&mb, &hb) == 0 && mb == 6 * GiB && hb == 0);
    /* the device's own memory is still all there */
    CUdeviceptr d;
    CU(cuMemAlloc(&d, 3 * GiB));
    CU(cuMemFree(d));

    /* advice: checked, recorded */
    CUmemLocation host = {.type = CU_MEM_LOCATION_TYPE_HOST, .id = 0};
    CUmemLocation dev0 = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0};
    CUmemLocation dev9 = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 9};
    CU(cuMemAdvise(m[0], GiB, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, host));
    CU(cuMemAdvise(m[1], GiB, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, host));
    CHECK(cuSimTestManaged(&mb, &hb) == 0 && hb == 2 * GiB);
    CU(cuMemAdvise(m[1], GiB, CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION, host));
    CU(cuMemAdvise(m[1], GiB, CU_MEM_ADVISE_SET_ACCESSED_BY, dev0));
    CHECK(cuSimTestManaged(&mb, &hb) == 0 && hb == GiB);
    CHECK(cuMemAdvise(m[0], GiB, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, dev9) == CUDA_ERROR_INVALID_DEVICE);
    CHECK(cuMemAdvise(m[0], GiB + 1, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, host) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemAdvise(m[0], 0, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, host) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemAdvise(m[0], MiB, (CUmem_advise)7, host) == CUDA_ERROR_INVALID_VALUE);
    CU(cuMemAlloc(&d, MiB));
    CHECK(cuMemAdvise(d, MiB, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, host) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemPrefetchAsync(d, MiB, host, 0, 0) == CUDA_ERROR_INVALID_VALUE);
    CU(cuMemFree(d));
    CHECK(cuMemAllocManaged(&d, MiB, 4) == CUDA_ERROR_INVALID_VALUE);

    /* prefetches: accepted no-ops (the memory stays host-resident) */
    CU(cuMemPrefetchAsync(m[0] + MiB, 2 * MiB, dev0, 0, 0));
    CU(cuMemPrefetchAsync(m[0], GiB, host, 0, CU_STREAM_PER_THREAD));
    CHECK(cuMemPrefetchAsync(m[0], MiB, host, 1, 0) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemPrefetchAsync(m[0], MiB, dev9, 0, 0) == CUDA_ERROR_INVALID_DEVICE);
    CHECK(used() == base && nvml_used() == nbase);

    /* copies and memsets reach managed memory */
    CUdeviceptr small;
    unsigned out[4] = {0};
    CU(cuMemAllocManaged(&small, 64 * 1024, CU_MEM_ATTACH_HOST));
    CU(cuMemsetD32(small, 0x12345678u, 4));
    CU(cuMemcpyDtoH(out, small, sizeof out));
    CHECK(out[0] == 0x12345678u && out[3] == 0x12345678u);
    CU(cuMemFree(small));

    for (int i = 0; i < 6; i++) CU(cuMemFree(m[i]));
    CHECK(cuSimTestManaged(&mb, &hb) == 0 && mb == 0 && hb == 0);
    CHECK(used() == base);
    printf("6 GiB managed on a 4 GiB device: device used stays %llu MiB; advice and prefetch checked\n",
           (unsigned long long)(base / MiB));

    /* the knob: a fresh process (the simulator reads its environment once) */
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "CUDACAP_SIM_NO_CONCURRENT_MANAGED=1 '%s' noconc", argv[0]);
    CHECK(system(cmd) == 0);
    return 0;
}
