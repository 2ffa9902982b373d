/* Launch entry points, each with its per-thread-default-stream twin. Every
 * launch path the runtime can reach is here so the compute cap meters all of
 * them (dlsym and cuGetProcAddress hand out these same wrappers).
 *
 * Cost without a compute cap: cc_enter_cuda, then one load and one
 * predictable branch on cc_compute_mode. With a cap: src/cap/gate.c
 * (device lookup, estimate lookup, one CAS on the shared bucket). */
#include "cap/gate.h"
#include "hook.h"
#include "memory_graph.h"

/* key: what the cost model times (function or graph exec); blocks: the grid
 * size; stream, ptsz: where timing events go. */
#define CC_GATED_CUDA(name, key, blocks, stream, ptsz, ...)                    \
    do {                                                                       \
        cc_enter_cuda(CC_FN_##name);                                           \
        __typeof__(&name) real_ = CC_REAL(name);                               \
        if (__builtin_expect(!real_, 0)) return cc_cuda_missing(CC_FN_##name); \
        if (__builtin_expect(__atomic_load_n(&cc_compute_mode, __ATOMIC_RELAXED) == 1, 1)) \
            return real_(__VA_ARGS__);                                         \
        struct cc_ticket t_;                                                   \
        if (!cc_gate_begin(&t_, (key), (blocks), (stream), (ptsz)))            \
            return real_(__VA_ARGS__);                                         \
        CUresult r_ = real_(__VA_ARGS__);                                      \
        cc_gate_end(&t_, r_);                                                  \
        return r_;                                                             \
    } while (0)

static inline uint64_t grid(unsigned gx, unsigned gy, unsigned gz)
{
    return (uint64_t)gx * gy * gz;
}

static inline uint64_t grid_cfg(const CUlaunchConfig *c)
{
    return c ? grid(c->gridDimX, c->gridDimY, c->gridDimZ) : 0;
}

static inline CUstream stream_cfg(const CUlaunchConfig *c) { return c ? c->hStream : 0; }

CC_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                  unsigned bx, unsigned by, unsigned bz, unsigned smem,
                                  CUstream s, void **params, void **extra)
{
    CC_GATED_CUDA(cuLaunchKernel, f, grid(gx, gy, gz), s, 0, f, gx, gy, gz, bx, by, bz, smem, s,
                  params, extra);
}

CC_EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                       unsigned bx, unsigned by, unsigned bz, unsigned smem,
                                       CUstream s, void **params, void **extra)
{
    CC_GATED_CUDA(cuLaunchKernel_ptsz, f, grid(gx, gy, gz), s, 1, f, gx, gy, gz, bx, by, bz,
                  smem, s, params, extra);
}

CC_EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *cfg, CUfunction f, void **params,
                                    void **extra)
{
    CC_GATED_CUDA(cuLaunchKernelEx, f, grid_cfg(cfg), stream_cfg(cfg), 0, cfg, f, params, extra);
}

CC_EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *cfg, CUfunction f,
                                         void **params, void **extra)
{
    CC_GATED_CUDA(cuLaunchKernelEx_ptsz, f, grid_cfg(cfg), stream_cfg(cfg), 1, cfg, f, params,
                  extra);
}

CC_EXPORT CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned gx, unsigned gy,
                                             unsigned gz, unsigned bx, unsigned by,
                                             unsigned bz, unsigned smem, CUstream s,
                                             void **params)
{
    CC_GATED_CUDA(cuLaunchCooperativeKernel, f, grid(gx, gy, gz), s, 0, f, gx, gy, gz, bx, by,
                  bz, smem, s, params);
}

CC_EXPORT CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned gx, unsigned gy,
                                                  unsigned gz, unsigned bx, unsigned by,
                                                  unsigned bz, unsigned smem, CUstream s,
                                                  void **params)
{
    CC_GATED_CUDA(cuLaunchCooperativeKernel_ptsz, f, grid(gx, gy, gz), s, 1, f, gx, gy, gz, bx,
                  by, bz, smem, s, params);
}

/* Graphs: memory first (a graph whose allocation nodes do not fit is refused
 * before it takes compute tokens), then the compute gate around the launch.
 * A graph is costed like a kernel: its measured duration, keyed by the exec. */
static CUresult graph_launch(enum cc_fn id, CUgraphExec g, CUstream s, int ptsz)
{
    cc_enter_cuda(id);
    cc_graph_run_fn real = (cc_graph_run_fn)cc_real[id];
    if (__builtin_expect(!real, 0)) return cc_cuda_missing(id);
    if (__builtin_expect(__atomic_load_n(&cc_compute_mode, __ATOMIC_RELAXED) == 1, 1))
        return cc_mem_graph_launch(g, s, real);
    struct cc_ticket t;
    if (!cc_gate_begin(&t, g, 1, s, ptsz)) return cc_mem_graph_launch(g, s, real);
    CUresult r = cc_mem_graph_launch(g, s, real);
    cc_gate_end(&t, r);
    return r;
}

CC_EXPORT CUresult cuGraphLaunch(CUgraphExec g, CUstream s)
{
    return graph_launch(CC_FN_cuGraphLaunch, g, s, 0);
}

CC_EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec g, CUstream s)
{
    return graph_launch(CC_FN_cuGraphLaunch_ptsz, g, s, 1);
}
