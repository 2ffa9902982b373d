/* Which device: work is charged to the device CUDA runs it on, the stream's
 * (or the pool's), not the current context's (docs/interception.md, "Which
 * device"). Two or four simulated devices; the last one, T, is capped, and
 * device 0's context is current while every call below names T's stream.
 *
 *   route_device launch FAMILY   compute: one wave of a 1 ms kernel per
 *       launch on T's stream, synchronised, for 1.5 s; T's busy share must
 *       stay near its cap (CUDACAP_SM_LIMIT_<T>=30: at most 0.40).
 *       FAMILY: kernel, kernel_ex, coop, grid_async, multi
 *       (cuLaunchCooperativeKernelMultiDevice), graph (cuGraphLaunch of a
 *       graph captured on T's stream), and grid, launch (the
 *       deprecated cuLaunchGrid and cuLaunch, which take no stream: T's
 *       context is current for those two).
 *   route_device alloc | pool    memory: 64 MiB stream-ordered allocations
 *       on T's stream (alloc: cuMemAllocAsync; pool: cuMemAllocFromPoolAsync
 *       from T's default pool) until refused; what was granted must fit T's
 *       cap (CUDACAP_MEM_LIMIT_<T>=1g) and come near it.
 *   route_device vmm             the same with cuMemCreate handles whose
 *       location is T (VMM is charged to its location, not to a context).
 *
 * Before the device was taken from the stream, launches were charged to
 * device 0 (uncapped: T ran 100 % busy at a 30 % cap) and allocations were
 * never refused (the red team's 14,336 MiB under 2 GiB). Controls
 * (route.*.control, WILL_FAIL): the library built with
 * CC_TEST_CURRENT_DEVICE (the stream's device read as the current one)
 * fails every cross-device mode; grid and launch, which are about the
 * entry point being intercepted at all, are checked without cudacap
 * preloaded (route.grid.control, route.launch.control): T then runs near
 * 1.0. Each control was run and fails every run. */
/* The deprecated launches are among the routes checked. */
#define CUDA_ENABLE_DEPRECATED
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "ptx.h"
#include "runq.h"

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static CUgraphExec g_exec; /* graph: one launch of f captured on T's stream */

static CUresult launch_one(const char *fam, CUfunction f, unsigned sms, CUstream s)
{
    if (strcmp(fam, "graph") == 0) return cuGraphLaunch(g_exec, s);
    if (strcmp(fam, "kernel") == 0) return cuLaunchKernel(f, sms, 1, 1, 32, 1, 1, 0, s, NULL, NULL);
    if (strcmp(fam, "kernel_ex") == 0) {
        CUlaunchConfig c;
        memset(&c, 0, sizeof c);
        c.gridDimX = sms, c.gridDimY = c.gridDimZ = 1;
        c.blockDimX = 32, c.blockDimY = c.blockDimZ = 1;
        c.hStream = s;
        return cuLaunchKernelEx(&c, f, NULL, NULL);
    }
    if (strcmp(fam, "coop") == 0) return cuLaunchCooperativeKernel(f, sms, 1, 1, 32, 1, 1, 0, s, NULL);
    if (strcmp(fam, "grid_async") == 0) return cuLaunchGridAsync(f, (int)sms, 1, s);
    if (strcmp(fam, "grid") == 0) return cuLaunchGrid(f, (int)sms, 1);
    if (strcmp(fam, "launch") == 0) return cuLaunch(f);
    if (strcmp(fam, "multi") == 0) {
        CUDA_LAUNCH_PARAMS p;
        memset(&p, 0, sizeof p);
        p.function = f;
        p.gridDimX = sms, p.gridDimY = p.gridDimZ = 1;
        p.blockDimX = 32, p.blockDimY = p.blockDimZ = 1;
        p.hStream = s;
        return cuLaunchCooperativeKernelMultiDevice(&p, 1, 0);
    }
    return CUDA_ERROR_INVALID_VALUE;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int n = 0;
    CUdevice d0, dt;
    CUcontext c0, ct;
    CHECK_CU(cuInit(0));
    CHECK_CU(cuDeviceGetCount(&n));
    if (n < 2) {
        fprintf(stderr, "needs CUDACAP_SIM_DEVICES >= 2 (have %d)\n", n);
        return 1;
    }
    CHECK_CU(cuDeviceGet(&d0, 0));
    CHECK_CU(cuDeviceGet(&dt, n - 1));
    CHECK_CU(cuDevicePrimaryCtxRetain(&c0, d0));
    CHECK_CU(cuDevicePrimaryCtxRetain(&ct, dt));
    CHECK_CU(cuCtxSetCurrent(ct)); /* T's stream and module are made in T's context */
    CUstream st;
    CUmodule mod;
    CUfunction f;
    int sms = 0;
    CHECK_CU(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
    CHECK_CU(cuModuleLoadData(&mod, test_ptx));
    CHECK_CU(cuModuleGetFunction(&f, mod, "spin_1000us"));
    CHECK_CU(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dt));
    if (check_failures) CHECK_EXIT();

    if (strcmp(mode, "launch") == 0 && argc > 2) {
        const char *fam = argv[2];
        int no_stream = strcmp(fam, "grid") == 0 || strcmp(fam, "launch") == 0;
        if (strcmp(fam, "graph") == 0) { /* captured and instantiated in T's context */
            CUgraph g;
            CHECK_CU(cuStreamBeginCapture(st, CU_STREAM_CAPTURE_MODE_GLOBAL));
            CHECK_CU(cuLaunchKernel(f, (unsigned)sms, 1, 1, 32, 1, 1, 0, st, NULL, NULL));
            CHECK_CU(cuStreamEndCapture(st, &g));
            CHECK_CU(cuGraphInstantiateWithFlags(&g_exec, g, 0));
            if (check_failures) CHECK_EXIT();
        }
        if (no_stream) CHECK_CU(cuFuncSetBlockShape(f, 32, 1, 1));
        else CHECK_CU(cuCtxSetCurrent(c0)); /* device 0 current from here on */
        uint64_t start = now_ns(), from = start + 300000000ull, end = from + 1500000000ull;
        unsigned counted = 0;
        double q0 = -1;
        uint64_t longest = 0; /* the longest launch call, ns */
        while (now_ns() < end) {
            if (q0 < 0 && now_ns() > from) q0 = runq_s();
            uint64_t t = now_ns();
            CUresult r = launch_one(fam, f, (unsigned)sms, st);
            if (now_ns() - t > longest) longest = now_ns() - t;
            if (r != CUDA_SUCCESS) {
                CHECK(0, "%s launch returned %d", fam, (int)r);
                break;
            }
            CHECK_CU(no_stream ? cuCtxSynchronize() : cuStreamSynchronize(st));
            if (now_ns() > from) counted++;
        }
        /* A thread that never ran inside the window (a launch made before
         * it returned after its end: a CI run beside a suite loop, 2026-12-05,
         * the process's watcher cycling 2-4 times in 12 s) says nothing of
         * the share: the whole window counts as waited, and the longest
         * launch call is printed. */
        double share = counted * 1e-3 / 1.5, starved = q0 < 0 ? 1.5 : runq_s() - q0;
        printf("%s on device %d (cap 30) with device %d current: busy %.2f; runnable without a core "
               "%.2f s%s; longest launch call %.3f s\n", fam, n - 1, no_stream ? n - 1 : 0, share, starved,
               q0 < 0 ? " (never ran inside the window)" : "", (double)longest / 1e9);
        CHECK(share <= 0.40, "%s: device %d busy %.2f under a 30 %% cap", fam, n - 1, share);
        int judged = runq_judged(fam, starved, 1.5);
        if (judged) CHECK(share >= 0.15, "%s: device %d busy only %.2f (throttled too hard)", fam, n - 1, share);
        /* A control (launches charged to device 0: T uncapped) read 0.25
         * when starved 2.3 s: not judged either way (ctest: Skipped). */
        if (!check_failures && !judged) return 77;
        CHECK_EXIT();
    }

    if (strcmp(mode, "vmm") == 0) { /* cuMemCreate with T as the location */
        CUmemAllocationProp prop;
        memset(&prop, 0, sizeof prop);
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = n - 1;
        CHECK_CU(cuCtxSetCurrent(c0));
        CUmemGenericAllocationHandle hs[128];
        uint64_t granted = 0;
        int k = 0;
        for (; k < 128 && cuMemCreate(&hs[k], 64u << 20, &prop, 0) == CUDA_SUCCESS; k++) granted += 64u << 20;
        printf("vmm on device %d (cap 1 GiB) with device 0 current: %llu MiB granted\n", n - 1,
               (unsigned long long)(granted >> 20));
        CHECK(granted <= (1ull << 30) && granted >= (768ull << 20), "%llu MiB granted under a 1 GiB cap",
              (unsigned long long)(granted >> 20));
        for (int i = 0; i < k; i++) CHECK_CU(cuMemRelease(hs[i]));
        CHECK_EXIT();
    }
    if (strcmp(mode, "alloc") == 0 || strcmp(mode, "pool") == 0) {
        int pool = strcmp(mode, "pool") == 0;
        CUmemoryPool p = NULL;
        if (pool) CHECK_CU(cuDeviceGetDefaultMemPool(&p, dt));
        CHECK_CU(cuCtxSetCurrent(c0));
        uint64_t granted = 0;
        CUdeviceptr ptrs[128];
        int k = 0;
        for (; k < 128; k++) {
            CUresult r = pool ? cuMemAllocFromPoolAsync(&ptrs[k], 64u << 20, p, st)
                              : cuMemAllocAsync(&ptrs[k], 64u << 20, st);
            if (r != CUDA_SUCCESS) break;
            granted += 64u << 20;
        }
        printf("%s on device %d (cap 1 GiB) with device 0 current: %llu MiB granted\n", mode,
               n - 1, (unsigned long long)(granted >> 20));
        CHECK(granted <= (1ull << 30), "%llu MiB granted under a 1 GiB cap",
              (unsigned long long)(granted >> 20));
        CHECK(granted >= (768ull << 20), "only %llu MiB granted under a 1 GiB cap",
              (unsigned long long)(granted >> 20));
        for (int i = 0; i < k; i++) CHECK_CU(cuMemFreeAsync(ptrs[i], st));
        CHECK_CU(cuStreamSynchronize(st));
        CHECK_EXIT();
    }
    fprintf(stderr, "usage: route_device launch FAMILY | alloc | pool\n");
    return 2;
}
