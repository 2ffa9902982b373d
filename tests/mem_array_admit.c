/* Arrays are admitted before the driver creates them (src/hook/
 * memory_vmm.c, array_floor): an array that would pass the cap is refused
 * without ever existing, so the device never holds more than the cap, not
 * even for the one call between a creation and its check. Run preloaded on
 * the simulator with CUDACAP_MEM_LIMIT=1g, CUDACAP_SIM_MEM=8g,
 * CUDACAP_SIM_CTX_MEM=64m: 768 MiB of linear memory held, then a 256 MiB
 * array, a 256 MiB 3D array and a 256 MiB mipmapped array (each refused),
 * and a 128 MiB array (fits, counted, given back). The simulator's
 * high-water mark of device 0 (cuSimTestPeakMem, every process counted)
 * must stay within the cap. Before, 8 racing processes passed a 4 GiB cap
 * by up to 260 MiB. Control (mem.arrays.before.control): the library built
 * with CC_TEST_ARRAY_AFTER (created, then checked): the mark reaches
 * 768 + 64 + 256 MiB; it fails every run (deterministic: one process). */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>

#include "check.h"

#define MIB (1ull << 20)
#define CAP (1024 * MIB)

int main(void)
{
    int (*peak)(int, unsigned long long *) =
        (int (*)(int, unsigned long long *))dlsym(RTLD_DEFAULT, "cuSimTestPeakMem");
    if (!peak) {
        fprintf(stderr, "needs the simulator (cuSimTestPeakMem)\n");
        return 1;
    }
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr held;
    CHECK_CU(cuInit(0));
    CHECK_CU(cuDeviceGet(&dev, 0));
    CHECK_CU(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK_CU(cuCtxSetCurrent(ctx));
    CHECK_CU(cuMemAlloc(&held, 768 * MIB));

    CUarray a;
    CUDA_ARRAY_DESCRIPTOR d2 = {.Width = 1024, .Height = 65536, .Format = CU_AD_FORMAT_FLOAT,
                                .NumChannels = 1};
    CHECK(cuArrayCreate(&a, &d2) == CUDA_ERROR_OUT_OF_MEMORY, "256 MiB array beside 768 + ctx");
    CUDA_ARRAY3D_DESCRIPTOR d3 = {.Width = 1024, .Height = 64, .Depth = 1024,
                                  .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1};
    CHECK(cuArray3DCreate(&a, &d3) == CUDA_ERROR_OUT_OF_MEMORY, "256 MiB 3D array");
    CUmipmappedArray mm;
    CHECK(cuMipmappedArrayCreate(&mm, &d3, 2) == CUDA_ERROR_OUT_OF_MEMORY, "256 MiB mipmapped array");
    unsigned long long mark = 0;
    CHECK(peak(0, &mark) == 0, "no high-water mark");
    printf("after three refused 256 MiB arrays: device 0 peaked at %llu MiB (cap %llu)\n",
           mark >> 20, (unsigned long long)(CAP >> 20));
    CHECK(mark <= CAP, "the device held %llu MiB under a %llu MiB cap", mark >> 20,
          (unsigned long long)(CAP >> 20));

    /* What fits is created and counted; its destruction gives it back. */
    CUDA_ARRAY_DESCRIPTOR small = {.Width = 1024, .Height = 32768, .Format = CU_AD_FORMAT_FLOAT,
                                   .NumChannels = 1};
    CHECK_CU(cuArrayCreate(&a, &small));
    size_t f = 0, t = 0;
    CHECK_CU(cuMemGetInfo(&f, &t));
    CHECK(t - f >= (768 + 128) * MIB, "the 128 MiB array not counted: used %zu MiB", (t - f) >> 20);
    CHECK_CU(cuArrayDestroy(a));
    CHECK_CU(cuMemGetInfo(&f, &t));
    CHECK(t - f < (768 + 128) * MIB, "the array not given back: used %zu MiB", (t - f) >> 20);
    CHECK_CU(cuMemFree(held));
    CHECK_EXIT();
}
