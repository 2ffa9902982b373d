/* Stream-ordered allocation and memory pools. A pool reserves device memory
 * when an allocation needs more than it holds; frees return blocks to the
 * pool; synchronisation releases reserved-but-unused memory above the
 * release threshold; trim and destroy release explicitly. */
#include "cuda_internal.h"

#include <stdlib.h>
#include <string.h>

static struct sim_pool *g_pools;
static struct sim_pool *g_default[SIM_MAX_DEV];
static struct sim_pool *g_current[SIM_MAX_DEV];

void sim_pool_after_fork(void)
{
    g_pools = NULL;
    memset(g_default, 0, sizeof g_default);
    memset(g_current, 0, sizeof g_current);
}

static struct sim_pool *pool_new(int dev, int is_default)
{
    struct sim_pool *p = sim_obj_alloc(sizeof *p);
    if (!p)
        return NULL;
    p->magic = MAG_POOL;
    p->dev = dev;
    p->is_default = is_default;
    p->next = g_pools;
    g_pools = p;
    return p;
}

/* sim_lk held */
static struct sim_pool *default_pool(int dev)
{
    if (!g_default[dev])
        g_default[dev] = pool_new(dev, 1);
    return g_default[dev];
}

static struct sim_pool *current_pool(int dev)
{
    if (!g_current[dev])
        g_current[dev] = default_pool(dev);
    return g_current[dev];
}

/* sim_lk held; returns bytes to uncharge */
static uint64_t shrink(struct sim_pool *p, uint64_t keep)
{
    if (keep < p->used)
        keep = p->used;
    if (p->reserved <= keep)
        return 0;
    uint64_t rel = p->reserved - keep;
    p->reserved = keep;
    return rel;
}

void sim_release_pools_at_sync(int dev)
{
    uint64_t rel = 0;
    pthread_mutex_lock(&sim_lk);
    for (struct sim_pool *p = g_pools; p; p = p->next)
        if (p->magic == MAG_POOL && p->dev == dev)
            rel += shrink(p, p->threshold);
    pthread_mutex_unlock(&sim_lk);
    sim_uncharge((uint32_t)dev, rel);
}

/* During stream capture the allocation is made at once, as outside it (not
 * a graph node: sim/README.md); only the enqueue rules apply (906, 901). */
static CUresult pool_alloc(CUdeviceptr *dptr, size_t size, struct sim_pool *p, CUstream h, int ptsz)
{
    CUresult r;
    struct sim_stream *st = sim_stream_get(h, ptsz, &r);
    if (!st)
        return r;
    if (!dptr || size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    struct sim_capture *cap;
    pthread_mutex_lock(&sim_lk);
    if ((r = sim_capture_enqueue(st, &cap)) != CUDA_SUCCESS) {
        pthread_mutex_unlock(&sim_lk);
        return r;
    }
    if (!p)
        p = current_pool(st->ctx->dev);
    if (!p || p->magic != MAG_POOL) {
        pthread_mutex_unlock(&sim_lk);
        return CUDA_ERROR_INVALID_VALUE;
    }
    uint64_t idle = p->reserved - p->used;
    uint64_t need = size > idle ? size - idle : 0;
    if (need && sim_charge((uint32_t)p->dev, need) != 0) {
        pthread_mutex_unlock(&sim_lk);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    struct sim_alloc a = { .size = size, .dev = p->dev, .kind = AK_POOL, .pool = p };
    a.base = sim_va_alloc(size, 512);
    if (sim_alloc_insert(&a) != 0) {
        pthread_mutex_unlock(&sim_lk);
        sim_uncharge((uint32_t)p->dev, need);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    p->reserved += need;
    p->used += size;
    if (p->reserved > p->reserved_high)
        p->reserved_high = p->reserved;
    if (p->used > p->used_high)
        p->used_high = p->used;
    pthread_mutex_unlock(&sim_lk);
    *dptr = a.base;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    return pool_alloc(dptr, bytesize, NULL, hStream, 0);
}

CUresult CUDAAPI cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    return pool_alloc(dptr, bytesize, NULL, hStream, 1);
}

CUresult CUDAAPI cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream)
{
    if (!pool)
        return CUDA_ERROR_INVALID_VALUE;
    return pool_alloc(dptr, bytesize, (struct sim_pool *)pool, hStream, 0);
}

CUresult CUDAAPI cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                              CUstream hStream)
{
    if (!pool)
        return CUDA_ERROR_INVALID_VALUE;
    return pool_alloc(dptr, bytesize, (struct sim_pool *)pool, hStream, 1);
}

/* Frees at once, during capture too (as the allocation was made at once). */
static CUresult free_async(CUdeviceptr dptr, CUstream h, int ptsz)
{
    CUresult r;
    struct sim_capture *cap;
    if (!sim_stream_for_enqueue(h, ptsz, &cap, &r))
        return r;
    return sim_free_ptr(dptr);
}

CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream) { return free_async(dptr, hStream, 0); }
CUresult CUDAAPI cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream) { return free_async(dptr, hStream, 1); }

CUresult CUDAAPI cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *poolProps)
{
    SIM_CHECK_INIT();
    if (!pool || !poolProps || poolProps->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    if (!sim_valid_dev(poolProps->location.id))
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&sim_lk);
    struct sim_pool *p = pool_new(poolProps->location.id, 0);
    pthread_mutex_unlock(&sim_lk);
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *pool = (CUmemoryPool)p;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemPoolDestroy(CUmemoryPool pool)
{
    struct sim_pool *p = (struct sim_pool *)pool;
    if (!p || p->magic != MAG_POOL || p->is_default)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim_lk);
    uint64_t rel = p->reserved;
    p->reserved = p->used = 0;
    p->magic = 0; /* kept allocated: live pointers may still name it */
    for (int d = 0; d < SIM_MAX_DEV; d++)
        if (g_current[d] == p)
            g_current[d] = NULL;
    pthread_mutex_unlock(&sim_lk);
    sim_uncharge((uint32_t)p->dev, rel);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
    struct sim_pool *p = (struct sim_pool *)pool;
    if (!p || p->magic != MAG_POOL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim_lk);
    uint64_t rel = shrink(p, minBytesToKeep);
    pthread_mutex_unlock(&sim_lk);
    sim_uncharge((uint32_t)p->dev, rel);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    struct sim_pool *p = (struct sim_pool *)pool;
    if (!p || p->magic != MAG_POOL || !value)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&sim_lk);
    switch (attr) {
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: p->threshold = *(cuuint64_t *)value; break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH: p->reserved_high = p->reserved; break;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH: p->used_high = p->used; break;
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES: break;
    default: r = CUDA_ERROR_INVALID_VALUE; break;
    }
    pthread_mutex_unlock(&sim_lk);
    return r;
}

CUresult CUDAAPI cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void *value)
{
    struct sim_pool *p = (struct sim_pool *)pool;
    if (!p || p->magic != MAG_POOL || !value)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&sim_lk);
    switch (attr) {
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: *(cuuint64_t *)value = p->threshold; break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT: *(cuuint64_t *)value = p->reserved; break;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH: *(cuuint64_t *)value = p->reserved_high; break;
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT: *(cuuint64_t *)value = p->used; break;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH: *(cuuint64_t *)value = p->used_high; break;
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES: *(int *)value = 1; break;
    default: r = CUDA_ERROR_INVALID_VALUE; break;
    }
    pthread_mutex_unlock(&sim_lk);
    return r;
}

CUresult CUDAAPI cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev)
{
    SIM_CHECK_INIT();
    if (!pool_out)
        return CUDA_ERROR_INVALID_VALUE;
    if (!sim_valid_dev(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&sim_lk);
    *pool_out = (CUmemoryPool)default_pool(dev);
    pthread_mutex_unlock(&sim_lk);
    return *pool_out ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult CUDAAPI cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
    SIM_CHECK_INIT();
    if (!pool)
        return CUDA_ERROR_INVALID_VALUE;
    if (!sim_valid_dev(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&sim_lk);
    *pool = (CUmemoryPool)current_pool(dev);
    pthread_mutex_unlock(&sim_lk);
    return *pool ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult CUDAAPI cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
    SIM_CHECK_INIT();
    struct sim_pool *p = (struct sim_pool *)pool;
    if (!sim_valid_dev(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    if (!p || p->magic != MAG_POOL || p->dev != dev)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim_lk);
    g_current[dev] = p;
    pthread_mutex_unlock(&sim_lk);
    return CUDA_SUCCESS;
}
