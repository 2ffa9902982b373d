/* Graph memory nodes over the cap (run preloaded on the simulator with
 * CUDACAP_MEM_LIMIT=1g, CUDACAP_SIM_MEM=8g, CUDACAP_SIM_CTX_MEM=256m).
 * The simulator backs an allocation node at launch and frees it at a free
 * node or cuMemFree (sim/README.md); its NVML per-process memory is the
 * witness that a refused call changed nothing.
 *
 *   A: 512 MiB allocation node, no free node: launch fits (256 + 512).
 *   B: the same again: launch refused with OOM (1280 > 1024), nothing
 *      allocated; instantiating B with CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD is
 *      refused the same way.
 *   cuMemFree of A's pointer gives the 512 MiB back; B then launches.
 *   C: allocation + free node of 600 MiB: refused while B holds its memory;
 *      after B's memory is freed, launched, and its memory is back after the
 *      launch (the free node ran).
 *   Stream capture of cuMemAllocAsync (the simulator allocates at once, from
 *      the stream's pool) is refused over the cap like any cuMemAllocAsync.
 *   After cuGraphExecDestroy and cuDeviceGraphMemTrim the use is the
 *   context's again.
 *   At each step NVML's memory view agrees with cuMemGetInfo's
 *   (mem_views.h), asked first. Checked by hand: with nvml.c's own view of
 *   before the port layer (no graph refresh), "B freed in stream order" fails:
 *   NVML still counts B's 512 MiB that cuMemFreeAsync gave back.
 *
 * Checked by hand: with the launch wrapper not calling cc_mem_graph_launch
 * (src/hook/launch.c before the hook), B's launch succeeds and the test fails
 * at the first refusal check. */
#include <cuda.h>
#include <unistd.h>

#include "check.h"
#include "cudacap/nvml_api.h"
#include "mem_views.h"

#define MIB (1ull << 20)
#define CAP (1024 * MIB)

static CUstream st;

static uint64_t used_now(void)
{
    size_t f = 0, t = 0;
    CHECK_CU(cuMemGetInfo(&f, &t));
    CHECK(t == CAP, "cuMemGetInfo total %zu", t);
    return t - f;
}

/* The simulator's memory of this process (not through the cap's view). */
static uint64_t sim_used(void)
{
    nvmlDevice_t d;
    nvmlProcessInfo_t p[64];
    unsigned n = 64;
    if (nvmlDeviceGetHandleByIndex_v2(0, &d) != NVML_SUCCESS ||
        nvmlDeviceGetComputeRunningProcesses_v3(d, &n, p) != NVML_SUCCESS)
        return UINT64_MAX;
    for (unsigned i = 0; i < n; i++)
        if (p[i].pid == (unsigned)getpid()) return p[i].usedGpuMemory;
    return 0;
}

/* A graph with one allocation node of `bytes` (and a free node if asked). */
static CUgraph mem_graph(size_t bytes, int with_free, CUdeviceptr *ptr)
{
    CUgraph g;
    CUgraphNode a, f;
    CHECK_CU(cuGraphCreate(&g, 0));
    CUDA_MEM_ALLOC_NODE_PARAMS p = {0};
    p.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    p.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p.poolProps.location.id = 0;
    p.bytesize = bytes;
    CHECK_CU(cuGraphAddMemAllocNode(&a, g, NULL, 0, &p));
    *ptr = p.dptr;
    if (with_free) CHECK_CU(cuGraphAddMemFreeNode(&f, g, &a, 1, p.dptr));
    return g;
}

#define EXPECT_USE(what, want)                                                          \
    do {                                                                                \
        mem_views_agree(what);                                                          \
        uint64_t u_ = used_now(), s_ = sim_used();                                      \
        printf("%-28s ledger %5llu MiB, simulator %5llu MiB\n", what,                   \
               (unsigned long long)(u_ / MIB), (unsigned long long)(s_ / MIB));         \
        CHECK(u_ == (want), "%s: use %llu MiB, expected %llu MiB", what,                \
              (unsigned long long)(u_ / MIB), (unsigned long long)((want) / MIB));      \
        CHECK(s_ == u_, "%s: simulator %llu != ledger %llu", what,                      \
              (unsigned long long)s_, (unsigned long long)u_);                          \
    } while (0)

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    CHECK_CU(cuInit(0));
    CHECK(nvmlInit_v2() == NVML_SUCCESS, "nvmlInit");
    CHECK_CU(cuDeviceGet(&dev, 0));
    CHECK_CU(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK_CU(cuCtxSetCurrent(ctx));
    CHECK_CU(cuStreamCreate(&st, 0));
    uint64_t base = used_now();
    CHECK(base == 256 * MIB, "context %llu MiB", (unsigned long long)(base / MIB));

    CUdeviceptr pa, pb, pc;
    CUgraph ga = mem_graph(512 * MIB, 0, &pa), gb = mem_graph(512 * MIB, 0, &pb),
            gc = mem_graph(600 * MIB, 1, &pc);
    CUgraphExec ea, eb, ec, eu;
    CHECK_CU(cuGraphInstantiateWithFlags(&ea, ga, 0));
    CHECK_CU(cuGraphInstantiate(&eb, gb, 0));
    CUDA_GRAPH_INSTANTIATE_PARAMS ip = {.flags = 0};
    CHECK_CU(cuGraphInstantiateWithParams(&ec, gc, &ip));
    EXPECT_USE("instantiated (nothing yet)", base);

    CHECK_CU(cuGraphLaunch(ea, st));
    EXPECT_USE("A launched", base + 512 * MIB);

    uint64_t before = sim_used();
    CUresult r = cuGraphLaunch(eb, st);
    CHECK(r == CUDA_ERROR_OUT_OF_MEMORY, "B over the cap: launch returned %d, not OOM", (int)r);
    CHECK(sim_used() == before, "the refused launch allocated (%llu -> %llu)",
          (unsigned long long)before, (unsigned long long)sim_used());
    ip.flags = CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD;
    eu = NULL;
    r = cuGraphInstantiateWithParams(&eu, gb, &ip);
    CHECK(r == CUDA_ERROR_OUT_OF_MEMORY && eu == NULL,
          "instantiate+upload over the cap returned %d", (int)r);
    EXPECT_USE("B refused", base + 512 * MIB);

    CHECK_CU(cuMemFree(pa));
    EXPECT_USE("A's memory freed", base);
    CHECK_CU(cuGraphLaunch(eb, st));
    EXPECT_USE("B launched", base + 512 * MIB);

    r = cuGraphLaunch(ec, st);
    CHECK(r == CUDA_ERROR_OUT_OF_MEMORY, "C over the cap: launch returned %d", (int)r);
    CHECK_CU(cuMemFreeAsync(pb, st));
    CHECK_CU(cuStreamSynchronize(st));
    /* Nothing of ours saw that free: the reserve shrank behind the ledger,
     * and only a view that refreshes graph memory shows it. */
    EXPECT_USE("B freed in stream order", base);
    CHECK_CU(cuGraphLaunch(ec, st)); /* allocates and frees 600 MiB */
    CHECK_CU(cuStreamSynchronize(st));
    EXPECT_USE("C ran (alloc + free node)", base);

    /* Stream capture of a stream-ordered allocation. */
    CUgraph gcap;
    CUdeviceptr d;
    CHECK_CU(cuStreamBeginCapture(st, CU_STREAM_CAPTURE_MODE_GLOBAL));
    r = cuMemAllocAsync(&d, 900 * MIB, st);
    CHECK(r == CUDA_ERROR_OUT_OF_MEMORY, "captured cuMemAllocAsync over the cap returned %d", (int)r);
    CHECK_CU(cuMemAllocAsync(&d, 256 * MIB, st));
    CHECK_CU(cuMemFreeAsync(d, st));
    CHECK_CU(cuStreamEndCapture(st, &gcap));
    CHECK_CU(cuStreamSynchronize(st));

    CHECK_CU(cuGraphExecDestroy(ea));
    CHECK_CU(cuGraphExecDestroy(eb));
    CHECK_CU(cuGraphExecDestroy(ec));
    CHECK_CU(cuDeviceGraphMemTrim(dev));
    CHECK_CU(cuGraphDestroy(ga));
    CHECK_CU(cuGraphDestroy(gb));
    CHECK_CU(cuGraphDestroy(gc));
    CHECK_CU(cuGraphDestroy(gcap));
    EXPECT_USE("all destroyed and trimmed", base);
    CHECK_EXIT();
}
