/* The CUDA driver API's types, enumerators and struct layouts as lists
 * (CC_CUDA_TYPES, CC_CUDA_ENUM_<name>, CC_CUDA_MEMBERS_<name>): NVIDIA's
 * ABI, written from its CUDA Driver API reference (CUDA 13.0). Macros only;
 * include/cudacap/cuda_api.h says what each list's entries mean, declares
 * from them, and is the header to include. */
#ifndef CUDACAP_CUDA_API_TYPES_H
#define CUDACAP_CUDA_API_TYPES_H

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

#endif
