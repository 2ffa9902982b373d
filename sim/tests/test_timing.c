/* 1: a launch of G blocks takes ceil(G/SMs)*N us; 2: processes serialize;
 * plus stream order, events and host functions. */
#include "simtest.h"

#include <string.h>
#include <sys/mman.h>

/* Scheduling noise on a loaded 2-core machine only ever adds time: retry a
 * measurement a few times and accept the first one within tolerance. */
#define RETRY_NEAR(expr, want, tol) do { double m_ = 0; int k_; \
    for (k_ = 0; k_ < 5; k_++) { m_ = (expr); if (m_ >= (want) - (tol) && m_ <= (want) + (tol)) break; } \
    NEAR(m_, want, tol); } while (0)

/* Checks of a case that a preempted thread can fail (a status read after
 * the kernel it waits on already ended; an event recorded a preemption
 * before the launch it brackets): the case counts them and is run again,
 * up to 3 times, judged on the first clean try. */
static int soft_fails;
#define SOFT(c) do { if (!(c)) { fprintf(stderr, "%s:%d: (try again) %s\n", __FILE__, __LINE__, #c); \
    soft_fails++; } } while (0)
#define SOFT_NEAR(v, want, tol) do { double v_ = (v), w_ = (want); if (v_ < w_ - (tol) || v_ > w_ + (tol)) { \
    fprintf(stderr, "%s:%d: (try again) %s = %.3f, want %.3f +- %.3f\n", __FILE__, __LINE__, #v, v_, w_, \
            (double)(tol)); soft_fails++; } } while (0)
#define TRIES(fn, f) do { int t_; for (t_ = 0; t_ < 3; t_++) { soft_fails = 0; fn(f); if (!soft_fails) break; } \
    CHECK(soft_fails == 0); } while (0)

/* Less the time this thread waited for a core: a sync that wakes late
 * on a loaded machine read 23.2 ms for 20 in five tries in a row once,
 * beside two suites. */
static double launch_sync(CUfunction f, unsigned blocks)
{
    double q0 = st_runq_ms(), t0 = st_ms();
    CU(cuLaunchKernel(f, blocks, 1, 1, 128, 1, 1, 0, NULL, NULL, NULL));
    CU(cuCtxSynchronize());
    return st_ms() - t0 - (st_runq_ms() - q0);
}

/* A child of the two-process case: its start time in, the time it then
 * waited for a core out (a shared page). */
struct two { double start, runq[2]; };
static struct two *two_page;
static int two_slot;

static int child_50(void *arg)
{
    double start = *(double *)arg;
    st_ctx();
    CUfunction f = st_func("spin_2000us");
    st_sleep_until_ms(start);
    double q0 = st_runq_ms();
    for (int i = 0; i < 50; i++)
        CU(cuLaunchKernel(f, 132, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    CU(cuCtxSynchronize());
    two_page->runq[two_slot] = st_runq_ms() - q0;
    return 0;
}

static void host_cb(void *p)
{
    *(double *)p = st_ms();
}

/* Launches return at once. */
static void returns_case(CUfunction f)
{
    double t0 = st_ms();
    CU(cuLaunchKernel(f, 132 * 10, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    SOFT(cuStreamQuery(NULL) == CUDA_ERROR_NOT_READY);
    CU(cuCtxSynchronize());
    CHECK(st_ms() - t0 >= 20.0);
}

/* Stream order, events, cuLaunchKernelEx and a host function. */
static void events_case(CUfunction f)
{
    float ms;
    CUstream s1, s2;
    CU(cuStreamCreate(&s1, 0));
    CU(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
    CUevent e0, e1;
    CU(cuEventCreate(&e0, 0));
    CU(cuEventCreate(&e1, 0));
    CU(cuEventRecord(e0, s1));
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = 132 * 3;
    cfg.gridDimY = cfg.gridDimZ = cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.blockDimX = 32;
    cfg.hStream = s1;
    CU(cuLaunchKernelEx(&cfg, f, NULL, NULL));
    double cb_at = 0;
    double t0 = st_ms();
    CU(cuLaunchHostFunc(s1, host_cb, &cb_at));
    CU(cuEventRecord(e1, s1));
    CU(cuStreamWaitEvent(s2, e1, 0));
    CU(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s2, NULL, NULL)); /* after s1's 6 ms */
    SOFT(cuEventQuery(e1) == CUDA_ERROR_NOT_READY);
    CU(cuStreamSynchronize(s2));
    CHECK(st_ms() - t0 >= 8.0);
    CU(cuStreamSynchronize(s1));
    CHECK(cb_at - t0 >= 6.0 - 0.5);
    CU(cuEventElapsedTime(&ms, e0, e1));
    SOFT_NEAR(ms, 6.0, 0.5);
    CU(cuEventSynchronize(e1));
    CU(cuEventDestroy(e0));
    CU(cuEventDestroy(e1));
    CU(cuStreamDestroy(s1));
    CU(cuStreamDestroy(s2));
}

/* Graphs: capture and explicit kernel nodes. */
static void graphs_case(CUfunction f)
{
    CUstream cs;
    CU(cuStreamCreate(&cs, 0));
    CU(cuStreamBeginCapture(cs, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CUstreamCaptureStatus cst;
    CU(cuStreamIsCapturing(cs, &cst));
    CHECK(cst == CU_STREAM_CAPTURE_STATUS_ACTIVE);
    for (int i = 0; i < 3; i++)
        CU(cuLaunchKernel(f, 132, 1, 1, 1, 1, 1, 0, cs, NULL, NULL));
    CUgraph g;
    CU(cuStreamEndCapture(cs, &g));
    CHECK(cuStreamQuery(cs) == CUDA_SUCCESS); /* nothing ran */
    size_t nn = 0;
    CU(cuGraphGetNodes(g, NULL, &nn));
    CHECK(nn == 3);
    CUgraphNode nodes[3];
    CU(cuGraphGetNodes(g, nodes, &nn));
    CUgraphNodeType ty;
    CU(cuGraphNodeGetType(nodes[1], &ty));
    CHECK(ty == CU_GRAPH_NODE_TYPE_KERNEL);
    CUDA_KERNEL_NODE_PARAMS kp;
    CU(cuGraphKernelNodeGetParams(nodes[1], &kp));
    CHECK(kp.func == f && kp.gridDimX == 132);
    CUDA_KERNEL_NODE_PARAMS extra = kp;
    CUgraphNode n4;
    CU(cuGraphAddKernelNode(&n4, g, NULL, 0, &extra));
    CUgraphExec ge;
    CU(cuGraphInstantiate(&ge, g, 0));
    double t0 = st_ms();
    CU(cuGraphLaunch(ge, cs));
    CU(cuStreamSynchronize(cs));
    CHECK(st_ms() - t0 >= 8.0);
    CUevent g0, g1;
    CU(cuEventCreate(&g0, 0));
    CU(cuEventCreate(&g1, 0));
    CU(cuEventRecord(g0, cs));
    CU(cuGraphLaunch(ge, cs));
    CU(cuEventRecord(g1, cs));
    CU(cuEventSynchronize(g1));
    float ms;
    CU(cuEventElapsedTime(&ms, g0, g1));
    SOFT_NEAR(ms, 8.0, 0.5); /* 4 one-wave nodes back to back */
    CU(cuGraphExecDestroy(ge));
    CU(cuGraphDestroy(g));
    CU(cuStreamDestroy(cs));
}

int main(void)
{
    st_setup();
    setenv("CUDACAP_SIM_SMS", "132", 1);
    st_ctx();
    CUfunction f = st_func("spin_2000us");
    CUfunction dummy;
    CUmodule m;
    CU(cuModuleLoadData(&m, "x"));
    CHECK(cuModuleGetFunction(&dummy, m, "vectorAdd") == CUDA_ERROR_NOT_FOUND);
    CHECK(cuModuleGetFunction(&dummy, m, "spin_12") == CUDA_ERROR_NOT_FOUND);
    CU(cuModuleGetFunction(&dummy, m, "spin_0us"));

    TRIES(returns_case, f);
    RETRY_NEAR(launch_sync(f, 1320), 20.0, 2.0);

    RETRY_NEAR(launch_sync(f, 132), 2.0, 1.5);
    RETRY_NEAR(launch_sync(f, 133), 4.0, 1.5);
    RETRY_NEAR(launch_sync(f, 264), 4.0, 1.5);
    RETRY_NEAR(launch_sync(f, 1), 2.0, 1.5);
    RETRY_NEAR(launch_sync(f, 132 * 5 + 1), 12.0, 1.5);
    /* 3-D grid: 11*12*2 = 264 blocks = 2 waves */
    CU(cuCtxSynchronize());
    double t0 = st_ms();
    CU(cuLaunchKernel(f, 11, 12, 2, 1, 1, 1, 0, NULL, NULL, NULL));
    CU(cuCtxSynchronize());
    CHECK(st_ms() - t0 >= 4.0);
    printf("wave timing ok\n");

    TRIES(events_case, f);
    printf("streams/events ok\n");

    TRIES(graphs_case, f);
    printf("graphs ok\n");

    /* 2: two processes x 50 one-wave 2 ms kernels serialize: ~200 ms. Less
     * the time the later child and this process waited for a core: beside
     * a suite loop and a CI run, three tries in a row read 217-274 ms
     * (2026-12-05); a wait for a core only ever adds, so the lower bound
     * (serialized, not ~100 ms) is judged on the time as read. */
    two_page = mmap(NULL, sizeof *two_page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(two_page != MAP_FAILED);
    double total = 0, net = 0;
    for (int k = 0; k < 5; k++) {
        double start = st_ms() + 100, q0 = st_runq_ms();
        memset(two_page, 0, sizeof *two_page);
        two_slot = 0;
        int a = st_fork(child_50, &start);
        two_slot = 1;
        int b = st_fork(child_50, &start);
        CHECK(st_wait(a) == 0 && st_wait(b) == 0);
        total = st_ms() - start;
        double rq = st_runq_ms() - q0;
        rq += two_page->runq[0] > two_page->runq[1] ? two_page->runq[0] : two_page->runq[1];
        net = total - rq;
        printf("two processes: %.1f ms (%.1f ms waiting for a core)\n", total, rq);
        if (total >= 185.0 && net <= 215.0)
            break;
    }
    CHECK(total >= 185.0); /* serialized: in parallel they would take ~100 ms */
    CHECK(net <= 215.0);   /* back to back: no gap between the processes' kernels */
    return 0;
}
