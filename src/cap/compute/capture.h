/* Stream capture, as the compute cap must see it (docs/compute.md, "Stream
 * capture"). A launch into a capturing stream runs nothing until the graph
 * is replayed, so it is neither charged nor delayed; and nothing of ours
 * that the driver calls "potentially unsafe" (event queries above all) may
 * run on an application thread, or on ours, in the thread's default global
 * mode while a capture is in progress: the driver would refuse the call and
 * invalidate the application's capture (PyTorch's torch.cuda.graph died of
 * it on the H200). */
#ifndef CC_CAP_CAPTURE_H
#define CC_CAP_CAPTURE_H

#include <cuda.h>

/* Captures begun and not ended in this process, counted by the begin/end
 * wrappers (src/hook/capture.c). A hint that may only err high: while it is
 * 0 no stream can be capturing, so the launch path skips the driver query. */
extern int cc_captures_live;

static inline int cc_capture_live(void)
{
    return __atomic_load_n(&cc_captures_live, __ATOMIC_ACQUIRE) != 0; /* pairs with begun */
}

/* The begin wrappers call this after a successful begin; the end wrappers
 * after the real end of s with its result. */
void cc_capture_begun(void);
void cc_capture_ended(CUresult r, CUstream s, int ptsz);

/* Is s (a _ptsz entry point's stream if ptsz) capturing? 1 also when the
 * driver cannot tell (the legacy stream beside a blocking capture answers
 * CUDA_ERROR_STREAM_CAPTURE_IMPLICIT): then we must not touch it either.
 * One driver call; call it only when cc_capture_live(). */
int cc_capture_stream_busy(CUstream s, int ptsz);

/* Brackets a run of our own potentially unsafe calls on the calling thread:
 * the thread's capture interaction mode is exchanged to relaxed and then
 * restored (PyTorch's NCCL watchdog and caching allocator do the same). A
 * driver without the exchange (before CUDA 10.1) returns -1 from enter:
 * then the caller must skip its unsafe calls while cc_capture_live(). */
int cc_capture_relaxed_enter(CUstreamCaptureMode *saved);
void cc_capture_relaxed_leave(const CUstreamCaptureMode *saved);

/* The compute cap is on (cc_compute_decide_mode, compute.h): registers the
 * count's fork-child reset (a child has no captures). */
void cc_capture_init(void);

#endif
