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
#include "cudacap/nvml.h"

#undef cuGetProcAddress
CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);

static long long (*count)(const char *);
static CUfunction fn;
static CUstream stream;
static CUgraphExec gexec;

#define PT CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
#define LEG CU_GET_PROC_ADDRESS_LEGACY_STREAM

/* Calls p, which must be an entry point of the family of `want`. */
static CUresult call_as(const char *want, void *p)
{
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
}

static const struct {
    const char *symbol;
    cuuint64_t flags;
    const char *want;
} proc_routes[] = {
    {"cuInit", 0, "cuInit"},
    {"cuDriverGetVersion", 0, "cuDriverGetVersion"},
    {"cuMemAlloc", 0, "cuMemAlloc_v2"},
    {"cuMemFree", 0, "cuMemFree_v2"},
    {"cuMemGetInfo", 0, "cuMemGetInfo_v2"},
    {"cuLaunchKernel", 0, "cuLaunchKernel"},
    {"cuLaunchKernel", LEG, "cuLaunchKernel"},
    {"cuLaunchKernel", PT, "cuLaunchKernel_ptsz"},
    {"cuLaunchKernelEx", 0, "cuLaunchKernelEx"},
    {"cuLaunchKernelEx", LEG, "cuLaunchKernelEx"},
    {"cuLaunchKernelEx", PT, "cuLaunchKernelEx_ptsz"},
    {"cuLaunchCooperativeKernel", LEG, "cuLaunchCooperativeKernel"},
    {"cuLaunchCooperativeKernel", PT, "cuLaunchCooperativeKernel_ptsz"},
    {"cuGraphLaunch", LEG, "cuGraphLaunch"},
    {"cuGraphLaunch", PT, "cuGraphLaunch_ptsz"},
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
            expect_ours(route, proc_routes[i].want, p);
            /* The legacy 4-argument entry point (runtimes 11.3 .. 11.8, and
             * callers that never moved on) routes the same way. */
            p = NULL;
            snprintf(route, sizeof route, "cuGetProcAddress(%s, %d, %llu)", proc_routes[i].symbol,
                     versions[v], (unsigned long long)proc_routes[i].flags);
            CHECK_CU(cuGetProcAddress(proc_routes[i].symbol, &p, versions[v], proc_routes[i].flags));
            expect_ours(route, proc_routes[i].want, p);
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
                           "cuGraphLaunch", "cuGraphLaunch_ptsz"};
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
        long long b0 = count("nvmlInit_v2"), b1 = count("nvmlDeviceGetMemoryInfo");
        nvmlDevice_t d;
        nvmlMemory_t m;
        CHECK(init && init() == NVML_SUCCESS, "nvmlInit_v2");
        CHECK(byidx && byidx(0, &d) == NVML_SUCCESS, "nvml handle");
        CHECK(mi && mi(d, &m) == NVML_SUCCESS && m.total > 0, "nvml meminfo");
        CHECK(count("nvmlInit_v2") == b0 + 1 && count("nvmlDeviceGetMemoryInfo") == b1 + 1,
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
