/* Virtual memory management (cuMemCreate/Map/...) and CUDA arrays. */
#include "cuda_internal.h"

#include <stdlib.h>
#include <string.h>

#define GRANULARITY (2ull << 20)

struct sim_vmm_handle {
    uint32_t magic;
    int refs;                 /* create + retains + mappings */
    size_t size;
    int dev;                  /* -1: not device memory (not counted) */
    CUmemAllocationProp prop;
    void *host;
};

void *sim_vmm_backing(void *handle, size_t off, size_t len)
{
    struct sim_vmm_handle *h = handle;
    if (!h || off + len > h->size || h->size > SIM_BACKED_MAX)
        return NULL;
    if (!h->host)
        h->host = calloc(1, h->size);
    return h->host ? (char *)h->host + off : NULL;
}

static void handle_unref(struct sim_vmm_handle *h)
{
    if (--h->refs > 0)
        return;
    if (h->dev >= 0)
        sim_uncharge((uint32_t)h->dev, h->size);
    free(h->host);
    h->magic = 0;
    sim_obj_free(h);
}

CUresult CUDAAPI cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
                                               CUmemAllocationGranularity_flags option)
{
    (void)option;
    if (!granularity || !prop)
        return CUDA_ERROR_INVALID_VALUE;
    *granularity = GRANULARITY;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
                             unsigned long long flags)
{
    (void)flags;
    SIM_CHECK_INIT();
    if (!handle || !prop || size == 0 || size % GRANULARITY)
        return CUDA_ERROR_INVALID_VALUE;
    int dev = -1;
    if (prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE) {
        if (!sim_valid_dev(prop->location.id))
            return CUDA_ERROR_INVALID_DEVICE;
        dev = prop->location.id;
    }
    struct sim_vmm_handle *h = sim_obj_alloc(sizeof *h);
    if (!h)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (dev >= 0 && sim_charge((uint32_t)dev, size) != 0) {
        sim_obj_free(h);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    h->magic = MAG_VMM;
    h->refs = 1;
    h->size = size;
    h->dev = dev;
    h->prop = *prop;
    *handle = (CUmemGenericAllocationHandle)(uintptr_t)h;
    return CUDA_SUCCESS;
}

static struct sim_vmm_handle *get_handle(CUmemGenericAllocationHandle x)
{
    struct sim_vmm_handle *h = (struct sim_vmm_handle *)(uintptr_t)x;
    return h && h->magic == MAG_VMM ? h : NULL;
}

CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle handle)
{
    pthread_mutex_lock(&sim_lk);
    struct sim_vmm_handle *h = get_handle(handle);
    if (h)
        handle_unref(h);
    pthread_mutex_unlock(&sim_lk);
    return h ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
                                     unsigned long long flags)
{
    (void)addr;
    (void)flags;
    if (!ptr || size == 0 || size % GRANULARITY)
        return CUDA_ERROR_INVALID_VALUE;
    *ptr = sim_va_alloc(size, alignment > GRANULARITY ? alignment : GRANULARITY);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    (void)size;
    return ptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                          unsigned long long flags)
{
    (void)flags;
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&sim_lk);
    struct sim_vmm_handle *h = get_handle(handle);
    if (!h || !ptr || size == 0 || offset + size > h->size) {
        r = CUDA_ERROR_INVALID_VALUE;
    } else if (sim_alloc_find(ptr) || sim_alloc_find(ptr + size - 1)) {
        r = CUDA_ERROR_INVALID_VALUE; /* already mapped */
    } else {
        struct sim_alloc a = { .base = ptr, .size = size, .dev = h->dev < 0 ? 0 : h->dev,
                               .kind = AK_VMM, .vmm = h, .vmm_off = offset };
        if (sim_alloc_insert(&a) != 0)
            r = CUDA_ERROR_OUT_OF_MEMORY;
        else
            h->refs++;
    }
    pthread_mutex_unlock(&sim_lk);
    return r;
}

CUresult CUDAAPI cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim_lk);
    for (;;) { /* unmap every mapping inside [ptr, ptr+size) */
        struct sim_alloc *f = sim_alloc_find(ptr);
        struct sim_alloc a;
        if (!f || f->kind != AK_VMM || f->base != ptr || sim_alloc_remove(ptr, &a) != 0)
            break;
        r = CUDA_SUCCESS;
        handle_unref(a.vmm);
        if (a.size >= size)
            break;
        size -= a.size;
        ptr += a.size;
    }
    pthread_mutex_unlock(&sim_lk);
    return r;
}

CUresult CUDAAPI cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
    (void)size;
    (void)count;
    return ptr && desc ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr)
{
    if (!handle)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim_lk);
    struct sim_alloc *a = sim_alloc_find((CUdeviceptr)(uintptr_t)addr);
    int ok = a && a->kind == AK_VMM;
    if (ok) {
        ((struct sim_vmm_handle *)a->vmm)->refs++;
        *handle = (CUmemGenericAllocationHandle)(uintptr_t)a->vmm;
    }
    pthread_mutex_unlock(&sim_lk);
    return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop, CUmemGenericAllocationHandle handle)
{
    if (!prop)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim_lk);
    struct sim_vmm_handle *h = get_handle(handle);
    if (h)
        *prop = h->prop;
    pthread_mutex_unlock(&sim_lk);
    return h ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* ---- arrays ---- */
struct sim_array {
    uint32_t magic;
    int dev;
    int owned;                /* level of a mipmapped array: not counted itself */
    CUDA_ARRAY3D_DESCRIPTOR desc;
    size_t size;
    unsigned levels;
    struct sim_array **level;
};

static size_t fmt_bytes(CUarray_format f)
{
    switch ((int)f) {
    case 0x01: case 0x08: case 0xc0: case 0xc6: return 1;
    case 0x02: case 0x09: case 0x10: case 0xc1: case 0xc7: case 0xc3: case 0xc9: return 2;
    case 0xc5: case 0xcb: return 8;
    default: return 4;
    }
}

static size_t level_size(const CUDA_ARRAY3D_DESCRIPTOR *d)
{
    size_t row = d->Width * d->NumChannels * fmt_bytes(d->Format);
    row = (row + 511) & ~(size_t)511;
    return row * (d->Height ? d->Height : 1) * (d->Depth ? d->Depth : 1);
}

static CUDA_ARRAY3D_DESCRIPTOR level_desc(const CUDA_ARRAY3D_DESCRIPTOR *d, unsigned l)
{
    CUDA_ARRAY3D_DESCRIPTOR r = *d;
    r.Width = d->Width >> l ? d->Width >> l : 1;
    if (d->Height)
        r.Height = d->Height >> l ? d->Height >> l : 1;
    if (d->Depth && !(d->Flags & CUDA_ARRAY3D_LAYERED))
        r.Depth = d->Depth >> l ? d->Depth >> l : 1;
    return r;
}

static CUresult array_new(struct sim_array **out, const CUDA_ARRAY3D_DESCRIPTOR *d, unsigned levels)
{
    int dev;
    CUresult r = sim_cur_dev(&dev);
    if (r != CUDA_SUCCESS)
        return r;
    if (!out || !d || d->Width == 0 || d->NumChannels == 0 || levels == 0)
        return CUDA_ERROR_INVALID_VALUE;
    size_t size = 0;
    for (unsigned l = 0; l < levels; l++) {
        CUDA_ARRAY3D_DESCRIPTOR ld = level_desc(d, l);
        size += level_size(&ld);
    }
    struct sim_array *a = sim_obj_alloc(sizeof *a);
    if (!a)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if (sim_charge((uint32_t)dev, size) != 0) {
        sim_obj_free(a);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    a->magic = MAG_ARRAY;
    a->dev = dev;
    a->desc = *d;
    a->size = size;
    a->levels = levels;
    *out = a;
    return CUDA_SUCCESS;
}

static void array_free(struct sim_array *a)
{
    if (!a->owned)
        sim_uncharge((uint32_t)a->dev, a->size);
    for (unsigned l = 0; a->level && l < a->levels; l++)
        if (a->level[l]) {
            a->level[l]->magic = 0;
            sim_obj_free(a->level[l]);
        }
    free(a->level);
    a->magic = 0;
    sim_obj_free(a);
}

CUresult CUDAAPI cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *p)
{
    if (!p)
        return CUDA_ERROR_INVALID_VALUE;
    CUDA_ARRAY3D_DESCRIPTOR d = { .Width = p->Width, .Height = p->Height, .Format = p->Format,
                                  .NumChannels = p->NumChannels };
    return array_new((struct sim_array **)pHandle, &d, 1);
}

CUresult CUDAAPI cuArray3DCreate_v2(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *p)
{
    return array_new((struct sim_array **)pHandle, p, 1);
}

static struct sim_array *get_array(void *h, uint32_t magic)
{
    struct sim_array *a = h;
    return a && a->magic == magic ? a : NULL;
}

CUresult CUDAAPI cuArrayDestroy(CUarray hArray)
{
    struct sim_array *a = get_array(hArray, MAG_ARRAY);
    if (!a || a->owned)
        return CUDA_ERROR_INVALID_HANDLE;
    array_free(a);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuArrayGetDescriptor_v2(CUDA_ARRAY_DESCRIPTOR *p, CUarray hArray)
{
    struct sim_array *a = get_array(hArray, MAG_ARRAY);
    if (!a || !p)
        return CUDA_ERROR_INVALID_HANDLE;
    p->Width = a->desc.Width;
    p->Height = a->desc.Height;
    p->Format = a->desc.Format;
    p->NumChannels = a->desc.NumChannels;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuArray3DGetDescriptor_v2(CUDA_ARRAY3D_DESCRIPTOR *p, CUarray hArray)
{
    struct sim_array *a = get_array(hArray, MAG_ARRAY);
    if (!a || !p)
        return CUDA_ERROR_INVALID_HANDLE;
    *p = a->desc;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuArrayGetMemoryRequirements(CUDA_ARRAY_MEMORY_REQUIREMENTS *req, CUarray array, CUdevice device)
{
    (void)device;
    struct sim_array *a = get_array(array, MAG_ARRAY);
    if (!a || !req)
        return CUDA_ERROR_INVALID_VALUE;
    memset(req, 0, sizeof *req);
    req->size = a->owned ? level_size(&a->desc) : a->size;
    req->alignment = 512;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMipmappedArrayCreate(CUmipmappedArray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *pDesc,
                                        unsigned int numMipmapLevels)
{
    if (numMipmapLevels == 0)
        return CUDA_ERROR_INVALID_VALUE;
    struct sim_array *a;
    CUresult r = array_new(&a, pDesc, numMipmapLevels);
    if (r != CUDA_SUCCESS)
        return r;
    a->magic = MAG_MIPMAP;
    a->level = calloc(numMipmapLevels, sizeof *a->level);
    *pHandle = (CUmipmappedArray)a;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMipmappedArrayDestroy(CUmipmappedArray h)
{
    struct sim_array *a = get_array(h, MAG_MIPMAP);
    if (!a)
        return CUDA_ERROR_INVALID_HANDLE;
    array_free(a);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMipmappedArrayGetLevel(CUarray *pLevelArray, CUmipmappedArray h, unsigned int level)
{
    struct sim_array *a = get_array(h, MAG_MIPMAP);
    if (!a || !pLevelArray || !a->level)
        return CUDA_ERROR_INVALID_HANDLE;
    if (level >= a->levels)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&sim_lk);
    if (!a->level[level]) {
        struct sim_array *l = sim_obj_alloc(sizeof *l);
        if (l) {
            l->magic = MAG_ARRAY;
            l->owned = 1;
            l->dev = a->dev;
            l->desc = level_desc(&a->desc, level);
            l->size = level_size(&l->desc);
            l->levels = 1;
        }
        a->level[level] = l;
    }
    *pLevelArray = (CUarray)a->level[level];
    pthread_mutex_unlock(&sim_lk);
    return *pLevelArray ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult CUDAAPI cuMipmappedArrayGetMemoryRequirements(CUDA_ARRAY_MEMORY_REQUIREMENTS *req, CUmipmappedArray h,
                                                       CUdevice device)
{
    (void)device;
    struct sim_array *a = get_array(h, MAG_MIPMAP);
    if (!a || !req)
        return CUDA_ERROR_INVALID_VALUE;
    memset(req, 0, sizeof *req);
    req->size = a->size;
    req->alignment = 512;
    return CUDA_SUCCESS;
}
