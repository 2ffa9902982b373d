/* Memory that grows without an allocation call: cuCtxSetLimit heaps and
 * stacks, module and library loads (docs/memory.md, "What counts").
 *
 *  - cuCtxSetLimit (stack, printf FIFO, malloc heap): the growth has a bound
 *    (the stack of every resident thread: bytes x SMs x threads per SM; the
 *    FIFO and heap: their size), reserved as overhead with the exact check
 *    before the driver is called; refused with CUDA_ERROR_OUT_OF_MEMORY
 *    when it does not fit; settled to NVML's measure after.
 *  - module and library loads: no bound is computed (code, globals and
 *    constant memory are sized by the driver, and lazy loading defers them),
 *    so the load goes through and the overhead is re-measured before the
 *    next allocation on that device, which is refused if the load filled
 *    the cap. Re-measuring at each load would cost an NVML per-process query
 *    (2.4 ms on the H200) for each of the hundreds of fatbins a framework
 *    registers at start-up.
 *  - unloads and context destruction give overhead back: measured again
 *    before the next allocation.
 * Not hot: none of these is on a launch or allocation path. */
#include "cap/memledger.h"
#include "common/controls.h"
#include "devices.h"
#include "hook.h"
#include "memory_track.h"

typedef CUresult (*getlimit_fn)(size_t *, CUlimit);

/* Bytes the limit would add on ordinal o (0: none, or not one we count). */
static uint64_t CC_CONTROL_POINT(limit_growth)(int o, CUlimit limit, size_t value)
{
    static getlimit_fn get;
    if (limit != CU_LIMIT_STACK_SIZE && limit != CU_LIMIT_PRINTF_FIFO_SIZE &&
        limit != CU_LIMIT_MALLOC_HEAP_SIZE)
        return 0;
    if (!get) get = (getlimit_fn)cc_lib_sym(CC_LIB_CUDA, "cuCtxGetLimit");
    size_t cur = 0;
    if (!get || get(&cur, limit) != CUDA_SUCCESS || value <= cur) return 0;
    uint64_t grow = (uint64_t)(value - cur);
    if (limit == CU_LIMIT_STACK_SIZE) {
        const struct cc_device_id *dv = cc_device(o);
        uint64_t threads = dv ? (uint64_t)dv->sm_count * (uint64_t)dv->max_threads_per_sm : 0;
        if (!threads) threads = 132ull * 2048; /* unknown: an H100/H200's */
        grow = grow > UINT64_MAX / threads ? UINT64_MAX : grow * threads;
    }
    return grow;
}

CC_EXPORT CUresult cuCtxSetLimit(CUlimit limit, size_t value)
{
    __typeof__(&cuCtxSetLimit) real = CC_CUDA_REAL(cuCtxSetLimit);
    if (!real) return cc_cuda_missing(CC_FN_cuCtxSetLimit);
    int o;
    const struct cc_mem_device *m = cc_mem_here(&o);
    uint64_t need = m ? limit_growth(o, limit, value) : 0;
    if (need && cc_mem_reserve_overhead(m, o, need) != 0) return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r = real(limit, value);
    if (need) {
        uint64_t ovh;
        if (r != CUDA_SUCCESS) cc_ml_unreserve_overhead(m->h, need);
        else if (cc_mem_measure_overhead(o, &ovh)) cc_ml_set_overhead(m->h, ovh);
        /* else unmeasurable: the reserved bound stays counted */
    }
    return r;
}

/* A successful load on a capped device: measure before the next allocation. */
static CUresult CC_CONTROL_POINT(loaded)(CUresult r)
{
    int o;
    if (r == CUDA_SUCCESS && cc_mem_here(&o)) cc_mem_overhead_stale(o);
    return r;
}

CC_EXPORT CUresult cuModuleLoad(CUmodule *module, const char *fname)
{
    __typeof__(&cuModuleLoad) real = CC_CUDA_REAL(cuModuleLoad);
    if (!real) return cc_cuda_missing(CC_FN_cuModuleLoad);
    return loaded(real(module, fname));
}

CC_EXPORT CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
    __typeof__(&cuModuleLoadData) real = CC_CUDA_REAL(cuModuleLoadData);
    if (!real) return cc_cuda_missing(CC_FN_cuModuleLoadData);
    return loaded(real(module, image));
}

CC_EXPORT CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int n,
                                      CUjit_option *options, void **values)
{
    __typeof__(&cuModuleLoadDataEx) real = CC_CUDA_REAL(cuModuleLoadDataEx);
    if (!real) return cc_cuda_missing(CC_FN_cuModuleLoadDataEx);
    return loaded(real(module, image, n, options, values));
}

CC_EXPORT CUresult cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin)
{
    __typeof__(&cuModuleLoadFatBinary) real = CC_CUDA_REAL(cuModuleLoadFatBinary);
    if (!real) return cc_cuda_missing(CC_FN_cuModuleLoadFatBinary);
    return loaded(real(module, fatCubin));
}

CC_EXPORT CUresult cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jo,
                                     void **jv, unsigned int nj, CUlibraryOption *lo, void **lv,
                                     unsigned int nl)
{
    __typeof__(&cuLibraryLoadData) real = CC_CUDA_REAL(cuLibraryLoadData);
    if (!real) return cc_cuda_missing(CC_FN_cuLibraryLoadData);
    return loaded(real(library, code, jo, jv, nj, lo, lv, nl));
}

CC_EXPORT CUresult cuLibraryLoadFromFile(CUlibrary *library, const char *file, CUjit_option *jo,
                                         void **jv, unsigned int nj, CUlibraryOption *lo,
                                         void **lv, unsigned int nl)
{
    __typeof__(&cuLibraryLoadFromFile) real = CC_CUDA_REAL(cuLibraryLoadFromFile);
    if (!real) return cc_cuda_missing(CC_FN_cuLibraryLoadFromFile);
    return loaded(real(library, file, jo, jv, nj, lo, lv, nl));
}

/* What gives overhead back: measured again before the next allocation (the
 * refusal path re-measures at most every 5 ms, cap/mem/admit.c). */
static CUresult shrunk(CUresult r)
{
    if (r == CUDA_SUCCESS) cc_mem_overhead_stale_all();
    return r;
}

CC_EXPORT CUresult cuModuleUnload(CUmodule hmod)
{
    __typeof__(&cuModuleUnload) real = CC_CUDA_REAL(cuModuleUnload);
    if (!real) return cc_cuda_missing(CC_FN_cuModuleUnload);
    return shrunk(real(hmod));
}

CC_EXPORT CUresult cuLibraryUnload(CUlibrary library)
{
    __typeof__(&cuLibraryUnload) real = CC_CUDA_REAL(cuLibraryUnload);
    if (!real) return cc_cuda_missing(CC_FN_cuLibraryUnload);
    return shrunk(real(library));
}

CC_EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx)
{
    __typeof__(&cuCtxDestroy_v2) real = CC_CUDA_REAL(cuCtxDestroy_v2);
    if (!real) return cc_cuda_missing(CC_FN_cuCtxDestroy_v2);
    return shrunk(real(ctx));
}

CC_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    __typeof__(&cuDevicePrimaryCtxRelease_v2) real = CC_CUDA_REAL(cuDevicePrimaryCtxRelease_v2);
    if (!real) return cc_cuda_missing(CC_FN_cuDevicePrimaryCtxRelease_v2);
    return shrunk(real(dev));
}

CC_EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
    __typeof__(&cuDevicePrimaryCtxReset_v2) real = CC_CUDA_REAL(cuDevicePrimaryCtxReset_v2);
    if (!real) return cc_cuda_missing(CC_FN_cuDevicePrimaryCtxReset_v2);
    return shrunk(real(dev));
}
