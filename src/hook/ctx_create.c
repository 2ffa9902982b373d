/* The context-creating wrappers: the identity turn (identity_lock.h) and
 * the host pid diff (hostpid.h) around the real call, and the context
 * admitted against the memory cap (cap/mem/mem.h) inside the turn. */
#include <cuda.h>

#include "hook.h"
#include "hostpid.h"
#include "identity_lock.h"
#include "cap/mem/mem.h"

struct ident {
    struct cc_hostpid_diff diff;
    int fd; /* the turn, or -1 */
};

/* Cost when armed: an open, a lock (waiting at most 2 s for another process
 * of the container creating its context), one NVML call. The same turn is
 * taken, without the NVML lists, while the container has not learned the
 * size of a context on a capped device (cap/mem/ctx_admit.c): the first process
 * measures it for the others. */
static void ident_begin(struct ident *c, CUdevice dev)
{
    c->diff.armed = 0;
    c->fd = -1;
    int id = cc_hostpid_wanted();
    if (__builtin_expect(!id, 1) && !cc_mem_ctx_unlearned((int)dev)) return;
    c->fd = cc_identity_lock_take();
    if (id) cc_hostpid_diff_begin(&c->diff, (int)dev);
}

/* One of the four creating entries and its arguments. */
struct ctx_call {
    enum cc_fn fn;
    void *real;
    CUcontext *pctx;
    CUdevice dev;
    unsigned int flags;
    CUexecAffinityParam *affinity; /* _v3 */
    int naffinity;
    CUctxCreateParams *params; /* _v4 */
};

static CUresult call_real(const struct ctx_call *c)
{
    switch (c->fn) {
    case CC_FN_cuDevicePrimaryCtxRetain:
        return ((__typeof__(&cuDevicePrimaryCtxRetain))c->real)(c->pctx, c->dev);
    case CC_FN_cuCtxCreate_v2: return ((__typeof__(&cuCtxCreate_v2))c->real)(c->pctx, c->flags, c->dev);
    case CC_FN_cuCtxCreate_v3:
        return ((__typeof__(&cuCtxCreate_v3))c->real)(c->pctx, c->affinity, c->naffinity, c->flags, c->dev);
    default: return ((__typeof__(&cuCtxCreate_v4))c->real)(c->pctx, c->params, c->flags, c->dev);
    }
}

typedef CUresult (*state_fn)(CUdevice, unsigned int *, int *);

/* dev's primary context is active already (a retain then creates nothing). */
static int primary_active(CUdevice dev)
{
    static state_fn fn;
    state_fn f = __atomic_load_n(&fn, __ATOMIC_ACQUIRE);
    if (!f) { /* any thread may resolve it: the same value */
        f = (state_fn)cc_lib_sym(CC_LIB_CUDA, "cuDevicePrimaryCtxGetState");
        __atomic_store_n(&fn, f, __ATOMIC_RELEASE);
    }
    unsigned flags = 0;
    int active = 0;
    return f && f(dev, &flags, &active) == CUDA_SUCCESS && active;
}

/* Every context-creating wrapper: the turn and the pid diff around the real
 * call, and the context admitted against the memory cap inside the turn. */
static CUresult create(const struct ctx_call *c, int primary)
{
    struct ident id;
    struct cc_ctx_adm adm;
    ident_begin(&id, c->dev);
    int exists = primary && primary_active(c->dev);
    CUresult r = cc_mem_ctx_admit((int)c->dev, exists, &adm) != 0 ? CUDA_ERROR_OUT_OF_MEMORY
                                                                  : call_real(c);
    cc_hostpid_diff_end(&id.diff, r == CUDA_SUCCESS);
    cc_mem_ctx_settle(&adm, r == CUDA_SUCCESS); /* after the pid is known, inside the turn */
    cc_identity_lock_drop(id.fd);
    return r;
}

CC_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    void *real = cc_cuda_real(CC_FN_cuDevicePrimaryCtxRetain);
    if (!real) return cc_cuda_missing(CC_FN_cuDevicePrimaryCtxRetain);
    return create(&(struct ctx_call){.fn = CC_FN_cuDevicePrimaryCtxRetain, .real = real, .pctx = pctx, .dev = dev},
                  1);
}

CC_EXPORT CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    void *real = cc_cuda_real(CC_FN_cuCtxCreate_v2);
    if (!real) return cc_cuda_missing(CC_FN_cuCtxCreate_v2);
    return create(&(struct ctx_call){.fn = CC_FN_cuCtxCreate_v2, .real = real, .pctx = pctx, .dev = dev,
                                     .flags = flags},
                  0);
}

CC_EXPORT CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *params, int nparams,
                                  unsigned int flags, CUdevice dev)
{
    void *real = cc_cuda_real(CC_FN_cuCtxCreate_v3);
    if (!real) return cc_cuda_missing(CC_FN_cuCtxCreate_v3);
    return create(&(struct ctx_call){.fn = CC_FN_cuCtxCreate_v3, .real = real, .pctx = pctx, .dev = dev,
                                     .flags = flags, .affinity = params, .naffinity = nparams},
                  0);
}

CC_EXPORT CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *params, unsigned int flags,
                                  CUdevice dev)
{
    void *real = cc_cuda_real(CC_FN_cuCtxCreate_v4);
    if (!real) return cc_cuda_missing(CC_FN_cuCtxCreate_v4);
    return create(&(struct ctx_call){.fn = CC_FN_cuCtxCreate_v4, .real = real, .pctx = pctx, .dev = dev,
                                     .flags = flags, .params = params},
                  0);
}
