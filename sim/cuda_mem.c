/* Linear device memory: the allocation table, cuMemAlloc family, copies. */
#include "cuda_internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static struct sim_alloc *g_tab;   /* sorted by base */
static size_t g_n, g_cap;
static uint64_t g_next_va = 0x200000000000ull;

void sim_mem_after_fork(void)
{
    g_n = 0; /* the parent's allocations are not this process's */
}

CUdeviceptr sim_va_alloc(size_t size, size_t align)
{
    if (align < 512)
        align = 512;
    uint64_t step = ((uint64_t)size + 511) & ~511ull;
    if (step == 0)
        step = 512;
    /* leave a 2 MiB gap so that ranges never touch */
    step += 2ull << 20;
    uint64_t va = __atomic_fetch_add(&g_next_va, step + align, __ATOMIC_RELAXED);
    return (CUdeviceptr)((va + align - 1) & ~((uint64_t)align - 1));
}

static size_t lower_bound(CUdeviceptr p)
{
    size_t lo = 0, hi = g_n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (g_tab[mid].base < p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int sim_alloc_insert(const struct sim_alloc *a)
{
    if (g_n == g_cap) {
        size_t nc = g_cap ? g_cap * 2 : 64;
        struct sim_alloc *t = realloc(g_tab, nc * sizeof *t);
        if (!t)
            return -1;
        g_tab = t;
        g_cap = nc;
    }
    size_t i = lower_bound(a->base);
    memmove(&g_tab[i + 1], &g_tab[i], (g_n - i) * sizeof *g_tab);
    g_tab[i] = *a;
    g_n++;
    return 0;
}

struct sim_alloc *sim_alloc_find(CUdeviceptr p)
{
    size_t i = lower_bound(p + 1);
    if (i == 0)
        return NULL;
    struct sim_alloc *a = &g_tab[i - 1];
    return p >= a->base && p < a->base + (a->size ? a->size : 1) ? a : NULL;
}

struct sim_alloc *sim_alloc_next(CUdeviceptr p)
{
    size_t i = lower_bound(p);
    return i < g_n ? &g_tab[i] : NULL;
}

int sim_alloc_remove(CUdeviceptr base, struct sim_alloc *out)
{
    size_t i = lower_bound(base);
    if (i >= g_n || g_tab[i].base != base)
        return -1;
    *out = g_tab[i];
    memmove(&g_tab[i], &g_tab[i + 1], (g_n - i - 1) * sizeof *g_tab);
    g_n--;
    return 0;
}

static void free_backing(struct sim_alloc *a)
{
    if (a->host && a->kind != AK_VMM)
        munmap(a->host, a->size);
    a->host = NULL;
}

/* Host address behind [p, p+len) or NULL (not device memory / unbacked).
 * *is_dev tells whether p is device memory at all. sim_lk held. */
static void *resolve(CUdeviceptr p, size_t len, int *is_dev)
{
    struct sim_alloc *a = sim_alloc_find(p);
    *is_dev = a != NULL;
    if (!a || p + len > a->base + a->size)
        return NULL;
    if (a->kind == AK_VMM)
        return sim_vmm_backing(a->vmm, a->vmm_off + (size_t)(p - a->base), len);
    if (a->size > SIM_BACKED_MAX)
        return NULL;
    if (!a->host) {
        void *h = mmap(NULL, a->size ? a->size : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (h == MAP_FAILED)
            return NULL;
        a->host = h;
    }
    return (char *)a->host + (p - a->base);
}

/* cuMemAlloc and cuMemFree are potentially unsafe during stream capture
 * (cuda_capture.c): refused before they do anything. */
static CUresult unsafe_call(void)
{
    pthread_mutex_lock(&sim_lk);
    CUresult r = sim_capture_unsafe_call();
    pthread_mutex_unlock(&sim_lk);
    return r;
}

CUresult sim_alloc_kind(CUdeviceptr *dptr, size_t bytes, uint64_t charge, int kind)
{
    int dev;
    CUresult r = sim_cur_dev(&dev);
    if (r != CUDA_SUCCESS)
        return r;
    if (!dptr || bytes == 0)
        return CUDA_ERROR_INVALID_VALUE;
    if ((r = unsafe_call()) != CUDA_SUCCESS)
        return r;
    if (sim_charge((uint32_t)dev, charge) != 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    struct sim_alloc a = { .size = bytes, .charged = charge, .dev = dev, .kind = kind };
    a.base = sim_va_alloc(bytes, 512);
    pthread_mutex_lock(&sim_lk);
    int ok = sim_alloc_insert(&a) == 0;
    pthread_mutex_unlock(&sim_lk);
    if (!ok) {
        sim_uncharge((uint32_t)dev, charge);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *dptr = a.base;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    return sim_alloc_kind(dptr, bytesize, bytesize, AK_DEVICE);
}

CUresult CUDAAPI cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes, size_t Height,
                                    unsigned int ElementSizeBytes)
{
    if (!pPitch || WidthInBytes == 0 || Height == 0 ||
        (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16))
        return CUDA_ERROR_INVALID_VALUE;
    size_t pitch = (WidthInBytes + 511) & ~(size_t)511;
    CUresult r = sim_alloc_kind(dptr, pitch * Height, pitch * Height, AK_DEVICE);
    if (r == CUDA_SUCCESS)
        *pPitch = pitch;
    return r;
}

CUresult sim_free_ptr(CUdeviceptr p)
{
    struct sim_alloc a;
    pthread_mutex_lock(&sim_lk);
    struct sim_alloc *f = sim_alloc_find(p);
    int ok = f && f->base == p && f->kind != AK_VMM && sim_alloc_remove(p, &a) == 0;
    if (ok && a.kind == AK_GRAPH)
        sim_graph_used[a.dev] -= a.size <= sim_graph_used[a.dev] ? a.size : sim_graph_used[a.dev];
    if (ok && a.kind == AK_POOL && a.pool) {
        a.pool->used -= a.size <= a.pool->used ? a.size : a.pool->used;
        a.charged = 0; /* stays reserved in the pool */
    }
    pthread_mutex_unlock(&sim_lk);
    if (!ok)
        return CUDA_ERROR_INVALID_VALUE;
    free_backing(&a);
    sim_uncharge((uint32_t)a.dev, a.charged);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr)
{
    SIM_CHECK_INIT();
    if (dptr == 0)
        return CUDA_SUCCESS;
    CUresult r = unsafe_call();
    return r != CUDA_SUCCESS ? r : sim_free_ptr(dptr);
}

CUresult CUDAAPI cuMemGetInfo_v2(size_t *free_b, size_t *total)
{
    int dev;
    CUresult r = sim_cur_dev(&dev);
    if (r != CUDA_SUCCESS)
        return r;
    if (!free_b || !total)
        return CUDA_ERROR_INVALID_VALUE;
    uint64_t f, t;
    sim_mem_info((uint32_t)dev, &f, &t);
    *free_b = (size_t)f;
    *total = (size_t)t;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
    SIM_CHECK_INIT();
    pthread_mutex_lock(&sim_lk);
    struct sim_alloc *a = sim_alloc_find(dptr);
    if (a) {
        if (pbase)
            *pbase = a->base;
        if (psize)
            *psize = a->size;
    }
    pthread_mutex_unlock(&sim_lk);
    return a ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

CUresult CUDAAPI cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
    SIM_CHECK_INIT();
    if (!data)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&sim_lk);
    struct sim_alloc *a = sim_alloc_find(ptr);
    if (!a) {
        r = CUDA_ERROR_INVALID_VALUE;
    } else {
        switch (attribute) {
        case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *)data = a->dev; break;
        case CU_POINTER_ATTRIBUTE_RANGE_SIZE: *(size_t *)data = a->size; break;
        case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR: *(CUdeviceptr *)data = a->base; break;
        case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: *(CUdeviceptr *)data = ptr; break;
        case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: *(unsigned *)data = CU_MEMORYTYPE_DEVICE; break;
        case CU_POINTER_ATTRIBUTE_IS_MANAGED: *(unsigned *)data = a->kind == AK_MANAGED; break;
        case CU_POINTER_ATTRIBUTE_MAPPED: *(unsigned *)data = 1; break;
        case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE: *(CUmemoryPool *)data = (CUmemoryPool)a->pool; break;
        case CU_POINTER_ATTRIBUTE_CONTEXT: *(CUcontext *)data = (CUcontext)sim_cur_ctx(); break;
        case CU_POINTER_ATTRIBUTE_BUFFER_ID:
        case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID: *(unsigned long long *)data = a->base; break;
        default: r = CUDA_ERROR_INVALID_VALUE; break;
        }
    }
    pthread_mutex_unlock(&sim_lk);
    return r;
}

/* ---- copies and memset ---- */
static CUresult copy(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    SIM_CHECK_INIT();
    if (n == 0)
        return CUDA_SUCCESS;
    pthread_mutex_lock(&sim_lk);
    int ddev, sdev;
    void *d = resolve(dst, n, &ddev);
    void *s = resolve(src, n, &sdev);
    if (!ddev)
        d = (void *)(uintptr_t)dst;
    if (!sdev)
        s = (void *)(uintptr_t)src;
    if (d && s)
        memmove(d, s, n);
    else if (d && !s && sdev)
        memset(d, 0, n); /* source is unbacked (large) device memory */
    pthread_mutex_unlock(&sim_lk);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n) { return copy(dst, (CUdeviceptr)(uintptr_t)src, n); }
CUresult CUDAAPI cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) { return copy((CUdeviceptr)(uintptr_t)dst, src, n); }
CUresult CUDAAPI cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n) { return copy(dst, src, n); }
CUresult CUDAAPI cuMemcpyHtoD_v2_ptds(CUdeviceptr dst, const void *src, size_t n) { return copy(dst, (CUdeviceptr)(uintptr_t)src, n); }
CUresult CUDAAPI cuMemcpyDtoH_v2_ptds(void *dst, CUdeviceptr src, size_t n) { return copy((CUdeviceptr)(uintptr_t)dst, src, n); }
CUresult CUDAAPI cuMemcpyDtoD_v2_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n) { return copy(dst, src, n); }
/* Async copies and memsets happen at once (not in stream order), except
 * that one into a capturing stream does nothing and makes no node: a
 * captured graph replays its kernels only. */
static CUresult async_check(CUstream hs, int ptsz, int *skip)
{
    CUresult r;
    struct sim_capture *cap;
    sim_stream_for_enqueue(hs, ptsz, &cap, &r);
    *skip = cap != NULL;
    return r;
}

static CUresult copy_async(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream hs, int ptsz)
{
    int skip;
    CUresult r = async_check(hs, ptsz, &skip);
    return r != CUDA_SUCCESS || skip ? r : copy(dst, src, n);
}

#define H2D(p) ((CUdeviceptr)(uintptr_t)(p))
CUresult CUDAAPI cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream hs) { return copy_async(dst, H2D(src), n, hs, 0); }
CUresult CUDAAPI cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream hs) { return copy_async(H2D(dst), src, n, hs, 0); }
CUresult CUDAAPI cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream hs) { return copy_async(dst, src, n, hs, 0); }
CUresult CUDAAPI cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dst, const void *src, size_t n, CUstream hs) { return copy_async(dst, H2D(src), n, hs, 1); }
CUresult CUDAAPI cuMemcpyDtoHAsync_v2_ptsz(void *dst, CUdeviceptr src, size_t n, CUstream hs) { return copy_async(H2D(dst), src, n, hs, 1); }
CUresult CUDAAPI cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream hs) { return copy_async(dst, src, n, hs, 1); }
CUresult CUDAAPI cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n) { return copy(dst, src, n); }
CUresult CUDAAPI cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n) { return copy(dst, src, n); }
CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream hs) { return copy_async(dst, src, n, hs, 0); }
CUresult CUDAAPI cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream hs) { return copy_async(dst, src, n, hs, 1); }

static CUresult memset_n(CUdeviceptr dst, uint32_t v, size_t elem, size_t n)
{
    SIM_CHECK_INIT();
    if (n == 0)
        return CUDA_SUCCESS;
    pthread_mutex_lock(&sim_lk);
    int isdev;
    char *d = resolve(dst, n * elem, &isdev);
    if (d) {
        for (size_t i = 0; i < n; i++)
            memcpy(d + i * elem, &v, elem); /* little endian: low bytes */
    }
    pthread_mutex_unlock(&sim_lk);
    return isdev ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) { return memset_n(d, v, 1, n); }
CUresult CUDAAPI cuMemsetD16_v2(CUdeviceptr d, unsigned short v, size_t n) { return memset_n(d, v, 2, n); }
CUresult CUDAAPI cuMemsetD32_v2(CUdeviceptr d, unsigned int v, size_t n) { return memset_n(d, v, 4, n); }
CUresult CUDAAPI cuMemsetD8_v2_ptds(CUdeviceptr d, unsigned char v, size_t n) { return memset_n(d, v, 1, n); }
CUresult CUDAAPI cuMemsetD16_v2_ptds(CUdeviceptr d, unsigned short v, size_t n) { return memset_n(d, v, 2, n); }
CUresult CUDAAPI cuMemsetD32_v2_ptds(CUdeviceptr d, unsigned int v, size_t n) { return memset_n(d, v, 4, n); }
static CUresult memset_async(CUdeviceptr dst, uint32_t v, size_t elem, size_t n, CUstream hs, int ptsz)
{
    int skip;
    CUresult r = async_check(hs, ptsz, &skip);
    return r != CUDA_SUCCESS || skip ? r : memset_n(dst, v, elem, n);
}

CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s) { return memset_async(d, v, 1, n, s, 0); }
CUresult CUDAAPI cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, CUstream s) { return memset_async(d, v, 2, n, s, 0); }
CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream s) { return memset_async(d, v, 4, n, s, 0); }
CUresult CUDAAPI cuMemsetD8Async_ptsz(CUdeviceptr d, unsigned char v, size_t n, CUstream s) { return memset_async(d, v, 1, n, s, 1); }
CUresult CUDAAPI cuMemsetD16Async_ptsz(CUdeviceptr d, unsigned short v, size_t n, CUstream s) { return memset_async(d, v, 2, n, s, 1); }
CUresult CUDAAPI cuMemsetD32Async_ptsz(CUdeviceptr d, unsigned int v, size_t n, CUstream s) { return memset_async(d, v, 4, n, s, 1); }

/* ---- page-locked host memory: not device memory ---- */
CUresult CUDAAPI cuMemAllocHost_v2(void **pp, size_t bytesize)
{
    SIM_CHECK_INIT();
    if (!pp)
        return CUDA_ERROR_INVALID_VALUE;
    *pp = calloc(1, bytesize ? bytesize : 1);
    return *pp ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult CUDAAPI cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
    (void)Flags;
    return cuMemAllocHost_v2(pp, bytesize);
}

CUresult CUDAAPI cuMemFreeHost(void *p)
{
    free(p);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int Flags)
{
    (void)Flags;
    if (!pdptr)
        return CUDA_ERROR_INVALID_VALUE;
    *pdptr = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}
