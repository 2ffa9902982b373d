/* NVML's process list (nvml_procs.h). */
#include "nvml_procs.h"

#include "common/fault.h"
#include "devices.h"
#include "hook.h"

typedef nvmlReturn_t (*procs_fn)(nvmlDevice_t, unsigned int *, nvmlProcessInfo_t *);

int cc_nvml_procs(int ordinal, nvmlProcessInfo_t *p, unsigned *n)
{
    const struct cc_device_id *dv = cc_device(ordinal);
    if (!dv || !dv->nvml) return -1;
    cc_nvml_init();
    /* Resolved by whichever thread comes first (the watcher's and the
     * application's may race): the same value, stored and loaded atomically. */
    static procs_fn fn;
    procs_fn f = __atomic_load_n(&fn, __ATOMIC_ACQUIRE);
    if (!f) {
        f = (procs_fn)cc_lib_sym(CC_LIB_NVML, "nvmlDeviceGetComputeRunningProcesses_v3");
        __atomic_store_n(&fn, f, __ATOMIC_RELEASE);
    }
    if (!f || cc_fault(CC_FP_NVML_PROCS)) return -1;
    return f(dv->nvml, n, p) == NVML_SUCCESS ? 0 : -1;
}

int cc_nvml_pids(int ordinal, unsigned *pids, unsigned *n)
{
    nvmlProcessInfo_t p[CC_NVML_PROCS_MAX];
    unsigned k = CC_NVML_PROCS_MAX;
    if (cc_nvml_procs(ordinal, p, &k) != 0) return -1;
    if (k > CC_NVML_PROCS_MAX) k = CC_NVML_PROCS_MAX;
    for (unsigned i = 0; i < k; i++) pids[i] = p[i].pid;
    *n = k;
    return 0;
}
