/* Every route by which a program reaches the driver must land in cudacap's
 * wrapper: a direct call, dlopen + dlsym (any handle, RTLD_NEXT too), and
 * cuGetProcAddress for each version, flag and cudaVersion combination the
 * CUDA 12 and 13 runtimes use. Proof is the wrapper's call counter
 * (CUDACAP_COUNT_CALLS=1), read through cudacap_call_count. Names we do not
 * intercept must come back as the driver's own entry points.
 *
 * Run preloaded (LD_PRELOAD or /etc/ld.so.preload) against the simulator.
 *
 * Negative control (checked by hand when this test was written): with
 * cc_route_proc returning the driver's pointer unchanged, every
 * cuGetProcAddress route fails here (153 failed checks). That only holds
 * because the simulator is linked -Bsymbolic like a real driver: otherwise its
 * own table would bind to our exports and routing could not be told apart
 * from plain interposition. */
#include <cuda.h>
#include <dlfcn.h>
#include <string.h>

#include "check.h"
#include "ptx.h"
#include "cudacap/nvml_api.h"

#undef cuGetProcAddress
CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);
/* The CUDA 11 instantiate ABI; cuda.h declares it only for the driver. */
CUresult cuGraphInstantiate_v2(CUgraphExec *, CUgraph, CUgraphNode *, char *, size_t);

static long long (*count)(const char *);
static CUfunction fn;
static CUstream stream;
static CUgraphExec gexec;
static CUgraph kgraph;       /* one kernel node: what the instantiate routes instantiate */
static CUmemoryPool mpool;   /* for cuMemAllocFromPoolAsync */

#define PT CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
#define LEG CU_GET_PROC_ADDRESS_LEGACY_STREAM

/* Calls p, which must be an entry point of the family of `want`. */
/* Context creation entry points (host pid discovery): create, destroy, and
 * leave the test's own context current again. */
static CUresult call_ctx(const char *want, void *p)
{
    CUcontext saved = NULL, c = NULL;
    CUdevice dev;
    CUresult r;
    cuCtxGetCurrent(&saved);
    cuDeviceGet(&dev, 0);
    if (!strcmp(want, "cuDevicePrimaryCtxRetain")) {
        r = ((__typeof__(&cuDevicePrimaryCtxRetain))p)(&c, dev);
        if (r == CUDA_SUCCESS) cuDevicePrimaryCtxRelease(dev);
        return r;
    }
    if (!strcmp(want, "cuCtxCreate_v4")) r = ((__typeof__(&cuCtxCreate_v4))p)(&c, NULL, 0, dev);
    else if (!strcmp(want, "cuCtxCreate_v3"))
        r = ((CUresult(*)(CUcontext *, CUexecAffinityParam *, int, unsigned, CUdevice))p)(&c, NULL, 0, 0, dev);
    else r = ((CUresult(*)(CUcontext *, unsigned, CUdevice))p)(&c, 0, dev);
    if (r == CUDA_SUCCESS) cuCtxDestroy(c);
    cuCtxSetCurrent(saved);
    return r;
}

static CUresult call_as(const char *want, void *p)
{
    if (!strcmp(want, "cuDevicePrimaryCtxRetain") || !strncmp(want, "cuCtxCreate", 11))
        return call_ctx(want, p);
    if (!strncmp(want, "cuLaunchKernelEx", 16)) {
        CUlaunchConfig cfg = {.gridDimX = 1, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 32,
                              .blockDimY = 1, .blockDimZ = 1, .hStream = stream};
        return ((CUresult(*)(const CUlaunchConfig *, CUfunction, void **, void **))p)(&cfg, fn, NULL, NULL);
    }
    if (!strncmp(want, "cuLaunchKernel", 14))
        return ((__typeof__(&cuLaunchKernel))p)(fn, 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL);
    if (!strncmp(want, "cuLaunchCooperativeKernel", 25))
        return ((__typeof__(&cuLaunchCooperativeKernel))p)(fn, 1, 1, 1, 32, 1, 1, 0, stream, NULL);
    if (!strncmp(want, "cuGraphLaunch", 13)) return ((__typeof__(&cuGraphLaunch))p)(gexec, stream);
    if (!strcmp(want, "cuMemAlloc_v2")) {
        CUdeviceptr d;
        CUresult r = ((__typeof__(&cuMemAlloc_v2))p)(&d, 4096);
        if (r == CUDA_SUCCESS) cuMemFree(d);
        return r;
    }
    if (!strcmp(want, "cuMemFree_v2")) {
        CUdeviceptr d;
        cuMemAlloc(&d, 4096);
        return ((__typeof__(&cuMemFree_v2))p)(d);
    }
    if (!strcmp(want, "cuMemGetInfo_v2")) {
        size_t f, t;
        return ((__typeof__(&cuMemGetInfo_v2))p)(&f, &t);
    }
    if (!strcmp(want, "cuMemAllocManaged")) {
        CUdeviceptr d;
        CUresult r = ((__typeof__(&cuMemAllocManaged))p)(&d, 4096, CU_MEM_ATTACH_GLOBAL);
        if (r == CUDA_SUCCESS) cuMemFree(d);
        return r;
    }
    if (!strcmp(want, "cuMemAllocPitch_v2")) {
        CUdeviceptr d;
        size_t pitch;
        CUresult r = ((__typeof__(&cuMemAllocPitch_v2))p)(&d, &pitch, 1000, 4, 4);
        if (r == CUDA_SUCCESS) cuMemFree(d);
        return r;
    }
    if (!strcmp(want, "cuDeviceTotalMem_v2")) {
        size_t b;
        return ((__typeof__(&cuDeviceTotalMem_v2))p)(&b, 0);
    }
    if (!strncmp(want, "cuMemAllocAsync", 15)) {
        CUdeviceptr d;
        CUresult r = ((__typeof__(&cuMemAllocAsync))p)(&d, 4096, stream);
        if (r == CUDA_SUCCESS) cuMemFreeAsync(d, stream);
        return r;
    }
    if (!strncmp(want, "cuMemAllocFromPoolAsync", 23)) {
        CUdeviceptr d;
        CUresult r = ((__typeof__(&cuMemAllocFromPoolAsync))p)(&d, 4096, mpool, stream);
        if (r == CUDA_SUCCESS) cuMemFreeAsync(d, stream);
        return r;
    }
    if (!strcmp(want, "cuMemPoolCreate") || !strcmp(want, "cuMemPoolDestroy")) {
        CUmemPoolProps pp = {.allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
                             .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0}};
        CUmemoryPool pool;
        if (!strcmp(want, "cuMemPoolDestroy")) {
            if (cuMemPoolCreate(&pool, &pp) != CUDA_SUCCESS) return CUDA_ERROR_UNKNOWN;
            return ((__typeof__(&cuMemPoolDestroy))p)(pool);
        }
        CUresult r = ((__typeof__(&cuMemPoolCreate))p)(&pool, &pp);
        if (r == CUDA_SUCCESS) cuMemPoolDestroy(pool);
        return r;
    }
    if (!strcmp(want, "cuMemPoolTrimTo")) return ((__typeof__(&cuMemPoolTrimTo))p)(mpool, 0);
    if (!strncmp(want, "cuMem", 5) && (strstr(want, "Create") || strstr(want, "Release") ||
                                      strstr(want, "Retain") || strstr(want, "Map") ||
                                      strstr(want, "Unmap"))) {
        /* VMM: create a 2 MiB handle, map it, undo; the routed pointer does
         * the step its name says. */
        CUmemAllocationProp pr = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
                                  .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0}};
        CUmemGenericAllocationHandle h, h2;
        CUdeviceptr va;
        size_t sz = 2 << 20;
        CUresult r = !strcmp(want, "cuMemCreate") ? ((__typeof__(&cuMemCreate))p)(&h, sz, &pr, 0)
                                                  : cuMemCreate(&h, sz, &pr, 0);
        if (r != CUDA_SUCCESS) return r;
        if (!strcmp(want, "cuMemCreate") || !strcmp(want, "cuMemRelease"))
            return !strcmp(want, "cuMemRelease") ? ((__typeof__(&cuMemRelease))p)(h) : cuMemRelease(h);
        if (cuMemAddressReserve(&va, sz, 0, 0, 0) != CUDA_SUCCESS) return CUDA_ERROR_UNKNOWN;
        r = !strcmp(want, "cuMemMap") ? ((__typeof__(&cuMemMap))p)(va, sz, 0, h, 0)
                                      : cuMemMap(va, sz, 0, h, 0);
        if (r == CUDA_SUCCESS && !strcmp(want, "cuMemRetainAllocationHandle")) {
            r = ((__typeof__(&cuMemRetainAllocationHandle))p)(&h2, (void *)va);
            if (r == CUDA_SUCCESS) cuMemRelease(h2);
        }
        CUresult u = !strcmp(want, "cuMemUnmap") ? ((__typeof__(&cuMemUnmap))p)(va, sz)
                                                 : cuMemUnmap(va, sz);
        cuMemRelease(h);
        cuMemAddressFree(va, sz);
        return r != CUDA_SUCCESS ? r : u;
    }
    if (!strcmp(want, "cuArrayCreate_v2") || !strcmp(want, "cuArrayDestroy")) {
        CUDA_ARRAY_DESCRIPTOR d = {.Width = 64, .Height = 64, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1};
        CUarray a;
        if (!strcmp(want, "cuArrayDestroy")) {
            if (cuArrayCreate(&a, &d) != CUDA_SUCCESS) return CUDA_ERROR_UNKNOWN;
            return ((__typeof__(&cuArrayDestroy))p)(a);
        }
        CUresult r = ((__typeof__(&cuArrayCreate_v2))p)(&a, &d);
        if (r == CUDA_SUCCESS) cuArrayDestroy(a);
        return r;
    }
    if (!strcmp(want, "cuArray3DCreate_v2")) {
        CUDA_ARRAY3D_DESCRIPTOR d = {.Width = 64, .Height = 64, .Depth = 4, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1};
        CUarray a;
        CUresult r = ((__typeof__(&cuArray3DCreate_v2))p)(&a, &d);
        if (r == CUDA_SUCCESS) cuArrayDestroy(a);
        return r;
    }
    if (!strncmp(want, "cuMipmappedArray", 16)) {
        CUDA_ARRAY3D_DESCRIPTOR d = {.Width = 64, .Height = 64, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1};
        CUmipmappedArray a;
        if (!strcmp(want, "cuMipmappedArrayDestroy")) {
            if (cuMipmappedArrayCreate(&a, &d, 2) != CUDA_SUCCESS) return CUDA_ERROR_UNKNOWN;
            return ((__typeof__(&cuMipmappedArrayDestroy))p)(a);
        }
        CUresult r = ((__typeof__(&cuMipmappedArrayCreate))p)(&a, &d, 2);
        if (r == CUDA_SUCCESS) cuMipmappedArrayDestroy(a);
        return r;
    }
    if (!strcmp(want, "cuGraphAddMemAllocNode")) {
        CUgraph g;
        CUgraphNode n;
        CUDA_MEM_ALLOC_NODE_PARAMS mp = {.bytesize = 1 << 20};
        mp.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
        mp.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        if (cuGraphCreate(&g, 0) != CUDA_SUCCESS) return CUDA_ERROR_UNKNOWN;
        CUresult r = ((__typeof__(&cuGraphAddMemAllocNode))p)(&n, g, NULL, 0, &mp);
        cuGraphDestroy(g);
        return r;
    }
    if (!strncmp(want, "cuGraphInstantiate", 18) || !strcmp(want, "cuGraphExecDestroy")) {
        CUgraphExec e = NULL;
        CUDA_GRAPH_INSTANTIATE_PARAMS ip = {.flags = 0};
        CUresult r;
        if (!strcmp(want, "cuGraphInstantiate_v2"))
            r = ((__typeof__(&cuGraphInstantiate_v2))p)(&e, kgraph, NULL, NULL, 0);
        else if (!strcmp(want, "cuGraphInstantiateWithFlags"))
            r = ((__typeof__(&cuGraphInstantiateWithFlags))p)(&e, kgraph, 0);
        else if (!strncmp(want, "cuGraphInstantiateWithParams", 28))
            r = ((__typeof__(&cuGraphInstantiateWithParams))p)(&e, kgraph, &ip);
        else if (cuGraphInstantiateWithFlags(&e, kgraph, 0) != CUDA_SUCCESS)
            return CUDA_ERROR_UNKNOWN;
        else
            return ((__typeof__(&cuGraphExecDestroy))p)(e);
        if (r == CUDA_SUCCESS) cuGraphExecDestroy(e);
        return r;
    }
    if (!strcmp(want, "cuDeviceGraphMemTrim")) return ((__typeof__(&cuDeviceGraphMemTrim))p)(0);
    if (!strcmp(want, "cuInit")) return ((__typeof__(&cuInit))p)(0);
    if (!strcmp(want, "cuDriverGetVersion")) {
        int v;
        return ((__typeof__(&cuDriverGetVersion))p)(&v);
    }
    if (!strcmp(want, "cuGetProcAddress_v2")) {
        void *q;
        return ((__typeof__(&cuGetProcAddress_v2))p)("cuInit", &q, 12000, 0, NULL);
    }
    if (!strcmp(want, "cuGetProcAddress")) {
        void *q;
        return ((__typeof__(&cuGetProcAddress))p)("cuInit", &q, 11030, 0);
    }
    fprintf(stderr, "no caller for %s\n", want);
    return CUDA_ERROR_UNKNOWN;
}

/* Calling p must go through our wrapper of `want`, exactly once. */
static void expect_ours(const char *route, const char *want, void *p)
{
    CHECK(p != NULL, "%s: %s is NULL", route, want);
    if (!p) return;
    long long before = count(want);
    CUresult r = call_as(want, p);
    CHECK(r == CUDA_SUCCESS, "%s: calling %s returned %d", route, want, (int)r);
    long long after = count(want);
    CHECK(after == before + 1, "%s: %s counter %lld -> %lld (the call did not reach cudacap)",
          route, want, before, after);
}

static void setup(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CHECK_CU(cuInit(0));
    CHECK_CU(cuDeviceGet(&dev, 0));
    CHECK_CU(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK_CU(cuCtxSetCurrent(ctx));
    CHECK_CU(cuModuleLoadData(&mod, test_ptx));
    CHECK_CU(cuModuleGetFunction(&fn, mod, "spin_10us"));
    CHECK_CU(cuStreamCreate(&stream, 0));
    CUgraph g;
    CUgraphNode node;
    CHECK_CU(cuGraphCreate(&g, 0));
    CUDA_KERNEL_NODE_PARAMS kp = {.func = fn, .gridDimX = 1, .gridDimY = 1, .gridDimZ = 1,
                                  .blockDimX = 32, .blockDimY = 1, .blockDimZ = 1};
    CHECK_CU(cuGraphAddKernelNode(&node, g, NULL, 0, &kp));
    CHECK_CU(cuGraphInstantiateWithFlags(&gexec, g, 0));
    kgraph = g;
    CUmemPoolProps pp = {.allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
                         .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0}};
    CHECK_CU(cuMemPoolCreate(&mpool, &pp));
}

static const struct {
    const char *symbol;
    cuuint64_t flags;
    const char *want;
    const char *want_before_12050; /* the ABI an older cudaVersion gets, if different */
} proc_routes[] = {
    {"cuDevicePrimaryCtxRetain", 0, "cuDevicePrimaryCtxRetain", NULL},
    {"cuCtxCreate", 0, "cuCtxCreate_v4", "cuCtxCreate_v3"},
    {"cuInit", 0, "cuInit", NULL},
    {"cuDriverGetVersion", 0, "cuDriverGetVersion", NULL},
    {"cuMemAlloc", 0, "cuMemAlloc_v2", NULL},
    {"cuMemFree", 0, "cuMemFree_v2", NULL},
    {"cuMemGetInfo", 0, "cuMemGetInfo_v2", NULL},
    {"cuLaunchKernel", 0, "cuLaunchKernel", NULL},
    {"cuLaunchKernel", LEG, "cuLaunchKernel", NULL},
    {"cuLaunchKernel", PT, "cuLaunchKernel_ptsz", NULL},
    {"cuLaunchKernelEx", 0, "cuLaunchKernelEx", NULL},
    {"cuLaunchKernelEx", LEG, "cuLaunchKernelEx", NULL},
    {"cuLaunchKernelEx", PT, "cuLaunchKernelEx_ptsz", NULL},
    {"cuLaunchCooperativeKernel", LEG, "cuLaunchCooperativeKernel", NULL},
    {"cuLaunchCooperativeKernel", PT, "cuLaunchCooperativeKernel_ptsz", NULL},
    {"cuGraphLaunch", LEG, "cuGraphLaunch", NULL},
    {"cuGraphLaunch", PT, "cuGraphLaunch_ptsz", NULL},
    /* memory (docs/memory.md). cuGraphUpload(_ptsz) is left out: the
     * simulator does not model it (the wrapper is in hooks.def all the same). */
    {"cuMemAllocManaged", 0, "cuMemAllocManaged", NULL},
    {"cuMemAllocPitch", 0, "cuMemAllocPitch_v2", NULL},
    {"cuDeviceTotalMem", 0, "cuDeviceTotalMem_v2", NULL},
    {"cuMemAllocAsync", LEG, "cuMemAllocAsync", NULL},
    {"cuMemAllocAsync", PT, "cuMemAllocAsync_ptsz", NULL},
    {"cuMemAllocFromPoolAsync", LEG, "cuMemAllocFromPoolAsync", NULL},
    {"cuMemAllocFromPoolAsync", PT, "cuMemAllocFromPoolAsync_ptsz", NULL},
    {"cuMemPoolCreate", 0, "cuMemPoolCreate", NULL},
    {"cuMemPoolDestroy", 0, "cuMemPoolDestroy", NULL},
    {"cuMemPoolTrimTo", 0, "cuMemPoolTrimTo", NULL},
    {"cuMemCreate", 0, "cuMemCreate", NULL},
    {"cuMemRelease", 0, "cuMemRelease", NULL},
    {"cuMemRetainAllocationHandle", 0, "cuMemRetainAllocationHandle", NULL},
    {"cuMemMap", 0, "cuMemMap", NULL},
    {"cuMemUnmap", 0, "cuMemUnmap", NULL},
    {"cuArrayCreate", 0, "cuArrayCreate_v2", NULL},
    {"cuArray3DCreate", 0, "cuArray3DCreate_v2", NULL},
    {"cuArrayDestroy", 0, "cuArrayDestroy", NULL},
    {"cuMipmappedArrayCreate", 0, "cuMipmappedArrayCreate", NULL},
    {"cuMipmappedArrayDestroy", 0, "cuMipmappedArrayDestroy", NULL},
    {"cuGraphAddMemAllocNode", 0, "cuGraphAddMemAllocNode", NULL},
    {"cuGraphInstantiateWithFlags", 0, "cuGraphInstantiateWithFlags", NULL},
    {"cuGraphInstantiateWithParams", LEG, "cuGraphInstantiateWithParams", NULL},
    {"cuGraphInstantiateWithParams", PT, "cuGraphInstantiateWithParams_ptsz", NULL},
    {"cuGraphExecDestroy", 0, "cuGraphExecDestroy", NULL},
    {"cuDeviceGraphMemTrim", 0, "cuDeviceGraphMemTrim", NULL},
};

static void via_proc_address(void)
{
    /* The versions CUDA 12.x and 13.x runtimes pass. */
    const int versions[] = {12000, 12040, 12080, 12090, 13000};
    char route[160];
    for (size_t v = 0; v < sizeof versions / sizeof versions[0]; v++) {
        for (size_t i = 0; i < sizeof proc_routes / sizeof proc_routes[0]; i++) {
            void *p = NULL;
            CUdriverProcAddressQueryResult st = -1;
            snprintf(route, sizeof route, "cuGetProcAddress_v2(%s, %d, %llu)",
                     proc_routes[i].symbol, versions[v], (unsigned long long)proc_routes[i].flags);
            CHECK_CU(cuGetProcAddress_v2(proc_routes[i].symbol, &p, versions[v],
                                         proc_routes[i].flags, &st));
            CHECK(st == CU_GET_PROC_ADDRESS_SUCCESS, "%s: status %d", route, (int)st);
            const char *want = versions[v] < 12050 && proc_routes[i].want_before_12050
                                   ? proc_routes[i].want_before_12050
                                   : proc_routes[i].want;
            expect_ours(route, want, p);
            /* The legacy 4-argument entry point (runtimes 11.3 .. 11.8, and
             * callers that never moved on) routes the same way. */
            p = NULL;
            snprintf(route, sizeof route, "cuGetProcAddress(%s, %d, %llu)", proc_routes[i].symbol,
                     versions[v], (unsigned long long)proc_routes[i].flags);
            CHECK_CU(cuGetProcAddress(proc_routes[i].symbol, &p, versions[v], proc_routes[i].flags));
            expect_ours(route, want, p);
        }
    }
    /* cuGetProcAddress looked up through itself stays ours, so lookups made
     * through the returned pointer are routed too. */
    void *gpa = NULL, *p = NULL;
    CHECK_CU(cuGetProcAddress_v2("cuGetProcAddress", &gpa, 12000, 0, NULL));
    expect_ours("cuGetProcAddress_v2(cuGetProcAddress, 12000)", "cuGetProcAddress_v2", gpa);
    if (gpa) {
        CHECK_CU(((__typeof__(&cuGetProcAddress_v2))gpa)("cuLaunchKernel", &p, 12000, PT, NULL));
        expect_ours("nested cuGetProcAddress_v2(cuLaunchKernel, PT)", "cuLaunchKernel_ptsz", p);
    }
    /* "cuGraphInstantiate" is the CUDA 11 ABI (_v2) for 11.x callers; for
     * 12+ the driver hands out cuGraphInstantiateWithFlags (listed above). */
    p = NULL;
    CHECK_CU(cuGetProcAddress_v2("cuGraphInstantiate", &p, 11040, 0, NULL));
    expect_ours("cuGetProcAddress_v2(cuGraphInstantiate, 11040)", "cuGraphInstantiate_v2", p);
    gpa = NULL;
    CHECK_CU(cuGetProcAddress_v2("cuGetProcAddress", &gpa, 11080, 0, NULL));
    expect_ours("cuGetProcAddress_v2(cuGetProcAddress, 11080)", "cuGetProcAddress", gpa);
    /* A name we do not intercept comes back as the driver's own. */
    p = NULL;
    CHECK_CU(cuGetProcAddress_v2("cuMemcpyHtoD", &p, 12000, 0, NULL));
    Dl_info info;
    CHECK(p && dladdr(p, &info) && strstr(info.dli_fname, "libcuda.so"),
          "cuMemcpyHtoD should be the driver's, got %s", p && dladdr(p, &info) ? info.dli_fname : "?");
    /* Unknown names still fail as the driver says. The return code differs
     * (NVIDIA's 580 driver returns CUDA_SUCCESS with the status set, the
     * simulator CUDA_ERROR_NOT_FOUND); the status and the NULL are what
     * callers test. */
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
    p = (void *)1;
    cuGetProcAddress_v2("cuNoSuchThing", &p, 12000, 0, &st);
    CHECK(p == NULL && st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, "unknown symbol: status %d",
          (int)st);
}

static void via_dlsym(void)
{
    const char *names[] = {"cuInit", "cuDriverGetVersion", "cuGetProcAddress", "cuGetProcAddress_v2",
                           "cuMemAlloc_v2", "cuMemFree_v2", "cuMemGetInfo_v2", "cuLaunchKernel",
                           "cuLaunchKernel_ptsz", "cuLaunchKernelEx", "cuLaunchKernelEx_ptsz",
                           "cuLaunchCooperativeKernel", "cuLaunchCooperativeKernel_ptsz",
                           "cuGraphLaunch", "cuGraphLaunch_ptsz",
                           /* memory (cuGraphUpload: not in the simulator) */
                           "cuMemAllocManaged", "cuMemAllocPitch_v2", "cuDeviceTotalMem_v2",
                           "cuMemAllocAsync", "cuMemAllocAsync_ptsz", "cuMemAllocFromPoolAsync",
                           "cuMemAllocFromPoolAsync_ptsz", "cuMemPoolCreate", "cuMemPoolDestroy",
                           "cuMemPoolTrimTo", "cuMemCreate", "cuMemRelease",
                           "cuMemRetainAllocationHandle", "cuMemMap", "cuMemUnmap",
                           "cuArrayCreate_v2", "cuArray3DCreate_v2", "cuArrayDestroy",
                           "cuMipmappedArrayCreate", "cuMipmappedArrayDestroy",
                           "cuGraphAddMemAllocNode", "cuGraphInstantiate_v2",
                           "cuGraphInstantiateWithFlags", "cuGraphInstantiateWithParams",
                           "cuGraphInstantiateWithParams_ptsz", "cuGraphExecDestroy",
                           "cuDeviceGraphMemTrim",
                           /* context creation (host pid discovery) */
                           "cuDevicePrimaryCtxRetain", "cuCtxCreate_v2", "cuCtxCreate_v3",
                           "cuCtxCreate_v4"};
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    CHECK(h != NULL, "dlopen libcuda.so.1: %s", dlerror());
    char route[128];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(route, sizeof route, "dlsym(libcuda handle, %s)", names[i]);
        expect_ours(route, names[i], h ? dlsym(h, names[i]) : NULL);
        snprintf(route, sizeof route, "dlsym(RTLD_NEXT, %s)", names[i]);
        expect_ours(route, names[i], dlsym(RTLD_NEXT, names[i]));
        snprintf(route, sizeof route, "dlsym(RTLD_DEFAULT, %s)", names[i]);
        expect_ours(route, names[i], dlsym(RTLD_DEFAULT, names[i]));
    }
    /* Not intercepted: the driver's own entry point. */
    Dl_info info;
    void *p = h ? dlsym(h, "cuMemcpyHtoD_v2") : NULL;
    CHECK(p && dladdr(p, &info) && strstr(info.dli_fname, "libcuda.so"),
          "dlsym(cuMemcpyHtoD_v2) should be the driver's");
    /* NVML through dlopen + dlsym. */
    void *n = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    CHECK(n != NULL, "dlopen libnvidia-ml.so.1: %s", dlerror());
    if (n) {
        __typeof__(&nvmlInit_v2) init = (__typeof__(&nvmlInit_v2))dlsym(n, "nvmlInit_v2");
        __typeof__(&nvmlDeviceGetHandleByIndex_v2) byidx =
            (__typeof__(&nvmlDeviceGetHandleByIndex_v2))dlsym(n, "nvmlDeviceGetHandleByIndex_v2");
        __typeof__(&nvmlDeviceGetMemoryInfo) mi =
            (__typeof__(&nvmlDeviceGetMemoryInfo))dlsym(n, "nvmlDeviceGetMemoryInfo");
        __typeof__(&nvmlDeviceGetMemoryInfo_v2) mi2 =
            (__typeof__(&nvmlDeviceGetMemoryInfo_v2))dlsym(n, "nvmlDeviceGetMemoryInfo_v2");
        long long b0 = count("nvmlInit_v2"), b1 = count("nvmlDeviceGetMemoryInfo"),
                  b2 = count("nvmlDeviceGetMemoryInfo_v2");
        nvmlDevice_t d;
        nvmlMemory_t m;
        CHECK(init && init() == NVML_SUCCESS, "nvmlInit_v2");
        CHECK(byidx && byidx(0, &d) == NVML_SUCCESS, "nvml handle");
        CHECK(mi && mi(d, &m) == NVML_SUCCESS && m.total > 0, "nvml meminfo");
        nvmlMemory_v2_t m2 = {.version = nvmlMemory_v2};
        CHECK(mi2 && mi2(d, &m2) == NVML_SUCCESS && m2.total > 0, "nvml meminfo v2");
        CHECK(count("nvmlInit_v2") == b0 + 1 && count("nvmlDeviceGetMemoryInfo") == b1 + 1 &&
                  count("nvmlDeviceGetMemoryInfo_v2") == b2 + 1,
              "NVML calls through dlsym did not reach cudacap");
    }
}

static void direct(void)
{
    /* Linked calls bind to the preloaded library's exports. */
    expect_ours("direct cuLaunchKernel", "cuLaunchKernel", (void *)&cuLaunchKernel);
    long long b = count("cuMemAlloc_v2");
    CUdeviceptr d;
    CHECK_CU(cuMemAlloc(&d, 1 << 20));
    CHECK_CU(cuMemFree(d));
    CHECK(count("cuMemAlloc_v2") == b + 1, "direct cuMemAlloc did not reach cudacap");
    b = count("cuLaunchKernel");
    CHECK_CU(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL));
    CHECK(count("cuLaunchKernel") == b + 1, "direct launch did not reach cudacap");
}

int main(void)
{
    count = (long long (*)(const char *))dlsym(RTLD_DEFAULT, "cudacap_call_count");
    if (!count) {
        fprintf(stderr, "libcudacap.so is not loaded (LD_PRELOAD or /etc/ld.so.preload)\n");
        return 1;
    }
    CHECK(count("cuLaunchKernel") >= 0 && count("cuNotAHook") == -1, "cudacap_call_count");
    setup();
    direct();
    via_dlsym();
    via_proc_address();
    CHECK_CU(cuStreamSynchronize(stream));
    if (!check_failures) printf("all routes reach cudacap\n");
    CHECK_EXIT();
}
