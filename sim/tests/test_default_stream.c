/* The per-thread default stream, and fork() during a capture: simulator
 * behaviour that test_capture.c (the driver's capture rules, also run on a
 * GPU) does not cover. Built with CUDA_API_PER_THREAD_DEFAULT_STREAM, so
 * stream 0 is the calling thread's per-thread stream (the _ptsz/_ptds
 * entry points) and CU_STREAM_LEGACY names the legacy stream. */
#define CUDA_API_PER_THREAD_DEFAULT_STREAM 1
#include <pthread.h>

#include "simtest.h"

static CUcontext ctx;

static void *query_own(void *arg)
{
    CUresult *r = arg;
    *r = cuCtxSetCurrent(ctx);
    if (*r == CUDA_SUCCESS)
        *r = cuStreamQuery(NULL);
    return NULL;
}

static int child(void *arg)
{
    (void)arg;
    /* The parent's thread was relaxed and capturing: the child's is in the
     * default mode and has no capture, so an unsafe call goes through. */
    CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_GLOBAL;
    st_ctx();
    CU(cuThreadExchangeStreamCaptureMode(&m));
    CHECK(m == CU_STREAM_CAPTURE_MODE_GLOBAL);
    CUdeviceptr p;
    CU(cuMemAlloc(&p, 4096));
    CU(cuMemFree(p));
    return 0;
}

int main(void)
{
    st_setup();
    ctx = st_ctx();
    CUfunction slow = st_func("spin_300000us");

    /* Per-thread and legacy streams are distinct streams in time (no
     * implicit legacy synchronisation is modelled); cuCtxSynchronize waits
     * for both. */
    double t0 = st_ms();
    CU(cuLaunchKernel(slow, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    CHECK(cuStreamQuery(NULL) == CUDA_ERROR_NOT_READY);
    CHECK(cuStreamQuery(CU_STREAM_PER_THREAD) == CUDA_ERROR_NOT_READY);
    CU(cuStreamQuery(CU_STREAM_LEGACY));
    CUresult other = CUDA_ERROR_UNKNOWN;
    pthread_t t;
    CHECK(pthread_create(&t, NULL, query_own, &other) == 0);
    pthread_join(t, NULL);
    CHECK(other == CUDA_SUCCESS); /* another thread's per-thread stream is idle */
    CU(cuCtxSynchronize());
    CHECK(st_ms() - t0 >= 299.0);
    CU(cuStreamQuery(NULL));
    printf("per-thread stream ok\n");

    /* fork() while this thread is relaxed and capturing. */
    CUstream s;
    CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
    CU(cuThreadExchangeStreamCaptureMode(&m));
    CU(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CHECK(st_wait(st_fork(child, NULL)) == 0);
    CUgraph g;
    CU(cuStreamEndCapture(s, &g));
    CU(cuGraphDestroy(g));
    CU(cuStreamDestroy(s));
    printf("fork during capture ok\n");
    return 0;
}
