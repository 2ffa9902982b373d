/* cuGetProcAddress: resolves base names through the compiled-in table of
 * proc_table.c (never through dlsym, which an interposer may override). */
#include "cuda_internal.h"

#include <string.h>

#include "proc_table.h"

static CUresult lookup(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                       CUdriverProcAddressQueryResult *status)
{
    if (!symbol || !pfn)
        return CUDA_ERROR_INVALID_VALUE;
    int want_pt = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    const struct sim_proc_entry *best = NULL;
    int seen = 0;
    for (size_t i = 0; i < sim_proc_table_len; i++) {
        const struct sim_proc_entry *e = &sim_proc_table[i];
        if (strcmp(e->base, symbol) != 0)
            continue;
        seen = 1;
        if (e->version > cudaVersion || (e->per_thread && !want_pt))
            continue;
        if (!best || e->version > best->version || (e->version == best->version && e->per_thread))
            best = e;
    }
    *pfn = best ? best->fn : NULL;
    if (status)
        *status = best ? CU_GET_PROC_ADDRESS_SUCCESS
                       : seen ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return best ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                     CUdriverProcAddressQueryResult *symbolStatus)
{
    return lookup(symbol, pfn, cudaVersion, flags, symbolStatus);
}

CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    return lookup(symbol, pfn, cudaVersion, flags, NULL);
}
