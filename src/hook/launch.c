/* Launch entry points, each with its per-thread-default-stream twin. Every
 * launch path the runtime can reach is here so the compute cap meters all of
 * them (dlsym and cuGetProcAddress hand out these same wrappers).
 *
 * Cost without a compute cap: cc_enter_cuda, then one load and one
 * predictable branch on cc_compute_mode. With a cap: src/cap/compute/gate.c
 * (device lookup, estimate lookup, one CAS on the shared bucket). */
#include "cap/compute/gate.h"
#include "cudacap/config.h"
#include "hook.h"
#include "memory_graph.h"

/* The fast path's test: no compute cap, so the launch goes straight to the
 * driver (one relaxed load, one predictable branch; the wrapper's call is
 * then a tail call, so the ticket is declared only after it). Otherwise
 * each wrapper asks cc_gate_begin (key: what the cost model times, a
 * function or a graph exec; blocks: the grid size; stream, ptsz: where
 * timing events go), whose 1 means "metered: settle with gated()". */
static inline __attribute__((always_inline)) int uncapped(void)
{
    return __builtin_expect(
        __atomic_load_n(&cc_compute_mode, __ATOMIC_RELAXED) == CC_COMPUTE_UNCAPPED, 1);
}

/* After a metered launch: settles its ticket, passes the driver's result on. */
static inline CUresult gated(struct cc_ticket *t, CUresult r)
{
    cc_gate_end(t, r);
    return r;
}

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
    __typeof__(&cuLaunchKernel) real = CC_CUDA_REAL(cuLaunchKernel);
    if (__builtin_expect(!real, 0)) return cc_cuda_missing(CC_FN_cuLaunchKernel);
    if (uncapped()) return real(f, gx, gy, gz, bx, by, bz, smem, s, params, extra);
    struct cc_ticket t;
    if (!cc_gate_begin(&t, f, grid(gx, gy, gz), s, 0))
        return real(f, gx, gy, gz, bx, by, bz, smem, s, params, extra);
    return gated(&t, real(f, gx, gy, gz, bx, by, bz, smem, s, params, extra));
}

CC_EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                       unsigned bx, unsigned by, unsigned bz, unsigned smem,
                                       CUstream s, void **params, void **extra)
{
    __typeof__(&cuLaunchKernel_ptsz) real = CC_CUDA_REAL(cuLaunchKernel_ptsz);
    if (__builtin_expect(!real, 0)) return cc_cuda_missing(CC_FN_cuLaunchKernel_ptsz);
    if (uncapped()) return real(f, gx, gy, gz, bx, by, bz, smem, s, params, extra);
    struct cc_ticket t;
    if (!cc_gate_begin(&t, f, grid(gx, gy, gz), s, 1))
        return real(f, gx, gy, gz, bx, by, bz, smem, s, params, extra);
    return gated(&t, real(f, gx, gy, gz, bx, by, bz, smem, s, params, extra));
}

CC_EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *cfg, CUfunction f, void **params,
                                    void **extra)
{
    __typeof__(&cuLaunchKernelEx) real = CC_CUDA_REAL(cuLaunchKernelEx);
    if (__builtin_expect(!real, 0)) return cc_cuda_missing(CC_FN_cuLaunchKernelEx);
    if (uncapped()) return real(cfg, f, params, extra);
    struct cc_ticket t;
    if (!cc_gate_begin(&t, f, grid_cfg(cfg), stream_cfg(cfg), 0))
        return real(cfg, f, params, extra);
    return gated(&t, real(cfg, f, params, extra));
}

CC_EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *cfg, CUfunction f,
                                         void **params, void **extra)
{
    __typeof__(&cuLaunchKernelEx_ptsz) real = CC_CUDA_REAL(cuLaunchKernelEx_ptsz);
    if (__builtin_expect(!real, 0)) return cc_cuda_missing(CC_FN_cuLaunchKernelEx_ptsz);
    if (uncapped()) return real(cfg, f, params, extra);
    struct cc_ticket t;
    if (!cc_gate_begin(&t, f, grid_cfg(cfg), stream_cfg(cfg), 1))
        return real(cfg, f, params, extra);
    return gated(&t, real(cfg, f, params, extra));
}

CC_EXPORT CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned gx, unsigned gy,
                                             unsigned gz, unsigned bx, unsigned by,
                                             unsigned bz, unsigned smem, CUstream s,
                                             void **params)
{
    __typeof__(&cuLaunchCooperativeKernel) real = CC_CUDA_REAL(cuLaunchCooperativeKernel);
    if (__builtin_expect(!real, 0)) return cc_cuda_missing(CC_FN_cuLaunchCooperativeKernel);
    if (uncapped()) return real(f, gx, gy, gz, bx, by, bz, smem, s, params);
    struct cc_ticket t;
    if (!cc_gate_begin(&t, f, grid(gx, gy, gz), s, 0))
        return real(f, gx, gy, gz, bx, by, bz, smem, s, params);
    return gated(&t, real(f, gx, gy, gz, bx, by, bz, smem, s, params));
}

CC_EXPORT CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned gx, unsigned gy,
                                                  unsigned gz, unsigned bx, unsigned by,
                                                  unsigned bz, unsigned smem, CUstream s,
                                                  void **params)
{
    __typeof__(&cuLaunchCooperativeKernel_ptsz) real =
        CC_CUDA_REAL(cuLaunchCooperativeKernel_ptsz);
    if (__builtin_expect(!real, 0))
        return cc_cuda_missing(CC_FN_cuLaunchCooperativeKernel_ptsz);
    if (uncapped()) return real(f, gx, gy, gz, bx, by, bz, smem, s, params);
    struct cc_ticket t;
    if (!cc_gate_begin(&t, f, grid(gx, gy, gz), s, 1))
        return real(f, gx, gy, gz, bx, by, bz, smem, s, params);
    return gated(&t, real(f, gx, gy, gz, bx, by, bz, smem, s, params));
}

/* One launch on several devices (deprecated in cuda.h, still exported):
 * each entry admitted on its own stream's device, in order, and settled
 * with the one result. More entries than cudacap knows devices: passed on
 * (the driver refuses more entries than devices). */
CC_EXPORT CUresult cuLaunchCooperativeKernelMultiDevice(CUDA_LAUNCH_PARAMS *list, unsigned n,
                                                        unsigned flags)
{
    __typeof__(&cuLaunchCooperativeKernelMultiDevice) real =
        CC_CUDA_REAL(cuLaunchCooperativeKernelMultiDevice);
    if (__builtin_expect(!real, 0))
        return cc_cuda_missing(CC_FN_cuLaunchCooperativeKernelMultiDevice);
    if (uncapped() || !list || n == 0 || n > CC_MAX_DEVICES) return real(list, n, flags);
    struct cc_ticket t[CC_MAX_DEVICES];
    int admitted[CC_MAX_DEVICES];
    for (unsigned i = 0; i < n; i++)
        admitted[i] = cc_gate_begin(&t[i], list[i].function,
                                  grid(list[i].gridDimX, list[i].gridDimY, list[i].gridDimZ),
                                  list[i].hStream, 0);
    CUresult r = real(list, n, flags);
    for (unsigned i = 0; i < n; i++)
        if (admitted[i]) cc_gate_end(&t[i], r);
    return r;
}

/* The deprecated launches: the block shape from cuFuncSetBlockShape, the
 * grid here (cuLaunch: one block); cuLaunch and cuLaunchGrid on the current
 * context's NULL stream. A negative size: the driver's error, ungated. */
CC_EXPORT CUresult cuLaunch(CUfunction f)
{
    __typeof__(&cuLaunch) real = CC_CUDA_REAL(cuLaunch);
    if (__builtin_expect(!real, 0)) return cc_cuda_missing(CC_FN_cuLaunch);
    if (uncapped()) return real(f);
    struct cc_ticket t;
    if (!cc_gate_begin(&t, f, 1, NULL, 0)) return real(f);
    return gated(&t, real(f));
}

CC_EXPORT CUresult cuLaunchGrid(CUfunction f, int w, int h)
{
    __typeof__(&cuLaunchGrid) real = CC_CUDA_REAL(cuLaunchGrid);
    if (__builtin_expect(!real, 0)) return cc_cuda_missing(CC_FN_cuLaunchGrid);
    if (uncapped() || w <= 0 || h <= 0) return real(f, w, h);
    struct cc_ticket t;
    if (!cc_gate_begin(&t, f, grid((unsigned)w, (unsigned)h, 1), NULL, 0)) return real(f, w, h);
    return gated(&t, real(f, w, h));
}

CC_EXPORT CUresult cuLaunchGridAsync(CUfunction f, int w, int h, CUstream s)
{
    __typeof__(&cuLaunchGridAsync) real = CC_CUDA_REAL(cuLaunchGridAsync);
    if (__builtin_expect(!real, 0)) return cc_cuda_missing(CC_FN_cuLaunchGridAsync);
    if (uncapped() || w <= 0 || h <= 0) return real(f, w, h, s);
    struct cc_ticket t;
    if (!cc_gate_begin(&t, f, grid((unsigned)w, (unsigned)h, 1), s, 0)) return real(f, w, h, s);
    return gated(&t, real(f, w, h, s));
}

/* Graphs: memory first (a graph whose allocation nodes do not fit is refused
 * before it takes compute tokens), then the compute gate around the launch.
 * A graph is costed like a kernel: its measured duration, keyed by the exec. */
static CUresult graph_launch(enum cc_fn id, CUgraphExec g, CUstream s, int ptsz)
{
    cc_graph_run_fn real = (cc_graph_run_fn)cc_cuda_real(id);
    if (__builtin_expect(!real, 0)) return cc_cuda_missing(id);
    if (uncapped()) return cc_mem_graph_launch(g, s, real);
    struct cc_ticket t;
    if (!cc_gate_begin(&t, g, 1, s, ptsz)) return cc_mem_graph_launch(g, s, real);
    return gated(&t, cc_mem_graph_launch(g, s, real));
}

CC_EXPORT CUresult cuGraphLaunch(CUgraphExec g, CUstream s)
{
    return graph_launch(CC_FN_cuGraphLaunch, g, s, 0);
}

CC_EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec g, CUstream s)
{
    return graph_launch(CC_FN_cuGraphLaunch_ptsz, g, s, 1);
}
