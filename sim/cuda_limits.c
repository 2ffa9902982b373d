/* cuCtxSetLimit / cuCtxGetLimit on the current context, with the device
 * memory the limits take: the stack of every resident thread (value x SMs x
 * 2048 threads), the printf FIFO and the malloc heap, charged beyond their
 * defaults when set (a real driver reserves them then or at the next
 * launch; the simulator does it at once, the stricter order for a cap). */
#include "cuda_internal.h"

static const uint64_t k_default[3] = {1024, 1u << 20, 8u << 20};

static int slot_of(CUlimit l)
{
    switch (l) {
    case CU_LIMIT_STACK_SIZE: return 0;
    case CU_LIMIT_PRINTF_FIFO_SIZE: return 1;
    case CU_LIMIT_MALLOC_HEAP_SIZE: return 2;
    default: return -1;
    }
}

static uint64_t bytes_of(const struct sim_ctx *c, int k, uint64_t v)
{
    uint64_t d = k_default[k];
    if (v <= d) return 0;
    if (k == 0) return (v - d) * sim_shm()->dev[c->dev].sms * 2048ull;
    return v - d;
}

CUresult CUDAAPI cuCtxSetLimit(CUlimit limit, size_t value)
{
    SIM_CHECK_INIT();
    struct sim_ctx *c = sim_cur_ctx();
    if (!c) return CUDA_ERROR_INVALID_CONTEXT;
    int k = slot_of(limit);
    if (k < 0) return CUDA_ERROR_UNSUPPORTED_LIMIT;
    if (k == 0 && value > (1u << 20)) return CUDA_ERROR_INVALID_VALUE; /* 1 MiB per thread */
    pthread_mutex_lock(&sim_lk);
    uint64_t old = c->limit[k] ? c->limit[k] : k_default[k];
    uint64_t ob = bytes_of(c, k, old), nb = bytes_of(c, k, value);
    CUresult r = CUDA_SUCCESS;
    if (nb > ob && sim_charge((uint32_t)c->dev, nb - ob) != 0) r = CUDA_ERROR_OUT_OF_MEMORY;
    else if (nb < ob) sim_uncharge((uint32_t)c->dev, ob - nb);
    if (r == CUDA_SUCCESS) {
        c->limit[k] = value;
        c->limit_bytes = c->limit_bytes - ob + nb;
    }
    pthread_mutex_unlock(&sim_lk);
    return r;
}

CUresult CUDAAPI cuCtxGetLimit(size_t *pvalue, CUlimit limit)
{
    SIM_CHECK_INIT();
    struct sim_ctx *c = sim_cur_ctx();
    if (!c) return CUDA_ERROR_INVALID_CONTEXT;
    if (!pvalue) return CUDA_ERROR_INVALID_VALUE;
    int k = slot_of(limit);
    if (k < 0) return CUDA_ERROR_UNSUPPORTED_LIMIT;
    pthread_mutex_lock(&sim_lk);
    *pvalue = c->limit[k] ? c->limit[k] : k_default[k];
    pthread_mutex_unlock(&sim_lk);
    return CUDA_SUCCESS;
}

void sim_ctx_limits_gone(struct sim_ctx *c)
{
    if (c->limit_bytes) sim_uncharge((uint32_t)c->dev, c->limit_bytes);
    c->limit_bytes = 0;
    c->limit[0] = c->limit[1] = c->limit[2] = 0;
}
