/* Streams, events, synchronisation and host functions. */
#include "cuda_internal.h"

#include <stdlib.h>

struct sim_stream *sim_stream_get(CUstream h, CUresult *err)
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
        return c->null_stream;
    }
    struct sim_stream *s = (struct sim_stream *)h;
    if (s->magic != MAG_STREAM) {
        *err = CUDA_ERROR_INVALID_HANDLE;
        return NULL;
    }
    return s;
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

static CUresult host_func(CUstream h, CUhostFn fn, void *data)
{
    CUresult r;
    struct sim_stream *st = sim_stream_get(h, &r);
    if (!st)
        return r;
    if (!fn)
        return CUDA_ERROR_INVALID_VALUE;
    if (st->capture)
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    struct host_job *j = calloc(1, sizeof *j);
    if (!j)
        return CUDA_ERROR_OUT_OF_MEMORY;
    j->fn = fn;
    j->data = data;
    j->st = st;
    pthread_mutex_lock(&sim_lk);
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
    return host_func(hStream, fn, userData);
}

CUresult CUDAAPI cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData)
{
    return host_func(hStream, fn, userData);
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
    struct sim_stream *s = sim_stream_get(hStream, &r);
    if (!s)
        return r;
    if (s == s->ctx->null_stream)
        return CUDA_ERROR_INVALID_HANDLE;
    wait_host(&s->pending_host);
    s->magic = 0;
    sim_obj_free(s);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamDestroy(CUstream hStream)
{
    return cuStreamDestroy_v2(hStream);
}

static CUresult stream_sync(CUstream h)
{
    CUresult r;
    struct sim_stream *s = sim_stream_get(h, &r);
    if (!s)
        return r;
    pthread_mutex_lock(&sim_lk);
    uint64_t t = s->tail;
    pthread_mutex_unlock(&sim_lk);
    sim_sleep_until(t);
    wait_host(&s->pending_host);
    sim_release_pools_at_sync(s->ctx->dev);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream hStream) { return stream_sync(hStream); }
CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream hStream) { return stream_sync(hStream); }

static CUresult stream_query(CUstream h)
{
    CUresult r;
    struct sim_stream *s = sim_stream_get(h, &r);
    if (!s)
        return r;
    pthread_mutex_lock(&sim_lk);
    int ready = s->tail <= sim_now_ns() && s->pending_host == 0;
    pthread_mutex_unlock(&sim_lk);
    return ready ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult CUDAAPI cuStreamQuery(CUstream hStream) { return stream_query(hStream); }
CUresult CUDAAPI cuStreamQuery_ptsz(CUstream hStream) { return stream_query(hStream); }

static CUresult stream_wait_event(CUstream h, CUevent ev, unsigned flags)
{
    (void)flags;
    CUresult r;
    struct sim_stream *s = sim_stream_get(h, &r);
    struct sim_event *e = (struct sim_event *)ev;
    if (!s)
        return r;
    if (!e || e->magic != MAG_EVENT)
        return CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&sim_lk);
    if (e->recorded)
        sim_stream_advance(s, e->t);
    pthread_mutex_unlock(&sim_lk);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    return stream_wait_event(hStream, hEvent, Flags);
}

CUresult CUDAAPI cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    return stream_wait_event(hStream, hEvent, Flags);
}

CUresult CUDAAPI cuStreamGetCtx(CUstream hStream, CUcontext *pctx)
{
    CUresult r;
    struct sim_stream *s = sim_stream_get(hStream, &r);
    if (!s)
        return r;
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    *pctx = (CUcontext)s->ctx;
    return CUDA_SUCCESS;
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

static CUresult event_record(CUevent ev, CUstream h)
{
    CUresult r;
    struct sim_event *e = (struct sim_event *)ev;
    if (!e || e->magic != MAG_EVENT)
        return CUDA_ERROR_INVALID_HANDLE;
    struct sim_stream *s = sim_stream_get(h, &r);
    if (!s)
        return r;
    uint64_t now = sim_now_ns();
    pthread_mutex_lock(&sim_lk);
    e->t = s->tail > now ? s->tail : now;
    e->recorded = 1;
    pthread_mutex_unlock(&sim_lk);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventRecord(CUevent hEvent, CUstream hStream) { return event_record(hEvent, hStream); }
CUresult CUDAAPI cuEventRecord_ptsz(CUevent hEvent, CUstream hStream) { return event_record(hEvent, hStream); }

CUresult CUDAAPI cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags)
{
    (void)flags;
    return event_record(hEvent, hStream);
}

CUresult CUDAAPI cuEventQuery(CUevent hEvent)
{
    struct sim_event *e = (struct sim_event *)hEvent;
    if (!e || e->magic != MAG_EVENT)
        return CUDA_ERROR_INVALID_HANDLE;
    return !e->recorded || e->t <= sim_now_ns() ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult CUDAAPI cuEventSynchronize(CUevent hEvent)
{
    struct sim_event *e = (struct sim_event *)hEvent;
    if (!e || e->magic != MAG_EVENT)
        return CUDA_ERROR_INVALID_HANDLE;
    if (e->recorded)
        sim_sleep_until(e->t);
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
