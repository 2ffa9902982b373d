/* The driver's stream-capture rules, as a table of cases run against
 * whichever libcuda.so.1 is loaded: the simulator in CI, NVIDIA's driver on
 * a real GPU (tests/gpu/capture_rules.sh builds this same file there; the
 * expectations below are what the H200 returned, docs/validation.md).
 *
 * The matrix: a capture on stream S begun in mode cm by thread T0, then one
 * call (potentially unsafe or not) made by T0 itself or by another thread in
 * thread mode tm; what the call returns, what a launch into S returns after
 * it, and what cuStreamEndCapture returns. Then single scenarios: the
 * per-thread default stream, the legacy stream beside a blocking capture,
 * capture info, ending from another thread, captured events, cross-stream
 * capture. Exit status 1 on any difference; every row is printed. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tests/ptx.h"
#include "simtest.h"

#define G CU_STREAM_CAPTURE_MODE_GLOBAL
#define TL CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
#define RX CU_STREAM_CAPTURE_MODE_RELAXED
static const char *mode_name[] = {"global", "thread_local", "relaxed"};

static CUcontext ctx;
static CUfunction fn;
static CUstream other_stream;      /* non-blocking, never captured */
static CUevent done_ev, start_ev;  /* recorded on other_stream before capture, complete */
static CUdeviceptr dbuf, free_me, to_free; /* to_free: allocated before a C_FREE case */
static char host[256];
static int failures;

/* ---- the calls ---- */
enum call { C_EVQUERY, C_EVSYNC, C_STQUERY, C_STSYNC, C_CTXSYNC, C_MALLOC, C_FREE, C_MEMCPY,
            C_MEMSET, C_GETINFO, C_ELAPSED, C_EVRECORD, C_LAUNCH, C_ISCAP, C_EVCREATE, N_CALLS };
static const char *call_name[] = {"cuEventQuery", "cuEventSynchronize", "cuStreamQuery",
                                  "cuStreamSynchronize", "cuCtxSynchronize", "cuMemAlloc",
                                  "cuMemFree", "cuMemcpyHtoD", "cuMemsetD8", "cuMemGetInfo",
                                  "cuEventElapsedTime", "cuEventRecord(other)",
                                  "cuLaunchKernel(other)", "cuStreamIsCapturing", "cuEventCreate"};
/* Potentially unsafe during capture (the documented rule below applies):
 * host-synchronous queries and waits, and allocation outside any stream.
 * As the H200 (driver 580) returned: a small synchronous cuMemcpyHtoD or
 * cuMemsetD8 (legacy stream, non-blocking capture stream) is NOT refused,
 * nor are cuMemGetInfo or cuEventElapsedTime. cuCtxSynchronize is refused
 * in every mode (it would wait on the capturing stream itself). */
static const int unsafe[N_CALLS] = {[C_EVQUERY] = 1, [C_EVSYNC] = 1, [C_STQUERY] = 1,
                                    [C_STSYNC] = 1, [C_CTXSYNC] = 2, [C_MALLOC] = 1,
                                    [C_FREE] = 1};

static CUstream capture_stream;

static CUresult do_call(enum call c)
{
    switch (c) {
    case C_EVQUERY: return cuEventQuery(done_ev);
    case C_EVSYNC: return cuEventSynchronize(done_ev);
    case C_STQUERY: return cuStreamQuery(other_stream);
    case C_STSYNC: return cuStreamSynchronize(other_stream);
    case C_CTXSYNC: return cuCtxSynchronize();
    case C_MALLOC: {
        CUdeviceptr p = 0;
        CUresult r = cuMemAlloc(&p, 1 << 20);
        if (r == CUDA_SUCCESS) free_me = p;
        return r;
    }
    case C_FREE: {
        CUresult r = cuMemFree(to_free);
        if (r == CUDA_SUCCESS) to_free = 0;
        return r;
    }
    case C_MEMCPY: return cuMemcpyHtoD(dbuf, host, sizeof host);
    case C_MEMSET: return cuMemsetD8(dbuf, 0, sizeof host);
    case C_GETINFO: {
        size_t f, t;
        return cuMemGetInfo(&f, &t);
    }
    case C_ELAPSED: {
        float ms;
        return cuEventElapsedTime(&ms, start_ev, done_ev);
    }
    case C_EVRECORD: {
        CUevent e;
        CUresult r = cuEventCreate(&e, 0);
        if (r == CUDA_SUCCESS) r = cuEventRecord(e, other_stream);
        return r;
    }
    case C_LAUNCH: return cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, other_stream, NULL, NULL);
    case C_ISCAP: {
        CUstreamCaptureStatus st;
        return cuStreamIsCapturing(capture_stream, &st);
    }
    case C_EVCREATE: {
        CUevent e;
        return cuEventCreate(&e, 0);
    }
    default: return CUDA_ERROR_INVALID_VALUE;
    }
}

struct job {
    enum call c;
    int mode;
    CUresult r;
};

static void *other_thread(void *arg)
{
    struct job *j = arg;
    CUstreamCaptureMode m = (CUstreamCaptureMode)j->mode;
    if (cuCtxSetCurrent(ctx) != CUDA_SUCCESS || cuThreadExchangeStreamCaptureMode(&m) != CUDA_SUCCESS) {
        j->r = (CUresult)-1;
        return NULL;
    }
    j->r = do_call(j->c);
    return NULL;
}

static CUresult in_thread(enum call c, int mode)
{
    struct job j = {c, mode, CUDA_SUCCESS};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, other_thread, &j) == 0);
    pthread_join(t, NULL);
    return j.r;
}

/* The rule (cuThreadExchangeStreamCaptureMode's documentation): a thread in
 * global mode may make no unsafe call while it has a capture of its own not
 * begun relaxed, or while any other thread has a global capture; thread
 * local ignores other threads; relaxed is never prohibited. */
static int prohibited(enum call c, int cm, int same, int tm)
{
    if (unsafe[c] == 2) return 1; /* conflicts with any capture in the context */
    if (!unsafe[c] || tm == RX) return 0;
    if (same) return cm != RX;
    return tm == G && cm == G;
}

static void row(const char *what, CUresult got, CUresult want)
{
    int ok = got == want;
    if (!ok) failures++;
    printf("%-4s %-64s got %4d want %4d\n", ok ? "ok" : "DIFF", what, (int)got, (int)want);
}

static size_t graph_nodes(CUgraph g)
{
    size_t n = 0;
    if (!g || cuGraphGetNodes(g, NULL, &n) != CUDA_SUCCESS) return (size_t)-1;
    return n;
}

static void matrix_case(enum call c, int cm, int same, int tm)
{
    CUstreamCaptureMode m = (CUstreamCaptureMode)(same ? tm : G);
    if (c == C_FREE) CU(cuMemAlloc(&to_free, 4096));
    CU(cuThreadExchangeStreamCaptureMode(&m));
    CU(cuStreamBeginCapture(capture_stream, (CUstreamCaptureMode)cm));
    CU(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, capture_stream, NULL, NULL));
    CUresult r = same ? do_call(c) : in_thread(c, tm);
    CUresult l = cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, capture_stream, NULL, NULL);
    CUgraph g = NULL;
    CUresult e = cuStreamEndCapture(capture_stream, &g);
    CUstreamCaptureMode back = CU_STREAM_CAPTURE_MODE_GLOBAL;
    CU(cuThreadExchangeStreamCaptureMode(&back));
    if (g) cuGraphDestroy(g);
    if (free_me) cuMemFree(free_me);
    if (to_free) cuMemFree(to_free);
    free_me = to_free = 0;
    int bad = prohibited(c, cm, same, tm);
    char what[160];
    snprintf(what, sizeof what, "%s capture %s, %s thread in %s: call", call_name[c],
             mode_name[cm], same ? "capturing" : "other", mode_name[tm]);
    row(what, r, bad ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS);
    snprintf(what, sizeof what, "%s capture %s, %s thread in %s: launch, end", call_name[c],
             mode_name[cm], same ? "capturing" : "other", mode_name[tm]);
    CUresult want = bad ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED : CUDA_SUCCESS;
    row(what, l == want && e == want ? want : (l != want ? l : e), want);
}

/* ---- single scenarios ---- */
typedef CUresult (*begin_fn)(CUstream, CUstreamCaptureMode);
typedef CUresult (*end_fn)(CUstream, CUgraph *);
typedef CUresult (*iscap_fn)(CUstream, CUstreamCaptureStatus *);
typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned, CUstream, void **, void **);
static begin_fn begin_pt;
static end_fn end_pt;
static iscap_fn iscap_pt;
static launch_fn launch_pt;

static void *pt_sym(const char *name)
{
    void *p = NULL;
    CUdriverProcAddressQueryResult q;
    if (cuGetProcAddress(name, &p, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &q) !=
        CUDA_SUCCESS)
        return NULL;
    return p;
}

static void *iscap_pt_thread(void *arg)
{
    CUstreamCaptureStatus *st = arg;
    *st = (CUstreamCaptureStatus)99;
    if (cuCtxSetCurrent(ctx) == CUDA_SUCCESS) iscap_pt(CU_STREAM_PER_THREAD, st);
    return NULL;
}

static void per_thread_stream(void)
{
    begin_pt = (begin_fn)pt_sym("cuStreamBeginCapture");
    end_pt = (end_fn)pt_sym("cuStreamEndCapture");
    iscap_pt = (iscap_fn)pt_sym("cuStreamIsCapturing");
    launch_pt = (launch_fn)pt_sym("cuLaunchKernel");
    CHECK(begin_pt && end_pt && iscap_pt && launch_pt);
    row("legacy stream: begin capture", cuStreamBeginCapture(CU_STREAM_LEGACY, G),
        CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    row("per-thread stream: begin capture (ptsz, stream 0)", begin_pt(NULL, G), CUDA_SUCCESS);
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    iscap_pt(NULL, &st);
    row("per-thread stream: is capturing here", (CUresult)st, (CUresult)CU_STREAM_CAPTURE_STATUS_ACTIVE);
    pthread_t t;
    CUstreamCaptureStatus other = CU_STREAM_CAPTURE_STATUS_NONE;
    CHECK(pthread_create(&t, NULL, iscap_pt_thread, &other) == 0);
    pthread_join(t, NULL);
    row("per-thread stream: another thread's is not capturing", (CUresult)other,
        (CUresult)CU_STREAM_CAPTURE_STATUS_NONE);
    row("per-thread stream: launch into it (ptsz)",
        launch_pt(fn, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), CUDA_SUCCESS);
    CUgraph g = NULL;
    row("per-thread stream: end capture", end_pt(NULL, &g), CUDA_SUCCESS);
    row("per-thread stream: graph holds the launch", (CUresult)graph_nodes(g), (CUresult)1);
    if (g) cuGraphDestroy(g);
}

static void legacy_beside_blocking(void)
{
    CUstream blocking;
    CU(cuStreamCreate(&blocking, CU_STREAM_DEFAULT));
    CUstreamCaptureStatus st;
    CU(cuStreamBeginCapture(blocking, G));
    row("blocking capture: is-capturing on the legacy stream",
        cuStreamIsCapturing(CU_STREAM_LEGACY, &st), CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
    row("blocking capture: still active after that query",
        cuStreamIsCapturing(blocking, &st) == CUDA_SUCCESS ? (CUresult)st : (CUresult)-1,
        (CUresult)CU_STREAM_CAPTURE_STATUS_ACTIVE);
    row("blocking capture: launch into the legacy stream",
        cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, CU_STREAM_LEGACY, NULL, NULL),
        CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
    CUgraph g = NULL;
    row("blocking capture: end after the legacy launch", cuStreamEndCapture(blocking, &g),
        CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    row("blocking capture: no graph", (CUresult)(g != NULL), (CUresult)0);
    CU(cuStreamBeginCapture(capture_stream, G)); /* non-blocking */
    row("non-blocking capture: launch into the legacy stream",
        cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, CU_STREAM_LEGACY, NULL, NULL), CUDA_SUCCESS);
    row("non-blocking capture: end", cuStreamEndCapture(capture_stream, &g), CUDA_SUCCESS);
    if (g) cuGraphDestroy(g);
    CU(cuCtxSynchronize());
    CU(cuStreamDestroy(blocking));
}

struct ender {
    CUresult r;
    CUgraph g;
};

static void *end_thread(void *arg)
{
    struct ender *e = arg;
    e->r = cuCtxSetCurrent(ctx);
    if (e->r == CUDA_SUCCESS) e->r = cuStreamEndCapture(capture_stream, &e->g);
    return NULL;
}

static void info_and_ending(void)
{
    CUstreamCaptureStatus st = (CUstreamCaptureStatus)99;
    cuuint64_t id1 = 0, id2 = 0;
    CU(cuStreamBeginCapture(capture_stream, G));
    row("capture info: status", cuStreamGetCaptureInfo(capture_stream, &st, &id1, NULL, NULL, NULL, NULL) == CUDA_SUCCESS
        ? (CUresult)st : (CUresult)-1, (CUresult)CU_STREAM_CAPTURE_STATUS_ACTIVE);
    row("capture info: id is set", (CUresult)(id1 != 0), (CUresult)1);
    row("begin capture twice", cuStreamBeginCapture(capture_stream, G), CUDA_ERROR_ILLEGAL_STATE);
    st = (CUstreamCaptureStatus)99;
    cuStreamIsCapturing(capture_stream, &st);
    row("begin capture twice: the first capture's status", (CUresult)st, (CUresult)CU_STREAM_CAPTURE_STATUS_ACTIVE);
    struct ender e = {CUDA_SUCCESS, NULL};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, end_thread, &e) == 0);
    pthread_join(t, NULL);
    row("global capture: end from another thread", e.r, CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD);
    st = (CUstreamCaptureStatus)99;
    cuStreamIsCapturing(capture_stream, &st);
    row("global capture: status after the wrong thread's end", (CUresult)st, (CUresult)CU_STREAM_CAPTURE_STATUS_NONE);
    CUgraph g = NULL;
    row("global capture: end from its own thread after that", cuStreamEndCapture(capture_stream, &g), CUDA_ERROR_ILLEGAL_STATE);
    if (g) cuGraphDestroy(g);
    row("end capture when not capturing", cuStreamEndCapture(capture_stream, &g), CUDA_ERROR_ILLEGAL_STATE);
    CU(cuStreamBeginCapture(capture_stream, RX));
    CU(cuStreamGetCaptureInfo(capture_stream, &st, &id2, NULL, NULL, NULL, NULL));
    row("capture info: a new capture gets a new id", (CUresult)(id2 != id1 && id2 != 0), (CUresult)1);
    e.g = NULL;
    CHECK(pthread_create(&t, NULL, end_thread, &e) == 0);
    pthread_join(t, NULL);
    row("relaxed capture: end from another thread", e.r, CUDA_SUCCESS);
    if (e.g) cuGraphDestroy(e.g);
    /* Invalidated: status says so until the capture is ended. */
    CU(cuStreamBeginCapture(capture_stream, G));
    cuCtxSynchronize();
    st = CU_STREAM_CAPTURE_STATUS_NONE;
    cuStreamIsCapturing(capture_stream, &st);
    row("invalidated capture: status", (CUresult)st, (CUresult)CU_STREAM_CAPTURE_STATUS_INVALIDATED);
    g = NULL;
    row("invalidated capture: end", cuStreamEndCapture(capture_stream, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    st = (CUstreamCaptureStatus)99;
    cuStreamIsCapturing(capture_stream, &st);
    row("after end: not capturing", (CUresult)st, (CUresult)CU_STREAM_CAPTURE_STATUS_NONE);
}

static void *query_captured(void *arg)
{
    CUevent *ev = arg;
    CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
    CUresult r = cuCtxSetCurrent(ctx);
    if (r == CUDA_SUCCESS) r = cuThreadExchangeStreamCaptureMode(&m);
    if (r == CUDA_SUCCESS) r = cuEventQuery(*ev);
    *ev = (CUevent)(uintptr_t)r;
    return NULL;
}

static void captured_events(void)
{
    CUevent e, e2;
    CU(cuEventCreate(&e, 0));
    CU(cuEventCreate(&e2, 0));
    /* Cross-stream capture: a stream that waits on an event recorded in a
     * capture joins it; its work lands in the same graph. */
    CU(cuStreamBeginCapture(capture_stream, G));
    CU(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, capture_stream, NULL, NULL));
    CU(cuEventRecord(e, capture_stream));
    row("cross-stream: wait on a captured event", cuStreamWaitEvent(other_stream, e, 0), CUDA_SUCCESS);
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    cuStreamIsCapturing(other_stream, &st);
    row("cross-stream: the waiting stream is capturing", (CUresult)st, (CUresult)CU_STREAM_CAPTURE_STATUS_ACTIVE);
    row("cross-stream: launch into it", cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, other_stream, NULL, NULL), CUDA_SUCCESS);
    CU(cuEventRecord(e2, other_stream));
    CU(cuStreamWaitEvent(capture_stream, e2, 0));
    CUgraph g = NULL;
    row("cross-stream: end", cuStreamEndCapture(capture_stream, &g), CUDA_SUCCESS);
    row("cross-stream: graph holds both launches", (CUresult)graph_nodes(g), (CUresult)2);
    st = (CUstreamCaptureStatus)99;
    cuStreamIsCapturing(other_stream, &st);
    row("cross-stream: the joined stream is released", (CUresult)st, (CUresult)CU_STREAM_CAPTURE_STATUS_NONE);
    if (g) cuGraphDestroy(g);
    /* An event last recorded in a capture cannot be queried, even relaxed. */
    CU(cuStreamBeginCapture(capture_stream, G));
    CU(cuEventRecord(e, capture_stream));
    CUevent q = e;
    pthread_t t;
    CHECK(pthread_create(&t, NULL, query_captured, &q) == 0);
    pthread_join(t, NULL);
    row("captured event: query from a relaxed thread", (CUresult)(uintptr_t)q, CUDA_ERROR_CAPTURED_EVENT);
    g = NULL;
    row("captured event: end after that query", cuStreamEndCapture(capture_stream, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    if (g) cuGraphDestroy(g);
    CU(cuStreamSynchronize(other_stream));
}

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    st_setup();
    CU(cuInit(0));
    CUdevice dev;
    CU(cuDeviceGet(&dev, 0));
    CU(cuDevicePrimaryCtxRetain(&ctx, dev));
    CU(cuCtxSetCurrent(ctx));
    CUmodule mod;
    CU(cuModuleLoadData(&mod, test_ptx));
    CU(cuModuleGetFunction(&fn, mod, "spin_10us"));
    CU(cuStreamCreate(&capture_stream, CU_STREAM_NON_BLOCKING));
    CU(cuStreamCreate(&other_stream, CU_STREAM_NON_BLOCKING));
    CU(cuEventCreate(&start_ev, 0));
    CU(cuEventCreate(&done_ev, 0));
    CU(cuMemAlloc(&dbuf, 4096));
    CU(cuEventRecord(start_ev, other_stream));
    CU(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, other_stream, NULL, NULL));
    CU(cuEventRecord(done_ev, other_stream));
    CU(cuCtxSynchronize());
    for (int c = 0; c < N_CALLS; c++)
        for (int cm = G; cm <= RX; cm++)
            for (int same = 1; same >= 0; same--)
                for (int tm = G; tm <= RX; tm++) matrix_case((enum call)c, cm, same, tm);
    per_thread_stream();
    legacy_beside_blocking();
    info_and_ending();
    captured_events();
    printf("%d differences\n", failures);
    return failures ? 1 : 0;
}
