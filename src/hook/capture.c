/* Stream capture begin and end: passed through, counted (src/cap/capture.h)
 * so the launch path knows when a stream may be capturing. Every ABI the
 * runtime can reach: v1 (no mode: global), v2 (mode), to-graph (12.3), each
 * with its per-thread-default-stream twin. */
#include "cap/capture.h"
#include "hook.h"

#define CC_BEGIN_CAPTURE(name, ...)                                            \
    do {                                                                       \
        cc_enter_cuda(CC_FN_##name);                                           \
        __typeof__(&name) real_ = CC_REAL(name);                               \
        if (__builtin_expect(!real_, 0)) return cc_cuda_missing(CC_FN_##name); \
        CUresult r_ = real_(__VA_ARGS__);                                      \
        if (r_ == CUDA_SUCCESS) cc_capture_begun();                            \
        return r_;                                                             \
    } while (0)

CC_EXPORT CUresult cuStreamBeginCapture(CUstream s) { CC_BEGIN_CAPTURE(cuStreamBeginCapture, s); }

CC_EXPORT CUresult cuStreamBeginCapture_ptsz(CUstream s)
{
    CC_BEGIN_CAPTURE(cuStreamBeginCapture_ptsz, s);
}

CC_EXPORT CUresult cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode m)
{
    CC_BEGIN_CAPTURE(cuStreamBeginCapture_v2, s, m);
}

CC_EXPORT CUresult cuStreamBeginCapture_v2_ptsz(CUstream s, CUstreamCaptureMode m)
{
    CC_BEGIN_CAPTURE(cuStreamBeginCapture_v2_ptsz, s, m);
}

CC_EXPORT CUresult cuStreamBeginCaptureToGraph(CUstream s, CUgraph g, const CUgraphNode *deps,
                                               const CUgraphEdgeData *edges, size_t n,
                                               CUstreamCaptureMode m)
{
    CC_BEGIN_CAPTURE(cuStreamBeginCaptureToGraph, s, g, deps, edges, n, m);
}

CC_EXPORT CUresult cuStreamBeginCaptureToGraph_ptsz(CUstream s, CUgraph g,
                                                    const CUgraphNode *deps,
                                                    const CUgraphEdgeData *edges, size_t n,
                                                    CUstreamCaptureMode m)
{
    CC_BEGIN_CAPTURE(cuStreamBeginCaptureToGraph_ptsz, s, g, deps, edges, n, m);
}

static CUresult end_capture(enum cc_fn id, CUstream s, CUgraph *g, int ptsz)
{
    cc_enter_cuda(id);
    __typeof__(&cuStreamEndCapture) real = (__typeof__(&cuStreamEndCapture))cc_real[id];
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
