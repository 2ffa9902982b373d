/* Virtual memory management and CUDA arrays.
 * VMM: cuMemCreate counts its size on the device of prop->location (device
 * locations only; host and host-NUMA handles are host memory). The physical
 * memory lives while any reference does: the create, each
 * cuMemRetainAllocationHandle, each cuMemMap. We count the bytes once and
 * give them back when the last reference goes (cuMemRelease / cuMemUnmap).
 * Arrays: the driver decides the layout, so we create, ask the driver what
 * it takes (cu*GetMemoryRequirements), and destroy + OOM if over the cap. */
#include "cap/memledger.h"
#include "common/log.h"
#include "hook.h"
#include "memory_acct.h"

static void vmm_unref(uint64_t handle)
{
    struct cc_at_val v;
    if (cc_at_ref(CC_AT_VMM, handle, -1, &v) == 1) cc_ml_release(v.h, v.bytes);
}

CC_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                               const CUmemAllocationProp *prop, unsigned long long flags)
{
    __typeof__(&cuMemCreate) real = CC_CUDA_REAL(cuMemCreate);
    if (!real) return cc_cuda_missing(CC_FN_cuMemCreate);
    const struct cc_mem_device *m = NULL;
    int o = -1;
    if (handle && prop && size && prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE) {
        o = prop->location.id;
        m = cc_mem_dev(o);
    }
    if (!m) return real(handle, size, prop, flags);
    if (cc_mem_reserve(m, o, size) != 0) return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r = real(handle, size, prop, flags);
    if (r != CUDA_SUCCESS) cc_ml_release(m->h, size);
    else cc_mem_track(CC_AT_VMM, *handle, m, size);
    return r;
}

CC_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
    __typeof__(&cuMemRelease) real = CC_CUDA_REAL(cuMemRelease);
    if (!real) return cc_cuda_missing(CC_FN_cuMemRelease);
    CUresult r = real(handle);
    if (r == CUDA_SUCCESS) vmm_unref(handle);
    return r;
}

CC_EXPORT CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr)
{
    __typeof__(&cuMemRetainAllocationHandle) real = CC_CUDA_REAL(cuMemRetainAllocationHandle);
    if (!real) return cc_cuda_missing(CC_FN_cuMemRetainAllocationHandle);
    CUresult r = real(handle, addr);
    if (r == CUDA_SUCCESS && handle) cc_at_ref(CC_AT_VMM, *handle, +1, NULL);
    return r;
}

CC_EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                            CUmemGenericAllocationHandle handle, unsigned long long flags)
{
    __typeof__(&cuMemMap) real = CC_CUDA_REAL(cuMemMap);
    if (!real) return cc_cuda_missing(CC_FN_cuMemMap);
    CUresult r = real(ptr, size, offset, handle, flags);
    if (r == CUDA_SUCCESS && cc_at_ref(CC_AT_VMM, handle, +1, NULL) == 0) {
        struct cc_at_val v = {.h = 0, .refs = 1, .bytes = size, .aux = handle};
        cc_at_put(CC_AT_MAP, ptr, &v);
    }
    return r;
}

CC_EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    __typeof__(&cuMemUnmap) real = CC_CUDA_REAL(cuMemUnmap);
    if (!real) return cc_cuda_missing(CC_FN_cuMemUnmap);
    CUresult r = real(ptr, size);
    if (r != CUDA_SUCCESS) return r;
    /* Every mapping we recorded inside [ptr, ptr + size). */
    for (CUdeviceptr p = ptr; p < ptr + size;) {
        struct cc_at_val v;
        if (!cc_at_take(CC_AT_MAP, p, &v) || v.bytes == 0) break;
        vmm_unref(v.aux);
        p += v.bytes;
    }
    return r;
}

/* ---- arrays ---- */

typedef CUresult (*req_fn)(CUDA_ARRAY_MEMORY_REQUIREMENTS *, void *, CUdevice);

/* Counts a freshly created array (or mipmapped array); on refusal destroys
 * it and returns OOM, leaving nothing changed. */
static CUresult settle(int kind, void *obj, const char *req_name, enum cc_fn destroy_id,
                       const struct cc_mem_device *m, int o)
{
    static req_fn reqs[2];
    int i = kind == CC_AT_MIPMAP;
    if (!reqs[i]) reqs[i] = (req_fn)cc_lib_sym(CC_LIB_CUDA, req_name);
    CUDA_ARRAY_MEMORY_REQUIREMENTS req = {0};
    if (!reqs[i] || reqs[i](&req, obj, (CUdevice)o) != CUDA_SUCCESS) {
        cc_log_once(CC_LOG_WARN, "memory cap: %s unavailable; arrays are not counted", req_name);
        return CUDA_SUCCESS;
    }
    if (cc_mem_reserve(m, o, req.size) != 0) {
        CUresult (*destroy)(void *) = (CUresult(*)(void *))cc_real[destroy_id];
        if (destroy) destroy(obj);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    cc_mem_track(kind, (uint64_t)(uintptr_t)obj, m, req.size);
    return CUDA_SUCCESS;
}

CC_EXPORT CUresult cuArrayCreate_v2(CUarray *h, const CUDA_ARRAY_DESCRIPTOR *d)
{
    __typeof__(&cuArrayCreate_v2) real = CC_CUDA_REAL(cuArrayCreate_v2);
    if (!real) return cc_cuda_missing(CC_FN_cuArrayCreate_v2);
    CUresult r = real(h, d);
    int o;
    const struct cc_mem_device *m = r == CUDA_SUCCESS && h ? cc_mem_here(&o) : NULL;
    return m ? settle(CC_AT_ARRAY, *h, "cuArrayGetMemoryRequirements", CC_FN_cuArrayDestroy, m,
                      o)
             : r;
}

CC_EXPORT CUresult cuArray3DCreate_v2(CUarray *h, const CUDA_ARRAY3D_DESCRIPTOR *d)
{
    __typeof__(&cuArray3DCreate_v2) real = CC_CUDA_REAL(cuArray3DCreate_v2);
    if (!real) return cc_cuda_missing(CC_FN_cuArray3DCreate_v2);
    CUresult r = real(h, d);
    int o;
    const struct cc_mem_device *m = r == CUDA_SUCCESS && h ? cc_mem_here(&o) : NULL;
    return m ? settle(CC_AT_ARRAY, *h, "cuArrayGetMemoryRequirements", CC_FN_cuArrayDestroy, m,
                      o)
             : r;
}

CC_EXPORT CUresult cuMipmappedArrayCreate(CUmipmappedArray *h, const CUDA_ARRAY3D_DESCRIPTOR *d,
                                          unsigned int levels)
{
    __typeof__(&cuMipmappedArrayCreate) real = CC_CUDA_REAL(cuMipmappedArrayCreate);
    if (!real) return cc_cuda_missing(CC_FN_cuMipmappedArrayCreate);
    CUresult r = real(h, d, levels);
    int o;
    const struct cc_mem_device *m = r == CUDA_SUCCESS && h ? cc_mem_here(&o) : NULL;
    return m ? settle(CC_AT_MIPMAP, *h, "cuMipmappedArrayGetMemoryRequirements",
                      CC_FN_cuMipmappedArrayDestroy, m, o)
             : r;
}

/* After the driver's destroy of what was taken from kind/key before it
 * (had, v): gives the bytes back on success, puts the entry back if the
 * driver refused. Passes the driver's result on. */
static CUresult destroyed(int kind, uint64_t key, int had, const struct cc_at_val *v, CUresult r)
{
    if (had) {
        if (r == CUDA_SUCCESS) cc_ml_release(v->h, v->bytes);
        else cc_at_put(kind, key, v);
    }
    return r;
}

CC_EXPORT CUresult cuArrayDestroy(CUarray obj)
{
    __typeof__(&cuArrayDestroy) real = CC_CUDA_REAL(cuArrayDestroy);
    if (!real) return cc_cuda_missing(CC_FN_cuArrayDestroy);
    uint64_t key = (uint64_t)(uintptr_t)obj;
    struct cc_at_val v;
    int had = cc_at_take(CC_AT_ARRAY, key, &v);
    return destroyed(CC_AT_ARRAY, key, had, &v, real(obj));
}

CC_EXPORT CUresult cuMipmappedArrayDestroy(CUmipmappedArray obj)
{
    __typeof__(&cuMipmappedArrayDestroy) real = CC_CUDA_REAL(cuMipmappedArrayDestroy);
    if (!real) return cc_cuda_missing(CC_FN_cuMipmappedArrayDestroy);
    uint64_t key = (uint64_t)(uintptr_t)obj;
    struct cc_at_val v;
    int had = cc_at_take(CC_AT_MIPMAP, key, &v);
    return destroyed(CC_AT_MIPMAP, key, had, &v, real(obj));
}
