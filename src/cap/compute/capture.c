/* Stream-capture bookkeeping for the compute cap (capture.h). */
#include "cap/compute/capture.h"

#include "cap/port.h"
#include "common/fork.h"

int cc_captures_live;

void cc_capture_begun(void)
{
    /* Release: a launch that sees the count sees a capture that has begun. */
    __atomic_add_fetch(&cc_captures_live, 1, __ATOMIC_RELEASE);
}

void cc_capture_ended(CUresult r, CUstream s, int ptsz)
{
    /* Over when the end succeeded or reported the capture invalidated, and
     * after a wrong-thread end when the stream says so (the H200 ends the
     * capture then). 401 (not capturing) and bad handles change nothing. */
    int over = r == CUDA_SUCCESS || r == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED ||
               (r == CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD && !cc_capture_stream_busy(s, ptsz));
    if (!over) return;
    int n = __atomic_load_n(&cc_captures_live, __ATOMIC_RELAXED);
    while (n > 0 && !__atomic_compare_exchange_n(&cc_captures_live, &n, n - 1, 1,
                                                 __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}

int cc_capture_stream_busy(CUstream s, int ptsz)
{
    /* One load (the port) and the indirect call the cached pointer cost. */
    const cc_port_t *port = cc_port();
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    if ((ptsz ? port->stream_is_capturing_ptsz : port->stream_is_capturing)(s, &st) != CUDA_SUCCESS)
        return 1; /* cannot tell (no such entry in the driver, or an error) */
    return st != CU_STREAM_CAPTURE_STATUS_NONE; /* active or invalidated: not ours to touch */
}

int cc_capture_relaxed_enter(CUstreamCaptureMode *saved)
{
    *saved = CU_STREAM_CAPTURE_MODE_RELAXED;
    if (cc_port()->exchange_capture_mode(saved) != CUDA_SUCCESS) return -1; /* pre-10.1 driver */
    return 0;
}

void cc_capture_relaxed_leave(const CUstreamCaptureMode *saved)
{
    CUstreamCaptureMode m = *saved;
    cc_port()->exchange_capture_mode(&m); /* after a successful enter only */
}

static void fork_child(void)
{
    /* The child has no captures (and CUDA state must be rebuilt anyway). */
    __atomic_store_n(&cc_captures_live, 0, __ATOMIC_RELAXED);
}

void cc_capture_init(void) { cc_fork_child_register(fork_child); }
