/* Managed (unified) memory: cuMemAllocManaged, cuMemAdvise, cuMemPrefetchAsync.
 *
 * The simulator keeps managed memory host-resident: it is not charged to the
 * device, so it shows in neither NVML's device nor per-process memory nor
 * cuMemGetInfo's used. A real driver places managed pages where they are
 * touched; with CU_MEM_ADVISE_SET_PREFERRED_LOCATION on the host (what the
 * library's oversubscription asks for) they stay in host memory unless the
 * device touches them, so "host-resident" is the case the tests need.
 * Advice and prefetches are accepted with the driver's argument checks and
 * change nothing but the recorded preferred location.
 * CUDACAP_SIM_NO_CONCURRENT_MANAGED=1 makes every device report no
 * concurrent managed access (CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS 0),
 * where the driver refuses prefetches to the device. */
#include "cuda_internal.h"

CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
    if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST)
        return CUDA_ERROR_INVALID_VALUE;
    return sim_alloc_kind(dptr, bytesize, 0, AK_MANAGED);
}

/* The managed allocation holding all of [p, p + n), or NULL. sim_lk held. */
static struct sim_alloc *managed_range(CUdeviceptr p, size_t n)
{
    struct sim_alloc *a = sim_alloc_find(p);
    if (!a || a->kind != AK_MANAGED || n == 0 || n > a->size || p - a->base > a->size - n)
        return NULL;
    return a;
}

/* A location advice or a prefetch may name: a device ordinal or the host. */
static int location_ok(CUmemLocation loc)
{
    if (loc.type == CU_MEM_LOCATION_TYPE_HOST)
        return 1;
    return loc.type == CU_MEM_LOCATION_TYPE_DEVICE && sim_valid_dev(loc.id);
}

CUresult CUDAAPI cuMemAdvise_v2(CUdeviceptr devPtr, size_t count, CUmem_advise advice,
                                CUmemLocation location)
{
    SIM_CHECK_INIT();
    if (advice < CU_MEM_ADVISE_SET_READ_MOSTLY || advice > CU_MEM_ADVISE_UNSET_ACCESSED_BY)
        return CUDA_ERROR_INVALID_VALUE;
    int needs_loc = advice != CU_MEM_ADVISE_SET_READ_MOSTLY && advice != CU_MEM_ADVISE_UNSET_READ_MOSTLY &&
                    advice != CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION;
    if (needs_loc && !location_ok(location))
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&sim_lk);
    struct sim_alloc *a = managed_range(devPtr, count);
    if (a && advice == CU_MEM_ADVISE_SET_PREFERRED_LOCATION)
        a->pref = location.type == CU_MEM_LOCATION_TYPE_HOST ? -1 : location.id + 1;
    else if (a && advice == CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION)
        a->pref = 0;
    pthread_mutex_unlock(&sim_lk);
    return a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static CUresult prefetch(CUdeviceptr devPtr, size_t count, CUmemLocation location, unsigned int flags,
                         CUstream hs, int ptsz)
{
    SIM_CHECK_INIT();
    if (flags != 0 || !location_ok(location))
        return flags != 0 ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_INVALID_DEVICE;
    if (location.type == CU_MEM_LOCATION_TYPE_DEVICE && sim_config()->no_concurrent_managed)
        return CUDA_ERROR_INVALID_DEVICE; /* the driver's answer without concurrent access */
    CUresult r;
    struct sim_capture *cap;
    sim_stream_for_enqueue(hs, ptsz, &cap, &r);
    if (r != CUDA_SUCCESS)
        return r;
    pthread_mutex_lock(&sim_lk);
    int ok = managed_range(devPtr, count) != NULL;
    pthread_mutex_unlock(&sim_lk);
    return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuMemPrefetchAsync_v2(CUdeviceptr devPtr, size_t count, CUmemLocation location,
                                       unsigned int flags, CUstream hStream)
{
    return prefetch(devPtr, count, location, flags, hStream, 0);
}

CUresult CUDAAPI cuMemPrefetchAsync_v2_ptsz(CUdeviceptr devPtr, size_t count, CUmemLocation location,
                                            unsigned int flags, CUstream hStream)
{
    return prefetch(devPtr, count, location, flags, hStream, 1);
}

/* Test hook, exported: this process's managed bytes, and those whose
 * preferred location is the host. */
int cuSimTestManaged(unsigned long long *bytes, unsigned long long *host_pref)
{
    if (!bytes || !host_pref)
        return -1;
    *bytes = *host_pref = 0;
    pthread_mutex_lock(&sim_lk);
    for (CUdeviceptr p = 0;;) {
        struct sim_alloc *a = sim_alloc_next(p);
        if (!a)
            break;
        if (a->kind == AK_MANAGED) {
            *bytes += a->size;
            if (a->pref == -1)
                *host_pref += a->size;
        }
        p = a->base + 1;
    }
    pthread_mutex_unlock(&sim_lk);
    return 0;
}
