/* Stream-ordered allocation and memory pools.
 *
 * Rule: a pool is charged what it RESERVES from the device (the driver's
 * CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), not what the application has
 * allocated from it: that is what the device has given up, and it is what
 * nvidia-smi shows. So cuMemFreeAsync changes nothing (the block returns to
 * the pool, at its point in stream order); the charge shrinks when the pool
 * does: cuMemPoolTrimTo, cuMemPoolDestroy, and the release at synchronize
 * above the release threshold, which we notice lazily (before refusing an
 * allocation, and in cuMemGetInfo/NVML queries) by re-reading the
 * attribute. An allocation that the pool cannot serve from idle memory
 * first reserves its size (rounded up to 2 MiB) against the cap; afterwards
 * the charge is settled to the pool's actual growth. */
#include <pthread.h>

#include "cap/memledger.h"
#include "common/controls.h"
#include "common/log.h"
#include "devices.h"
#include "hook.h"
#include "memory_track.h"

/* Recursive: an allocation holding it may refresh the pools before refusing. */
static pthread_mutex_t g_mu = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static __typeof__(&cuMemPoolGetAttribute) p_getattr;
static __typeof__(&cuDeviceGetMemPool) p_getpool;
static __typeof__(&cuDeviceGetDefaultMemPool) p_defpool;

static int syms(void)
{
    if (!p_getattr) p_getattr = cc_lib_sym(CC_LIB_CUDA, "cuMemPoolGetAttribute");
    if (!p_getpool) p_getpool = cc_lib_sym(CC_LIB_CUDA, "cuDeviceGetMemPool");
    if (!p_defpool) p_defpool = cc_lib_sym(CC_LIB_CUDA, "cuDeviceGetDefaultMemPool");
    return p_getattr && p_getpool;
}

/* The device whose default or current pool `pool` is (-1: none). */
static int CC_CONTROL_POINT(default_pool_device)(CUmemoryPool pool)
{
    int n = cc_devices_count();
    for (int d = 0; d < n; d++) {
        CUmemoryPool q;
        if (p_defpool && p_defpool(&q, (CUdevice)d) == CUDA_SUCCESS && q == pool) return d;
        if (p_getpool && p_getpool(&q, (CUdevice)d) == CUDA_SUCCESS && q == pool) return d;
    }
    return -1;
}

/* The device whose memory pool `pool` is: one we saw created (cuMemPoolCreate
 * names its location), else a device's default or current pool (those are
 * not created through us); -1 when none of these. The pool's device, not
 * the stream's, is where cuMemAllocFromPoolAsync's memory lives. */
static int pool_device(CUmemoryPool pool, struct cc_at_val *pv)
{
    if (cc_at_get(CC_AT_POOL, (uint64_t)(uintptr_t)pool, pv)) return (int)pv->aux;
    return default_pool_device(pool);
}

static uint64_t attr(CUmemoryPool p, CUmemPool_attribute a, uint64_t dflt)
{
    cuuint64_t v = 0;
    return p_getattr && p_getattr(p, a, &v) == CUDA_SUCCESS ? (uint64_t)v : dflt;
}

/* Settles pool p's charge to what it reserves now. g_mu held. */
static void settle_locked(CUmemoryPool p, const struct cc_mem_device *m, int o)
{
    struct cc_at_val v;
    uint64_t key = (uint64_t)(uintptr_t)p;
    uint64_t now = attr(p, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, UINT64_MAX);
    int have = cc_at_get(CC_AT_POOL, key, &v);
    if (now == UINT64_MAX) return;
    if (!have) {
        if (!m) return;
        v = (struct cc_at_val){.h = m->h, .refs = 1, .bytes = 0, .aux = (uint64_t)o};
    }
    if (now > v.bytes) cc_ml_charge(v.h, now - v.bytes);
    else if (now < v.bytes) cc_ml_release(v.h, v.bytes - now);
    v.bytes = now;
    cc_at_put(CC_AT_POOL, key, &v);
}

static void refresh_one(uint64_t key, struct cc_at_val *v, void *arg)
{
    (void)arg;
    uint64_t now = attr((CUmemoryPool)(uintptr_t)key, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT,
                        UINT64_MAX);
    if (now == UINT64_MAX || now >= v->bytes) return; /* growth is settled at allocation */
    cc_ml_release(v->h, v->bytes - now);
    v->bytes = now;
}

void cc_mem_pools_refresh(void)
{
    if (!syms()) return;
    pthread_mutex_lock(&g_mu);
    cc_at_each(CC_AT_POOL, refresh_one, NULL);
    pthread_mutex_unlock(&g_mu);
}

static CUresult alloc_async(enum cc_fn id, CUdeviceptr *dptr, size_t size, CUmemoryPool pool,
                            CUstream s)
{
    void *real = cc_cuda_real(id);
    if (!real) return cc_cuda_missing(id);
    int from_pool = id == CC_FN_cuMemAllocFromPoolAsync || id == CC_FN_cuMemAllocFromPoolAsync_ptsz;
#define CALL()                                                                              \
    (from_pool ? ((__typeof__(&cuMemAllocFromPoolAsync))real)(dptr, size, pool, s)          \
               : ((__typeof__(&cuMemAllocAsync))real)(dptr, size, s))
    /* Which device (docs/interception.md, "Which device"): the pool's for
     * an allocation from a pool, else the stream's (the driver takes it from
     * the current pool of the stream's device), never just the current
     * context's. */
    int ptsz = id == CC_FN_cuMemAllocAsync_ptsz || id == CC_FN_cuMemAllocFromPoolAsync_ptsz;
    if (!dptr || !size || !syms()) return CALL();
    struct cc_at_val pv;
    int o = from_pool && pool ? pool_device(pool, &pv) : -1;
    if (o < 0) o = cc_device_of_stream(s, ptsz);
    const struct cc_mem_device *m = o >= 0 ? cc_mem_dev(o) : NULL;
    if (!m) return CALL();
    if (!from_pool && p_getpool((CUmemoryPool *)&pool, (CUdevice)o) != CUDA_SUCCESS) return CALL();
    pthread_mutex_lock(&g_mu);
    uint64_t res = attr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, 0);
    uint64_t used = attr(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, 0);
    uint64_t idle = res > used ? res - used : 0;
    uint64_t pre = size > idle ? (((uint64_t)size + (2u << 20) - 1) & ~((2ull << 20) - 1)) : 0;
    if (pre && cc_mem_reserve(m, o, pre) != 0) {
        pthread_mutex_unlock(&g_mu);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    CUresult r = CALL();
#undef CALL
    /* Charge the pool's actual growth before dropping the pre-reservation:
     * the slot never counts less than the device holds. */
    settle_locked(pool, m, o);
    if (pre) cc_ml_release(m->h, pre);
    pthread_mutex_unlock(&g_mu);
    return r;
}

CC_EXPORT CUresult cuMemAllocAsync(CUdeviceptr *d, size_t n, CUstream s)
{
    return alloc_async(CC_FN_cuMemAllocAsync, d, n, NULL, s);
}
CC_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *d, size_t n, CUstream s)
{
    return alloc_async(CC_FN_cuMemAllocAsync_ptsz, d, n, NULL, s);
}
CC_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *d, size_t n, CUmemoryPool p, CUstream s)
{
    return alloc_async(CC_FN_cuMemAllocFromPoolAsync, d, n, p, s);
}
CC_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *d, size_t n, CUmemoryPool p,
                                                CUstream s)
{
    return alloc_async(CC_FN_cuMemAllocFromPoolAsync_ptsz, d, n, p, s);
}

CC_EXPORT CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props)
{
    __typeof__(&cuMemPoolCreate) real = CC_CUDA_REAL(cuMemPoolCreate);
    if (!real) return cc_cuda_missing(CC_FN_cuMemPoolCreate);
    CUresult r = real(pool, props);
    if (r == CUDA_SUCCESS && pool && props && props->location.type == CU_MEM_LOCATION_TYPE_DEVICE) {
        const struct cc_mem_device *m = cc_mem_dev(props->location.id);
        if (m) {
            struct cc_at_val v = {.h = m->h, .refs = 1, .bytes = 0,
                                  .aux = (uint64_t)props->location.id};
            cc_at_put(CC_AT_POOL, (uint64_t)(uintptr_t)*pool, &v);
        }
    }
    return r;
}

CC_EXPORT CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
    __typeof__(&cuMemPoolDestroy) real = CC_CUDA_REAL(cuMemPoolDestroy);
    if (!real) return cc_cuda_missing(CC_FN_cuMemPoolDestroy);
    pthread_mutex_lock(&g_mu);
    CUresult r = real(pool);
    struct cc_at_val v;
    if (r == CUDA_SUCCESS && cc_at_take(CC_AT_POOL, (uint64_t)(uintptr_t)pool, &v))
        cc_ml_release(v.h, v.bytes);
    pthread_mutex_unlock(&g_mu);
    return r;
}

CC_EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t keep)
{
    __typeof__(&cuMemPoolTrimTo) real = CC_CUDA_REAL(cuMemPoolTrimTo);
    if (!real) return cc_cuda_missing(CC_FN_cuMemPoolTrimTo);
    CUresult r = real(pool, keep);
    if (r == CUDA_SUCCESS && syms()) {
        pthread_mutex_lock(&g_mu);
        settle_locked(pool, NULL, -1);
        pthread_mutex_unlock(&g_mu);
    }
    return r;
}
