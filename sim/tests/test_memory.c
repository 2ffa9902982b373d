/* 4: memory accounting across processes and allocation families. */
#include "simtest.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#define GiB (1ull << 30)
#define MiB (1ull << 20)

static size_t used(void) { return st_used(); }

static int pa[2], pb[2]; /* parent->child, child->parent */

static void tell(int fd) { char c = 1; CHECK(write(fd, &c, 1) == 1); }
static void hear(int fd) { char c; CHECK(read(fd, &c, 1) == 1); }

static int child_b(void *arg)
{
    (void)arg;
    st_ctx();
    CUdeviceptr p;
    hear(pa[0]);
    CHECK(cuMemAlloc(&p, 30 * GiB) == CUDA_ERROR_OUT_OF_MEMORY);
    tell(pb[1]);
    hear(pa[0]);
    CU(cuMemAlloc(&p, 30 * GiB));
    CU(cuMemFree(p));
    return 0;
}

static int child_hog(void *arg)
{
    (void)arg;
    st_ctx();
    CUdeviceptr p;
    CU(cuMemAlloc(&p, 50 * GiB));
    tell(pb[1]);
    pause();
    return 0;
}

static int child_churn(void *arg)
{
    (void)arg;
    st_ctx();
    CUfunction f = st_func("spin_1us");
    for (;;) {
        CUdeviceptr p;
        size_t fr, t;
        CU(cuMemAlloc(&p, 1 * MiB));
        CU(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
        CU(cuMemGetInfo(&fr, &t));
        CU(cuMemFree(p));
        usleep(50); /* leave CPU to the timing tests running alongside */
    }
    return 0;
}

int main(void)
{
    st_setup();
    setenv("CUDACAP_SIM_MEM", "80g", 1);
    setenv("CUDACAP_SIM_CTX_MEM", "256m", 1);
    CHECK(pipe(pa) == 0 && pipe(pb) == 0);
    st_ctx();
    size_t base = used();
    CHECK(base == 256 * MiB);

    /* shared device total: A (us) 60 GiB, B's 30 GiB fails, A frees, B succeeds */
    int b = st_fork(child_b, NULL);
    CUdeviceptr big;
    CU(cuMemAlloc(&big, 60 * GiB));
    tell(pa[1]);
    hear(pb[0]);
    CU(cuMemFree(big));
    tell(pa[1]);
    CHECK(st_wait(b) == 0);
    CHECK(used() == base);

    /* kill -9 returns memory within 1 s */
    int h = st_fork(child_hog, NULL);
    hear(pb[0]);
    CHECK(used() == base + 50 * GiB + 256 * MiB);
    double t0 = st_ms();
    kill(h, SIGKILL);
    st_wait(h);
    while (used() != base && st_ms() - t0 < 1000)
        usleep(10000);
    CHECK(used() == base);
    printf("killed process memory back after %.1f ms\n", st_ms() - t0);

    /* kill -9 at random points (also inside the shared lock): nothing hangs,
     * nothing leaks */
    for (int i = 0; i < 20; i++) {
        int c = st_fork(child_churn, NULL);
        usleep(2000 + 500 * (unsigned)i);
        kill(c, SIGKILL);
        st_wait(c);
    }
    t0 = st_ms();
    while (used() != base && st_ms() - t0 < 1000)
        usleep(10000);
    CHECK(used() == base);

    /* 40 GiB allocation costs no host memory; OOM beyond the total */
    CU(cuMemAlloc(&big, 40 * GiB));
    CUdeviceptr p2;
    CHECK(cuMemAlloc(&p2, 40 * GiB) == CUDA_ERROR_OUT_OF_MEMORY);
    int ord = -1;
    size_t rs = 0;
    CU(cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, big + 4096));
    CU(cuPointerGetAttribute(&rs, CU_POINTER_ATTRIBUTE_RANGE_SIZE, big + 4096));
    CHECK(ord == 0 && rs == 40 * GiB);
    CUdeviceptr rb;
    size_t rsz;
    CU(cuMemGetAddressRange(&rb, &rsz, big + 12345));
    CHECK(rb == big && rsz == 40 * GiB);
    CU(cuMemcpyHtoD(big, "abc", 3)); /* unbacked: accepted */
    CU(cuMemFree(big));
    CHECK(used() == base);

    /* copies and memset on small buffers */
    CUdeviceptr d1, d2;
    CU(cuMemAlloc(&d1, 1 * MiB));
    CU(cuMemAlloc(&d2, 1 * MiB));
    CHECK(d1 != d2 && d1 % 256 == 0 && d2 % 256 == 0);
    unsigned buf[1024], out[1024];
    for (int i = 0; i < 1024; i++)
        buf[i] = (unsigned)i * 7u;
    CU(cuMemcpyHtoD(d1, buf, sizeof buf));
    CU(cuMemcpyDtoD(d2 + 64, d1, sizeof buf));
    CU(cuMemcpyDtoH(out, d2 + 64, sizeof out));
    CHECK(memcmp(buf, out, sizeof buf) == 0);
    CU(cuMemsetD32(d1, 0xdeadbeefu, 1024));
    CU(cuMemcpy((CUdeviceptr)(uintptr_t)out, d1, sizeof out));
    CHECK(out[0] == 0xdeadbeefu && out[1023] == 0xdeadbeefu);
    CU(cuMemsetD8(d1, 0x5a, 4));
    CU(cuMemcpyDtoH(out, d1, 8));
    CHECK(out[0] == 0x5a5a5a5au && out[1] == 0xdeadbeefu);
    CHECK(used() == base + 2 * MiB);
    CU(cuMemFree(d1));
    CU(cuMemFree(d2));

    /* pitch: rounded to 512, counts pitch*height */
    size_t pitch;
    CU(cuMemAllocPitch(&d1, &pitch, 1000, 10, 4));
    CHECK(pitch == 1024 && used() == base + 10240);
    CU(cuMemFree(d1));
    /* host memory does not count, nor does managed memory (host-resident:
     * test_managed.c) */
    CU(cuMemAllocManaged(&d1, 3 * MiB, CU_MEM_ATTACH_GLOBAL));
    void *hp;
    CU(cuMemAllocHost(&hp, 64 * MiB));
    void *hp2;
    CU(cuMemHostAlloc(&hp2, 64 * MiB, 0));
    CHECK(used() == base);
    CU(cuMemFreeHost(hp));
    CU(cuMemFreeHost(hp2));
    CU(cuMemFree(d1));
    CHECK(used() == base);
    printf("linear memory ok\n");

    /* arrays */
    CUDA_ARRAY_DESCRIPTOR ad = { .Width = 100, .Height = 100, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 4 };
    CUarray arr;
    CU(cuArrayCreate(&arr, &ad));
    CHECK(used() == base + 2048 * 100);
    CUDA_ARRAY_MEMORY_REQUIREMENTS req;
    CU(cuArrayGetMemoryRequirements(&req, arr, 0));
    CHECK(req.size == 2048 * 100 && req.alignment > 0);
    CUDA_ARRAY_DESCRIPTOR ad2;
    CU(cuArrayGetDescriptor(&ad2, arr));
    CHECK(ad2.Width == 100 && ad2.NumChannels == 4);
    CU(cuArrayDestroy(arr));
    CUDA_ARRAY3D_DESCRIPTOR a3 = { .Width = 64, .Height = 64, .Depth = 8, .Format = CU_AD_FORMAT_UNSIGNED_INT8,
                                   .NumChannels = 1 };
    CU(cuArray3DCreate(&arr, &a3));
    CHECK(used() == base + 512 * 64 * 8);
    CU(cuArrayDestroy(arr));
    CUDA_ARRAY3D_DESCRIPTOR am = { .Width = 256, .Height = 256, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1 };
    CUmipmappedArray mm;
    CU(cuMipmappedArrayCreate(&mm, &am, 3));
    CHECK(used() == base + 262144 + 65536 + 32768);
    CU(cuMipmappedArrayGetMemoryRequirements(&req, mm, 0));
    CHECK(req.size == 262144 + 65536 + 32768);
    CUarray lvl;
    CU(cuMipmappedArrayGetLevel(&lvl, mm, 1));
    CUDA_ARRAY3D_DESCRIPTOR ld;
    CU(cuArray3DGetDescriptor(&ld, lvl));
    CHECK(ld.Width == 128 && ld.Height == 128);
    CU(cuMipmappedArrayDestroy(mm));
    CHECK(used() == base);
    printf("arrays ok\n");

    /* VMM */
    CUmemAllocationProp prop = { .type = CU_MEM_ALLOCATION_TYPE_PINNED,
                                 .location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 } };
    size_t gran;
    CU(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    CHECK(gran == 2 * MiB);
    CUmemGenericAllocationHandle mh, mh2;
    CU(cuMemCreate(&mh, 4 * MiB, &prop, 0));
    CHECK(used() == base + 4 * MiB);
    CUdeviceptr va;
    CU(cuMemAddressReserve(&va, 4 * MiB, 0, 0, 0));
    CU(cuMemMap(va, 4 * MiB, 0, mh, 0));
    CUmemAccessDesc acc = { .location = prop.location, .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
    CU(cuMemSetAccess(va, 4 * MiB, &acc, 1));
    CU(cuMemcpyHtoD(va + 100, buf, 64));
    CU(cuMemcpyDtoH(out, va + 100, 64));
    CHECK(memcmp(buf, out, 64) == 0);
    CU(cuMemRetainAllocationHandle(&mh2, (void *)(uintptr_t)(va + 8)));
    CHECK(mh2 == mh);
    CUmemAllocationProp p2p;
    CU(cuMemGetAllocationPropertiesFromHandle(&p2p, mh2));
    CHECK(p2p.location.id == 0);
    CU(cuMemRelease(mh2));
    CU(cuMemRelease(mh));
    CHECK(used() == base + 4 * MiB); /* still mapped */
    CU(cuMemUnmap(va, 4 * MiB));
    CHECK(used() == base);
    CU(cuMemAddressFree(va, 4 * MiB));
    prop.location.type = CU_MEM_LOCATION_TYPE_HOST;
    CU(cuMemCreate(&mh, 4 * MiB, &prop, 0));
    CHECK(used() == base);
    CU(cuMemRelease(mh));
    printf("vmm ok\n");

    /* stream-ordered allocation and pools */
    CUstream s;
    CU(cuStreamCreate(&s, 0));
    CUmemoryPool dp, cur;
    CU(cuDeviceGetDefaultMemPool(&dp, 0));
    CU(cuDeviceGetMemPool(&cur, 0));
    CHECK(dp == cur);
    CU(cuMemAllocAsync(&d1, 8 * MiB, s));
    CHECK(used() == base + 8 * MiB);
    CU(cuMemFreeAsync(d1, s));
    CHECK(used() == base + 8 * MiB); /* back in the pool, still reserved */
    cuuint64_t v;
    CU(cuMemPoolGetAttribute(dp, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &v));
    CHECK(v == 8 * MiB);
    CU(cuMemPoolGetAttribute(dp, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &v));
    CHECK(v == 0);
    CU(cuMemAllocAsync(&d1, 6 * MiB, s)); /* reuses the pool */
    CHECK(used() == base + 8 * MiB);
    CU(cuMemFreeAsync(d1, s));
    CU(cuStreamSynchronize(s));
    CHECK(used() == base);
    v = 64 * MiB;
    CU(cuMemPoolSetAttribute(dp, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &v));
    CU(cuMemAllocAsync(&d1, 8 * MiB, s));
    CU(cuMemFreeAsync(d1, s));
    CU(cuCtxSynchronize());
    CHECK(used() == base + 8 * MiB);
    CU(cuMemPoolTrimTo(dp, 0));
    CHECK(used() == base);
    CUmemPoolProps pp = { .allocType = CU_MEM_ALLOCATION_TYPE_PINNED,
                          .location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 } };
    CUmemoryPool mp;
    CU(cuMemPoolCreate(&mp, &pp));
    CU(cuMemPoolSetAttribute(mp, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &v));
    CU(cuMemAllocFromPoolAsync(&d1, 16 * MiB, mp, s));
    CU(cuMemFreeAsync(d1, s));
    CU(cuStreamSynchronize(s));
    CHECK(used() == base + 16 * MiB);
    CU(cuMemPoolDestroy(mp));
    CHECK(used() == base);
    printf("pools ok\n");

    /* graph memory nodes: counted while allocated */
    CUgraph ga, gf;
    CU(cuGraphCreate(&ga, 0));
    CU(cuGraphCreate(&gf, 0));
    CUDA_MEM_ALLOC_NODE_PARAMS anp;
    memset(&anp, 0, sizeof anp);
    anp.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    anp.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    anp.bytesize = 32 * MiB;
    CUgraphNode an, fn;
    CU(cuGraphAddMemAllocNode(&an, ga, NULL, 0, &anp));
    CHECK(anp.dptr != 0);
    CU(cuGraphAddMemFreeNode(&fn, gf, NULL, 0, anp.dptr));
    CUgraphExec ea, ef;
    CU(cuGraphInstantiate(&ea, ga, 0));
    CU(cuGraphInstantiate(&ef, gf, 0));
    CHECK(used() == base);
    CU(cuGraphLaunch(ea, s));
    CHECK(used() == base + 32 * MiB);
    CU(cuDeviceGetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, &v));
    CHECK(v == 32 * MiB);
    CU(cuGraphLaunch(ef, s));
    CU(cuStreamSynchronize(s));
    CU(cuDeviceGraphMemTrim(0));
    CHECK(used() == base);
    CU(cuGraphLaunch(ea, s)); /* again, freed by cuMemFreeAsync this time */
    CHECK(used() == base + 32 * MiB);
    CU(cuMemFreeAsync(anp.dptr, s));
    CU(cuStreamSynchronize(s));
    CHECK(used() == base);
    CU(cuGraphExecDestroy(ea));
    CU(cuGraphExecDestroy(ef));
    CU(cuGraphDestroy(ga));
    CU(cuGraphDestroy(gf));
    CU(cuStreamDestroy(s));
    printf("graph memory ok\n");

    /* contexts: cuCtxCreate counts context memory until destroyed */
    CUcontext c2;
    CU(cuCtxCreate(&c2, NULL, 0, 0));
    CHECK(used() == base + 256 * MiB);
    CU(cuCtxDestroy(c2));
    CU(cuCtxSetCurrent(NULL));
    CHECK(cuMemGetInfo(&rsz, &rsz) == CUDA_ERROR_INVALID_CONTEXT);
    CU(cuDevicePrimaryCtxRelease(0));
    unsigned fl;
    int active;
    CU(cuDevicePrimaryCtxGetState(0, &fl, &active));
    CHECK(!active);
    st_ctx();
    CHECK(used() == base);
    return 0;
}
