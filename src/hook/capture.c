/* Stream capture begin and end: passed through, counted (src/cap/compute/capture.h)
 * so the launch path knows when a stream may be capturing. Every ABI the
 * runtime can reach: v1 (no mode: global), v2 (mode), to-graph (12.3), each
 * with its per-thread-default-stream twin. */
#include "cap/compute/capture.h"
#include "hook.h"

/* After a begin: count the capture (cap/compute/capture.h), pass the result on. */
static CUresult begun(CUresult r)
{
    if (r == CUDA_SUCCESS) cc_capture_begun();
    return r;
}

CC_EXPORT CUresult cuStreamBeginCapture(CUstream s)
{
    __typeof__(&cuStreamBeginCapture) real = CC_CUDA_REAL(cuStreamBeginCapture);
    if (__builtin_expect(!real, 0)) return cc_cuda_missing(CC_FN_cuStreamBeginCapture);
    return begun(real(s));
}

CC_EXPORT CUresult cuStreamBeginCapture_ptsz(CUstream s)
{
    __typeof__(&cuStreamBeginCapture_ptsz) real = CC_CUDA_REAL(cuStreamBeginCapture_ptsz);
    if (__builtin_expect(!real, 0)) return cc_cuda_missing(CC_FN_cuStreamBeginCapture_ptsz);
    return begun(real(s));
}

CC_EXPORT CUresult cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode m)
{
    __typeof__(&cuStreamBeginCapture_v2) real = CC_CUDA_REAL(cuStreamBeginCapture_v2);
    if (__builtin_expect(!real, 0)) return cc_cuda_missing(CC_FN_cuStreamBeginCapture_v2);
    return begun(real(s, m));
}

CC_EXPORT CUresult cuStreamBeginCapture_v2_ptsz(CUstream s, CUstreamCaptureMode m)
{
    __typeof__(&cuStreamBeginCapture_v2_ptsz) real = CC_CUDA_REAL(cuStreamBeginCapture_v2_ptsz);
    if (__builtin_expect(!real, 0))
        return cc_cuda_missing(CC_FN_cuStreamBeginCapture_v2_ptsz);
    return begun(real(s, m));
}

CC_EXPORT CUresult cuStreamBeginCaptureToGraph(CUstream s, CUgraph g, const CUgraphNode *deps,
                                               const CUgraphEdgeData *edges, size_t n,
                                               CUstreamCaptureMode m)
{
    __typeof__(&cuStreamBeginCaptureToGraph) real = CC_CUDA_REAL(cuStreamBeginCaptureToGraph);
    if (__builtin_expect(!real, 0))
        return cc_cuda_missing(CC_FN_cuStreamBeginCaptureToGraph);
    return begun(real(s, g, deps, edges, n, m));
}

CC_EXPORT CUresult cuStreamBeginCaptureToGraph_ptsz(CUstream s, CUgraph g,
                                                    const CUgraphNode *deps,
                                                    const CUgraphEdgeData *edges, size_t n,
                                                    CUstreamCaptureMode m)
{
    __typeof__(&cuStreamBeginCaptureToGraph_ptsz) real =
        CC_CUDA_REAL(cuStreamBeginCaptureToGraph_ptsz);
    if (__builtin_expect(!real, 0))
        return cc_cuda_missing(CC_FN_cuStreamBeginCaptureToGraph_ptsz);
    return begun(real(s, g, deps, edges, n, m));
}

static CUresult end_capture(enum cc_fn id, CUstream s, CUgraph *g, int ptsz)
{
    __typeof__(&cuStreamEndCapture) real = (__typeof__(&cuStreamEndCapture))cc_cuda_real(id);
    if (__builtin_expect(!real, 0)) return cc_cuda_missing(id);
    CUresult r = real(s, g);
    cc_capture_ended(r, s, ptsz);
    return r;
}

CC_EXPORT CUresult cuStreamEndCapture(CUstream s, CUgraph *g)
{
    return end_capture(CC_FN_cuStreamEndCapture, s, g, 0);
}

CC_EXPORT CUresult cuStreamEndCapture_ptsz(CUstream s, CUgraph *g)
{
    return end_capture(CC_FN_cuStreamEndCapture_ptsz, s, g, 1);
}
