/* Bootstrap entry points: cuInit, cuDriverGetVersion and cuGetProcAddress.
 * The CUDA runtime (and so PyTorch, JAX, CuPy, Triton) gets every driver
 * entry point through cuGetProcAddress; if these did not hand out our
 * wrappers the caps would silently not apply. */
#include "hook.h"

CC_EXPORT CUresult cuInit(unsigned int flags)
{
    __typeof__(&cuInit) real = CC_CUDA_REAL(cuInit);
    if (!real) return cc_cuda_missing(CC_FN_cuInit);
    /* A configuration error under CUDACAP_STRICT=1 (init.c, said there). */
    if (__atomic_load_n(&cc_cuda_refused, __ATOMIC_ACQUIRE)) return CUDA_ERROR_NOT_PERMITTED;
    return real(flags);
}

CC_EXPORT CUresult cuDriverGetVersion(int *version)
{
    __typeof__(&cuDriverGetVersion) real = CC_CUDA_REAL(cuDriverGetVersion);
    if (!real) return cc_cuda_missing(CC_FN_cuDriverGetVersion);
    return real(version);
}

CC_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cuda_version,
                                       cuuint64_t flags, CUdriverProcAddressQueryResult *status)
{
    __typeof__(&cuGetProcAddress_v2) real = CC_CUDA_REAL(cuGetProcAddress_v2);
    if (!real) return cc_cuda_missing(CC_FN_cuGetProcAddress_v2);
    CUresult r = real(symbol, pfn, cuda_version, flags, status);
    if (r == CUDA_SUCCESS && pfn) *pfn = cc_route_proc(symbol, *pfn, cuda_version, flags);
    return r;
}

CC_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cuda_version,
                                    cuuint64_t flags)
{
    __typeof__(&cuGetProcAddress) real = CC_CUDA_REAL(cuGetProcAddress);
    if (!real) return cc_cuda_missing(CC_FN_cuGetProcAddress);
    CUresult r = real(symbol, pfn, cuda_version, flags);
    if (r == CUDA_SUCCESS && pfn) *pfn = cc_route_proc(symbol, *pfn, cuda_version, flags);
    return r;
}
