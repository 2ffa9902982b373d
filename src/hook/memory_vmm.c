/* Virtual memory management and CUDA arrays.
 * VMM: cuMemCreate counts its size on the device of prop->location (device
 * locations only; host and host-NUMA handles are host memory). The physical
 * memory lives while any reference does: the create, each
 * cuMemRetainAllocationHandle, each cuMemMap. We count the bytes once and
 * give them back when the last reference goes (cuMemRelease / cuMemUnmap).
 * Arrays: the driver decides the layout, so we create, ask the driver what
 * it takes (cu*GetMemoryRequirements), and destroy + OOM if over the cap. */
#include "cap/memledger.h"
#include "common/controls.h"
#include "common/log.h"
#include "hook.h"
#include "memory_track.h"

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

/* The bytes an array of this shape holds at least: its elements times the
 * element size, for the formats whose size the descriptor states (8, 16
 * and 32-bit integers, half, float, and the normalized X1/X2/X4 ones); 0
 * for the rest (packed, planar, block-compressed), and on overflow. A lower
 * bound, so admitting it before the creation never refuses an array that
 * fits; the driver's own size settles it after. Admitted before: created
 * first and checked after, 8 racing processes passed a 4 GiB cap by up to
 * 260 MiB while the refused arrays existed. */
static uint64_t array_floor(const CUDA_ARRAY3D_DESCRIPTOR *d)
{
    uint64_t e;
    switch ((int)d->Format) {
    case CU_AD_FORMAT_UNSIGNED_INT8: case CU_AD_FORMAT_SIGNED_INT8:
    case CU_AD_FORMAT_UNORM_INT8X1: case CU_AD_FORMAT_SNORM_INT8X1: e = 1; break;
    case CU_AD_FORMAT_UNSIGNED_INT16: case CU_AD_FORMAT_SIGNED_INT16: case CU_AD_FORMAT_HALF:
    case CU_AD_FORMAT_UNORM_INT8X2: case CU_AD_FORMAT_SNORM_INT8X2:
    case CU_AD_FORMAT_UNORM_INT16X1: case CU_AD_FORMAT_SNORM_INT16X1: e = 2; break;
    case CU_AD_FORMAT_UNSIGNED_INT32: case CU_AD_FORMAT_SIGNED_INT32: case CU_AD_FORMAT_FLOAT:
    case CU_AD_FORMAT_UNORM_INT8X4: case CU_AD_FORMAT_SNORM_INT8X4:
    case CU_AD_FORMAT_UNORM_INT16X2: case CU_AD_FORMAT_SNORM_INT16X2: e = 4; break;
    case CU_AD_FORMAT_UNORM_INT16X4: case CU_AD_FORMAT_SNORM_INT16X4: e = 8; break;
    default: return 0;
    }
    uint64_t dims[4] = {d->Width, d->Height ? d->Height : 1, d->Depth ? d->Depth : 1,
                        d->NumChannels >= 1 && d->NumChannels <= 4 ? d->NumChannels : 1};
    for (int i = 0; i < 4; i++) {
        if (dims[i] && e > UINT64_MAX / dims[i]) return 0;
        e *= dims[i];
    }
    return e;
}

/* Counts a freshly created array (or mipmapped array) whose pre bytes
 * (array_floor) were admitted before its creation: settles them to the
 * driver's size. On refusal destroys it and returns OOM, leaving nothing
 * changed. */
static CUresult settle(int kind, void *obj, const char *req_name, enum cc_fn destroy_id,
                       const struct cc_mem_device *m, int o, uint64_t pre)
{
    static req_fn reqs[2];
    int i = kind == CC_AT_MIPMAP;
    if (!reqs[i]) reqs[i] = (req_fn)cc_lib_sym(CC_LIB_CUDA, req_name);
    CUDA_ARRAY_MEMORY_REQUIREMENTS req = {0};
    if (!reqs[i] || reqs[i](&req, obj, (CUdevice)o) != CUDA_SUCCESS) {
        cc_log_once(CC_LOG_WARN, "memory cap: %s unavailable; arrays are counted by their "
                                 "elements only", req_name);
        req.size = pre;
    }
    if (req.size > pre && cc_mem_reserve(m, o, req.size - pre) != 0) {
        CUresult (*destroy)(void *) = (CUresult(*)(void *))cc_real[destroy_id];
        if (destroy) destroy(obj);
        if (pre) cc_ml_release(m->h, pre);
        /* The refusal re-measured the overhead while the array existed
         * (NVML counted it, we did not): measured again, without it, before
         * the next allocation, or its size stays counted as overhead. */
        cc_mem_overhead_stale(o);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (req.size < pre) cc_ml_release(m->h, pre - req.size);
    if (req.size) cc_mem_track(kind, (uint64_t)(uintptr_t)obj, m, req.size);
    return CUDA_SUCCESS;
}

/* One array creation: admitted before (array_floor), settled after. */
struct array_adm {
    const struct cc_mem_device *m; /* NULL: the device is not capped */
    int o;
    uint64_t pre; /* admitted before the creation */
};

/* What is admitted before the creation (0: nothing, all is settled after). */
static uint64_t CC_CONTROL_POINT(array_pre)(const struct array_adm *a, const CUDA_ARRAY3D_DESCRIPTOR *d)
{
    return a->m && d ? array_floor(d) : 0;
}

/* 0, or -1: the floor alone does not fit (nothing created). */
static int array_admit(struct array_adm *a, int have_out, const CUDA_ARRAY3D_DESCRIPTOR *d)
{
    a->o = -1;
    a->m = have_out ? cc_mem_here(&a->o) : NULL;
    a->pre = array_pre(a, d);
    return a->pre && cc_mem_reserve(a->m, a->o, a->pre) != 0 ? -1 : 0;
}

/* After the driver's creation (result r, the new object obj). */
static CUresult array_done(const struct array_adm *a, CUresult r, int kind, void *obj,
                           const char *req_name, enum cc_fn destroy_id)
{
    if (r != CUDA_SUCCESS || !a->m) {
        if (a->pre) cc_ml_release(a->m->h, a->pre);
        return r;
    }
    return settle(kind, obj, req_name, destroy_id, a->m, a->o, a->pre);
}

CC_EXPORT CUresult cuArrayCreate_v2(CUarray *h, const CUDA_ARRAY_DESCRIPTOR *d)
{
    __typeof__(&cuArrayCreate_v2) real = CC_CUDA_REAL(cuArrayCreate_v2);
    if (!real) return cc_cuda_missing(CC_FN_cuArrayCreate_v2);
    CUDA_ARRAY3D_DESCRIPTOR d3 = {0}, *p3 = NULL;
    if (d) {
        d3.Width = d->Width, d3.Height = d->Height, d3.Format = d->Format;
        d3.NumChannels = d->NumChannels, p3 = &d3;
    }
    struct array_adm a;
    if (array_admit(&a, h != NULL, p3) != 0) return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r = real(h, d);
    return array_done(&a, r, CC_AT_ARRAY, r == CUDA_SUCCESS ? *h : NULL,
                      "cuArrayGetMemoryRequirements", CC_FN_cuArrayDestroy);
}

CC_EXPORT CUresult cuArray3DCreate_v2(CUarray *h, const CUDA_ARRAY3D_DESCRIPTOR *d)
{
    __typeof__(&cuArray3DCreate_v2) real = CC_CUDA_REAL(cuArray3DCreate_v2);
    if (!real) return cc_cuda_missing(CC_FN_cuArray3DCreate_v2);
    struct array_adm a;
    if (array_admit(&a, h != NULL, d) != 0) return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r = real(h, d);
    return array_done(&a, r, CC_AT_ARRAY, r == CUDA_SUCCESS ? *h : NULL,
                      "cuArrayGetMemoryRequirements", CC_FN_cuArrayDestroy);
}

CC_EXPORT CUresult cuMipmappedArrayCreate(CUmipmappedArray *h, const CUDA_ARRAY3D_DESCRIPTOR *d,
                                          unsigned int levels)
{
    __typeof__(&cuMipmappedArrayCreate) real = CC_CUDA_REAL(cuMipmappedArrayCreate);
    if (!real) return cc_cuda_missing(CC_FN_cuMipmappedArrayCreate);
    struct array_adm a; /* the base level's elements: a lower bound of the whole chain */
    if (array_admit(&a, h != NULL, d) != 0) return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r = real(h, d, levels);
    return array_done(&a, r, CC_AT_MIPMAP, r == CUDA_SUCCESS ? *h : NULL,
                      "cuMipmappedArrayGetMemoryRequirements", CC_FN_cuMipmappedArrayDestroy);
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
