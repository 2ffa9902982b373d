/* The CUDA driver API's entry points as lists (CC_CUDA_FUNCTIONS, the
 * constants CC_CUDA_CONSTANTS, the versioned names CC_CUDA_VERSIONED):
 * NVIDIA's ABI, written from its CUDA Driver API reference (CUDA 13.0).
 * Macros only; include/cudacap/cuda_api.h says what each list's entries
 * mean, declares from them, and is the header to include. */
#ifndef CUDACAP_CUDA_API_FUNCTIONS_H
#define CUDACAP_CUDA_API_FUNCTIONS_H

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

#endif
