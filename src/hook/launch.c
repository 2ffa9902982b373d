/* Launch entry points, each with its per-thread-default-stream twin. Every
 * launch path the runtime can reach is here so the compute cap meters all of
 * them. Pass-through until the compute cap lands (issue 4). */
#include "hook.h"

CC_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                  unsigned bx, unsigned by, unsigned bz, unsigned smem,
                                  CUstream s, void **params, void **extra)
{
    CC_PASS_CUDA(cuLaunchKernel, f, gx, gy, gz, bx, by, bz, smem, s, params, extra);
}

CC_EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                       unsigned bx, unsigned by, unsigned bz, unsigned smem,
                                       CUstream s, void **params, void **extra)
{
    CC_PASS_CUDA(cuLaunchKernel_ptsz, f, gx, gy, gz, bx, by, bz, smem, s, params, extra);
}

CC_EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *cfg, CUfunction f, void **params,
                                    void **extra)
{
    CC_PASS_CUDA(cuLaunchKernelEx, cfg, f, params, extra);
}

CC_EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *cfg, CUfunction f,
                                         void **params, void **extra)
{
    CC_PASS_CUDA(cuLaunchKernelEx_ptsz, cfg, f, params, extra);
}

CC_EXPORT CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned gx, unsigned gy,
                                             unsigned gz, unsigned bx, unsigned by,
                                             unsigned bz, unsigned smem, CUstream s,
                                             void **params)
{
    CC_PASS_CUDA(cuLaunchCooperativeKernel, f, gx, gy, gz, bx, by, bz, smem, s, params);
}

CC_EXPORT CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned gx, unsigned gy,
                                                  unsigned gz, unsigned bx, unsigned by,
                                                  unsigned bz, unsigned smem, CUstream s,
                                                  void **params)
{
    CC_PASS_CUDA(cuLaunchCooperativeKernel_ptsz, f, gx, gy, gz, bx, by, bz, smem, s, params);
}

CC_EXPORT CUresult cuGraphLaunch(CUgraphExec g, CUstream s) { CC_PASS_CUDA(cuGraphLaunch, g, s); }

CC_EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec g, CUstream s)
{
    CC_PASS_CUDA(cuGraphLaunch_ptsz, g, s);
}
