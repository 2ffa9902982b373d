/* Graphs: kernel and memory nodes, instantiation, launch (stream capture:
 * cuda_capture.c). */
#include "cuda_internal.h"

#include <stdlib.h>
#include <string.h>

uint64_t sim_graph_used[SIM_MAX_DEV];      /* sim_lk */
static uint64_t g_graph_high[SIM_MAX_DEV]; /* sim_lk */

struct sim_exec {
    uint32_t magic;
    struct sim_node *nodes;   /* copies */
    size_t n;
};

void sim_graph_after_fork(void)
{
    memset(sim_graph_used, 0, sizeof sim_graph_used);
    memset(g_graph_high, 0, sizeof g_graph_high);
}

CUresult CUDAAPI cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
    (void)flags;
    SIM_CHECK_INIT();
    if (!phGraph)
        return CUDA_ERROR_INVALID_VALUE;
    struct sim_graph *g = sim_obj_alloc(sizeof *g);
    if (!g)
        return CUDA_ERROR_OUT_OF_MEMORY;
    g->magic = MAG_GRAPH;
    *phGraph = (CUgraph)g;
    return CUDA_SUCCESS;
}

CUresult sim_graph_add(struct sim_graph *g, struct sim_node *n)
{
    if (g->n == g->cap) {
        size_t nc = g->cap ? g->cap * 2 : 8;
        struct sim_node **t = realloc(g->nodes, nc * sizeof *t);
        if (!t) {
            sim_obj_free(n);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        g->nodes = t;
        g->cap = nc;
    }
    n->graph = g;
    g->nodes[g->n++] = n;
    return CUDA_SUCCESS;
}

static CUresult add_node(CUgraphNode *out, CUgraph hg, CUgraphNodeType type, struct sim_node **pn)
{
    struct sim_graph *g = (struct sim_graph *)hg;
    if (!out || !g || g->magic != MAG_GRAPH)
        return CUDA_ERROR_INVALID_VALUE;
    struct sim_node *n = sim_obj_alloc(sizeof *n);
    if (!n)
        return CUDA_ERROR_OUT_OF_MEMORY;
    n->magic = MAG_NODE;
    n->type = type;
    *pn = n;
    CUresult r = sim_graph_add(g, n);
    if (r == CUDA_SUCCESS)
        *out = (CUgraphNode)n;
    return r;
}

CUresult CUDAAPI cuGraphAddKernelNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                         size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    (void)dependencies;
    (void)numDependencies;
    if (!nodeParams)
        return CUDA_ERROR_INVALID_VALUE;
    struct sim_node *n;
    CUresult r = add_node(phGraphNode, hGraph, CU_GRAPH_NODE_TYPE_KERNEL, &n);
    if (r == CUDA_SUCCESS) {
        n->kparams = *nodeParams;
        if (!n->kparams.func)
            n->kparams.func = (CUfunction)nodeParams->kern;
    }
    return r;
}

CUresult CUDAAPI cuGraphAddKernelNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                      size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    CUDA_KERNEL_NODE_PARAMS v2 = { .func = p->func, .gridDimX = p->gridDimX, .gridDimY = p->gridDimY,
                                   .gridDimZ = p->gridDimZ, .blockDimX = p->blockDimX, .blockDimY = p->blockDimY,
                                   .blockDimZ = p->blockDimZ, .sharedMemBytes = p->sharedMemBytes,
                                   .kernelParams = p->kernelParams, .extra = p->extra };
    return cuGraphAddKernelNode_v2(phGraphNode, hGraph, dependencies, numDependencies, &v2);
}

static struct sim_node *get_node(CUgraphNode h)
{
    struct sim_node *n = (struct sim_node *)h;
    return n && n->magic == MAG_NODE ? n : NULL;
}

CUresult CUDAAPI cuGraphKernelNodeGetParams_v2(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    struct sim_node *n = get_node(hNode);
    if (!n || !nodeParams || n->type != CU_GRAPH_NODE_TYPE_KERNEL)
        return CUDA_ERROR_INVALID_VALUE;
    *nodeParams = n->kparams;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType *type)
{
    struct sim_node *n = get_node(hNode);
    if (!n || !type)
        return CUDA_ERROR_INVALID_VALUE;
    *type = n->type;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes)
{
    struct sim_graph *g = (struct sim_graph *)hGraph;
    if (!g || g->magic != MAG_GRAPH || !numNodes)
        return CUDA_ERROR_INVALID_VALUE;
    if (nodes) {
        for (size_t i = 0; i < *numNodes; i++)
            nodes[i] = i < g->n ? (CUgraphNode)g->nodes[i] : NULL;
    }
    *numNodes = g->n;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphAddMemAllocNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                        size_t numDependencies, CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams)
{
    (void)dependencies;
    (void)numDependencies;
    if (!nodeParams || nodeParams->bytesize == 0 || nodeParams->poolProps.location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    if (!sim_valid_dev(nodeParams->poolProps.location.id))
        return CUDA_ERROR_INVALID_DEVICE;
    struct sim_node *n;
    CUresult r = add_node(phGraphNode, hGraph, CU_GRAPH_NODE_TYPE_MEM_ALLOC, &n);
    if (r == CUDA_SUCCESS) {
        n->bytes = nodeParams->bytesize;
        n->dev = nodeParams->poolProps.location.id;
        n->dptr = sim_va_alloc(n->bytes, 512);
        nodeParams->dptr = n->dptr;
    }
    return r;
}

CUresult CUDAAPI cuGraphAddMemFreeNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                       size_t numDependencies, CUdeviceptr dptr)
{
    (void)dependencies;
    (void)numDependencies;
    struct sim_node *n;
    CUresult r = add_node(phGraphNode, hGraph, CU_GRAPH_NODE_TYPE_MEM_FREE, &n);
    if (r == CUDA_SUCCESS)
        n->dptr = dptr;
    return r;
}

CUresult CUDAAPI cuGraphMemFreeNodeGetParams(CUgraphNode hNode, CUdeviceptr *dptr_out)
{
    struct sim_node *n = get_node(hNode);
    if (!n || !dptr_out || n->type != CU_GRAPH_NODE_TYPE_MEM_FREE)
        return CUDA_ERROR_INVALID_VALUE;
    *dptr_out = n->dptr;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphDestroy(CUgraph hGraph)
{
    struct sim_graph *g = (struct sim_graph *)hGraph;
    if (!g || g->magic != MAG_GRAPH)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < g->n; i++) {
        g->nodes[i]->magic = 0;
        sim_obj_free(g->nodes[i]);
    }
    free(g->nodes);
    g->magic = 0;
    sim_obj_free(g);
    return CUDA_SUCCESS;
}

static CUresult instantiate(CUgraphExec *out, CUgraph hGraph)
{
    struct sim_graph *g = (struct sim_graph *)hGraph;
    if (!out || !g || g->magic != MAG_GRAPH)
        return CUDA_ERROR_INVALID_VALUE;
    struct sim_exec *e = sim_obj_alloc(sizeof *e);
    if (!e || (g->n && !(e->nodes = calloc(g->n, sizeof *e->nodes)))) {
        sim_obj_free(e);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    for (size_t i = 0; i < g->n; i++)
        e->nodes[i] = *g->nodes[i];
    e->n = g->n;
    e->magic = MAG_EXEC;
    *out = (CUgraphExec)e;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags)
{
    (void)flags;
    return instantiate(phGraphExec, hGraph);
}

CUresult CUDAAPI cuGraphInstantiate_v2(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode,
                                       char *logBuffer, size_t bufferSize)
{
    if (phErrorNode)
        *phErrorNode = NULL;
    if (logBuffer && bufferSize)
        logBuffer[0] = 0;
    return instantiate(phGraphExec, hGraph);
}

CUresult CUDAAPI cuGraphInstantiateWithParams(CUgraphExec *phGraphExec, CUgraph hGraph,
                                              CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
    CUresult r = instantiate(phGraphExec, hGraph);
    if (p) {
        p->result_out = r == CUDA_SUCCESS ? CUDA_GRAPH_INSTANTIATE_SUCCESS : CUDA_GRAPH_INSTANTIATE_ERROR;
        p->hErrNode_out = NULL;
    }
    return r;
}

CUresult CUDAAPI cuGraphInstantiateWithParams_ptsz(CUgraphExec *phGraphExec, CUgraph hGraph,
                                                   CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
    return cuGraphInstantiateWithParams(phGraphExec, hGraph, p);
}

CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec hGraphExec)
{
    struct sim_exec *e = (struct sim_exec *)hGraphExec;
    if (!e || e->magic != MAG_EXEC)
        return CUDA_ERROR_INVALID_VALUE;
    e->magic = 0;
    free(e->nodes);
    sim_obj_free(e);
    return CUDA_SUCCESS;
}

static CUresult graph_alloc(const struct sim_node *n)
{
    pthread_mutex_lock(&sim_lk);
    int live = sim_alloc_find(n->dptr) != NULL;
    pthread_mutex_unlock(&sim_lk);
    if (live)
        return CUDA_SUCCESS;
    if (sim_charge((uint32_t)n->dev, n->bytes) != 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    struct sim_alloc a = { .base = n->dptr, .size = n->bytes, .charged = n->bytes, .dev = n->dev, .kind = AK_GRAPH };
    pthread_mutex_lock(&sim_lk);
    int ok = sim_alloc_insert(&a) == 0;
    if (ok) {
        sim_graph_used[n->dev] += n->bytes;
        if (sim_graph_used[n->dev] > g_graph_high[n->dev])
            g_graph_high[n->dev] = sim_graph_used[n->dev];
    }
    pthread_mutex_unlock(&sim_lk);
    if (!ok) {
        sim_uncharge((uint32_t)n->dev, n->bytes);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    return CUDA_SUCCESS;
}

/* Into a capturing stream the exec's kernel nodes become nodes of the
 * capture's graph, flattened (no child-graph node); its memory nodes are
 * dropped, so the captured graph allocates nothing when it runs. */
static CUresult graph_launch(CUgraphExec hGraphExec, CUstream h, int ptsz)
{
    struct sim_exec *e = (struct sim_exec *)hGraphExec;
    CUresult r;
    struct sim_stream *st = sim_stream_get(h, ptsz, &r);
    if (!st)
        return r;
    if (!e || e->magic != MAG_EXEC)
        return CUDA_ERROR_INVALID_VALUE;
    struct sim_capture *cap;
    pthread_mutex_lock(&sim_lk);
    r = sim_capture_enqueue(st, &cap);
    pthread_mutex_unlock(&sim_lk);
    for (size_t i = 0; i < e->n && r == CUDA_SUCCESS; i++) {
        const struct sim_node *n = &e->nodes[i];
        const CUDA_KERNEL_NODE_PARAMS *k = &n->kparams;
        switch (n->type) {
        case CU_GRAPH_NODE_TYPE_KERNEL:
            r = sim_launch_on((struct sim_func *)k->func, k->gridDimX, k->gridDimY, k->gridDimZ, st);
            break;
        case CU_GRAPH_NODE_TYPE_MEM_ALLOC: r = cap ? CUDA_SUCCESS : graph_alloc(n); break;
        case CU_GRAPH_NODE_TYPE_MEM_FREE: r = cap ? CUDA_SUCCESS : sim_free_ptr(n->dptr); break;
        default: break;
        }
    }
    return r;
}

CUresult CUDAAPI cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream) { return graph_launch(hGraphExec, hStream, 0); }
CUresult CUDAAPI cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream) { return graph_launch(hGraphExec, hStream, 1); }

CUresult CUDAAPI cuDeviceGraphMemTrim(CUdevice device)
{
    return sim_valid_dev(device) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult CUDAAPI cuDeviceGetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void *value)
{
    if (!sim_valid_dev(device))
        return CUDA_ERROR_INVALID_DEVICE;
    if (!value)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&sim_lk);
    switch (attr) {
    case CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT:
    case CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT: *(cuuint64_t *)value = sim_graph_used[device]; break;
    case CU_GRAPH_MEM_ATTR_USED_MEM_HIGH:
    case CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH: *(cuuint64_t *)value = g_graph_high[device]; break;
    default: r = CUDA_ERROR_INVALID_VALUE; break;
    }
    pthread_mutex_unlock(&sim_lk);
    return r;
}

CUresult CUDAAPI cuDeviceSetGraphMemAttribute(CUdevice device, CUgraphMem_attribute attr, void *value)
{
    (void)attr;
    (void)value;
    if (!sim_valid_dev(device))
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&sim_lk);
    g_graph_high[device] = sim_graph_used[device];
    pthread_mutex_unlock(&sim_lk);
    return CUDA_SUCCESS;
}
