/* Controls of src/hook/memory_over.c (src/common/controls.h says how). */
#pragma GCC diagnostic ignored "-Wunused-function" /* the replaced control points */

#ifdef CC_TEST_OVER_DEVICE /* mem.over.fill.control: the excess on the device, counted as host */
#include <cuda.h>

#include "hook/hook.h"
static CUresult over_on_device(CUdeviceptr *dptr, size_t bytes)
{
    __typeof__(&cuMemAlloc_v2) a = CC_REAL(cuMemAlloc_v2);
    return a ? a(dptr, bytes) : CUDA_ERROR_OUT_OF_MEMORY;
}
#define place_on_host(o, dptr, bytes, flags) ((void)(o), (void)(flags), over_on_device(dptr, bytes))
#endif

#include "hook/memory_over.c"
