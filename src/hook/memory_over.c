/* Oversubscription, the driver side (docs/memory.md, "Oversubscription"): an
 * allocation the device cap refused is admitted in host memory (the cap's
 * cc_mem_over_admit), allocated as managed memory, and advised to live on
 * the host (CU_MEM_ADVISE_SET_PREFERRED_LOCATION, the CPU) and to be mapped
 * for the device (CU_MEM_ADVISE_SET_ACCESSED_BY), so the device reads and
 * writes it over the interconnect instead of migrating pages in: the
 * device's own memory stays within the cap. Its table entry is marked
 * CC_AT_AUX_HOST so that cuMemFree gives the bytes back to the host part.
 * An allocation whose preferred location cannot be set is freed and refused:
 * without it the driver may migrate it onto the device past the cap. */
#include "memory_over.h"

#include "common/controls.h"
#include "common/log.h"
#include "memory_track.h"

typedef CUresult (*advise_v2_fn)(CUdeviceptr, size_t, CUmem_advise, CUmemLocation);
typedef CUresult (*advise_v1_fn)(CUdeviceptr, size_t, CUmem_advise, CUdevice);

/* cuMemAdvise_v2 (CUDA 12.2, a location) where the driver has it, else the
 * CUDA 8 one (a device; CU_DEVICE_CPU, -1, for the host). */
static CUresult advise(CUdeviceptr p, size_t n, CUmem_advise a, int host, int dev)
{
    advise_v2_fn v2 = (advise_v2_fn)cc_lib_sym(CC_LIB_CUDA, "cuMemAdvise_v2");
    if (v2) {
        CUmemLocation loc = {.type = host ? CU_MEM_LOCATION_TYPE_HOST : CU_MEM_LOCATION_TYPE_DEVICE,
                             .id = host ? 0 : dev};
        return v2(p, n, a, loc);
    }
    advise_v1_fn v1 = (advise_v1_fn)cc_lib_sym(CC_LIB_CUDA, "cuMemAdvise");
    return v1 ? v1(p, n, a, host ? (CUdevice)-1 : (CUdevice)dev) : CUDA_ERROR_NOT_SUPPORTED;
}

/* Allocates bytes of managed memory kept in host memory and mapped for
 * device o: CUDA_SUCCESS, or the driver's error with nothing left
 * allocated (OOM where the preferred location cannot be set). */
static CUresult CC_CONTROL_POINT(place_on_host)(int o, CUdeviceptr *dptr, size_t bytes, unsigned flags)
{
    __typeof__(&cuMemAllocManaged) alloc = CC_REAL(cuMemAllocManaged);
    __typeof__(&cuMemFree_v2) fr = CC_REAL(cuMemFree_v2);
    if (!alloc || !fr) return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r = alloc(dptr, bytes, flags ? flags : CU_MEM_ATTACH_GLOBAL);
    if (r != CUDA_SUCCESS) return r;
    CUresult a = advise(*dptr, bytes, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, 1, o);
    if (a != CUDA_SUCCESS) {
        static int said;
        if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
            cc_error("memory oversubscription on device %d: the driver refused to keep managed memory "
                     "on the host (cuMemAdvise: %d); allocations past the cap are refused", o, (int)a);
        fr(*dptr);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    /* Mapped for the device: accesses go over the bus, no page migrates in.
     * A refusal costs speed (faults), not the cap: not fatal. */
    (void)advise(*dptr, bytes, CU_MEM_ADVISE_SET_ACCESSED_BY, 0, o);
    return CUDA_SUCCESS;
}

CUresult cc_mem_over_linear(const struct cc_mem_device *m, int o, CUdeviceptr *dptr, uint64_t bytes,
                            unsigned flags)
{
    if (bytes > SIZE_MAX || cc_mem_over_admit(m, o, bytes) != 0) return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r = place_on_host(o, dptr, (size_t)bytes, flags);
    if (r != CUDA_SUCCESS) {
        cc_ml_host_release(m->h, bytes);
        return r;
    }
    struct cc_at_val v = {.h = m->h, .refs = 1, .bytes = bytes, .aux = CC_AT_AUX_HOST};
    if (cc_at_put(CC_AT_PTR, *dptr, &v) != 0) cc_mem_track_lost();
    return CUDA_SUCCESS;
}

CUresult cc_mem_over_pitch(const struct cc_mem_device *m, int o, CUdeviceptr *dptr, size_t *pitch,
                           size_t width, size_t height, unsigned elem)
{
    if (elem != 4 && elem != 8 && elem != 16) return CUDA_ERROR_INVALID_VALUE; /* the driver's rule */
    size_t p = (width + 511) & ~(size_t)511;
    if (p < width || (height && p > SIZE_MAX / height)) return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r = cc_mem_over_linear(m, o, dptr, (uint64_t)p * height, 0);
    if (r == CUDA_SUCCESS) *pitch = p;
    return r;
}
