/* Graph memory nodes under the memory cap.
 *
 * RULE. A device's graph memory is charged what the driver's graph memory
 * reserve of this process holds: cuDeviceGetGraphMemAttribute(
 * CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT). That is what the device has given
 * up (and what nvidia-smi shows), whoever frees what and when: memory stays
 * reserved after a free node or cuMemFree until cuDeviceGraphMemTrim, and
 * allocations not freed by the graph outlive its exec. The reserve grows
 * only when an exec with allocation nodes is launched or uploaded
 * (cuGraphLaunch, cuGraphUpload, instantiation with
 * CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD); so there, BEFORE calling the driver,
 * we reserve against the cap what the exec's allocation nodes need beyond
 * the reserve's idle part (refusing with CUDA_ERROR_OUT_OF_MEMORY, nothing
 * launched, nothing changed), and after the call settle the charge to the
 * reserve's actual size. The charge shrinks when the reserve does: after
 * cuDeviceGraphMemTrim, cuGraphExecDestroy, launches (free nodes), a
 * cuMemFree of a pointer we did not count, before any refusal and in every
 * memory query (cc_mem_graph_refresh).
 *
 * What an exec needs is measured once, at instantiation, by walking its
 * graph (allocation nodes however they were added: cuGraphAddMemAllocNode,
 * cuGraphAddNode, stream capture of cuMemAllocAsync; child graphs too).
 *
 * Exactness: the pre-reservation goes through cc_mem_reserve (the exact
 * container-wide check); settling adjusts our slot by (reserve growth - pre)
 * in one step, so the slot never counts less than the device holds. All of
 * it is under g_mu, held across the driver call, so two threads cannot both
 * plan on the same idle reserve. The driver may round the reserve up beyond
 * what the nodes ask (rounded to 2 MiB each here); any excess is charged
 * after the fact, as for pools. */
#include "memory_graph.h"

#include <pthread.h>
#include <stdlib.h>

#include "cap/memledger.h"
#include "common/log.h"
#include "cudacap/config.h"
#include "hook.h"
#include "hook/process.h"
#include "memory_track.h"

#define GRAN (2ull << 20)

/* Per exec (CC_AT_GEXEC, aux points here): bytes its allocation nodes take
 * per capped device. */
struct need {
    uint64_t bytes[CC_MAX_DEVICES];
    uint32_t mask; /* devices with bytes */
};

/* Recursive: a refusal inside a launch refreshes (cc_mem_reserve ->
 * cc_mem_graph_refresh) on the same thread. */
static pthread_mutex_t g_mu = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static uint64_t g_charged[CC_MAX_DEVICES]; /* g_mu: the reserve we counted */
static uint32_t g_seen;  /* devices that ever had graph memory (atomic, relaxed) */
static int g_execs;      /* execs recorded (atomic, relaxed): 0 = fast path */
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static __typeof__(&cuDeviceGetGraphMemAttribute) p_attr;
static __typeof__(&cuGraphGetNodes) p_nodes;
static __typeof__(&cuGraphNodeGetType) p_type;
static __typeof__(&cuGraphMemAllocNodeGetParams) p_params;
static __typeof__(&cuGraphChildGraphNodeGetGraph) p_child;

static void fork_child(void)
{
    /* The child owns none of the parent's graph memory (the region slot and
     * the allocation map are reset by alloc_track.c's handler). */
    pthread_mutex_t fresh = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
    g_mu = fresh;
    for (int i = 0; i < CC_MAX_DEVICES; i++) g_charged[i] = 0;
    g_seen = 0;
    g_execs = 0;
}

static void init_once(void)
{
    p_attr = cc_lib_sym(CC_LIB_CUDA, "cuDeviceGetGraphMemAttribute");
    p_nodes = cc_lib_sym(CC_LIB_CUDA, "cuGraphGetNodes");
    p_type = cc_lib_sym(CC_LIB_CUDA, "cuGraphNodeGetType");
    p_params = cc_lib_sym(CC_LIB_CUDA, "cuGraphMemAllocNodeGetParams");
    p_child = cc_lib_sym(CC_LIB_CUDA, "cuGraphChildGraphNodeGetGraph");
    cc_fork_child_register(fork_child);
}

static void syms(void) { pthread_once(&g_once, init_once); }

static uint64_t gattr(int o, CUgraphMem_attribute a, uint64_t dflt)
{
    cuuint64_t v = 0;
    return p_attr && p_attr((CUdevice)o, a, &v) == CUDA_SUCCESS ? (uint64_t)v : dflt;
}

/* Settles device o's charge to its reserve, `pre` being what this thread
 * reserved for the call just made (now part of the reserve or not). g_mu. */
static void settle_locked(int o, uint64_t pre)
{
    const struct cc_mem_device *m = cc_mem_dev(o);
    if (!m) return;
    uint64_t had = g_charged[o] + pre;
    uint64_t now = gattr(o, CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT, had); /* unknown: keep */
    if (now > had) cc_ml_charge(m->h, now - had);
    else if (now < had) cc_ml_release(m->h, had - now);
    g_charged[o] = now;
}

void cc_mem_graph_refresh(void)
{
    uint32_t seen = __atomic_load_n(&g_seen, __ATOMIC_RELAXED);
    if (__builtin_expect(!seen, 1)) return;
    /* trylock: a thread holding g_mu may be waiting for the pool lock that
     * our caller holds (alloc_async -> refusal -> here); skipping is safe,
     * the holder settles when it is done. */
    if (pthread_mutex_trylock(&g_mu) != 0) return;
    for (int o = 0; o < CC_MAX_DEVICES; o++)
        if (seen & (1u << o)) settle_locked(o, 0);
    pthread_mutex_unlock(&g_mu);
}

/* Pre-reserves what n needs on each capped device beyond the idle reserve.
 * 0, or -1 with everything taken back. g_mu held. */
static int begin_locked(const struct need *n, uint64_t pre[CC_MAX_DEVICES])
{
    for (int o = 0; o < CC_MAX_DEVICES; o++) {
        pre[o] = 0;
        if (!(n->mask & (1u << o))) continue;
        const struct cc_mem_device *m = cc_mem_dev(o);
        if (!m) continue;
        uint64_t res = gattr(o, CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT, 0);
        uint64_t used = gattr(o, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, 0);
        uint64_t idle = res > used ? res - used : 0;
        uint64_t want = n->bytes[o] > idle ? n->bytes[o] - idle : 0;
        if (want && cc_mem_reserve(m, o, want) != 0) {
            for (int p = 0; p < o; p++)
                if (pre[p]) cc_ml_release(cc_mem_dev(p)->h, pre[p]);
            return -1;
        }
        pre[o] = want;
    }
    return 0;
}

static void end_locked(const struct need *n, const uint64_t pre[CC_MAX_DEVICES])
{
    for (int o = 0; o < CC_MAX_DEVICES; o++)
        if (n->mask & (1u << o)) settle_locked(o, pre[o]);
}

CUresult cc_mem_graph_launch(CUgraphExec e, CUstream s, cc_graph_run_fn real)
{
    if (__builtin_expect(!__atomic_load_n(&g_execs, __ATOMIC_RELAXED), 1)) return real(e, s);
    struct cc_at_val v;
    uint64_t key = (uint64_t)(uintptr_t)e;
    if (!cc_at_get(CC_AT_GEXEC, key, &v)) return real(e, s); /* no memory nodes */
    pthread_mutex_lock(&g_mu);
    /* Again under g_mu: cuGraphExecDestroy frees the need under it. */
    if (!cc_at_get(CC_AT_GEXEC, key, &v)) {
        pthread_mutex_unlock(&g_mu);
        return real(e, s);
    }
    const struct need *n = (const struct need *)(uintptr_t)v.aux;
    uint64_t pre[CC_MAX_DEVICES];
    if (begin_locked(n, pre) != 0) {
        pthread_mutex_unlock(&g_mu);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    CUresult r = real(e, s);
    end_locked(n, pre);
    pthread_mutex_unlock(&g_mu);
    return r;
}

/* ---- measuring a graph ------------------------------------------------- */

/* Allocation nodes added through cuGraphAddMemAllocNode, for drivers
 * without cuGraphMemAllocNodeGetParams (the simulator): node -> size, device. */
static int node_need(CUgraphNode node, uint64_t *bytes, int *o)
{
    if (p_params) {
        CUDA_MEM_ALLOC_NODE_PARAMS p = {0};
        if (p_params(node, &p) != CUDA_SUCCESS ||
            p.poolProps.location.type != CU_MEM_LOCATION_TYPE_DEVICE)
            return -1;
        *bytes = p.bytesize, *o = p.poolProps.location.id;
        return 0;
    }
    struct cc_at_val v;
    if (!cc_at_get(CC_AT_GNODE, (uint64_t)(uintptr_t)node, &v)) return -1;
    *bytes = v.bytes, *o = (int)v.aux;
    return 0;
}

static void walk(CUgraph g, struct need *n, int depth)
{
    size_t cnt = 0;
    if (!p_nodes || !p_type || p_nodes(g, NULL, &cnt) != CUDA_SUCCESS || !cnt) return;
    CUgraphNode *v = malloc(cnt * sizeof *v);
    size_t got = cnt;
    if (!v || p_nodes(g, v, &got) != CUDA_SUCCESS) {
        cc_log_once(CC_LOG_WARN, "memory cap: cannot list a graph's nodes; its memory nodes "
                                 "are counted only after the fact");
        free(v);
        return;
    }
    if (got > cnt) got = cnt;
    for (size_t i = 0; i < got; i++) {
        CUgraphNodeType t;
        if (p_type(v[i], &t) != CUDA_SUCCESS) continue;
        uint64_t b = 0; /* set by node_need; initialised for gcc -O1's flow analysis */
        int o = -1;
        CUgraph child;
        if (t == CU_GRAPH_NODE_TYPE_MEM_ALLOC && node_need(v[i], &b, &o) == 0 && o >= 0 &&
            o < CC_MAX_DEVICES && cc_mem_dev(o)) {
            uint64_t r = (b + GRAN - 1) & ~(GRAN - 1);
            n->bytes[o] = n->bytes[o] + r < n->bytes[o] ? UINT64_MAX : n->bytes[o] + r;
            n->mask |= 1u << o;
        } else if (t == CU_GRAPH_NODE_TYPE_GRAPH && depth < 8 && p_child &&
                   p_child(v[i], &child) == CUDA_SUCCESS) {
            walk(child, n, depth + 1);
        }
    }
    free(v);
}

/* What graph g's allocation nodes take on capped devices, or NULL (none). */
static struct need *measure(CUgraph g)
{
    syms();
    struct need *n = calloc(1, sizeof *n);
    if (!n) return NULL;
    walk(g, n, 0);
    if (!n->mask) {
        free(n);
        return NULL;
    }
    return n;
}

static void record_locked(CUgraphExec e, struct need *n)
{
    struct cc_at_val v = {.h = 0, .refs = 1, .bytes = 0, .aux = (uint64_t)(uintptr_t)n};
    struct cc_at_val old;
    if (cc_at_take(CC_AT_GEXEC, (uint64_t)(uintptr_t)e, &old)) { /* stale: destroyed unseen */
        free((void *)(uintptr_t)old.aux);
        __atomic_sub_fetch(&g_execs, 1, __ATOMIC_RELAXED);
    }
    if (cc_at_put(CC_AT_GEXEC, (uint64_t)(uintptr_t)e, &v) != 0) {
        free(n);
        cc_log_once(CC_LOG_WARN, "memory cap: out of memory tracking graphs; some graph memory "
                                 "is counted only after the fact");
        return;
    }
    __atomic_add_fetch(&g_execs, 1, __ATOMIC_RELAXED);
    __atomic_or_fetch(&g_seen, n->mask, __ATOMIC_RELAXED);
}

/* ---- wrappers ---------------------------------------------------------- */

CC_EXPORT CUresult cuGraphAddMemAllocNode(CUgraphNode *node, CUgraph g, const CUgraphNode *deps,
                                          size_t ndeps, CUDA_MEM_ALLOC_NODE_PARAMS *p)
{
    __typeof__(&cuGraphAddMemAllocNode) real = CC_CUDA_REAL(cuGraphAddMemAllocNode);
    if (!real) return cc_cuda_missing(CC_FN_cuGraphAddMemAllocNode);
    CUresult r = real(node, g, deps, ndeps, p);
    syms();
    /* Only where the driver cannot tell us later (no GetParams): remember. */
    if (r == CUDA_SUCCESS && !p_params && node && p &&
        p->poolProps.location.type == CU_MEM_LOCATION_TYPE_DEVICE) {
        struct cc_at_val v = {.h = 0, .refs = 1, .bytes = p->bytesize,
                              .aux = (uint64_t)p->poolProps.location.id};
        cc_at_put(CC_AT_GNODE, (uint64_t)(uintptr_t)*node, &v);
    }
    return r;
}

/* Instantiation: measure the graph first (it is there before the exec); an
 * upload at instantiation is a launch for memory purposes. The four ABIs
 * differ only in their arguments after (exec, graph): a struct inst_call
 * holds them, and call_instantiate calls the driver with them. */
struct inst_call {
    enum cc_fn id; /* which ABI real is */
    void *real;
    CUgraphExec *e;
    CUgraph g;
    unsigned long long flags;        /* cuGraphInstantiateWithFlags */
    CUgraphNode *err;                /* cuGraphInstantiate_v2 */
    char *log;
    size_t logsz;
    CUDA_GRAPH_INSTANTIATE_PARAMS *p; /* cuGraphInstantiateWithParams(_ptsz) */
};

static CUresult call_instantiate(const struct inst_call *c)
{
    switch (c->id) {
    case CC_FN_cuGraphInstantiateWithFlags:
        return ((__typeof__(&cuGraphInstantiateWithFlags))c->real)(c->e, c->g, c->flags);
    case CC_FN_cuGraphInstantiate_v2:
        return ((__typeof__(&cuGraphInstantiate_v2))c->real)(c->e, c->g, c->err, c->log,
                                                              c->logsz);
    default: /* cuGraphInstantiateWithParams and its _ptsz twin: one ABI */
        return ((__typeof__(&cuGraphInstantiateWithParams))c->real)(c->e, c->g, c->p);
    }
}

static CUresult instantiate(const struct inst_call *c, int upload)
{
    struct need *n = c->g ? measure(c->g) : NULL;
    if (!n) return call_instantiate(c);
    uint64_t pre[CC_MAX_DEVICES];
    /* held across the call: an upload plans on the idle reserve */
    pthread_mutex_lock(&g_mu);
    if (upload && begin_locked(n, pre) != 0) {
        pthread_mutex_unlock(&g_mu);
        free(n);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    CUresult r = call_instantiate(c);
    if (upload) end_locked(n, pre);
    if (r == CUDA_SUCCESS && c->e) record_locked(*c->e, n);
    else free(n);
    pthread_mutex_unlock(&g_mu);
    return r;
}

CC_EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *e, CUgraph g, unsigned long long f)
{
    void *real = cc_cuda_real(CC_FN_cuGraphInstantiateWithFlags);
    if (!real) return cc_cuda_missing(CC_FN_cuGraphInstantiateWithFlags);
    struct inst_call c = {.id = CC_FN_cuGraphInstantiateWithFlags, .real = real, .e = e, .g = g,
                          .flags = f};
    return instantiate(&c, (f & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD) != 0);
}

CC_EXPORT CUresult cuGraphInstantiate_v2(CUgraphExec *e, CUgraph g, CUgraphNode *err, char *log,
                                         size_t logsz)
{
    void *real = cc_cuda_real(CC_FN_cuGraphInstantiate_v2);
    if (!real) return cc_cuda_missing(CC_FN_cuGraphInstantiate_v2);
    struct inst_call c = {.id = CC_FN_cuGraphInstantiate_v2, .real = real, .e = e, .g = g,
                          .err = err, .log = log, .logsz = logsz};
    return instantiate(&c, 0);
}

static int uploads(const CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
    return p && (p->flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD);
}

CC_EXPORT CUresult cuGraphInstantiateWithParams(CUgraphExec *e, CUgraph g,
                                                CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
    void *real = cc_cuda_real(CC_FN_cuGraphInstantiateWithParams);
    if (!real) return cc_cuda_missing(CC_FN_cuGraphInstantiateWithParams);
    struct inst_call c = {.id = CC_FN_cuGraphInstantiateWithParams, .real = real, .e = e,
                          .g = g, .p = p};
    return instantiate(&c, uploads(p));
}

CC_EXPORT CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec *e, CUgraph g,
                                                     CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
    void *real = cc_cuda_real(CC_FN_cuGraphInstantiateWithParams_ptsz);
    if (!real) return cc_cuda_missing(CC_FN_cuGraphInstantiateWithParams_ptsz);
    struct inst_call c = {.id = CC_FN_cuGraphInstantiateWithParams_ptsz, .real = real, .e = e,
                          .g = g, .p = p};
    return instantiate(&c, uploads(p));
}

CC_EXPORT CUresult cuGraphExecDestroy(CUgraphExec e)
{
    __typeof__(&cuGraphExecDestroy) real = CC_CUDA_REAL(cuGraphExecDestroy);
    if (!real) return cc_cuda_missing(CC_FN_cuGraphExecDestroy);
    if (__builtin_expect(!__atomic_load_n(&g_execs, __ATOMIC_RELAXED), 1)) return real(e);
    /* Destroy and forget under g_mu: a new exec at the same address cannot
     * be recorded in between and then forgotten by us. */
    pthread_mutex_lock(&g_mu);
    CUresult r = real(e);
    struct cc_at_val v;
    if (r == CUDA_SUCCESS && cc_at_take(CC_AT_GEXEC, (uint64_t)(uintptr_t)e, &v)) {
        __atomic_sub_fetch(&g_execs, 1, __ATOMIC_RELAXED);
        struct need *n = (struct need *)(uintptr_t)v.aux;
        uint64_t zero[CC_MAX_DEVICES] = {0};
        end_locked(n, zero); /* the driver may have released its reserve */
        free(n);
    }
    pthread_mutex_unlock(&g_mu);
    return r;
}

CC_EXPORT CUresult cuGraphUpload(CUgraphExec e, CUstream s)
{
    __typeof__(&cuGraphUpload) real = CC_CUDA_REAL(cuGraphUpload);
    if (!real) return cc_cuda_missing(CC_FN_cuGraphUpload);
    return cc_mem_graph_launch(e, s, real);
}

CC_EXPORT CUresult cuGraphUpload_ptsz(CUgraphExec e, CUstream s)
{
    __typeof__(&cuGraphUpload_ptsz) real = CC_CUDA_REAL(cuGraphUpload_ptsz);
    if (!real) return cc_cuda_missing(CC_FN_cuGraphUpload_ptsz);
    return cc_mem_graph_launch(e, s, real);
}

CC_EXPORT CUresult cuDeviceGraphMemTrim(CUdevice dev)
{
    __typeof__(&cuDeviceGraphMemTrim) real = CC_CUDA_REAL(cuDeviceGraphMemTrim);
    if (!real) return cc_cuda_missing(CC_FN_cuDeviceGraphMemTrim);
    CUresult r = real(dev);
    if (r == CUDA_SUCCESS && dev >= 0 && dev < CC_MAX_DEVICES &&
        (__atomic_load_n(&g_seen, __ATOMIC_RELAXED) & (1u << dev))) {
        pthread_mutex_lock(&g_mu);
        settle_locked((int)dev, 0);
        pthread_mutex_unlock(&g_mu);
    }
    return r;
}
