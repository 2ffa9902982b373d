/* The subset of NVIDIA's CUDA driver API (cuda.h) that cudacap, its simulator
 * (sim/) and its tests use, written from NVIDIA's CUDA Driver API reference
 * (CUDA 13.0). It is a description of the driver's ABI, not an interface of
 * ours: every type, value, layout and prototype here is NVIDIA's and must not
 * be changed. It lets the project build where NVIDIA's toolkit is absent
 * (Debian main does not ship it); include/cuda_decls/cuda.h forwards to it,
 * and the build puts that folder on the include path unless configured with
 * -DCUDACAP_CUDA_HEADERS=toolkit (docs/design.md, "Building without NVIDIA's
 * toolkit").
 *
 * The declarations are written as lists, each entry one fact of the ABI, so
 * the same lists drive the declarations below and the check against NVIDIA's
 * header (tests/cuda_api_check.c, ctest cuda_api.*, run where cuda.h is
 * installed): every function's type, every typedef, every enumerator's value,
 * every struct's size, alignment and member offsets, and what each name
 * expands to in the three modes cuda.h has (plain, CUDA_API_PER_THREAD_DEFAULT_STREAM,
 * and __CUDA_API_VERSION_INTERNAL, which the simulator uses to define the
 * driver's exported names itself).
 *
 * Adding a name: its entry in the list of its kind (a struct or enum the
 * entry needs, before it), then ctest -R cuda_api on a machine with the
 * toolkit. A versioning macro (#define cuX cuX_v2) cannot be made from a list:
 * it is written below and named in CC_CUDA_VERSIONED, which the check
 * compares; scripts/check_cuda_api.sh fails on a #define not named there.
 *
 * Lists (the types' in cuda_api_types.h, the entry points' in
 * cuda_api_functions.h, both beside this file; include this one):
 *   CC_CUDA_TYPES(T, H, E, S), in declaration order:
 *     T(name, type)           typedef of a type (scalar, alias, function pointer)
 *     H(name, tag)            opaque handle: typedef struct tag *name
 *     E(tag, name)            enum; its enumerators in CC_CUDA_ENUM_<name>(K), K(NAME, value)
 *     S(kind, tag, name)      struct or union; members in CC_CUDA_MEMBERS_<name>(M, N, P):
 *                             M(type, member, array) a member, N(...) one of an anonymous
 *                             struct or union type, P(member.sub) a member of that
 *   CC_CUDA_FUNCTIONS(F)      F(return, exported name, (parameters))
 *   CC_CUDA_CONSTANTS(D)      D(NAME) a #define'd constant, written below
 *   CC_CUDA_VERSIONED(V)      V(name) a name cuda.h maps to another, written below
 *
 * For LP64 Linux (x86-64, aarch64), the library's targets: CUdeviceptr is
 * unsigned long long, as NVIDIA's header makes it there.
 *
 * Only what the code uses is here: a subset of each enum's enumerators
 * (enough to give the enum the same underlying type, which the check
 * compares), no deprecation attributes (the code that calls deprecated
 * entry points defines CUDA_ENABLE_DEPRECATED for NVIDIA's header). */
#ifndef CUDACAP_CUDA_API_H
#define CUDACAP_CUDA_API_H

#include <stddef.h>
#include <stdint.h>

#include "cuda_api_types.h" /* (beside this file) */
#include "cuda_api_functions.h"

#ifndef CC_CUDA_LISTS_ONLY /* the check reads the lists beside NVIDIA's header */

#ifdef __cplusplus
extern "C" {
#endif

#define CUDAAPI

#define CC_CUDA_DECL_T(name, type) typedef __typeof__(type) name;
#define CC_CUDA_DECL_H(name, tag) typedef struct tag *name;
#define CC_CUDA_DECL_K(name, value) name = value,
#define CC_CUDA_DECL_E(tag, name) typedef enum tag { CC_CUDA_ENUM_##name(CC_CUDA_DECL_K) } name;
#define CC_CUDA_DECL_M(type, member, array) type member array;
#define CC_CUDA_DECL_P(path)
#define CC_CUDA_DECL_S(kind, tag, name) \
    typedef kind tag { CC_CUDA_MEMBERS_##name(CC_CUDA_DECL_M, CC_CUDA_DECL_M, CC_CUDA_DECL_P) } name;
#define CC_CUDA_DECL_F(ret, name, params) ret CUDAAPI name params;

CC_CUDA_TYPES(CC_CUDA_DECL_T, CC_CUDA_DECL_H, CC_CUDA_DECL_E, CC_CUDA_DECL_S)
CC_CUDA_FUNCTIONS(CC_CUDA_DECL_F)

#define CU_STREAM_LEGACY ((CUstream)0x1)
#define CU_STREAM_PER_THREAD ((CUstream)0x2)
#define CUDA_ARRAY3D_LAYERED 0x01

/* The versioned names: a call written cuMemAlloc binds to the exported
 * cuMemAlloc_v2, as with NVIDIA's header. Under CUDA_API_PER_THREAD_DEFAULT_STREAM
 * the stream-ordered calls bind to their per-thread-stream variants (_ptds:
 * synchronous, _ptsz: asynchronous). Under __CUDA_API_VERSION_INTERNAL (the
 * simulator, which defines the exported names) no name is mapped. */
#ifndef __CUDA_API_VERSION_INTERNAL
#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
#define CC_CUDA_PTDS(api) api##_ptds
#define CC_CUDA_PTSZ(api) api##_ptsz
#else
#define CC_CUDA_PTDS(api) api
#define CC_CUDA_PTSZ(api) api
#endif

#define cuArray3DCreate cuArray3DCreate_v2
#define cuArray3DGetDescriptor cuArray3DGetDescriptor_v2
#define cuArrayCreate cuArrayCreate_v2
#define cuArrayGetDescriptor cuArrayGetDescriptor_v2
#define cuCtxCreate cuCtxCreate_v4
#define cuCtxDestroy cuCtxDestroy_v2
#define cuCtxPopCurrent cuCtxPopCurrent_v2
#define cuCtxPushCurrent cuCtxPushCurrent_v2
#define cuDeviceGetUuid cuDeviceGetUuid_v2
#define cuDevicePrimaryCtxRelease cuDevicePrimaryCtxRelease_v2
#define cuDevicePrimaryCtxReset cuDevicePrimaryCtxReset_v2
#define cuDevicePrimaryCtxSetFlags cuDevicePrimaryCtxSetFlags_v2
#define cuDeviceTotalMem cuDeviceTotalMem_v2
#define cuEventDestroy cuEventDestroy_v2
#define cuEventElapsedTime cuEventElapsedTime_v2
#define cuGetProcAddress cuGetProcAddress_v2
#define cuGraphAddKernelNode cuGraphAddKernelNode_v2
#define cuGraphInstantiate cuGraphInstantiateWithFlags
#define cuGraphKernelNodeGetParams cuGraphKernelNodeGetParams_v2
#define cuMemAdvise cuMemAdvise_v2
#define cuMemAlloc cuMemAlloc_v2
#define cuMemAllocHost cuMemAllocHost_v2
#define cuMemAllocPitch cuMemAllocPitch_v2
#define cuMemFree cuMemFree_v2
#define cuMemGetAddressRange cuMemGetAddressRange_v2
#define cuMemGetInfo cuMemGetInfo_v2
#define cuMemHostGetDevicePointer cuMemHostGetDevicePointer_v2
#define cuMemPrefetchAsync CC_CUDA_PTSZ(cuMemPrefetchAsync_v2)
#define cuMemcpyDtoD CC_CUDA_PTDS(cuMemcpyDtoD_v2)
#define cuMemcpyDtoDAsync CC_CUDA_PTSZ(cuMemcpyDtoDAsync_v2)
#define cuMemcpyDtoH CC_CUDA_PTDS(cuMemcpyDtoH_v2)
#define cuMemcpyDtoHAsync CC_CUDA_PTSZ(cuMemcpyDtoHAsync_v2)
#define cuMemcpyHtoD CC_CUDA_PTDS(cuMemcpyHtoD_v2)
#define cuMemcpyHtoDAsync CC_CUDA_PTSZ(cuMemcpyHtoDAsync_v2)
#define cuMemsetD16 CC_CUDA_PTDS(cuMemsetD16_v2)
#define cuMemsetD32 CC_CUDA_PTDS(cuMemsetD32_v2)
#define cuMemsetD8 CC_CUDA_PTDS(cuMemsetD8_v2)
#define cuStreamBeginCapture CC_CUDA_PTSZ(cuStreamBeginCapture_v2)
#define cuStreamDestroy cuStreamDestroy_v2
#define cuStreamGetCaptureInfo CC_CUDA_PTSZ(cuStreamGetCaptureInfo_v3)

#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
#define cuEventRecord cuEventRecord_ptsz
#define cuEventRecordWithFlags cuEventRecordWithFlags_ptsz
#define cuGraphInstantiateWithParams cuGraphInstantiateWithParams_ptsz
#define cuGraphLaunch cuGraphLaunch_ptsz
#define cuGraphUpload cuGraphUpload_ptsz
#define cuLaunchCooperativeKernel cuLaunchCooperativeKernel_ptsz
#define cuLaunchHostFunc cuLaunchHostFunc_ptsz
#define cuLaunchKernel cuLaunchKernel_ptsz
#define cuLaunchKernelEx cuLaunchKernelEx_ptsz
#define cuMemAllocAsync cuMemAllocAsync_ptsz
#define cuMemAllocFromPoolAsync cuMemAllocFromPoolAsync_ptsz
#define cuMemFreeAsync cuMemFreeAsync_ptsz
#define cuMemcpy cuMemcpy_ptds
#define cuMemcpyAsync cuMemcpyAsync_ptsz
#define cuMemsetD16Async cuMemsetD16Async_ptsz
#define cuMemsetD32Async cuMemsetD32Async_ptsz
#define cuMemsetD8Async cuMemsetD8Async_ptsz
#define cuStreamBeginCaptureToGraph cuStreamBeginCaptureToGraph_ptsz
#define cuStreamEndCapture cuStreamEndCapture_ptsz
#define cuStreamGetCtx cuStreamGetCtx_ptsz
#define cuStreamGetDevice cuStreamGetDevice_ptsz
#define cuStreamIsCapturing cuStreamIsCapturing_ptsz
#define cuStreamQuery cuStreamQuery_ptsz
#define cuStreamSynchronize cuStreamSynchronize_ptsz
#define cuStreamWaitEvent cuStreamWaitEvent_ptsz

/* A lookup through cuGetProcAddress that names neither stream semantics
 * gets the per-thread one in this mode, as NVIDIA's header arranges. */
static inline CUresult cuGetProcAddress_v2_ptsz(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                                CUdriverProcAddressQueryResult *symbolStatus)
{
    if ((flags & (CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)) == 0)
        flags |= CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    return cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, symbolStatus);
}
#define cuGetProcAddress_v2 cuGetProcAddress_v2_ptsz
#endif /* CUDA_API_PER_THREAD_DEFAULT_STREAM */
#endif /* !__CUDA_API_VERSION_INTERNAL */

#ifdef __cplusplus
}
#endif
#endif /* !CC_CUDA_LISTS_ONLY */
#endif
