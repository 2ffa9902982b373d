/* Every allocation family stops at the cap (run preloaded on the simulator
 * with CUDACAP_MEM_LIMIT=1g, CUDACAP_SIM_MEM=8g, CUDACAP_SIM_CTX_MEM=256m):
 * allocate until refused; the refusal is CUDA_ERROR_OUT_OF_MEMORY; what was
 * granted plus the context never passes the cap; every free gives it all
 * back. cuMemGetInfo reports the cap as total and the container's use.
 * Argument "uncapped": garbage in CUDACAP_MEM_LIMIT leaves the process
 * running without that cap (it reports the device's real 8 GiB). */
#include <cuda.h>
#include <string.h>

#include "check.h"

#define MIB (1ull << 20)
#define CAP (1024 * MIB)

static uint64_t used_now(void)
{
    size_t f = 0, t = 0;
    CHECK_CU(cuMemGetInfo(&f, &t));
    CHECK(t == CAP, "cuMemGetInfo total %zu, cap %llu", t, (unsigned long long)CAP);
    return t - f;
}

typedef CUresult (*alloc_fn)(uint64_t *key, size_t bytes);
typedef CUresult (*free_fn)(uint64_t key);

static CUstream st;
static CUmemoryPool pool;

static CUresult a_lin(uint64_t *k, size_t n) { return cuMemAlloc((CUdeviceptr *)k, n); }
static CUresult a_man(uint64_t *k, size_t n) { return cuMemAllocManaged((CUdeviceptr *)k, n, CU_MEM_ATTACH_GLOBAL); }
static CUresult a_pitch(uint64_t *k, size_t n)
{
    size_t pitch;
    return cuMemAllocPitch((CUdeviceptr *)k, &pitch, 1000, n / 1024, 4);
}
static CUresult f_lin(uint64_t k) { return cuMemFree((CUdeviceptr)k); }
static CUresult a_async(uint64_t *k, size_t n) { return cuMemAllocAsync((CUdeviceptr *)k, n, st); }
static CUresult a_pool(uint64_t *k, size_t n) { return cuMemAllocFromPoolAsync((CUdeviceptr *)k, n, pool, st); }
static CUresult f_async(uint64_t k) { return cuMemFreeAsync((CUdeviceptr)k, st); }
static CUresult a_vmm(uint64_t *k, size_t n)
{
    CUmemAllocationProp p = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
                             .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0}};
    return cuMemCreate((CUmemGenericAllocationHandle *)k, n, &p, 0);
}
static CUresult f_vmm(uint64_t k) { return cuMemRelease((CUmemGenericAllocationHandle)k); }
static CUresult a_arr(uint64_t *k, size_t n)
{
    CUDA_ARRAY_DESCRIPTOR d = {.Width = 1024, .Height = n / 4096, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1};
    return cuArrayCreate((CUarray *)k, &d);
}
static CUresult a_arr3(uint64_t *k, size_t n)
{
    CUDA_ARRAY3D_DESCRIPTOR d = {.Width = 1024, .Height = 64, .Depth = n / (4096 * 64),
                                 .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1};
    return cuArray3DCreate((CUarray *)k, &d);
}
static CUresult f_arr(uint64_t k) { return cuArrayDestroy((CUarray)k); }
static CUresult a_mip(uint64_t *k, size_t n)
{
    CUDA_ARRAY3D_DESCRIPTOR d = {.Width = 1024, .Height = n / 4096, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1};
    return cuMipmappedArrayCreate((CUmipmappedArray *)k, &d, 4);
}
static CUresult f_mip(uint64_t k) { return cuMipmappedArrayDestroy((CUmipmappedArray)k); }

static void family(const char *name, alloc_fn a, free_fn f, size_t chunk, int stream_ordered)
{
    uint64_t base = used_now(), keys[512];
    int n = 0;
    CUresult r = CUDA_SUCCESS;
    while (n < 512 && (r = a(&keys[n], chunk)) == CUDA_SUCCESS) n++;
    uint64_t at_cap = used_now();
    printf("%-10s %3d x %4llu MiB granted, refused with %d; container uses %llu MiB of %llu\n",
           name, n, (unsigned long long)(chunk / MIB), (int)r, (unsigned long long)(at_cap / MIB),
           (unsigned long long)(CAP / MIB));
    CHECK(r == CUDA_ERROR_OUT_OF_MEMORY, "%s: refusal was %d, not OOM", name, (int)r);
    CHECK(n > 0, "%s: nothing granted", name);
    CHECK(at_cap <= CAP, "%s: use %llu passed the cap", name, (unsigned long long)at_cap);
    CHECK(at_cap + 2 * chunk > CAP, "%s: stopped early at %llu", name, (unsigned long long)at_cap);
    for (int i = 0; i < n; i++) CHECK_CU(f(keys[i]));
    if (stream_ordered) {
        CHECK_CU(cuStreamSynchronize(st));
        if (pool) CHECK_CU(cuMemPoolTrimTo(pool, 0));
    }
    uint64_t after = used_now();
    CHECK(after == base, "%s: %llu MiB before, %llu after freeing everything", name,
          (unsigned long long)(base / MIB), (unsigned long long)(after / MIB));
}

int main(int argc, char **argv)
{
    CUdevice dev;
    CUcontext ctx;
    CHECK_CU(cuInit(0));
    CHECK_CU(cuDeviceGet(&dev, 0));
    CHECK_CU(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK_CU(cuCtxSetCurrent(ctx));
    if (argc > 1 && !strcmp(argv[1], "uncapped")) {
        size_t f, t;
        CHECK_CU(cuMemGetInfo(&f, &t));
        CHECK(t == 8192 * MIB, "garbage limit: total %zu, expected the device's 8 GiB", t);
        CUdeviceptr p;
        CHECK_CU(cuMemAlloc(&p, 2048 * MIB));
        CHECK_CU(cuMemFree(p));
        CHECK_EXIT();
    }
    uint64_t base = used_now();
    printf("context overhead counted: %llu MiB\n", (unsigned long long)(base / MIB));
    CHECK(base >= 256 * MIB, "the context's 256 MiB is not counted (%llu)", (unsigned long long)base);
    size_t tm = 0;
    CHECK_CU(cuDeviceTotalMem(&tm, dev));
    CHECK(tm == CAP, "cuDeviceTotalMem %zu", tm);
    CHECK_CU(cuStreamCreate(&st, 0));
    family("alloc", a_lin, f_lin, 64 * MIB, 0);
    family("managed", a_man, f_lin, 64 * MIB, 0);
    family("pitch", a_pitch, f_lin, 64 * MIB, 0);
    family("async", a_async, f_async, 64 * MIB, 1);
    CUmemPoolProps pp = {.allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
                         .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0}};
    CHECK_CU(cuMemPoolCreate(&pool, &pp));
    family("pool", a_pool, f_async, 64 * MIB, 1);
    CHECK_CU(cuMemPoolDestroy(pool));
    pool = NULL;
    family("vmm", a_vmm, f_vmm, 64 * MIB, 0);
    family("array", a_arr, f_arr, 64 * MIB, 0);
    family("array3d", a_arr3, f_arr, 64 * MIB, 0);
    family("mipmap", a_mip, f_mip, 64 * MIB, 0);
    CHECK_EXIT();
}
