/* Contexts: primary contexts, cuCtxCreate/Destroy, the per-thread stack. */
#include "cuda_internal.h"

#include <stdlib.h>
#include <string.h>

#define STACK_MAX 32
static __thread struct sim_ctx *tls_stack[STACK_MAX];
static __thread int tls_depth;

static struct sim_ctx g_prim[SIM_MAX_DEV];
static struct sim_stream g_prim_legacy[SIM_MAX_DEV];
static unsigned g_prim_refs[SIM_MAX_DEV];
static unsigned g_prim_flags[SIM_MAX_DEV];

void sim_ctx_after_fork(void)
{
    memset(g_prim, 0, sizeof g_prim);
    memset(g_prim_refs, 0, sizeof g_prim_refs);
    tls_depth = 0;
}

struct sim_ctx *sim_cur_ctx(void)
{
    struct sim_ctx *c = tls_depth > 0 ? tls_stack[tls_depth - 1] : NULL;
    return c && c->magic == MAG_CTX ? c : NULL;
}

CUresult sim_cur_dev(int *dev)
{
    if (!sim_initialized())
        return CUDA_ERROR_NOT_INITIALIZED;
    struct sim_ctx *c = sim_cur_ctx();
    if (!c)
        return CUDA_ERROR_INVALID_CONTEXT;
    *dev = c->dev;
    return CUDA_SUCCESS;
}

static void ctx_init(struct sim_ctx *c, struct sim_stream *ns, int dev, unsigned flags, int primary)
{
    static uint64_t serial;
    memset(c, 0, sizeof *c);
    memset(ns, 0, sizeof *ns);
    c->dev = dev;
    c->flags = flags;
    c->primary = primary;
    c->serial = __atomic_add_fetch(&serial, 1, __ATOMIC_RELAXED);
    c->legacy = ns;
    ns->magic = MAG_STREAM;
    ns->ctx = c;
    c->magic = MAG_CTX;
}

static void wait_ctx(struct sim_ctx *c)
{
    sim_sleep_until(c->tail);
}

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    SIM_CHECK_INIT();
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (!sim_valid_dev(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    CUresult r = CUDA_SUCCESS;
    int created = 0;
    pthread_mutex_lock(&sim_lk);
    if (g_prim_refs[dev] == 0) {
        if (sim_charge((uint32_t)dev, sim_config()->ctx_mem_dev[dev]) != 0) {
            r = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            sim_ctx_count((uint32_t)dev, 1);
            ctx_init(&g_prim[dev], &g_prim_legacy[dev], dev, g_prim_flags[dev], 1);
            created = 1;
        }
    }
    if (r == CUDA_SUCCESS) {
        g_prim_refs[dev]++;
        *pctx = (CUcontext)&g_prim[dev];
    }
    pthread_mutex_unlock(&sim_lk);
    /* A real driver takes 100 ms or more here, the process already listed
     * by NVML: processes starting together overlap. */
    if (created && sim_config()->ctx_create_ns)
        sim_sleep_until(sim_now_ns() + sim_config()->ctx_create_ns);
    return r;
}

static void prim_destroy_locked(int dev)
{
    sim_capture_ctx_gone(&g_prim[dev]);
    wait_ctx(&g_prim[dev]);
    sim_ctx_limits_gone(&g_prim[dev]);
    g_prim[dev].magic = 0;
    g_prim_refs[dev] = 0;
    sim_uncharge((uint32_t)dev, sim_config()->ctx_mem_dev[dev]);
    sim_ctx_count((uint32_t)dev, -1);
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    SIM_CHECK_INIT();
    if (!sim_valid_dev(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&sim_lk);
    if (g_prim_refs[dev] == 0)
        r = CUDA_ERROR_INVALID_CONTEXT;
    else if (--g_prim_refs[dev] == 0)
        prim_destroy_locked(dev);
    pthread_mutex_unlock(&sim_lk);
    return r;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev)
{
    return cuDevicePrimaryCtxRelease_v2(dev);
}

CUresult CUDAAPI cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
    SIM_CHECK_INIT();
    if (!sim_valid_dev(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&sim_lk);
    if (g_prim_refs[dev] > 0)
        prim_destroy_locked(dev);
    g_prim_flags[dev] = 0;
    pthread_mutex_unlock(&sim_lk);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxReset(CUdevice dev)
{
    return cuDevicePrimaryCtxReset_v2(dev);
}

CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
    SIM_CHECK_INIT();
    if (!flags || !active)
        return CUDA_ERROR_INVALID_VALUE;
    if (!sim_valid_dev(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&sim_lk);
    *flags = g_prim_flags[dev];
    *active = g_prim_refs[dev] > 0;
    pthread_mutex_unlock(&sim_lk);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
    SIM_CHECK_INIT();
    if (!sim_valid_dev(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&sim_lk);
    g_prim_flags[dev] = flags;
    g_prim[dev].flags = flags;
    pthread_mutex_unlock(&sim_lk);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags)
{
    return cuDevicePrimaryCtxSetFlags_v2(dev, flags);
}

static CUresult ctx_create(CUcontext *pctx, unsigned flags, CUdevice dev)
{
    SIM_CHECK_INIT();
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (!sim_valid_dev(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    struct sim_ctx *c = sim_obj_alloc(sizeof *c);
    struct sim_stream *ns = sim_obj_alloc(sizeof *ns);
    if (!c || !ns || sim_charge((uint32_t)dev, sim_config()->ctx_mem_dev[dev]) != 0) {
        sim_obj_free(c);
        sim_obj_free(ns);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    sim_ctx_count((uint32_t)dev, 1);
    ctx_init(c, ns, dev, flags, 0);
    if (tls_depth < STACK_MAX)
        tls_stack[tls_depth++] = c;
    *pctx = (CUcontext)c;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    return ctx_create(pctx, flags, dev);
}

CUresult CUDAAPI cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams,
                                unsigned int flags, CUdevice dev)
{
    (void)paramsArray;
    (void)numParams;
    return ctx_create(pctx, flags, dev);
}

CUresult CUDAAPI cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags,
                                CUdevice dev)
{
    (void)ctxCreateParams;
    return ctx_create(pctx, flags, dev);
}

CUresult CUDAAPI cuCtxDestroy_v2(CUcontext ctx)
{
    SIM_CHECK_INIT();
    struct sim_ctx *c = (struct sim_ctx *)ctx;
    if (!c || c->magic != MAG_CTX || c->primary)
        return CUDA_ERROR_INVALID_CONTEXT;
    wait_ctx(c);
    pthread_mutex_lock(&sim_lk);
    sim_capture_ctx_gone(c);
    pthread_mutex_unlock(&sim_lk);
    for (int i = 0; i < tls_depth; i++)
        if (tls_stack[i] == c) {
            memmove(&tls_stack[i], &tls_stack[i + 1], (size_t)(tls_depth - i - 1) * sizeof c);
            tls_depth--;
            i--;
        }
    sim_ctx_limits_gone(c);
    c->magic = 0;
    c->legacy->magic = 0;
    sim_uncharge((uint32_t)c->dev, sim_config()->ctx_mem_dev[c->dev]);
    sim_ctx_count((uint32_t)c->dev, -1);
    sim_obj_free(c->legacy);
    sim_obj_free(c);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx)
{
    SIM_CHECK_INIT();
    struct sim_ctx *c = (struct sim_ctx *)ctx;
    if (c && c->magic != MAG_CTX)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (tls_depth == 0) {
        if (c)
            tls_stack[tls_depth++] = c;
    } else if (c) {
        tls_stack[tls_depth - 1] = c;
    } else {
        tls_depth--;
    }
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx)
{
    SIM_CHECK_INIT();
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    *pctx = (CUcontext)sim_cur_ctx();
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPushCurrent_v2(CUcontext ctx)
{
    SIM_CHECK_INIT();
    struct sim_ctx *c = (struct sim_ctx *)ctx;
    if (!c || c->magic != MAG_CTX)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (tls_depth >= STACK_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    tls_stack[tls_depth++] = c;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPopCurrent_v2(CUcontext *pctx)
{
    SIM_CHECK_INIT();
    if (tls_depth == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    struct sim_ctx *c = tls_stack[--tls_depth];
    if (pctx)
        *pctx = (CUcontext)c;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetDevice(CUdevice *device)
{
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    int d;
    CUresult r = sim_cur_dev(&d);
    if (r == CUDA_SUCCESS)
        *device = d;
    return r;
}

CUresult CUDAAPI cuCtxGetFlags(unsigned int *flags)
{
    struct sim_ctx *c = sim_cur_ctx();
    if (!flags)
        return CUDA_ERROR_INVALID_VALUE;
    if (!c)
        return CUDA_ERROR_INVALID_CONTEXT;
    *flags = c->flags;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetApiVersion(CUcontext ctx, unsigned int *version)
{
    (void)ctx;
    if (!version)
        return CUDA_ERROR_INVALID_VALUE;
    *version = 12050;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
    if (leastPriority)
        *leastPriority = 0;
    if (greatestPriority)
        *greatestPriority = -5;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSynchronize(void)
{
    SIM_CHECK_INIT();
    struct sim_ctx *c = sim_cur_ctx();
    if (!c)
        return CUDA_ERROR_INVALID_CONTEXT;
    pthread_mutex_lock(&sim_lk);
    CUresult r = sim_capture_ctx_sync(c);
    uint64_t t = c->tail; /* every stream's work, per-thread streams' too (sim_stream_advance) */
    pthread_mutex_unlock(&sim_lk);
    if (r != CUDA_SUCCESS)
        return r;
    sim_sleep_until(t);
    sim_wait_host_ctx(c);
    sim_release_pools_at_sync(c->dev);
    return CUDA_SUCCESS;
}
