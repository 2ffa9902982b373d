/* The context-creating wrappers: the identity turn (identity_lock.h) and
 * the host pid diff (hostpid.h) around the real call, and the context
 * admitted against the memory cap (memory_acct.h) inside the turn. */
#include <cuda.h>

#include "hook.h"
#include "hostpid.h"
#include "identity_lock.h"
#include "memory_acct.h"

struct ident {
    struct cc_hostpid_diff diff;
    int fd; /* the turn, or -1 */
};

/* Cost when armed: an open, a lock (waiting at most 2 s for another process
 * of the container creating its context), one NVML call. The same turn is
 * taken, without the NVML lists, while the container has not learned the
 * size of a context on a capped device (memory_ctx.c): the first process
 * measures it for the others. */
static void ident_begin(struct ident *c, CUdevice dev)
{
    c->diff.armed = 0;
    c->fd = -1;
    int id = cc_hostpid_wanted();
    if (__builtin_expect(!id, 1) && !cc_mem_ctx_unlearned(dev)) return;
    c->fd = cc_identity_lock_take();
    if (id) cc_hostpid_diff_begin(&c->diff, (int)dev);
}

/* Every context-creating wrapper: the turn and the pid diff around the real
 * call, and the context admitted against the memory cap inside the turn. */
#define CC_CTX_CREATE(fn, dev, primary, call)                                       \
    do {                                                                            \
        cc_enter_cuda(CC_FN_##fn);                                                  \
        if (!CC_REAL(fn)) return cc_cuda_missing(CC_FN_##fn);                       \
        struct ident c_;                                                            \
        struct cc_ctx_adm a_;                                                       \
        ident_begin(&c_, dev);                                                      \
        CUresult r_ = cc_mem_ctx_admit(dev, primary, &a_) != 0 ? CUDA_ERROR_OUT_OF_MEMORY \
                                                               : CC_REAL(fn) call;  \
        cc_hostpid_diff_end(&c_.diff, r_ == CUDA_SUCCESS);                          \
        cc_mem_ctx_settle(&a_, r_); /* after the pid is known, inside the turn */   \
        cc_identity_lock_drop(c_.fd);                                               \
        return r_;                                                                  \
    } while (0)

CC_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    CC_CTX_CREATE(cuDevicePrimaryCtxRetain, dev, 1, (pctx, dev));
}

CC_EXPORT CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    CC_CTX_CREATE(cuCtxCreate_v2, dev, 0, (pctx, flags, dev));
}

CC_EXPORT CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *params, int nparams,
                                  unsigned int flags, CUdevice dev)
{
    CC_CTX_CREATE(cuCtxCreate_v3, dev, 0, (pctx, params, nparams, flags, dev));
}

CC_EXPORT CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *params, unsigned int flags,
                                  CUdevice dev)
{
    CC_CTX_CREATE(cuCtxCreate_v4, dev, 0, (pctx, params, flags, dev));
}
