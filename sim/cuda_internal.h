/* Process-local objects of the simulated driver (libcuda.so.1). */
#ifndef CUDACAP_SIM_CUDA_INTERNAL_H
#define CUDACAP_SIM_CUDA_INTERNAL_H

#define __CUDA_API_VERSION_INTERNAL 1
#define __CUDA_API_VERSION_INTERNAL_ODR 1
#include <cuda.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "sim_shared.h"

#define SIM_BACKED_MAX (64ull << 20) /* allocations up to this size get host backing */

enum { MAG_CTX = 0x43545831, MAG_STREAM, MAG_EVENT, MAG_FUNC, MAG_MODULE, MAG_POOL, MAG_GRAPH,
       MAG_EXEC, MAG_NODE, MAG_ARRAY, MAG_MIPMAP, MAG_VMM };

struct sim_stream;
struct sim_capture;

struct sim_ctx {
    uint32_t magic;
    int dev;
    unsigned flags;
    int primary;
    uint64_t serial;          /* process-unique per creation: tells a recreated context at the same address apart */
    struct sim_stream *legacy; /* the legacy default stream (NULL / CU_STREAM_LEGACY) */
    uint64_t tail;            /* latest end time of any work in this context */
    int pending_host;         /* host functions not yet run */
    uint64_t limit[3];        /* stack, printf FIFO, malloc heap (cuCtxSetLimit); 0: default */
    uint64_t limit_bytes;     /* device memory charged for them beyond the defaults */
};

/* cuda_limits.c: give back what a context's limits charged (at destroy). */
void sim_ctx_limits_gone(struct sim_ctx *c);

struct sim_graph;

struct sim_stream {
    uint32_t magic;
    struct sim_ctx *ctx;
    unsigned flags;
    int priority;
    uint64_t tail;            /* end time of the last work in stream order */
    int pending_host;
    struct sim_capture *cap;  /* capture sequence it belongs to (origin or joined); sim_lk */
    int per_thread;           /* a thread's per-thread default stream (cuda_stream.c) */
    uint64_t ctx_serial;      /* per-thread streams: ctx->serial when made */
    struct sim_stream *pt_next; /* per-thread streams: the owning thread's list */
};

struct sim_event {
    uint32_t magic;
    unsigned flags;
    int recorded;
    uint64_t t;
    uint64_t cap_id;          /* last recorded into this capture (its id), 0: not; sim_lk */
};

struct sim_func {
    uint32_t magic;
    uint64_t spin_us;
    char name[64];
    struct sim_func *next;
};

struct sim_module {
    uint32_t magic;
    struct sim_func *funcs;
    int dev;                  /* where its memory (CUDACAP_SIM_MODULE_MEM) was charged */
    uint64_t bytes;
};

struct sim_pool {
    uint32_t magic;
    int dev;
    int is_default;
    uint64_t reserved, used, threshold, reserved_high, used_high;
    struct sim_pool *next;
};

struct sim_node {
    uint32_t magic;
    CUgraphNodeType type;
    struct sim_graph *graph;
    CUDA_KERNEL_NODE_PARAMS kparams;
    size_t bytes;             /* mem alloc node */
    int dev;
    CUdeviceptr dptr;         /* mem alloc / free node */
};

struct sim_graph {
    uint32_t magic;
    struct sim_node **nodes;
    size_t n, cap;
};

/* Handles (contexts, streams, modules, ...) are allocated through these so
 * that they stay reachable from a global list until destroyed: programs that
 * exit without destroying them do not show up as leaks under LeakSanitizer. */
void *sim_obj_alloc(size_t size);   /* zeroed; NULL on failure */
void sim_obj_free(void *p);

/* Lock for all process-local tables. */
extern pthread_mutex_t sim_lk;

/* Contexts (cuda_ctx.c). */
struct sim_ctx *sim_cur_ctx(void);
CUresult sim_cur_dev(int *dev);
int sim_valid_dev(CUdevice d);

/* Streams (cuda_stream.c): NULL when invalid; *err set. ptsz: reached
 * through a _ptsz/_ptds entry point, where NULL means the calling thread's
 * per-thread stream (elsewhere the legacy stream). */
struct sim_stream *sim_stream_get(CUstream h, int ptsz, CUresult *err);
int sim_stream_blocking(const struct sim_stream *st); /* synchronises with the legacy stream */
void sim_stream_advance(struct sim_stream *st, uint64_t end);
void sim_release_pools_at_sync(int dev);  /* cuda_pool.c */

/* Allocation table (cuda_mem.c). */
enum { AK_DEVICE = 1, AK_MANAGED, AK_POOL, AK_GRAPH, AK_VMM };
struct sim_alloc {
    CUdeviceptr base;
    size_t size;
    uint64_t charged;         /* bytes counted on the device for this entry */
    int dev;
    int kind;
    void *host;               /* lazily allocated backing */
    struct sim_pool *pool;
    void *vmm;                /* struct sim_vmm_handle for AK_VMM */
    size_t vmm_off;
    int pref;                 /* AK_MANAGED: preferred location (cuMemAdvise): 0 none, -1 host, dev + 1 */
};
CUdeviceptr sim_va_alloc(size_t size, size_t align);
int sim_alloc_insert(const struct sim_alloc *a);      /* lock held */
struct sim_alloc *sim_alloc_find(CUdeviceptr p);      /* containing; lock held */
struct sim_alloc *sim_alloc_next(CUdeviceptr p);      /* the first at or above p; lock held */
int cuSimTestManaged(unsigned long long *bytes, unsigned long long *host_pref); /* cuda_managed.c */
int sim_alloc_remove(CUdeviceptr base, struct sim_alloc *out); /* exact base; lock held */
CUresult sim_free_ptr(CUdeviceptr p);                 /* any kind */
/* A linear allocation of kind on the current device, charge bytes counted
 * there (0: host-resident managed memory, cuda_managed.c). */
CUresult sim_alloc_kind(CUdeviceptr *dptr, size_t bytes, uint64_t charge, int kind);
void *sim_vmm_backing(void *handle, size_t off, size_t len); /* cuda_vmm.c, lock held */

/* Graph memory (cuda_graph.c). */
extern uint64_t sim_graph_used[SIM_MAX_DEV]; /* sim_lk */
void sim_wait_host_ctx(struct sim_ctx *c);     /* cuda_stream.c */
CUresult sim_graph_launch(struct sim_graph *g, struct sim_stream *st);
CUresult sim_graph_add(struct sim_graph *g, struct sim_node *n);
CUresult sim_launch_on(struct sim_func *f, unsigned gx, unsigned gy, unsigned gz,
                       struct sim_stream *st);

/* Stream capture (cuda_capture.c). A capture sequence: begun on its origin
 * stream, joined by streams that wait on events recorded into it. Every
 * field and every stream's cap pointer are under sim_lk. */
struct sim_capture {
    uint64_t id;              /* process-unique, nonzero */
    CUstreamCaptureMode mode; /* as given at begin */
    uint64_t thread;          /* sim_thread_id() of the beginning thread */
    int invalidated;
    struct sim_graph *graph;  /* being built */
    struct sim_ctx *ctx;
    struct sim_stream *origin;
    struct sim_stream **joined;
    size_t njoined, capjoined;
    struct sim_capture *next; /* live captures of the process */
};
uint64_t sim_thread_id(void);  /* process-unique per thread, nonzero */
/* All with sim_lk held. Each returns CUDA_SUCCESS or the error the call
 * must return, having invalidated what the driver invalidates. */
CUresult sim_capture_enqueue(struct sim_stream *st, struct sim_capture **cap); /* *cap: capturing into */
/* Takes sim_lk itself: resolves h, then sim_capture_enqueue. */
struct sim_stream *sim_stream_for_enqueue(CUstream h, int ptsz, struct sim_capture **cap, CUresult *err);
CUresult sim_capture_unsafe_call(void);                 /* the thread-mode rule */
CUresult sim_capture_stream_sync(struct sim_stream *st); /* cuStreamQuery/Synchronize */
CUresult sim_capture_ctx_sync(struct sim_ctx *c);        /* cuCtxSynchronize */
CUresult sim_capture_event_wait(struct sim_event *e);    /* cuEventQuery/Synchronize */
CUresult sim_capture_stream_wait(struct sim_stream *st, struct sim_event *e, int *no_timing);
void sim_capture_event_record(struct sim_event *e, struct sim_capture *cap);
void sim_capture_stream_gone(struct sim_stream *st);
void sim_capture_ctx_gone(struct sim_ctx *c);

/* fork(): the child starts as a fresh CUDA process (no contexts, no
 * allocations); each module resets its process-local state. */
void sim_ctx_after_fork(void);
void sim_mem_after_fork(void);
void sim_pool_after_fork(void);
void sim_graph_after_fork(void);
void sim_stream_after_fork(void);
void sim_capture_after_fork(void);

#define SIM_CHECK_INIT() do { if (!sim_initialized()) return CUDA_ERROR_NOT_INITIALIZED; } while (0)
int sim_initialized(void);

#endif
