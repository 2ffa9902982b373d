/* Stream capture: capture sequences, the per-thread capture interaction
 * mode, and the checks the other entry points make against them (which
 * calls a capture forbids, which it invalidates). The rules are what
 * NVIDIA's driver 580 returned on an H200 for sim/tests/test_capture.c;
 * sim/README.md ("Stream capture") lists them and what is not modelled. */
#include "cuda_internal.h"

#include <stdlib.h>

static struct sim_capture *g_caps; /* live (begun, not ended) captures; sim_lk */
static uint64_t g_next_id = 1;     /* sim_lk */
static uint64_t g_next_thread = 1; /* atomic */
static __thread uint64_t tls_thread;
static __thread CUstreamCaptureMode tls_mode; /* 0 = CU_STREAM_CAPTURE_MODE_GLOBAL, the default */

uint64_t sim_thread_id(void)
{
    /* Not pthread_self(): a thread id can be reused once its thread has
     * exited, and a capture begun by a dead thread must stay foreign. */
    if (!tls_thread)
        tls_thread = __atomic_fetch_add(&g_next_thread, 1, __ATOMIC_RELAXED);
    return tls_thread;
}

/* ---- capture sequences (sim_lk held) ---- */
static int joined_add(struct sim_capture *c, struct sim_stream *st)
{
    if (c->njoined == c->capjoined) {
        size_t n = c->capjoined ? c->capjoined * 2 : 4;
        struct sim_stream **t = realloc(c->joined, n * sizeof *t);
        if (!t)
            return -1;
        c->joined = t;
        c->capjoined = n;
    }
    c->joined[c->njoined++] = st;
    st->cap = c;
    return 0;
}

/* Ends the sequence: its streams leave it, it leaves the live list. Returns
 * its graph, which the caller hands out or destroys. */
static struct sim_graph *terminate(struct sim_capture *c)
{
    for (struct sim_capture **pp = &g_caps; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    if (c->origin)
        c->origin->cap = NULL;
    for (size_t i = 0; i < c->njoined; i++)
        c->joined[i]->cap = NULL;
    struct sim_graph *g = c->graph;
    free(c->joined);
    sim_obj_free(c);
    return g;
}

static void destroy_graph(struct sim_graph *g)
{
    if (g)
        cuGraphDestroy((CUgraph)g); /* takes no lock */
}

static struct sim_capture *find_id(uint64_t id)
{
    struct sim_capture *c = g_caps;
    while (c && c->id != id)
        c = c->next;
    return id ? c : NULL;
}

static int has_blocking_stream(const struct sim_capture *c)
{
    if (c->origin && sim_stream_blocking(c->origin))
        return 1;
    for (size_t i = 0; i < c->njoined; i++)
        if (sim_stream_blocking(c->joined[i]))
            return 1;
    return 0;
}

/* Captures of ctx with a blocking stream: the legacy stream would depend on
 * them implicitly. Invalidates them if asked. */
static int blocking_captures(struct sim_ctx *ctx, int invalidate)
{
    int n = 0;
    for (struct sim_capture *c = g_caps; c; c = c->next)
        if (c->ctx == ctx && has_blocking_stream(c)) {
            n++;
            if (invalidate)
                c->invalidated = 1;
        }
    return n;
}

static int is_legacy(const struct sim_stream *st)
{
    return st == st->ctx->legacy;
}

/* ---- the checks other entry points make (sim_lk held) ---- */

/* Work (a launch, an event record or wait, an async copy or memset, a host
 * function, a graph launch, a stream-ordered allocation) is about to go into
 * st. The legacy stream beside a blocking capture of its context: 906, those
 * captures invalidated. A stream in an invalidated capture: 901. */
CUresult sim_capture_enqueue(struct sim_stream *st, struct sim_capture **cap)
{
    *cap = NULL;
    if (is_legacy(st))
        return blocking_captures(st->ctx, 1) ? CUDA_ERROR_STREAM_CAPTURE_IMPLICIT : CUDA_SUCCESS;
    if (st->cap && st->cap->invalidated)
        return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    *cap = st->cap;
    return CUDA_SUCCESS;
}

/* The same from an entry point that holds no lock: h resolved (through a
 * _ptsz entry point if ptsz), then the check. NULL and *err on failure. */
struct sim_stream *sim_stream_for_enqueue(CUstream h, int ptsz, struct sim_capture **cap,
                                          CUresult *err)
{
    *cap = NULL;
    struct sim_stream *st = sim_stream_get(h, ptsz, err);
    if (!st)
        return NULL;
    pthread_mutex_lock(&sim_lk);
    *err = sim_capture_enqueue(st, cap);
    pthread_mutex_unlock(&sim_lk);
    return *err == CUDA_SUCCESS ? st : NULL;
}

/* The documented rule for potentially unsafe calls (host-synchronous queries
 * and waits, cuMemAlloc/cuMemFree): a thread in relaxed mode is never
 * prohibited; otherwise it is while it has a capture of its own not begun
 * relaxed, and in global mode also while any other thread has a capture
 * begun global. The refused call invalidates those captures. Invalidated
 * captures still count: they go on until ended. */
CUresult sim_capture_unsafe_call(void)
{
    if (tls_mode == CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_SUCCESS;
    uint64_t me = sim_thread_id();
    int bad = 0;
    for (struct sim_capture *c = g_caps; c; c = c->next) {
        int conflict = c->thread == me ? c->mode != CU_STREAM_CAPTURE_MODE_RELAXED
                                       : tls_mode == CU_STREAM_CAPTURE_MODE_GLOBAL &&
                                             c->mode == CU_STREAM_CAPTURE_MODE_GLOBAL;
        if (conflict) {
            c->invalidated = 1;
            bad = 1;
        }
    }
    return bad ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_SUCCESS;
}

/* cuStreamQuery/cuStreamSynchronize: besides the thread-mode rule, querying
 * or waiting for the legacy stream beside a blocking capture is a use of it
 * (906), and a capturing stream has nothing scheduled to wait for (900 in
 * every mode; the CUDA programming guide's "Prohibited and Unhandled
 * Operations"); both invalidate. */
CUresult sim_capture_stream_sync(struct sim_stream *st)
{
    if (is_legacy(st) && blocking_captures(st->ctx, 1))
        return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    if (st->cap) {
        st->cap->invalidated = 1;
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    return sim_capture_unsafe_call();
}

/* cuCtxSynchronize would wait on the capturing streams themselves: refused
 * while any capture of the context goes on, whatever the modes, and every
 * capture of the context is invalidated (H200). */
CUresult sim_capture_ctx_sync(struct sim_ctx *ctx)
{
    int bad = 0;
    for (struct sim_capture *c = g_caps; c; c = c->next)
        if (c->ctx == ctx) {
            c->invalidated = 1;
            bad = 1;
        }
    return bad ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : sim_capture_unsafe_call();
}

/* cuEventQuery/cuEventSynchronize: the thread-mode rule first, then an event
 * last recorded into a capture that goes on is refused from any thread in
 * any mode (907), invalidating that capture. */
CUresult sim_capture_event_wait(struct sim_event *e)
{
    CUresult r = sim_capture_unsafe_call();
    if (r != CUDA_SUCCESS)
        return r;
    struct sim_capture *c = find_id(e->cap_id);
    if (!c)
        return CUDA_SUCCESS;
    c->invalidated = 1;
    return CUDA_ERROR_CAPTURED_EVENT;
}

/* cuEventRecord into st, after sim_capture_enqueue gave cap: the event
 * belongs to that capture, or (cap NULL) to none any more. */
void sim_capture_event_record(struct sim_event *e, struct sim_capture *cap)
{
    e->cap_id = cap ? cap->id : 0;
}

/* cuStreamWaitEvent(st, e). Waiting on an event recorded into a capture
 * joins that capture (cross-stream capture); the legacy stream cannot be
 * captured (900), nor can a stream of another capture merge into it (902);
 * both invalidate. *no_timing: the wait is a capture dependency, not a wait
 * in time. */
CUresult sim_capture_stream_wait(struct sim_stream *st, struct sim_event *e, int *no_timing)
{
    struct sim_capture *own;
    CUresult r = sim_capture_enqueue(st, &own);
    *no_timing = own != NULL;
    if (r != CUDA_SUCCESS)
        return r;
    struct sim_capture *c = find_id(e->cap_id);
    if (!c || c == own)
        return CUDA_SUCCESS;
    *no_timing = 1;
    if (c->invalidated)
        return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    if (is_legacy(st)) {
        c->invalidated = 1;
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    if (own) {
        own->invalidated = c->invalidated = 1;
        return CUDA_ERROR_STREAM_CAPTURE_MERGE;
    }
    return joined_add(c, st) == 0 ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

/* cuStreamDestroy of a stream in a capture: a joined stream leaves it; the
 * origin takes the capture with it (nothing could end it any more). */
void sim_capture_stream_gone(struct sim_stream *st)
{
    struct sim_capture *c = st->cap;
    if (!c)
        return;
    if (c->origin == st) {
        destroy_graph(terminate(c));
        return;
    }
    for (size_t i = 0; i < c->njoined; i++)
        if (c->joined[i] == st) {
            c->joined[i] = c->joined[--c->njoined];
            break;
        }
    st->cap = NULL;
}

/* A context is destroyed: its captures end with it. */
void sim_capture_ctx_gone(struct sim_ctx *ctx)
{
    struct sim_capture *c = g_caps;
    while (c) {
        struct sim_capture *next = c->next;
        if (c->ctx == ctx)
            destroy_graph(terminate(c));
        c = next;
    }
}

void sim_capture_after_fork(void)
{
    /* The child has no captures and its (only) thread the default mode. */
    while (g_caps)
        destroy_graph(terminate(g_caps));
    tls_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
}

/* ---- entry points ---- */
CUresult CUDAAPI cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
    SIM_CHECK_INIT();
    if (!mode || (unsigned)*mode > CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    CUstreamCaptureMode old = tls_mode;
    tls_mode = *mode;
    *mode = old;
    return CUDA_SUCCESS;
}

static CUresult begin_capture(CUstream h, int ptsz, CUstreamCaptureMode mode)
{
    CUresult r;
    struct sim_stream *st = sim_stream_get(h, ptsz, &r);
    if (!st)
        return r;
    if ((unsigned)mode > CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    if (is_legacy(st))
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    CUgraph g;
    struct sim_capture *c = sim_obj_alloc(sizeof *c);
    if (!c || (r = cuGraphCreate(&g, 0)) != CUDA_SUCCESS) {
        sim_obj_free(c);
        return c ? r : CUDA_ERROR_OUT_OF_MEMORY;
    }
    c->mode = mode;
    c->thread = sim_thread_id();
    c->graph = (struct sim_graph *)g;
    c->ctx = st->ctx;
    c->origin = st;
    pthread_mutex_lock(&sim_lk);
    if (st->cap) {
        /* Already capturing (origin or joined): that capture goes on. */
        pthread_mutex_unlock(&sim_lk);
        sim_obj_free(c);
        destroy_graph((struct sim_graph *)g);
        return CUDA_ERROR_ILLEGAL_STATE;
    }
    c->id = g_next_id++;
    c->next = g_caps;
    g_caps = c;
    st->cap = c;
    pthread_mutex_unlock(&sim_lk);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamBeginCapture(CUstream hStream)
{
    return begin_capture(hStream, 0, CU_STREAM_CAPTURE_MODE_GLOBAL);
}

CUresult CUDAAPI cuStreamBeginCapture_ptsz(CUstream hStream)
{
    return begin_capture(hStream, 1, CU_STREAM_CAPTURE_MODE_GLOBAL);
}

CUresult CUDAAPI cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
    return begin_capture(hStream, 0, mode);
}

CUresult CUDAAPI cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode)
{
    return begin_capture(hStream, 1, mode);
}

static CUresult end_capture(CUstream h, int ptsz, CUgraph *out)
{
    CUresult r;
    struct sim_stream *st = sim_stream_get(h, ptsz, &r);
    if (!st)
        return r;
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    struct sim_graph *g = NULL, *drop = NULL;
    pthread_mutex_lock(&sim_lk);
    struct sim_capture *c = st->cap;
    if (!c) {
        r = CUDA_ERROR_ILLEGAL_STATE;
    } else if (c->origin != st) {
        r = CUDA_ERROR_STREAM_CAPTURE_UNMATCHED; /* a joined stream; the capture goes on */
    } else if (c->mode != CU_STREAM_CAPTURE_MODE_RELAXED && c->thread != sim_thread_id()) {
        /* Wrong thread. The H200 (driver 580) refused the end and yet ended
         * the capture: the beginning thread's own end then returned 401.
         * Being re-checked on the GPU; this is the only place that models it. */
        r = CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
        drop = terminate(c);
    } else if (c->invalidated) {
        r = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
        drop = terminate(c);
    } else {
        g = terminate(c);
    }
    pthread_mutex_unlock(&sim_lk);
    destroy_graph(drop);
    if (r == CUDA_SUCCESS || r == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED)
        *out = (CUgraph)g;
    return r;
}

CUresult CUDAAPI cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
    return end_capture(hStream, 0, phGraph);
}

CUresult CUDAAPI cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph)
{
    return end_capture(hStream, 1, phGraph);
}

/* Status (and, while active, id and graph) of h. The legacy stream beside
 * a blocking capture answers 906 and invalidates nothing. */
static CUresult capture_info(CUstream h, int ptsz, CUstreamCaptureStatus *status, cuuint64_t *id,
                             CUgraph *graph, const CUgraphNode **deps, const CUgraphEdgeData **edges,
                             size_t *ndeps)
{
    CUresult r;
    struct sim_stream *st = sim_stream_get(h, ptsz, &r);
    if (!st)
        return r;
    if (!status || (edges && !deps))
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim_lk);
    struct sim_capture *c = st->cap;
    if (is_legacy(st) && blocking_captures(st->ctx, 0)) {
        r = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    } else if (!c) {
        *status = CU_STREAM_CAPTURE_STATUS_NONE;
    } else if (c->invalidated) {
        *status = CU_STREAM_CAPTURE_STATUS_INVALIDATED;
    } else {
        *status = CU_STREAM_CAPTURE_STATUS_ACTIVE;
        if (id)
            *id = c->id;
        if (graph)
            *graph = (CUgraph)c->graph;
        /* Dependencies are not tracked: reported as none. */
        if (deps)
            *deps = NULL;
        if (edges)
            *edges = NULL;
        if (ndeps)
            *ndeps = 0;
    }
    pthread_mutex_unlock(&sim_lk);
    return r;
}

CUresult CUDAAPI cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *s)
{
    return capture_info(hStream, 0, s, NULL, NULL, NULL, NULL, NULL);
}

CUresult CUDAAPI cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus *s)
{
    return capture_info(hStream, 1, s, NULL, NULL, NULL, NULL, NULL);
}

CUresult CUDAAPI cuStreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus *s, cuuint64_t *id)
{
    return capture_info(hStream, 0, s, id, NULL, NULL, NULL, NULL);
}

CUresult CUDAAPI cuStreamGetCaptureInfo_ptsz(CUstream hStream, CUstreamCaptureStatus *s, cuuint64_t *id)
{
    return capture_info(hStream, 1, s, id, NULL, NULL, NULL, NULL);
}

CUresult CUDAAPI cuStreamGetCaptureInfo_v2(CUstream hStream, CUstreamCaptureStatus *s, cuuint64_t *id,
                                           CUgraph *graph, const CUgraphNode **deps, size_t *ndeps)
{
    return capture_info(hStream, 0, s, id, graph, deps, NULL, ndeps);
}

CUresult CUDAAPI cuStreamGetCaptureInfo_v2_ptsz(CUstream hStream, CUstreamCaptureStatus *s, cuuint64_t *id,
                                                CUgraph *graph, const CUgraphNode **deps, size_t *ndeps)
{
    return capture_info(hStream, 1, s, id, graph, deps, NULL, ndeps);
}

CUresult CUDAAPI cuStreamGetCaptureInfo_v3(CUstream hStream, CUstreamCaptureStatus *s, cuuint64_t *id,
                                           CUgraph *graph, const CUgraphNode **deps,
                                           const CUgraphEdgeData **edges, size_t *ndeps)
{
    return capture_info(hStream, 0, s, id, graph, deps, edges, ndeps);
}

CUresult CUDAAPI cuStreamGetCaptureInfo_v3_ptsz(CUstream hStream, CUstreamCaptureStatus *s, cuuint64_t *id,
                                                CUgraph *graph, const CUgraphNode **deps,
                                                const CUgraphEdgeData **edges, size_t *ndeps)
{
    return capture_info(hStream, 1, s, id, graph, deps, edges, ndeps);
}
