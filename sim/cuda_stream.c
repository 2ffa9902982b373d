/* Streams, events, synchronisation and host functions. */
#include "cuda_internal.h"

#include <stdlib.h>

/* ---- default streams ----
 * The legacy stream is one per context (ctx->legacy). A per-thread stream is
 * one per thread and context, made on first use and blocking (it
 * synchronises with the legacy stream, so a blocking capture of it makes the
 * legacy stream unusable). The thread keeps its own in a list; an entry whose
 * context was destroyed (serial differs) is stale and reused or left. */
static __thread struct sim_stream *tls_pt;
static pthread_key_t g_pt_key;
static pthread_once_t g_pt_once = PTHREAD_ONCE_INIT;
static int g_pt_key_made;

/* Thread exit: free the thread's per-thread streams that nothing refers to
 * any more (no host function pending, in no capture); others are left. */
static void pt_exit(void *head)
{
    pthread_mutex_lock(&sim_lk);
    for (struct sim_stream *s = head, *next; s; s = next) {
        next = s->pt_next;
        if (s->pending_host == 0 && !s->cap) {
            s->magic = 0;
            sim_obj_free(s);
        }
    }
    pthread_mutex_unlock(&sim_lk);
}

static void pt_key_make(void)
{
    g_pt_key_made = pthread_key_create(&g_pt_key, pt_exit) == 0;
}

static struct sim_stream *per_thread_stream(struct sim_ctx *c, CUresult *err)
{
    struct sim_stream *s, *stale = NULL;
    pthread_mutex_lock(&sim_lk);
    for (s = tls_pt; s; s = s->pt_next) {
        if (s->ctx == c && s->ctx_serial == c->serial)
            break;
        if (s->ctx == c && s->pending_host == 0 && !s->cap)
            stale = s; /* same address, an earlier context */
    }
    if (!s && stale) {
        s = stale;
        struct sim_stream *next = s->pt_next;
        *s = (struct sim_stream){ .pt_next = next };
    } else if (!s && (s = sim_obj_alloc(sizeof *s)) != NULL) {
        s->pt_next = tls_pt;
        tls_pt = s;
        pthread_once(&g_pt_once, pt_key_make);
        if (g_pt_key_made)
            pthread_setspecific(g_pt_key, tls_pt);
    }
    if (s && s->magic != MAG_STREAM) {
        s->magic = MAG_STREAM;
        s->ctx = c;
        s->ctx_serial = c->serial;
        s->per_thread = 1;
    }
    pthread_mutex_unlock(&sim_lk);
    if (!s)
        *err = CUDA_ERROR_OUT_OF_MEMORY;
    return s;
}

struct sim_stream *sim_stream_get(CUstream h, int ptsz, CUresult *err)
{
    *err = CUDA_SUCCESS;
    if (!sim_initialized()) {
        *err = CUDA_ERROR_NOT_INITIALIZED;
        return NULL;
    }
    if (h == NULL || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD) {
        struct sim_ctx *c = sim_cur_ctx();
        if (!c) {
            *err = CUDA_ERROR_INVALID_CONTEXT;
            return NULL;
        }
        if (h == CU_STREAM_PER_THREAD || (h == NULL && ptsz))
            return per_thread_stream(c, err);
        return c->legacy;
    }
    struct sim_stream *s = (struct sim_stream *)h;
    if (s->magic != MAG_STREAM) {
        *err = CUDA_ERROR_INVALID_HANDLE;
        return NULL;
    }
    return s;
}

int sim_stream_blocking(const struct sim_stream *st)
{
    return !(st->flags & CU_STREAM_NON_BLOCKING);
}

/* sim_lk held. */
void sim_stream_advance(struct sim_stream *st, uint64_t end)
{
    if (end > st->tail)
        st->tail = end;
    if (end > st->ctx->tail)
        st->ctx->tail = end;
}

/* ---- host functions: one helper thread runs them at their stream time ---- */
struct host_job {
    uint64_t due;
    uint64_t seq;
    CUhostFn fn;
    void *data;
    struct sim_stream *st;
    struct host_job *next;
};
static struct host_job *g_jobs;
static uint64_t g_seq;
static pthread_cond_t g_job_cv;   /* new job */
static pthread_cond_t g_done_cv = PTHREAD_COND_INITIALIZER; /* a job finished */
static int g_worker_state; /* 0 none, 1 running, -1 failed; sim_lk */

static void *worker(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&sim_lk);
    for (;;) {
        if (!g_jobs) {
            pthread_cond_wait(&g_job_cv, &sim_lk);
            continue;
        }
        uint64_t now = sim_now_ns();
        if (g_jobs->due > now) {
            struct timespec ts = { (time_t)(g_jobs->due / 1000000000ull), (long)(g_jobs->due % 1000000000ull) };
            pthread_cond_timedwait(&g_job_cv, &sim_lk, &ts);
            continue;
        }
        struct host_job *j = g_jobs;
        g_jobs = j->next;
        pthread_mutex_unlock(&sim_lk);
        j->fn(j->data);
        pthread_mutex_lock(&sim_lk);
        j->st->pending_host--;
        j->st->ctx->pending_host--;
        free(j);
        pthread_cond_broadcast(&g_done_cv);
    }
    return NULL;
}

void sim_stream_after_fork(void)
{
    tls_pt = NULL; /* the forking thread's per-thread streams were the parent's */
    if (g_pt_key_made)
        pthread_setspecific(g_pt_key, NULL);
    g_jobs = NULL; /* the helper thread does not exist in the child */
    g_worker_state = 0;
    pthread_cond_init(&g_done_cv, NULL);
}

/* sim_lk held */
static void worker_start(void)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&g_job_cv, &a);
    pthread_condattr_destroy(&a);
    pthread_t t;
    pthread_attr_t ta;
    pthread_attr_init(&ta);
    pthread_attr_setdetachstate(&ta, PTHREAD_CREATE_DETACHED);
    g_worker_state = pthread_create(&t, &ta, worker, NULL) == 0 ? 1 : -1;
    pthread_attr_destroy(&ta);
}

static CUresult host_func(CUstream h, int ptsz, CUhostFn fn, void *data)
{
    CUresult r;
    struct sim_stream *st = sim_stream_get(h, ptsz, &r);
    if (!st)
        return r;
    if (!fn)
        return CUDA_ERROR_INVALID_VALUE;
    struct host_job *j = calloc(1, sizeof *j);
    if (!j)
        return CUDA_ERROR_OUT_OF_MEMORY;
    j->fn = fn;
    j->data = data;
    j->st = st;
    pthread_mutex_lock(&sim_lk);
    struct sim_capture *cap;
    r = sim_capture_enqueue(st, &cap);
    if (r != CUDA_SUCCESS || cap) {
        /* Captured: the function never runs (no host node is made). */
        pthread_mutex_unlock(&sim_lk);
        free(j);
        return r;
    }
    if (g_worker_state == 0)
        worker_start();
    if (g_worker_state < 0) {
        pthread_mutex_unlock(&sim_lk);
        free(j);
        return CUDA_ERROR_OPERATING_SYSTEM;
    }
    j->due = st->tail;
    j->seq = g_seq++;
    struct host_job **pp = &g_jobs;
    while (*pp && ((*pp)->due < j->due || ((*pp)->due == j->due && (*pp)->seq < j->seq)))
        pp = &(*pp)->next;
    j->next = *pp;
    *pp = j;
    st->pending_host++;
    st->ctx->pending_host++;
    pthread_cond_signal(&g_job_cv);
    pthread_mutex_unlock(&sim_lk);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData)
{
    return host_func(hStream, 0, fn, userData);
}

CUresult CUDAAPI cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData)
{
    return host_func(hStream, 1, fn, userData);
}

static void wait_host(int *counter)
{
    pthread_mutex_lock(&sim_lk);
    while (*counter > 0)
        pthread_cond_wait(&g_done_cv, &sim_lk);
    pthread_mutex_unlock(&sim_lk);
}

void sim_wait_host_ctx(struct sim_ctx *c)
{
    wait_host(&c->pending_host);
}

/* ---- streams ---- */
CUresult CUDAAPI cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
{
    SIM_CHECK_INIT();
    if (!phStream)
        return CUDA_ERROR_INVALID_VALUE;
    struct sim_ctx *c = sim_cur_ctx();
    if (!c)
        return CUDA_ERROR_INVALID_CONTEXT;
    struct sim_stream *s = sim_obj_alloc(sizeof *s);
    if (!s)
        return CUDA_ERROR_OUT_OF_MEMORY;
    s->magic = MAG_STREAM;
    s->ctx = c;
    s->flags = flags;
    s->priority = priority;
    *phStream = (CUstream)s;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    return cuStreamCreateWithPriority(phStream, Flags, 0);
}

CUresult CUDAAPI cuStreamDestroy_v2(CUstream hStream)
{
    CUresult r;
    if (!hStream)
        return CUDA_ERROR_INVALID_HANDLE;
    struct sim_stream *s = sim_stream_get(hStream, 0, &r);
    if (!s)
        return r;
    if (s == s->ctx->legacy || s->per_thread)
        return CUDA_ERROR_INVALID_HANDLE;
    wait_host(&s->pending_host);
    pthread_mutex_lock(&sim_lk);
    sim_capture_stream_gone(s);
    pthread_mutex_unlock(&sim_lk);
    s->magic = 0;
    sim_obj_free(s);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamDestroy(CUstream hStream)
{
    return cuStreamDestroy_v2(hStream);
}

static CUresult stream_sync(CUstream h, int ptsz)
{
    CUresult r;
    struct sim_stream *s = sim_stream_get(h, ptsz, &r);
    if (!s)
        return r;
    pthread_mutex_lock(&sim_lk);
    r = sim_capture_stream_sync(s);
    uint64_t t = s->tail;
    pthread_mutex_unlock(&sim_lk);
    if (r != CUDA_SUCCESS)
        return r;
    sim_sleep_until(t);
    wait_host(&s->pending_host);
    sim_release_pools_at_sync(s->ctx->dev);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream hStream) { return stream_sync(hStream, 0); }
CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream hStream) { return stream_sync(hStream, 1); }

static CUresult stream_query(CUstream h, int ptsz)
{
    CUresult r;
    struct sim_stream *s = sim_stream_get(h, ptsz, &r);
    if (!s)
        return r;
    pthread_mutex_lock(&sim_lk);
    r = sim_capture_stream_sync(s);
    int ready = s->tail <= sim_now_ns() && s->pending_host == 0;
    pthread_mutex_unlock(&sim_lk);
    if (r != CUDA_SUCCESS)
        return r;
    return ready ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult CUDAAPI cuStreamQuery(CUstream hStream) { return stream_query(hStream, 0); }
CUresult CUDAAPI cuStreamQuery_ptsz(CUstream hStream) { return stream_query(hStream, 1); }

static CUresult stream_wait_event(CUstream h, int ptsz, CUevent ev, unsigned flags)
{
    (void)flags;
    CUresult r;
    struct sim_stream *s = sim_stream_get(h, ptsz, &r);
    struct sim_event *e = (struct sim_event *)ev;
    if (!s)
        return r;
    if (!e || e->magic != MAG_EVENT)
        return CUDA_ERROR_INVALID_HANDLE;
    int no_timing;
    pthread_mutex_lock(&sim_lk);
    r = sim_capture_stream_wait(s, e, &no_timing);
    if (r == CUDA_SUCCESS && !no_timing && e->recorded)
        sim_stream_advance(s, e->t);
    pthread_mutex_unlock(&sim_lk);
    return r;
}

CUresult CUDAAPI cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    return stream_wait_event(hStream, 0, hEvent, Flags);
}

CUresult CUDAAPI cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    return stream_wait_event(hStream, 1, hEvent, Flags);
}

CUresult CUDAAPI cuStreamGetCtx(CUstream hStream, CUcontext *pctx)
{
    CUresult r;
    struct sim_stream *s = sim_stream_get(hStream, 0, &r);
    if (!s)
        return r;
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    *pctx = (CUcontext)s->ctx;
    return CUDA_SUCCESS;
}

/* The stream's device (CUDA 12.8): for NULL, CU_STREAM_LEGACY and
 * CU_STREAM_PER_THREAD the current context's. CUDACAP_SIM_NO_STREAM_DEVICE=1
 * plays a driver without it (callers fall back to cuStreamGetCtx). */
static CUresult stream_get_device(CUstream hStream, int ptsz, CUdevice *device)
{
    CUresult r;
    if (sim_config()->no_stream_device)
        return CUDA_ERROR_NOT_SUPPORTED;
    struct sim_stream *s = sim_stream_get(hStream, ptsz, &r);
    if (!s)
        return r;
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    *device = (CUdevice)s->ctx->dev;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamGetDevice(CUstream hStream, CUdevice *device)
{
    return stream_get_device(hStream, 0, device);
}

CUresult CUDAAPI cuStreamGetDevice_ptsz(CUstream hStream, CUdevice *device)
{
    return stream_get_device(hStream, 1, device);
}

/* ---- events ---- */
CUresult CUDAAPI cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
    SIM_CHECK_INIT();
    if (!phEvent)
        return CUDA_ERROR_INVALID_VALUE;
    struct sim_event *e = sim_obj_alloc(sizeof *e);
    if (!e)
        return CUDA_ERROR_OUT_OF_MEMORY;
    e->magic = MAG_EVENT;
    e->flags = Flags;
    *phEvent = (CUevent)e;
    return CUDA_SUCCESS;
}

static CUresult event_record(CUevent ev, CUstream h, int ptsz)
{
    CUresult r;
    struct sim_event *e = (struct sim_event *)ev;
    if (!e || e->magic != MAG_EVENT)
        return CUDA_ERROR_INVALID_HANDLE;
    struct sim_stream *s = sim_stream_get(h, ptsz, &r);
    if (!s)
        return r;
    uint64_t now = sim_now_ns();
    struct sim_capture *cap;
    pthread_mutex_lock(&sim_lk);
    r = sim_capture_enqueue(s, &cap);
    if (r == CUDA_SUCCESS)
        sim_capture_event_record(e, cap);
    if (r == CUDA_SUCCESS && !cap) {
        /* Captured records never complete: the time stays the last real one. */
        e->t = s->tail > now ? s->tail : now;
        e->recorded = 1;
    }
    pthread_mutex_unlock(&sim_lk);
    return r;
}

CUresult CUDAAPI cuEventRecord(CUevent hEvent, CUstream hStream) { return event_record(hEvent, hStream, 0); }
CUresult CUDAAPI cuEventRecord_ptsz(CUevent hEvent, CUstream hStream) { return event_record(hEvent, hStream, 1); }

CUresult CUDAAPI cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags)
{
    (void)flags;
    return event_record(hEvent, hStream, 0);
}

CUresult CUDAAPI cuEventRecordWithFlags_ptsz(CUevent hEvent, CUstream hStream, unsigned int flags)
{
    (void)flags;
    return event_record(hEvent, hStream, 1);
}

CUresult CUDAAPI cuEventQuery(CUevent hEvent)
{
    struct sim_event *e = (struct sim_event *)hEvent;
    if (!e || e->magic != MAG_EVENT)
        return CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&sim_lk);
    CUresult r = sim_capture_event_wait(e);
    int ready = !e->recorded || e->t <= sim_now_ns();
    pthread_mutex_unlock(&sim_lk);
    if (r != CUDA_SUCCESS)
        return r;
    return ready ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult CUDAAPI cuEventSynchronize(CUevent hEvent)
{
    struct sim_event *e = (struct sim_event *)hEvent;
    if (!e || e->magic != MAG_EVENT)
        return CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&sim_lk);
    CUresult r = sim_capture_event_wait(e);
    uint64_t t = e->recorded ? e->t : 0;
    pthread_mutex_unlock(&sim_lk);
    if (r != CUDA_SUCCESS)
        return r;
    sim_sleep_until(t);
    int d;
    if (sim_cur_dev(&d) == CUDA_SUCCESS)
        sim_release_pools_at_sync(d);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    struct sim_event *a = (struct sim_event *)hStart, *b = (struct sim_event *)hEnd;
    if (!pMilliseconds)
        return CUDA_ERROR_INVALID_VALUE;
    if (!a || !b || a->magic != MAG_EVENT || b->magic != MAG_EVENT || !a->recorded || !b->recorded ||
        (a->flags & CU_EVENT_DISABLE_TIMING) || (b->flags & CU_EVENT_DISABLE_TIMING))
        return CUDA_ERROR_INVALID_HANDLE;
    uint64_t now = sim_now_ns();
    if (a->t > now || b->t > now)
        return CUDA_ERROR_NOT_READY;
    *pMilliseconds = (float)((double)((int64_t)b->t - (int64_t)a->t) / 1e6);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    return cuEventElapsedTime_v2(pMilliseconds, hStart, hEnd);
}

CUresult CUDAAPI cuEventDestroy_v2(CUevent hEvent)
{
    struct sim_event *e = (struct sim_event *)hEvent;
    if (!e || e->magic != MAG_EVENT)
        return CUDA_ERROR_INVALID_HANDLE;
    e->magic = 0;
    sim_obj_free(e);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventDestroy(CUevent hEvent)
{
    return cuEventDestroy_v2(hEvent);
}
