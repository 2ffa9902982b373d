/* Memory entry points: linear allocations (cuMemAlloc, pitch, managed), their
 * free, and what the user sees (cuMemGetInfo, cuDeviceTotalMem). Pools and
 * stream-ordered allocation: memory_pool.c; VMM and arrays: memory_vmm.c;
 * what goes beyond the cap into host memory: memory_over.c.
 *
 * Cost of a capped cuMemAlloc beyond the driver's: device lookup (a load on
 * one-device processes), the ledger reserve (an atomic add and a scan of the
 * container's slots), and one hash-map insert; the free: a hash-map take and
 * an atomic CAS. Uncapped devices pass straight through. */
#include "cap/memledger.h"
#include "cudacap/config.h"
#include "hook.h"
#include "memory_track.h"
#include "memory_graph.h"
#include "memory_over.h"

static inline __attribute__((always_inline)) CUresult alloc_linear(enum cc_fn id, CUdeviceptr *dptr, size_t bytes, unsigned flags)
{
    void *real = cc_cuda_real(id);
    if (__builtin_expect(!real, 0)) return cc_cuda_missing(id);
    int o;
    const struct cc_mem_device *m = cc_mem_here(&o);
    CUresult r;
#define CALL()                                                                 \
    (id == CC_FN_cuMemAllocManaged                                             \
         ? ((__typeof__(&cuMemAllocManaged))real)(dptr, bytes, flags)          \
         : ((__typeof__(&cuMemAlloc_v2))real)(dptr, bytes))
    if (!m || !dptr || bytes == 0) return CALL();
    if (cc_mem_reserve_or_over(m, o, bytes) != 0)
        return cc_mem_over(m) ? cc_mem_over_linear(m, o, dptr, bytes, id == CC_FN_cuMemAllocManaged ? flags : 0)
                       : CUDA_ERROR_OUT_OF_MEMORY;
    r = CALL();
#undef CALL
    if (r != CUDA_SUCCESS) cc_ml_release(m->h, bytes);
    else if (id == CC_FN_cuMemAllocManaged) cc_mem_track_managed(*dptr, m, o, bytes);
    else cc_mem_track(CC_AT_PTR, *dptr, m, bytes);
    return r;
}

CC_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytes)
{
    return alloc_linear(CC_FN_cuMemAlloc_v2, dptr, bytes, 0);
}

CC_EXPORT CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytes, unsigned int flags)
{
    return alloc_linear(CC_FN_cuMemAllocManaged, dptr, bytes, flags);
}

CC_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width,
                                      size_t height, unsigned int elem)
{
    __typeof__(&cuMemAllocPitch_v2) real = CC_CUDA_REAL(cuMemAllocPitch_v2);
    if (!real) return cc_cuda_missing(CC_FN_cuMemAllocPitch_v2);
    int o;
    const struct cc_mem_device *m = cc_mem_here(&o);
    if (!m || !dptr || !pitch || !width || !height) return real(dptr, pitch, width, height, elem);
    /* Reserve the likely size first (rows padded to 512 bytes), then settle
     * to what the driver chose: pitch * height. */
    uint64_t est = (((uint64_t)width + 511) & ~511ull) * height;
    if (cc_mem_reserve_or_over(m, o, est) != 0)
        return cc_mem_over(m) ? cc_mem_over_pitch(m, o, dptr, pitch, width, height, elem) : CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r = real(dptr, pitch, width, height, elem);
    if (r != CUDA_SUCCESS) {
        cc_ml_release(m->h, est);
        return r;
    }
    uint64_t got = (uint64_t)*pitch * height;
    if (got > est && cc_mem_reserve(m, o, got - est) != 0) {
        __typeof__(&cuMemFree_v2) fr = CC_REAL(cuMemFree_v2);
        if (fr) fr(*dptr);
        cc_ml_release(m->h, est);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (got < est) cc_ml_release(m->h, est - got);
    cc_mem_track(CC_AT_PTR, *dptr, m, got);
    return r;
}

CC_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr)
{
    __typeof__(&cuMemFree_v2) real = CC_CUDA_REAL(cuMemFree_v2);
    if (!real) return cc_cuda_missing(CC_FN_cuMemFree_v2);
    /* Take first so a concurrent allocation reusing the address cannot have
     * its entry taken; put back if the driver refuses the free. */
    struct cc_at_val v;
    int had = cc_at_take(CC_AT_PTR, dptr, &v);
    CUresult r = real(dptr);
    if (had) {
        if (r == CUDA_SUCCESS && v.aux == CC_AT_AUX_HOST) cc_ml_host_release(v.h, v.bytes);
        else if (r == CUDA_SUCCESS) cc_mem_untrack_linear(&v);
        else cc_at_put(CC_AT_PTR, dptr, &v);
    } else if (r == CUDA_SUCCESS) {
        cc_mem_graph_refresh(); /* a graph allocation (a load if none) */
    }
    return r;
}

CC_EXPORT CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes)
{
    __typeof__(&cuMemGetInfo_v2) real = CC_CUDA_REAL(cuMemGetInfo_v2);
    if (!real) return cc_cuda_missing(CC_FN_cuMemGetInfo_v2);
    CUresult r = real(free_bytes, total_bytes);
    int o;
    if (r != CUDA_SUCCESS || !free_bytes || !total_bytes || !cc_mem_here(&o)) return r;
    uint64_t f, t, u;
    cc_mem_info(o, *free_bytes, *total_bytes, &f, &t, &u);
    *free_bytes = (size_t)f;
    *total_bytes = (size_t)t;
    return r;
}

CC_EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    __typeof__(&cuDeviceTotalMem_v2) real = CC_CUDA_REAL(cuDeviceTotalMem_v2);
    if (!real) return cc_cuda_missing(CC_FN_cuDeviceTotalMem_v2);
    CUresult r = real(bytes, dev);
    if (r == CUDA_SUCCESS && bytes && dev >= 0 && dev < CC_MAX_DEVICES) {
        const struct cc_mem_device *m = cc_mem_dev((int)dev);
        if (m && cc_mem_cap(m) < *bytes) *bytes = (size_t)cc_mem_cap(m);
        if (m) *bytes += (size_t)cc_mem_over(m); /* the size the container sees */
    }
    return r;
}
