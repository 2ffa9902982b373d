/* Memory entry points. Pass-through until the memory cap lands (issue 3). */
#include "hook.h"

CC_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytes)
{
    CC_PASS_CUDA(cuMemAlloc_v2, dptr, bytes);
}

CC_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr) { CC_PASS_CUDA(cuMemFree_v2, dptr); }

CC_EXPORT CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes)
{
    CC_PASS_CUDA(cuMemGetInfo_v2, free_bytes, total_bytes);
}
