/* The compute client tests' CUDA setup: a device (0 by default), its primary context, the
 * simulator's spin_<N>us kernel from tests/ptx.h, a non-blocking stream and
 * the SM count (one wave = one block per SM). */
#ifndef CC_TEST_SPIN_SETUP_H
#define CC_TEST_SPIN_SETUP_H

#include <cuda.h>

#include "check.h"
#include "ptx.h"

/* On device ord: 0 on success; a failed call is reported by CHECK_CU and
 * counted. */
static inline int spin_setup_on(int ord, const char *kernel, CUfunction *fn, CUstream *stream, int *sms)
{
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CHECK_CU(cuInit(0));
    CHECK_CU(cuDeviceGet(&dev, ord));
    CHECK_CU(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK_CU(cuCtxSetCurrent(ctx));
    CHECK_CU(cuModuleLoadData(&mod, test_ptx));
    CHECK_CU(cuModuleGetFunction(fn, mod, kernel));
    CHECK_CU(cuStreamCreate(stream, CU_STREAM_NON_BLOCKING));
    CHECK_CU(cuDeviceGetAttribute(sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    return check_failures ? -1 : 0;
}

/* Device 0. */
static inline int spin_setup(const char *kernel, CUfunction *fn, CUstream *stream, int *sms)
{
    return spin_setup_on(0, kernel, fn, stream, sms);
}

#endif
