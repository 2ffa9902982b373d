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
 * Lists:
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

#define CC_CUDA_TYPES(T, H, E, S) \
    T(cuuint64_t, uint64_t) \
    T(CUdeviceptr_v2, unsigned long long) \
    T(CUdeviceptr, CUdeviceptr_v2) \
    T(CUdevice_v1, int) \
    T(CUdevice, CUdevice_v1) \
    H(CUcontext, CUctx_st) \
    H(CUmodule, CUmod_st) \
    H(CUfunction, CUfunc_st) \
    H(CUlibrary, CUlib_st) \
    H(CUkernel, CUkern_st) \
    H(CUarray, CUarray_st) \
    H(CUmipmappedArray, CUmipmappedArray_st) \
    H(CUevent, CUevent_st) \
    H(CUstream, CUstream_st) \
    H(CUgraph, CUgraph_st) \
    H(CUgraphNode, CUgraphNode_st) \
    H(CUgraphExec, CUgraphExec_st) \
    H(CUmemoryPool, CUmemPoolHandle_st) \
    H(CUgraphDeviceNode, CUgraphDeviceUpdatableNode_st) \
    S(struct, CUuuid_st, CUuuid) \
    E(CUmemAttach_flags_enum, CUmemAttach_flags) \
    E(CUstream_flags_enum, CUstream_flags) \
    E(CUevent_flags_enum, CUevent_flags) \
    E(CUarray_format_enum, CUarray_format) \
    E(CUdevice_attribute_enum, CUdevice_attribute) \
    E(CUpointer_attribute_enum, CUpointer_attribute) \
    E(CUfunction_attribute_enum, CUfunction_attribute) \
    E(CUmemorytype_enum, CUmemorytype) \
    E(CUjit_option_enum, CUjit_option) \
    E(CUlimit_enum, CUlimit) \
    T(CUhostFn, void (*)(void *)) \
    E(CUaccessProperty_enum, CUaccessProperty) \
    S(struct, CUaccessPolicyWindow_st, CUaccessPolicyWindow_v1) \
    T(CUaccessPolicyWindow, CUaccessPolicyWindow_v1) \
    S(struct, CUDA_KERNEL_NODE_PARAMS_st, CUDA_KERNEL_NODE_PARAMS_v1) \
    S(struct, CUDA_KERNEL_NODE_PARAMS_v2_st, CUDA_KERNEL_NODE_PARAMS_v2) \
    T(CUDA_KERNEL_NODE_PARAMS, CUDA_KERNEL_NODE_PARAMS_v2) \
    E(CUgraphNodeType_enum, CUgraphNodeType) \
    S(struct, CUgraphEdgeData_st, CUgraphEdgeData) \
    E(CUgraphInstantiateResult_enum, CUgraphInstantiateResult) \
    S(struct, CUDA_GRAPH_INSTANTIATE_PARAMS_st, CUDA_GRAPH_INSTANTIATE_PARAMS) \
    E(CUsynchronizationPolicy_enum, CUsynchronizationPolicy) \
    E(CUclusterSchedulingPolicy_enum, CUclusterSchedulingPolicy) \
    E(CUlaunchMemSyncDomain_enum, CUlaunchMemSyncDomain) \
    S(struct, CUlaunchMemSyncDomainMap_st, CUlaunchMemSyncDomainMap) \
    E(CUlaunchAttributeID_enum, CUlaunchAttributeID) \
    S(union, CUlaunchAttributeValue_union, CUlaunchAttributeValue) \
    S(struct, CUlaunchAttribute_st, CUlaunchAttribute) \
    S(struct, CUlaunchConfig_st, CUlaunchConfig) \
    E(CUstreamCaptureStatus_enum, CUstreamCaptureStatus) \
    E(CUstreamCaptureMode_enum, CUstreamCaptureMode) \
    E(CUdriverProcAddress_flags_enum, CUdriverProcAddress_flags) \
    E(CUdriverProcAddressQueryResult_enum, CUdriverProcAddressQueryResult) \
    E(CUexecAffinityType_enum, CUexecAffinityType) \
    S(struct, CUexecAffinitySmCount_st, CUexecAffinitySmCount_v1) \
    T(CUexecAffinitySmCount, CUexecAffinitySmCount_v1) \
    S(struct, CUexecAffinityParam_st, CUexecAffinityParam_v1) \
    T(CUexecAffinityParam, CUexecAffinityParam_v1) \
    E(CUcigDataType_enum, CUcigDataType) \
    S(struct, CUctxCigParam_st, CUctxCigParam) \
    S(struct, CUctxCreateParams_st, CUctxCreateParams) \
    E(CUlibraryOption_enum, CUlibraryOption) \
    E(cudaError_enum, CUresult) \
    S(struct, CUDA_ARRAY_DESCRIPTOR_st, CUDA_ARRAY_DESCRIPTOR_v2) \
    T(CUDA_ARRAY_DESCRIPTOR, CUDA_ARRAY_DESCRIPTOR_v2) \
    S(struct, CUDA_ARRAY3D_DESCRIPTOR_st, CUDA_ARRAY3D_DESCRIPTOR_v2) \
    T(CUDA_ARRAY3D_DESCRIPTOR, CUDA_ARRAY3D_DESCRIPTOR_v2) \
    S(struct, CUDA_ARRAY_MEMORY_REQUIREMENTS_st, CUDA_ARRAY_MEMORY_REQUIREMENTS_v1) \
    T(CUDA_ARRAY_MEMORY_REQUIREMENTS, CUDA_ARRAY_MEMORY_REQUIREMENTS_v1) \
    S(struct, CUDA_LAUNCH_PARAMS_st, CUDA_LAUNCH_PARAMS_v1) \
    T(CUDA_LAUNCH_PARAMS, CUDA_LAUNCH_PARAMS_v1) \
    T(CUmemGenericAllocationHandle_v1, unsigned long long) \
    T(CUmemGenericAllocationHandle, CUmemGenericAllocationHandle_v1) \
    E(CUmemAllocationHandleType_enum, CUmemAllocationHandleType) \
    E(CUmemAccess_flags_enum, CUmemAccess_flags) \
    E(CUmemLocationType_enum, CUmemLocationType) \
    E(CUmem_advise_enum, CUmem_advise) \
    E(CUmemAllocationType_enum, CUmemAllocationType) \
    E(CUmemAllocationGranularity_flags_enum, CUmemAllocationGranularity_flags) \
    S(struct, CUmemLocation_st, CUmemLocation_v1) \
    T(CUmemLocation, CUmemLocation_v1) \
    S(struct, CUmemAllocationProp_st, CUmemAllocationProp_v1) \
    T(CUmemAllocationProp, CUmemAllocationProp_v1) \
    S(struct, CUmemAccessDesc_st, CUmemAccessDesc_v1) \
    T(CUmemAccessDesc, CUmemAccessDesc_v1) \
    E(CUmemPool_attribute_enum, CUmemPool_attribute) \
    S(struct, CUmemPoolProps_st, CUmemPoolProps_v1) \
    T(CUmemPoolProps, CUmemPoolProps_v1) \
    S(struct, CUDA_MEM_ALLOC_NODE_PARAMS_v1_st, CUDA_MEM_ALLOC_NODE_PARAMS_v1) \
    T(CUDA_MEM_ALLOC_NODE_PARAMS, CUDA_MEM_ALLOC_NODE_PARAMS_v1) \
    E(CUgraphMem_attribute_enum, CUgraphMem_attribute) \
    E(CUgraphInstantiate_flags_enum, CUgraphInstantiate_flags)

#define CC_CUDA_ENUM_CUmemAttach_flags(K) \
    K(CU_MEM_ATTACH_GLOBAL, 1) \
    K(CU_MEM_ATTACH_HOST, 2)

#define CC_CUDA_ENUM_CUstream_flags(K) \
    K(CU_STREAM_DEFAULT, 0) \
    K(CU_STREAM_NON_BLOCKING, 1)

#define CC_CUDA_ENUM_CUevent_flags(K) \
    K(CU_EVENT_DEFAULT, 0) \
    K(CU_EVENT_DISABLE_TIMING, 2)

#define CC_CUDA_ENUM_CUarray_format(K) \
    K(CU_AD_FORMAT_UNSIGNED_INT8, 1) \
    K(CU_AD_FORMAT_UNSIGNED_INT16, 2) \
    K(CU_AD_FORMAT_UNSIGNED_INT32, 3) \
    K(CU_AD_FORMAT_SIGNED_INT8, 8) \
    K(CU_AD_FORMAT_SIGNED_INT16, 9) \
    K(CU_AD_FORMAT_SIGNED_INT32, 10) \
    K(CU_AD_FORMAT_HALF, 16) \
    K(CU_AD_FORMAT_FLOAT, 32) \
    K(CU_AD_FORMAT_UNORM_INT8X1, 192) \
    K(CU_AD_FORMAT_UNORM_INT8X2, 193) \
    K(CU_AD_FORMAT_UNORM_INT8X4, 194) \
    K(CU_AD_FORMAT_UNORM_INT16X1, 195) \
    K(CU_AD_FORMAT_UNORM_INT16X2, 196) \
    K(CU_AD_FORMAT_UNORM_INT16X4, 197) \
    K(CU_AD_FORMAT_SNORM_INT8X1, 198) \
    K(CU_AD_FORMAT_SNORM_INT8X2, 199) \
    K(CU_AD_FORMAT_SNORM_INT8X4, 200) \
    K(CU_AD_FORMAT_SNORM_INT16X1, 201) \
    K(CU_AD_FORMAT_SNORM_INT16X2, 202) \
    K(CU_AD_FORMAT_SNORM_INT16X4, 203)

#define CC_CUDA_ENUM_CUdevice_attribute(K) \
    K(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1) \
    K(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, 2) \
    K(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, 3) \
    K(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, 4) \
    K(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, 5) \
    K(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, 6) \
    K(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, 7) \
    K(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 8) \
    K(CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY, 9) \
    K(CU_DEVICE_ATTRIBUTE_WARP_SIZE, 10) \
    K(CU_DEVICE_ATTRIBUTE_MAX_PITCH, 11) \
    K(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, 12) \
    K(CU_DEVICE_ATTRIBUTE_CLOCK_RATE, 13) \
    K(CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT, 14) \
    K(CU_DEVICE_ATTRIBUTE_GPU_OVERLAP, 15) \
    K(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 16) \
    K(CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT, 17) \
    K(CU_DEVICE_ATTRIBUTE_INTEGRATED, 18) \
    K(CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, 19) \
    K(CU_DEVICE_ATTRIBUTE_COMPUTE_MODE, 20) \
    K(CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS, 31) \
    K(CU_DEVICE_ATTRIBUTE_ECC_ENABLED, 32) \
    K(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, 33) \
    K(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, 34) \
    K(CU_DEVICE_ATTRIBUTE_TCC_DRIVER, 35) \
    K(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, 36) \
    K(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, 37) \
    K(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, 38) \
    K(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, 39) \
    K(CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT, 40) \
    K(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 41) \
    K(CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, 50) \
    K(CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT, 51) \
    K(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 75) \
    K(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 76) \
    K(CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED, 78) \
    K(CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED, 79) \
    K(CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED, 80) \
    K(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, 81) \
    K(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, 82) \
    K(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, 83) \
    K(CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD, 84) \
    K(CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, 89) \
    K(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, 95) \
    K(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 97) \
    K(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 102) \
    K(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, 103) \
    K(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, 106) \
    K(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, 115) \
    K(CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES, 119) \
    K(CU_DEVICE_ATTRIBUTE_NUMA_ID, 131)

#define CC_CUDA_ENUM_CUpointer_attribute(K) \
    K(CU_POINTER_ATTRIBUTE_CONTEXT, 1) \
    K(CU_POINTER_ATTRIBUTE_MEMORY_TYPE, 2) \
    K(CU_POINTER_ATTRIBUTE_DEVICE_POINTER, 3) \
    K(CU_POINTER_ATTRIBUTE_BUFFER_ID, 7) \
    K(CU_POINTER_ATTRIBUTE_IS_MANAGED, 8) \
    K(CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, 9) \
    K(CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, 11) \
    K(CU_POINTER_ATTRIBUTE_RANGE_SIZE, 12) \
    K(CU_POINTER_ATTRIBUTE_MAPPED, 13) \
    K(CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, 17) \
    K(CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID, 20)

#define CC_CUDA_ENUM_CUfunction_attribute(K) \
    K(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 0) \
    K(CU_FUNC_ATTRIBUTE_NUM_REGS, 4) \
    K(CU_FUNC_ATTRIBUTE_PTX_VERSION, 5) \
    K(CU_FUNC_ATTRIBUTE_BINARY_VERSION, 6)

#define CC_CUDA_ENUM_CUmemorytype(K) \
    K(CU_MEMORYTYPE_DEVICE, 2)

#define CC_CUDA_ENUM_CUjit_option(K) \
    K(CU_JIT_MAX_REGISTERS, 0)

#define CC_CUDA_ENUM_CUlimit(K) \
    K(CU_LIMIT_STACK_SIZE, 0) \
    K(CU_LIMIT_PRINTF_FIFO_SIZE, 1) \
    K(CU_LIMIT_MALLOC_HEAP_SIZE, 2)

#define CC_CUDA_ENUM_CUaccessProperty(K) \
    K(CU_ACCESS_PROPERTY_NORMAL, 0)

#define CC_CUDA_ENUM_CUgraphNodeType(K) \
    K(CU_GRAPH_NODE_TYPE_KERNEL, 0) \
    K(CU_GRAPH_NODE_TYPE_GRAPH, 4) \
    K(CU_GRAPH_NODE_TYPE_MEM_ALLOC, 10) \
    K(CU_GRAPH_NODE_TYPE_MEM_FREE, 11)

#define CC_CUDA_ENUM_CUgraphInstantiateResult(K) \
    K(CUDA_GRAPH_INSTANTIATE_SUCCESS, 0) \
    K(CUDA_GRAPH_INSTANTIATE_ERROR, 1)

#define CC_CUDA_ENUM_CUsynchronizationPolicy(K) \
    K(CU_SYNC_POLICY_AUTO, 1)

#define CC_CUDA_ENUM_CUclusterSchedulingPolicy(K) \
    K(CU_CLUSTER_SCHEDULING_POLICY_DEFAULT, 0)

#define CC_CUDA_ENUM_CUlaunchMemSyncDomain(K) \
    K(CU_LAUNCH_MEM_SYNC_DOMAIN_DEFAULT, 0)

#define CC_CUDA_ENUM_CUlaunchAttributeID(K) \
    K(CU_LAUNCH_ATTRIBUTE_IGNORE, 0)

#define CC_CUDA_ENUM_CUstreamCaptureStatus(K) \
    K(CU_STREAM_CAPTURE_STATUS_NONE, 0) \
    K(CU_STREAM_CAPTURE_STATUS_ACTIVE, 1) \
    K(CU_STREAM_CAPTURE_STATUS_INVALIDATED, 2)

#define CC_CUDA_ENUM_CUstreamCaptureMode(K) \
    K(CU_STREAM_CAPTURE_MODE_GLOBAL, 0) \
    K(CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, 1) \
    K(CU_STREAM_CAPTURE_MODE_RELAXED, 2)

#define CC_CUDA_ENUM_CUdriverProcAddress_flags(K) \
    K(CU_GET_PROC_ADDRESS_DEFAULT, 0) \
    K(CU_GET_PROC_ADDRESS_LEGACY_STREAM, 1) \
    K(CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, 2)

#define CC_CUDA_ENUM_CUdriverProcAddressQueryResult(K) \
    K(CU_GET_PROC_ADDRESS_SUCCESS, 0) \
    K(CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, 1) \
    K(CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT, 2)

#define CC_CUDA_ENUM_CUexecAffinityType(K) \
    K(CU_EXEC_AFFINITY_TYPE_SM_COUNT, 0)

#define CC_CUDA_ENUM_CUcigDataType(K) \
    K(CIG_DATA_TYPE_D3D12_COMMAND_QUEUE, 1)

#define CC_CUDA_ENUM_CUlibraryOption(K) \
    K(CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE, 0)

#define CC_CUDA_ENUM_CUresult(K) \
    K(CUDA_SUCCESS, 0) \
    K(CUDA_ERROR_INVALID_VALUE, 1) \
    K(CUDA_ERROR_OUT_OF_MEMORY, 2) \
    K(CUDA_ERROR_NOT_INITIALIZED, 3) \
    K(CUDA_ERROR_DEINITIALIZED, 4) \
    K(CUDA_ERROR_NO_DEVICE, 100) \
    K(CUDA_ERROR_INVALID_DEVICE, 101) \
    K(CUDA_ERROR_INVALID_IMAGE, 200) \
    K(CUDA_ERROR_INVALID_CONTEXT, 201) \
    K(CUDA_ERROR_CONTEXT_ALREADY_CURRENT, 202) \
    K(CUDA_ERROR_UNSUPPORTED_LIMIT, 215) \
    K(CUDA_ERROR_INVALID_PTX, 218) \
    K(CUDA_ERROR_OPERATING_SYSTEM, 304) \
    K(CUDA_ERROR_INVALID_HANDLE, 400) \
    K(CUDA_ERROR_ILLEGAL_STATE, 401) \
    K(CUDA_ERROR_NOT_FOUND, 500) \
    K(CUDA_ERROR_NOT_READY, 600) \
    K(CUDA_ERROR_ILLEGAL_ADDRESS, 700) \
    K(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, 701) \
    K(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE, 708) \
    K(CUDA_ERROR_CONTEXT_IS_DESTROYED, 709) \
    K(CUDA_ERROR_LAUNCH_FAILED, 719) \
    K(CUDA_ERROR_NOT_PERMITTED, 800) \
    K(CUDA_ERROR_NOT_SUPPORTED, 801) \
    K(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, 900) \
    K(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, 901) \
    K(CUDA_ERROR_STREAM_CAPTURE_MERGE, 902) \
    K(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, 903) \
    K(CUDA_ERROR_STREAM_CAPTURE_UNJOINED, 904) \
    K(CUDA_ERROR_STREAM_CAPTURE_ISOLATION, 905) \
    K(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, 906) \
    K(CUDA_ERROR_CAPTURED_EVENT, 907) \
    K(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, 908) \
    K(CUDA_ERROR_UNKNOWN, 999)

#define CC_CUDA_ENUM_CUmemAllocationHandleType(K) \
    K(CU_MEM_HANDLE_TYPE_NONE, 0)

#define CC_CUDA_ENUM_CUmemAccess_flags(K) \
    K(CU_MEM_ACCESS_FLAGS_PROT_READWRITE, 3)

#define CC_CUDA_ENUM_CUmemLocationType(K) \
    K(CU_MEM_LOCATION_TYPE_DEVICE, 1) \
    K(CU_MEM_LOCATION_TYPE_HOST, 2)

#define CC_CUDA_ENUM_CUmem_advise(K) \
    K(CU_MEM_ADVISE_SET_READ_MOSTLY, 1) \
    K(CU_MEM_ADVISE_UNSET_READ_MOSTLY, 2) \
    K(CU_MEM_ADVISE_SET_PREFERRED_LOCATION, 3) \
    K(CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION, 4) \
    K(CU_MEM_ADVISE_SET_ACCESSED_BY, 5) \
    K(CU_MEM_ADVISE_UNSET_ACCESSED_BY, 6)

#define CC_CUDA_ENUM_CUmemAllocationType(K) \
    K(CU_MEM_ALLOCATION_TYPE_PINNED, 1)

#define CC_CUDA_ENUM_CUmemAllocationGranularity_flags(K) \
    K(CU_MEM_ALLOC_GRANULARITY_MINIMUM, 0)

#define CC_CUDA_ENUM_CUmemPool_attribute(K) \
    K(CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, 1) \
    K(CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, 2) \
    K(CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES, 3) \
    K(CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, 4) \
    K(CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, 5) \
    K(CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, 6) \
    K(CU_MEMPOOL_ATTR_USED_MEM_CURRENT, 7) \
    K(CU_MEMPOOL_ATTR_USED_MEM_HIGH, 8)

#define CC_CUDA_ENUM_CUgraphMem_attribute(K) \
    K(CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, 0) \
    K(CU_GRAPH_MEM_ATTR_USED_MEM_HIGH, 1) \
    K(CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT, 2) \
    K(CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH, 3)

#define CC_CUDA_ENUM_CUgraphInstantiate_flags(K) \
    K(CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD, 2)

#define CC_CUDA_MEMBERS_CUuuid(M, N, P) \
    M(char, bytes, [16])

#define CC_CUDA_MEMBERS_CUaccessPolicyWindow_v1(M, N, P) \
    M(void *, base_ptr, ) \
    M(size_t, num_bytes, ) \
    M(float, hitRatio, ) \
    M(CUaccessProperty, hitProp, ) \
    M(CUaccessProperty, missProp, )

#define CC_CUDA_MEMBERS_CUDA_KERNEL_NODE_PARAMS_v1(M, N, P) \
    M(CUfunction, func, ) \
    M(unsigned int, gridDimX, ) \
    M(unsigned int, gridDimY, ) \
    M(unsigned int, gridDimZ, ) \
    M(unsigned int, blockDimX, ) \
    M(unsigned int, blockDimY, ) \
    M(unsigned int, blockDimZ, ) \
    M(unsigned int, sharedMemBytes, ) \
    M(void **, kernelParams, ) \
    M(void **, extra, )

#define CC_CUDA_MEMBERS_CUDA_KERNEL_NODE_PARAMS_v2(M, N, P) \
    M(CUfunction, func, ) \
    M(unsigned int, gridDimX, ) \
    M(unsigned int, gridDimY, ) \
    M(unsigned int, gridDimZ, ) \
    M(unsigned int, blockDimX, ) \
    M(unsigned int, blockDimY, ) \
    M(unsigned int, blockDimZ, ) \
    M(unsigned int, sharedMemBytes, ) \
    M(void **, kernelParams, ) \
    M(void **, extra, ) \
    M(CUkernel, kern, ) \
    M(CUcontext, ctx, )

#define CC_CUDA_MEMBERS_CUgraphEdgeData(M, N, P) \
    M(unsigned char, from_port, ) \
    M(unsigned char, to_port, ) \
    M(unsigned char, type, ) \
    M(unsigned char, reserved, [5])

#define CC_CUDA_MEMBERS_CUDA_GRAPH_INSTANTIATE_PARAMS(M, N, P) \
    M(cuuint64_t, flags, ) \
    M(CUstream, hUploadStream, ) \
    M(CUgraphNode, hErrNode_out, ) \
    M(CUgraphInstantiateResult, result_out, )

#define CC_CUDA_MEMBERS_CUlaunchMemSyncDomainMap(M, N, P) \
    M(unsigned char, default_, ) \
    M(unsigned char, remote, )

#define CC_CUDA_MEMBERS_CUlaunchAttributeValue(M, N, P) \
    M(char, pad, [64]) \
    M(CUaccessPolicyWindow, accessPolicyWindow, ) \
    M(int, cooperative, ) \
    M(CUsynchronizationPolicy, syncPolicy, ) \
    N(struct { unsigned int x; unsigned int y; unsigned int z; }, clusterDim, ) \
    P(clusterDim.x) \
    P(clusterDim.y) \
    P(clusterDim.z) \
    M(CUclusterSchedulingPolicy, clusterSchedulingPolicyPreference, ) \
    M(int, programmaticStreamSerializationAllowed, ) \
    N(struct { CUevent event; int flags; int triggerAtBlockStart; }, programmaticEvent, ) \
    P(programmaticEvent.event) \
    P(programmaticEvent.flags) \
    P(programmaticEvent.triggerAtBlockStart) \
    N(struct { CUevent event; int flags; }, launchCompletionEvent, ) \
    P(launchCompletionEvent.event) \
    P(launchCompletionEvent.flags) \
    M(int, priority, ) \
    M(CUlaunchMemSyncDomainMap, memSyncDomainMap, ) \
    M(CUlaunchMemSyncDomain, memSyncDomain, ) \
    N(struct { unsigned int x; unsigned int y; unsigned int z; }, preferredClusterDim, ) \
    P(preferredClusterDim.x) \
    P(preferredClusterDim.y) \
    P(preferredClusterDim.z) \
    N(struct { int deviceUpdatable; CUgraphDeviceNode devNode; }, deviceUpdatableKernelNode, ) \
    P(deviceUpdatableKernelNode.deviceUpdatable) \
    P(deviceUpdatableKernelNode.devNode) \
    M(unsigned int, sharedMemCarveout, ) \
    M(unsigned int, nvlinkUtilCentricScheduling, )

#define CC_CUDA_MEMBERS_CUlaunchAttribute(M, N, P) \
    M(CUlaunchAttributeID, id, ) \
    M(char, pad, [8 - (sizeof(CUlaunchAttributeID))]) \
    M(CUlaunchAttributeValue, value, )

#define CC_CUDA_MEMBERS_CUlaunchConfig(M, N, P) \
    M(unsigned int, gridDimX, ) \
    M(unsigned int, gridDimY, ) \
    M(unsigned int, gridDimZ, ) \
    M(unsigned int, blockDimX, ) \
    M(unsigned int, blockDimY, ) \
    M(unsigned int, blockDimZ, ) \
    M(unsigned int, sharedMemBytes, ) \
    M(CUstream, hStream, ) \
    M(CUlaunchAttribute *, attrs, ) \
    M(unsigned int, numAttrs, )

#define CC_CUDA_MEMBERS_CUexecAffinitySmCount_v1(M, N, P) \
    M(unsigned int, val, )

#define CC_CUDA_MEMBERS_CUexecAffinityParam_v1(M, N, P) \
    M(CUexecAffinityType, type, ) \
    N(union { CUexecAffinitySmCount smCount; }, param, ) \
    P(param.smCount)

#define CC_CUDA_MEMBERS_CUctxCigParam(M, N, P) \
    M(CUcigDataType, sharedDataType, ) \
    M(void *, sharedData, )

#define CC_CUDA_MEMBERS_CUctxCreateParams(M, N, P) \
    M(CUexecAffinityParam *, execAffinityParams, ) \
    M(int, numExecAffinityParams, ) \
    M(CUctxCigParam *, cigParams, )

#define CC_CUDA_MEMBERS_CUDA_ARRAY_DESCRIPTOR_v2(M, N, P) \
    M(size_t, Width, ) \
    M(size_t, Height, ) \
    M(CUarray_format, Format, ) \
    M(unsigned int, NumChannels, )

#define CC_CUDA_MEMBERS_CUDA_ARRAY3D_DESCRIPTOR_v2(M, N, P) \
    M(size_t, Width, ) \
    M(size_t, Height, ) \
    M(size_t, Depth, ) \
    M(CUarray_format, Format, ) \
    M(unsigned int, NumChannels, ) \
    M(unsigned int, Flags, )

#define CC_CUDA_MEMBERS_CUDA_ARRAY_MEMORY_REQUIREMENTS_v1(M, N, P) \
    M(size_t, size, ) \
    M(size_t, alignment, ) \
    M(unsigned int, reserved, [4])

#define CC_CUDA_MEMBERS_CUDA_LAUNCH_PARAMS_v1(M, N, P) \
    M(CUfunction, function, ) \
    M(unsigned int, gridDimX, ) \
    M(unsigned int, gridDimY, ) \
    M(unsigned int, gridDimZ, ) \
    M(unsigned int, blockDimX, ) \
    M(unsigned int, blockDimY, ) \
    M(unsigned int, blockDimZ, ) \
    M(unsigned int, sharedMemBytes, ) \
    M(CUstream, hStream, ) \
    M(void **, kernelParams, )

#define CC_CUDA_MEMBERS_CUmemLocation_v1(M, N, P) \
    M(CUmemLocationType, type, ) \
    M(int, id, )

#define CC_CUDA_MEMBERS_CUmemAllocationProp_v1(M, N, P) \
    M(CUmemAllocationType, type, ) \
    M(CUmemAllocationHandleType, requestedHandleTypes, ) \
    M(CUmemLocation, location, ) \
    M(void *, win32HandleMetaData, ) \
    N(struct { unsigned char compressionType; unsigned char gpuDirectRDMACapable; unsigned short usage; unsigned char reserved[4]; }, allocFlags, ) \
    P(allocFlags.compressionType) \
    P(allocFlags.gpuDirectRDMACapable) \
    P(allocFlags.usage) \
    P(allocFlags.reserved)

#define CC_CUDA_MEMBERS_CUmemAccessDesc_v1(M, N, P) \
    M(CUmemLocation, location, ) \
    M(CUmemAccess_flags, flags, )

#define CC_CUDA_MEMBERS_CUmemPoolProps_v1(M, N, P) \
    M(CUmemAllocationType, allocType, ) \
    M(CUmemAllocationHandleType, handleTypes, ) \
    M(CUmemLocation, location, ) \
    M(void *, win32SecurityAttributes, ) \
    M(size_t, maxSize, ) \
    M(unsigned short, usage, ) \
    M(unsigned char, reserved, [54])

#define CC_CUDA_MEMBERS_CUDA_MEM_ALLOC_NODE_PARAMS_v1(M, N, P) \
    M(CUmemPoolProps, poolProps, ) \
    M(const CUmemAccessDesc *, accessDescs, ) \
    M(size_t, accessDescCount, ) \
    M(size_t, bytesize, ) \
    M(CUdeviceptr, dptr, )

#define CC_CUDA_FUNCTIONS(F) \
    F(CUresult, cuArray3DCreate_v2, (CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *pAllocateArray)) \
    F(CUresult, cuArray3DGetDescriptor_v2, (CUDA_ARRAY3D_DESCRIPTOR *pArrayDescriptor, CUarray hArray)) \
    F(CUresult, cuArrayCreate_v2, (CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *pAllocateArray)) \
    F(CUresult, cuArrayDestroy, (CUarray hArray)) \
    F(CUresult, cuArrayGetDescriptor_v2, (CUDA_ARRAY_DESCRIPTOR *pArrayDescriptor, CUarray hArray)) \
    F(CUresult, cuArrayGetMemoryRequirements, (CUDA_ARRAY_MEMORY_REQUIREMENTS *memoryRequirements, CUarray array, CUdevice device)) \
    F(CUresult, cuCtxCreate_v2, (CUcontext *pctx, unsigned int flags, CUdevice dev)) \
    F(CUresult, cuCtxCreate_v3, (CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams, unsigned int flags, CUdevice dev)) \
    F(CUresult, cuCtxCreate_v4, (CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags, CUdevice dev)) \
    F(CUresult, cuCtxDestroy_v2, (CUcontext ctx)) \
    F(CUresult, cuCtxGetApiVersion, (CUcontext ctx, unsigned int *version)) \
    F(CUresult, cuCtxGetCurrent, (CUcontext *pctx)) \
    F(CUresult, cuCtxGetDevice, (CUdevice *device)) \
    F(CUresult, cuCtxGetFlags, (unsigned int *flags)) \
    F(CUresult, cuCtxGetLimit, (size_t *pvalue, CUlimit limit)) \
    F(CUresult, cuCtxGetStreamPriorityRange, (int *leastPriority, int *greatestPriority)) \
    F(CUresult, cuCtxPopCurrent_v2, (CUcontext *pctx)) \
    F(CUresult, cuCtxPushCurrent_v2, (CUcontext ctx)) \
    F(CUresult, cuCtxSetCurrent, (CUcontext ctx)) \
    F(CUresult, cuCtxSetLimit, (CUlimit limit, size_t value)) \
    F(CUresult, cuCtxSynchronize, (void)) \
    F(CUresult, cuDeviceGet, (CUdevice *device, int ordinal)) \
    F(CUresult, cuDeviceGetAttribute, (int *pi, CUdevice_attribute attrib, CUdevice dev)) \
    F(CUresult, cuDeviceGetCount, (int *count)) \
    F(CUresult, cuDeviceGetDefaultMemPool, (CUmemoryPool *pool_out, CUdevice dev)) \
    F(CUresult, cuDeviceGetGraphMemAttribute, (CUdevice device, CUgraphMem_attribute attr, void *value)) \
    F(CUresult, cuDeviceGetMemPool, (CUmemoryPool *pool, CUdevice dev)) \
    F(CUresult, cuDeviceGetName, (char *name, int len, CUdevice dev)) \
    F(CUresult, cuDeviceGetPCIBusId, (char *pciBusId, int len, CUdevice dev)) \
    F(CUresult, cuDeviceGetUuid, (CUuuid *uuid, CUdevice dev)) \
    F(CUresult, cuDeviceGetUuid_v2, (CUuuid *uuid, CUdevice dev)) \
    F(CUresult, cuDeviceGraphMemTrim, (CUdevice device)) \
    F(CUresult, cuDevicePrimaryCtxGetState, (CUdevice dev, unsigned int *flags, int *active)) \
    F(CUresult, cuDevicePrimaryCtxRelease, (CUdevice dev)) \
    F(CUresult, cuDevicePrimaryCtxRelease_v2, (CUdevice dev)) \
    F(CUresult, cuDevicePrimaryCtxReset, (CUdevice dev)) \
    F(CUresult, cuDevicePrimaryCtxReset_v2, (CUdevice dev)) \
    F(CUresult, cuDevicePrimaryCtxRetain, (CUcontext *pctx, CUdevice dev)) \
    F(CUresult, cuDevicePrimaryCtxSetFlags, (CUdevice dev, unsigned int flags)) \
    F(CUresult, cuDevicePrimaryCtxSetFlags_v2, (CUdevice dev, unsigned int flags)) \
    F(CUresult, cuDeviceSetGraphMemAttribute, (CUdevice device, CUgraphMem_attribute attr, void *value)) \
    F(CUresult, cuDeviceSetMemPool, (CUdevice dev, CUmemoryPool pool)) \
    F(CUresult, cuDeviceTotalMem_v2, (size_t *bytes, CUdevice dev)) \
    F(CUresult, cuDriverGetVersion, (int *driverVersion)) \
    F(CUresult, cuEventCreate, (CUevent *phEvent, unsigned int Flags)) \
    F(CUresult, cuEventDestroy, (CUevent hEvent)) \
    F(CUresult, cuEventDestroy_v2, (CUevent hEvent)) \
    F(CUresult, cuEventElapsedTime, (float *pMilliseconds, CUevent hStart, CUevent hEnd)) \
    F(CUresult, cuEventElapsedTime_v2, (float *pMilliseconds, CUevent hStart, CUevent hEnd)) \
    F(CUresult, cuEventQuery, (CUevent hEvent)) \
    F(CUresult, cuEventRecord, (CUevent hEvent, CUstream hStream)) \
    F(CUresult, cuEventRecordWithFlags, (CUevent hEvent, CUstream hStream, unsigned int flags)) \
    F(CUresult, cuEventRecordWithFlags_ptsz, (CUevent hEvent, CUstream hStream, unsigned int flags)) \
    F(CUresult, cuEventRecord_ptsz, (CUevent hEvent, CUstream hStream)) \
    F(CUresult, cuEventSynchronize, (CUevent hEvent)) \
    F(CUresult, cuFuncGetAttribute, (int *pi, CUfunction_attribute attrib, CUfunction hfunc)) \
    F(CUresult, cuFuncGetName, (const char **name, CUfunction hfunc)) \
    F(CUresult, cuFuncSetAttribute, (CUfunction hfunc, CUfunction_attribute attrib, int value)) \
    F(CUresult, cuFuncSetBlockShape, (CUfunction hfunc, int x, int y, int z)) \
    F(CUresult, cuGetErrorName, (CUresult error, const char **pStr)) \
    F(CUresult, cuGetErrorString, (CUresult error, const char **pStr)) \
    F(CUresult, cuGetProcAddress, (const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)) \
    F(CUresult, cuGetProcAddress_v2, (const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus)) \
    F(CUresult, cuGraphAddKernelNode, (CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies, size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams)) \
    F(CUresult, cuGraphAddKernelNode_v2, (CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies, size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS *nodeParams)) \
    F(CUresult, cuGraphAddMemAllocNode, (CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies, size_t numDependencies, CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams)) \
    F(CUresult, cuGraphAddMemFreeNode, (CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies, size_t numDependencies, CUdeviceptr dptr)) \
    F(CUresult, cuGraphChildGraphNodeGetGraph, (CUgraphNode hNode, CUgraph *phGraph)) \
    F(CUresult, cuGraphCreate, (CUgraph *phGraph, unsigned int flags)) \
    F(CUresult, cuGraphDestroy, (CUgraph hGraph)) \
    F(CUresult, cuGraphExecDestroy, (CUgraphExec hGraphExec)) \
    F(CUresult, cuGraphGetNodes, (CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes)) \
    F(CUresult, cuGraphInstantiateWithFlags, (CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags)) \
    F(CUresult, cuGraphInstantiateWithParams, (CUgraphExec *phGraphExec, CUgraph hGraph, CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)) \
    F(CUresult, cuGraphInstantiateWithParams_ptsz, (CUgraphExec *phGraphExec, CUgraph hGraph, CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)) \
    F(CUresult, cuGraphInstantiate_v2, (CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode, char *logBuffer, size_t bufferSize)) \
    F(CUresult, cuGraphKernelNodeGetParams_v2, (CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS *nodeParams)) \
    F(CUresult, cuGraphLaunch, (CUgraphExec hGraph, CUstream hStream)) \
    F(CUresult, cuGraphLaunch_ptsz, (CUgraphExec hGraphExec, CUstream hStream)) \
    F(CUresult, cuGraphMemAllocNodeGetParams, (CUgraphNode hNode, CUDA_MEM_ALLOC_NODE_PARAMS *params_out)) \
    F(CUresult, cuGraphMemFreeNodeGetParams, (CUgraphNode hNode, CUdeviceptr *dptr_out)) \
    F(CUresult, cuGraphNodeGetType, (CUgraphNode hNode, CUgraphNodeType *type)) \
    F(CUresult, cuGraphUpload, (CUgraphExec hGraph, CUstream hStream)) \
    F(CUresult, cuGraphUpload_ptsz, (CUgraphExec hGraphExec, CUstream hStream)) \
    F(CUresult, cuInit, (unsigned int Flags)) \
    F(CUresult, cuKernelGetFunction, (CUfunction *pFunc, CUkernel kernel)) \
    F(CUresult, cuLaunch, (CUfunction f)) \
    F(CUresult, cuLaunchCooperativeKernel, (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream, void **kernelParams)) \
    F(CUresult, cuLaunchCooperativeKernelMultiDevice, (CUDA_LAUNCH_PARAMS *launchParamsList, unsigned int numDevices, unsigned int flags)) \
    F(CUresult, cuLaunchCooperativeKernel_ptsz, (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream, void **kernelParams)) \
    F(CUresult, cuLaunchGrid, (CUfunction f, int grid_width, int grid_height)) \
    F(CUresult, cuLaunchGridAsync, (CUfunction f, int grid_width, int grid_height, CUstream hStream)) \
    F(CUresult, cuLaunchHostFunc, (CUstream hStream, CUhostFn fn, void *userData)) \
    F(CUresult, cuLaunchHostFunc_ptsz, (CUstream hStream, CUhostFn fn, void *userData)) \
    F(CUresult, cuLaunchKernel, (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra)) \
    F(CUresult, cuLaunchKernelEx, (const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra)) \
    F(CUresult, cuLaunchKernelEx_ptsz, (const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra)) \
    F(CUresult, cuLaunchKernel_ptsz, (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra)) \
    F(CUresult, cuLibraryGetKernel, (CUkernel *pKernel, CUlibrary library, const char *name)) \
    F(CUresult, cuLibraryLoadData, (CUlibrary *library, const void *code, CUjit_option *jitOptions, void **jitOptionsValues, unsigned int numJitOptions, CUlibraryOption *libraryOptions, void **libraryOptionValues, unsigned int numLibraryOptions)) \
    F(CUresult, cuLibraryLoadFromFile, (CUlibrary *library, const char *fileName, CUjit_option *jitOptions, void **jitOptionsValues, unsigned int numJitOptions, CUlibraryOption *libraryOptions, void **libraryOptionValues, unsigned int numLibraryOptions)) \
    F(CUresult, cuLibraryUnload, (CUlibrary library)) \
    F(CUresult, cuMemAddressFree, (CUdeviceptr ptr, size_t size)) \
    F(CUresult, cuMemAddressReserve, (CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr, unsigned long long flags)) \
    F(CUresult, cuMemAllocAsync, (CUdeviceptr *dptr, size_t bytesize, CUstream hStream)) \
    F(CUresult, cuMemAllocAsync_ptsz, (CUdeviceptr *dptr, size_t bytesize, CUstream hStream)) \
    F(CUresult, cuMemAllocFromPoolAsync, (CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream)) \
    F(CUresult, cuMemAllocFromPoolAsync_ptsz, (CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream)) \
    F(CUresult, cuMemAllocHost_v2, (void **pp, size_t bytesize)) \
    F(CUresult, cuMemAdvise_v2, (CUdeviceptr devPtr, size_t count, CUmem_advise advice, CUmemLocation location)) \
    F(CUresult, cuMemAllocManaged, (CUdeviceptr *dptr, size_t bytesize, unsigned int flags)) \
    F(CUresult, cuMemAllocPitch_v2, (CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes, size_t Height, unsigned int ElementSizeBytes)) \
    F(CUresult, cuMemAlloc_v2, (CUdeviceptr *dptr, size_t bytesize)) \
    F(CUresult, cuMemCreate, (CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop, unsigned long long flags)) \
    F(CUresult, cuMemFreeAsync, (CUdeviceptr dptr, CUstream hStream)) \
    F(CUresult, cuMemFreeAsync_ptsz, (CUdeviceptr dptr, CUstream hStream)) \
    F(CUresult, cuMemFreeHost, (void *p)) \
    F(CUresult, cuMemFree_v2, (CUdeviceptr dptr)) \
    F(CUresult, cuMemGetAddressRange_v2, (CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)) \
    F(CUresult, cuMemGetAllocationGranularity, (size_t *granularity, const CUmemAllocationProp *prop, CUmemAllocationGranularity_flags option)) \
    F(CUresult, cuMemGetAllocationPropertiesFromHandle, (CUmemAllocationProp *prop, CUmemGenericAllocationHandle handle)) \
    F(CUresult, cuMemGetInfo_v2, (size_t *free, size_t *total)) \
    F(CUresult, cuMemPrefetchAsync_v2, (CUdeviceptr devPtr, size_t count, CUmemLocation location, unsigned int flags, CUstream hStream)) \
    F(CUresult, cuMemPrefetchAsync_v2_ptsz, (CUdeviceptr devPtr, size_t count, CUmemLocation location, unsigned int flags, CUstream hStream)) \
    F(CUresult, cuMemHostAlloc, (void **pp, size_t bytesize, unsigned int Flags)) \
    F(CUresult, cuMemHostGetDevicePointer_v2, (CUdeviceptr *pdptr, void *p, unsigned int Flags)) \
    F(CUresult, cuMemMap, (CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle, unsigned long long flags)) \
    F(CUresult, cuMemPoolCreate, (CUmemoryPool *pool, const CUmemPoolProps *poolProps)) \
    F(CUresult, cuMemPoolDestroy, (CUmemoryPool pool)) \
    F(CUresult, cuMemPoolGetAttribute, (CUmemoryPool pool, CUmemPool_attribute attr, void *value)) \
    F(CUresult, cuMemPoolSetAttribute, (CUmemoryPool pool, CUmemPool_attribute attr, void *value)) \
    F(CUresult, cuMemPoolTrimTo, (CUmemoryPool pool, size_t minBytesToKeep)) \
    F(CUresult, cuMemRelease, (CUmemGenericAllocationHandle handle)) \
    F(CUresult, cuMemRetainAllocationHandle, (CUmemGenericAllocationHandle *handle, void *addr)) \
    F(CUresult, cuMemSetAccess, (CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)) \
    F(CUresult, cuMemUnmap, (CUdeviceptr ptr, size_t size)) \
    F(CUresult, cuMemcpy, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)) \
    F(CUresult, cuMemcpyAsync, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream)) \
    F(CUresult, cuMemcpyAsync_ptsz, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream)) \
    F(CUresult, cuMemcpyDtoDAsync_v2, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)) \
    F(CUresult, cuMemcpyDtoDAsync_v2_ptsz, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)) \
    F(CUresult, cuMemcpyDtoD_v2, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)) \
    F(CUresult, cuMemcpyDtoD_v2_ptds, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)) \
    F(CUresult, cuMemcpyDtoHAsync_v2, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)) \
    F(CUresult, cuMemcpyDtoHAsync_v2_ptsz, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)) \
    F(CUresult, cuMemcpyDtoH_v2, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)) \
    F(CUresult, cuMemcpyDtoH_v2_ptds, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)) \
    F(CUresult, cuMemcpyHtoDAsync_v2, (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream)) \
    F(CUresult, cuMemcpyHtoDAsync_v2_ptsz, (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream)) \
    F(CUresult, cuMemcpyHtoD_v2, (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)) \
    F(CUresult, cuMemcpyHtoD_v2_ptds, (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)) \
    F(CUresult, cuMemcpy_ptds, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)) \
    F(CUresult, cuMemsetD16Async, (CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream)) \
    F(CUresult, cuMemsetD16Async_ptsz, (CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream)) \
    F(CUresult, cuMemsetD16_v2, (CUdeviceptr dstDevice, unsigned short us, size_t N)) \
    F(CUresult, cuMemsetD16_v2_ptds, (CUdeviceptr dstDevice, unsigned short us, size_t N)) \
    F(CUresult, cuMemsetD32Async, (CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream)) \
    F(CUresult, cuMemsetD32Async_ptsz, (CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream)) \
    F(CUresult, cuMemsetD32_v2, (CUdeviceptr dstDevice, unsigned int ui, size_t N)) \
    F(CUresult, cuMemsetD32_v2_ptds, (CUdeviceptr dstDevice, unsigned int ui, size_t N)) \
    F(CUresult, cuMemsetD8Async, (CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream)) \
    F(CUresult, cuMemsetD8Async_ptsz, (CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream)) \
    F(CUresult, cuMemsetD8_v2, (CUdeviceptr dstDevice, unsigned char uc, size_t N)) \
    F(CUresult, cuMemsetD8_v2_ptds, (CUdeviceptr dstDevice, unsigned char uc, size_t N)) \
    F(CUresult, cuMipmappedArrayCreate, (CUmipmappedArray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *pMipmappedArrayDesc, unsigned int numMipmapLevels)) \
    F(CUresult, cuMipmappedArrayDestroy, (CUmipmappedArray hMipmappedArray)) \
    F(CUresult, cuMipmappedArrayGetLevel, (CUarray *pLevelArray, CUmipmappedArray hMipmappedArray, unsigned int level)) \
    F(CUresult, cuMipmappedArrayGetMemoryRequirements, (CUDA_ARRAY_MEMORY_REQUIREMENTS *memoryRequirements, CUmipmappedArray mipmap, CUdevice device)) \
    F(CUresult, cuModuleGetFunction, (CUfunction *hfunc, CUmodule hmod, const char *name)) \
    F(CUresult, cuModuleLoad, (CUmodule *module, const char *fname)) \
    F(CUresult, cuModuleLoadData, (CUmodule *module, const void *image)) \
    F(CUresult, cuModuleLoadDataEx, (CUmodule *module, const void *image, unsigned int numOptions, CUjit_option *options, void **optionValues)) \
    F(CUresult, cuModuleLoadFatBinary, (CUmodule *module, const void *fatCubin)) \
    F(CUresult, cuModuleUnload, (CUmodule hmod)) \
    F(CUresult, cuOccupancyMaxActiveBlocksPerMultiprocessor, (int *numBlocks, CUfunction func, int blockSize, size_t dynamicSMemSize)) \
    F(CUresult, cuPointerGetAttribute, (void *data, CUpointer_attribute attribute, CUdeviceptr ptr)) \
    F(CUresult, cuStreamBeginCapture, (CUstream hStream)) \
    F(CUresult, cuStreamBeginCaptureToGraph, (CUstream hStream, CUgraph hGraph, const CUgraphNode *dependencies, const CUgraphEdgeData *dependencyData, size_t numDependencies, CUstreamCaptureMode mode)) \
    F(CUresult, cuStreamBeginCaptureToGraph_ptsz, (CUstream hStream, CUgraph hGraph, const CUgraphNode *dependencies, const CUgraphEdgeData *dependencyData, size_t numDependencies, CUstreamCaptureMode mode)) \
    F(CUresult, cuStreamBeginCapture_ptsz, (CUstream hStream)) \
    F(CUresult, cuStreamBeginCapture_v2, (CUstream hStream, CUstreamCaptureMode mode)) \
    F(CUresult, cuStreamBeginCapture_v2_ptsz, (CUstream hStream, CUstreamCaptureMode mode)) \
    F(CUresult, cuStreamCreate, (CUstream *phStream, unsigned int Flags)) \
    F(CUresult, cuStreamCreateWithPriority, (CUstream *phStream, unsigned int flags, int priority)) \
    F(CUresult, cuStreamDestroy, (CUstream hStream)) \
    F(CUresult, cuStreamDestroy_v2, (CUstream hStream)) \
    F(CUresult, cuStreamEndCapture, (CUstream hStream, CUgraph *phGraph)) \
    F(CUresult, cuStreamEndCapture_ptsz, (CUstream hStream, CUgraph *phGraph)) \
    F(CUresult, cuStreamGetCaptureInfo, (CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out)) \
    F(CUresult, cuStreamGetCaptureInfo_ptsz, (CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out)) \
    F(CUresult, cuStreamGetCaptureInfo_v2, (CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out, CUgraph *graph_out, const CUgraphNode **dependencies_out, size_t *numDependencies_out)) \
    F(CUresult, cuStreamGetCaptureInfo_v2_ptsz, (CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out, CUgraph *graph_out, const CUgraphNode **dependencies_out, size_t *numDependencies_out)) \
    F(CUresult, cuStreamGetCaptureInfo_v3, (CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out, CUgraph *graph_out, const CUgraphNode **dependencies_out, const CUgraphEdgeData **edgeData_out, size_t *numDependencies_out)) \
    F(CUresult, cuStreamGetCaptureInfo_v3_ptsz, (CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out, CUgraph *graph_out, const CUgraphNode **dependencies_out, const CUgraphEdgeData **edgeData_out, size_t *numDependencies_out)) \
    F(CUresult, cuStreamGetCtx, (CUstream hStream, CUcontext *pctx)) \
    F(CUresult, cuStreamGetCtx_ptsz, (CUstream hStream, CUcontext *pctx)) \
    F(CUresult, cuStreamGetDevice, (CUstream hStream, CUdevice *device)) \
    F(CUresult, cuStreamGetDevice_ptsz, (CUstream hStream, CUdevice *device)) \
    F(CUresult, cuStreamIsCapturing, (CUstream hStream, CUstreamCaptureStatus *captureStatus)) \
    F(CUresult, cuStreamIsCapturing_ptsz, (CUstream hStream, CUstreamCaptureStatus *captureStatus)) \
    F(CUresult, cuStreamQuery, (CUstream hStream)) \
    F(CUresult, cuStreamQuery_ptsz, (CUstream hStream)) \
    F(CUresult, cuStreamSynchronize, (CUstream hStream)) \
    F(CUresult, cuStreamSynchronize_ptsz, (CUstream hStream)) \
    F(CUresult, cuStreamWaitEvent, (CUstream hStream, CUevent hEvent, unsigned int Flags)) \
    F(CUresult, cuStreamWaitEvent_ptsz, (CUstream hStream, CUevent hEvent, unsigned int Flags)) \
    F(CUresult, cuThreadExchangeStreamCaptureMode, (CUstreamCaptureMode *mode))

#define CC_CUDA_CONSTANTS(D) \
    D(CU_STREAM_LEGACY) \
    D(CU_STREAM_PER_THREAD) \
    D(CUDA_ARRAY3D_LAYERED)

#define CC_CUDA_VERSIONED(V) \
    V(cuArray3DCreate) \
    V(cuArray3DGetDescriptor) \
    V(cuArrayCreate) \
    V(cuArrayGetDescriptor) \
    V(cuCtxCreate) \
    V(cuCtxDestroy) \
    V(cuCtxPopCurrent) \
    V(cuCtxPushCurrent) \
    V(cuDeviceGetUuid) \
    V(cuDevicePrimaryCtxRelease) \
    V(cuDevicePrimaryCtxReset) \
    V(cuDevicePrimaryCtxSetFlags) \
    V(cuDeviceTotalMem) \
    V(cuEventDestroy) \
    V(cuEventElapsedTime) \
    V(cuGetProcAddress) \
    V(cuGraphAddKernelNode) \
    V(cuGraphInstantiate) \
    V(cuGraphKernelNodeGetParams) \
    V(cuMemAdvise) \
    V(cuMemAlloc) \
    V(cuMemAllocHost) \
    V(cuMemAllocPitch) \
    V(cuMemFree) \
    V(cuMemGetAddressRange) \
    V(cuMemGetInfo) \
    V(cuMemHostGetDevicePointer) \
    V(cuMemPrefetchAsync) \
    V(cuMemcpyDtoD) \
    V(cuMemcpyDtoDAsync) \
    V(cuMemcpyDtoH) \
    V(cuMemcpyDtoHAsync) \
    V(cuMemcpyHtoD) \
    V(cuMemcpyHtoDAsync) \
    V(cuMemsetD16) \
    V(cuMemsetD32) \
    V(cuMemsetD8) \
    V(cuStreamBeginCapture) \
    V(cuStreamDestroy) \
    V(cuStreamGetCaptureInfo)

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
