/* Bootstrap entry points: cuInit, cuDriverGetVersion and cuGetProcAddress.
 * The CUDA runtime (and so PyTorch, JAX, CuPy, Triton) gets every driver
 * entry point through cuGetProcAddress; if these did not hand out our
 * wrappers the caps would silently not apply. */
#include "hook.h"

CC_EXPORT CUresult cuInit(unsigned int flags)
{
    cc_enter_cuda(CC_FN_cuInit);
    if (!CC_REAL(cuInit)) return cc_cuda_missing(CC_FN_cuInit);
    return CC_REAL(cuInit)(flags);
}

CC_EXPORT CUresult cuDriverGetVersion(int *version)
{
    cc_enter_cuda(CC_FN_cuDriverGetVersion);
    if (!CC_REAL(cuDriverGetVersion)) return cc_cuda_missing(CC_FN_cuDriverGetVersion);
    return CC_REAL(cuDriverGetVersion)(version);
}

CC_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cuda_version,
                                       cuuint64_t flags, CUdriverProcAddressQueryResult *status)
{
    cc_enter_cuda(CC_FN_cuGetProcAddress_v2);
    if (!CC_REAL(cuGetProcAddress_v2)) return cc_cuda_missing(CC_FN_cuGetProcAddress_v2);
    CUresult r = CC_REAL(cuGetProcAddress_v2)(symbol, pfn, cuda_version, flags, status);
    if (r == CUDA_SUCCESS && pfn) *pfn = cc_route_proc(symbol, *pfn, cuda_version, flags);
    return r;
}

CC_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cuda_version,
                                    cuuint64_t flags)
{
    cc_enter_cuda(CC_FN_cuGetProcAddress);
    if (!CC_REAL(cuGetProcAddress)) return cc_cuda_missing(CC_FN_cuGetProcAddress);
    CUresult r = CC_REAL(cuGetProcAddress)(symbol, pfn, cuda_version, flags);
    if (r == CUDA_SUCCESS && pfn) *pfn = cc_route_proc(symbol, *pfn, cuda_version, flags);
    return r;
}
