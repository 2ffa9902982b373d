/* 5: cuGetProcAddress picks the ABI version and stream flavour like NVIDIA's. */
#include "simtest.h"

#include <dlfcn.h>
#include <string.h>

static void *lib;

static void expect(const char *sym, int ver, cuuint64_t flags, const char *want)
{
    void *p = (void *)1;
    CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)-1;
    CUresult r = cuGetProcAddress(sym, &p, ver, flags, &st);
    if (!want) {
        if (r != CUDA_ERROR_NOT_FOUND || p != NULL || st == CU_GET_PROC_ADDRESS_SUCCESS) {
            fprintf(stderr, "%s@%d: expected not found, got r=%d st=%d\n", sym, ver, (int)r, (int)st);
            exit(1);
        }
        return;
    }
    void *w = dlsym(lib, want);
    if (r != CUDA_SUCCESS || st != CU_GET_PROC_ADDRESS_SUCCESS || !w || p != w) {
        fprintf(stderr, "%s@%d flags %llu: want %s (%p) got %p r=%d\n", sym, ver, (unsigned long long)flags, want, w,
                p, (int)r);
        exit(1);
    }
}

int main(void)
{
    st_setup();
    lib = dlopen("libcuda.so.1", RTLD_NOW);
    CHECK(lib);
    const cuuint64_t PT = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, LEG = CU_GET_PROC_ADDRESS_LEGACY_STREAM;
    expect("cuMemAlloc", 13000, 0, "cuMemAlloc_v2");
    expect("cuMemAlloc", 3020, 0, "cuMemAlloc_v2");
    expect("cuMemFree", 12000, PT, "cuMemFree_v2");
    expect("cuLaunchKernel", 12000, 0, "cuLaunchKernel");
    expect("cuLaunchKernel", 12000, LEG, "cuLaunchKernel");
    expect("cuLaunchKernel", 12000, PT, "cuLaunchKernel_ptsz");
    expect("cuLaunchKernel", 6050, PT, "cuLaunchKernel");
    expect("cuMemcpyHtoD", 12000, PT, "cuMemcpyHtoD_v2_ptds");
    expect("cuMemcpyHtoD", 12000, 0, "cuMemcpyHtoD_v2");
    expect("cuMemcpyHtoDAsync", 12000, PT, "cuMemcpyHtoDAsync_v2_ptsz");
    expect("cuStreamSynchronize", 12000, PT, "cuStreamSynchronize_ptsz");
    expect("cuMemAllocAsync", 11020, PT, "cuMemAllocAsync_ptsz");
    expect("cuGraphLaunch", 12000, PT, "cuGraphLaunch_ptsz");
    expect("cuStreamBeginCapture", 12000, 0, "cuStreamBeginCapture_v2");
    expect("cuStreamBeginCapture", 10000, 0, "cuStreamBeginCapture");
    expect("cuStreamBeginCapture", 12000, PT, "cuStreamBeginCapture_v2_ptsz");
    expect("cuCtxCreate", 13000, 0, "cuCtxCreate_v4");
    expect("cuCtxCreate", 12000, 0, "cuCtxCreate_v3");
    expect("cuCtxCreate", 11000, 0, "cuCtxCreate_v2");
    expect("cuEventElapsedTime", 13000, 0, "cuEventElapsedTime_v2");
    expect("cuEventElapsedTime", 12000, 0, "cuEventElapsedTime");
    expect("cuGetProcAddress", 13000, 0, "cuGetProcAddress_v2");
    expect("cuGetProcAddress", 11030, 0, "cuGetProcAddress");
    expect("cuDeviceGetUuid", 12000, 0, "cuDeviceGetUuid_v2");
    expect("cuDeviceGetUuid", 11000, 0, "cuDeviceGetUuid");
    expect("cuDevicePrimaryCtxRelease", 12000, 0, "cuDevicePrimaryCtxRelease_v2");
    expect("cuGraphAddKernelNode", 12000, 0, "cuGraphAddKernelNode_v2");
    expect("cuMemGetInfo", 12000, 0, "cuMemGetInfo_v2");
    expect("cuInit", 2000, 0, "cuInit");
    expect("cuMemsetD32", 12000, PT, "cuMemsetD32_v2_ptds");
    expect("cuLaunchHostFunc", 12000, PT, "cuLaunchHostFunc_ptsz");
    /* unsupported or unknown */
    CUdriverProcAddressQueryResult st;
    void *p = (void *)1;
    CHECK(cuGetProcAddress("cuMemAlloc", &p, 3000, 0, &st) == CUDA_ERROR_NOT_FOUND);
    CHECK(p == NULL && st == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    CHECK(cuGetProcAddress("cuNoSuchFunction", &p, 13000, 0, &st) == CUDA_ERROR_NOT_FOUND);
    CHECK(p == NULL && st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    CHECK(cuGetProcAddress("cuMemAlloc_v2", &p, 13000, 0, &st) == CUDA_ERROR_NOT_FOUND); /* base names only */
    expect("cuMemAlloc", 13000, 0, "cuMemAlloc_v2");
    /* the legacy 4-argument cuGetProcAddress under its plain name */
    CUresult (*legacy)(const char *, void **, int, cuuint64_t) =
        (CUresult(*)(const char *, void **, int, cuuint64_t))dlsym(lib, "cuGetProcAddress");
    CHECK(legacy && legacy != dlsym(lib, "cuGetProcAddress_v2"));
    CHECK(legacy("cuLaunchKernel", &p, 12000, PT) == CUDA_SUCCESS && p == dlsym(lib, "cuLaunchKernel_ptsz"));
    CHECK(legacy("cuBogus", &p, 12000, 0) == CUDA_ERROR_NOT_FOUND && p == NULL);
    /* resolved functions work */
    CUresult (*drv)(int *);
    expect("cuDriverGetVersion", 13000, 0, "cuDriverGetVersion");
    CHECK(cuGetProcAddress("cuDriverGetVersion", (void **)&drv, 13000, 0, NULL) == CUDA_SUCCESS);
    int v = 0;
    CHECK(drv(&v) == CUDA_SUCCESS && v == 13000);
    /* errors */
    const char *s;
    CHECK(cuGetErrorName(CUDA_ERROR_OUT_OF_MEMORY, &s) == CUDA_SUCCESS && strcmp(s, "CUDA_ERROR_OUT_OF_MEMORY") == 0);
    CHECK(cuGetErrorString(CUDA_ERROR_OUT_OF_MEMORY, &s) == CUDA_SUCCESS && strcmp(s, "out of memory") == 0);
    /* device attributes */
    CU(cuInit(0));
    int a;
    CU(cuDeviceGetAttribute(&a, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0));
    CHECK(a == 132);
    CU(cuDeviceGetAttribute(&a, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0));
    CHECK(a == 9);
    CU(cuDeviceGetAttribute(&a, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, 0));
    CHECK(a == 2048);
    CU(cuDeviceGetAttribute(&a, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 0));
    CHECK(a == 1024);
    CU(cuDeviceGetAttribute(&a, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0));
    CHECK(a == 32);
    CU(cuDeviceGetAttribute(&a, CU_DEVICE_ATTRIBUTE_NUMA_ID, 0));
    size_t tot;
    CU(cuDeviceTotalMem(&tot, 0));
    CHECK(tot == 80ull << 30);
    char bus[32];
    CU(cuDeviceGetPCIBusId(bus, sizeof bus, 0));
    printf("procaddr ok\n");
    return 0;
}
