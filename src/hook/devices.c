#include "devices.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "common/fault.h"

#include "common/controls.h"
#include "common/log.h"
#include "hook.h"

static struct cc_device_id devs[CC_MAX_DEVICES];
static int ndevs;
static int discovered; /* 1 after a successful discovery (release) */
static pthread_mutex_t discover_mu = PTHREAD_MUTEX_INITIALIZER;

static __typeof__(&cuCtxGetDevice) real_ctx_get_device;
static __typeof__(&cuCtxGetCurrent) real_ctx_get_current;
static __typeof__(&cuStreamGetDevice) real_stream_device, real_stream_device_ptsz;
static __typeof__(&cuStreamGetCtx) real_stream_ctx, real_stream_ctx_ptsz;
static __typeof__(&cuCtxPushCurrent) real_ctx_push;
static __typeof__(&cuCtxPopCurrent) real_ctx_pop;

static void uuid_string(const CUuuid *u, char *out, size_t n)
{
    const unsigned char *b = (const unsigned char *)u->bytes;
    snprintf(out, n,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
             b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
}

static void discover(void)
{
    cc_cuda_init();
    __typeof__(&cuDeviceGetCount) count = cc_lib_sym(CC_LIB_CUDA, "cuDeviceGetCount");
    __typeof__(&cuDeviceGet) get = cc_lib_sym(CC_LIB_CUDA, "cuDeviceGet");
    __typeof__(&cuDeviceGetUuid_v2) uuid = cc_lib_sym(CC_LIB_CUDA, "cuDeviceGetUuid_v2");
    __typeof__(&cuDeviceGetAttribute) attr = cc_lib_sym(CC_LIB_CUDA, "cuDeviceGetAttribute");
    real_ctx_get_device = cc_lib_sym(CC_LIB_CUDA, "cuCtxGetDevice");
    real_ctx_get_current = cc_lib_sym(CC_LIB_CUDA, "cuCtxGetCurrent");
    /* Absent before CUDA 12.8: the context route below serves then. */
    real_stream_device = cc_lib_sym(CC_LIB_CUDA, "cuStreamGetDevice");
    real_stream_device_ptsz = cc_lib_sym(CC_LIB_CUDA, "cuStreamGetDevice_ptsz");
    real_stream_ctx = cc_lib_sym(CC_LIB_CUDA, "cuStreamGetCtx");
    real_stream_ctx_ptsz = cc_lib_sym(CC_LIB_CUDA, "cuStreamGetCtx_ptsz");
    real_ctx_push = cc_lib_sym(CC_LIB_CUDA, "cuCtxPushCurrent_v2");
    real_ctx_pop = cc_lib_sym(CC_LIB_CUDA, "cuCtxPopCurrent_v2");
    int n = 0;
    if (!count || !get || !uuid || !attr || count(&n) != CUDA_SUCCESS || n <= 0) return;
    if (n > CC_MAX_DEVICES) {
        cc_warn("%d devices visible; cudacap handles the first %d", n, CC_MAX_DEVICES);
        n = CC_MAX_DEVICES;
    }
    cc_nvml_init();
    __typeof__(&nvmlInit_v2) ninit = cc_lib_sym(CC_LIB_NVML, "nvmlInit_v2");
    __typeof__(&nvmlDeviceGetHandleByUUID) byuuid =
        cc_lib_sym(CC_LIB_NVML, "nvmlDeviceGetHandleByUUID");
    int have_nvml = ninit && byuuid && ninit() == NVML_SUCCESS;
    for (int i = 0; i < n; i++) {
        CUdevice d;
        CUuuid u;
        struct cc_device_id *dv = &devs[i];
        dv->ordinal = i;
        if (get(&d, i) != CUDA_SUCCESS || uuid(&u, d) != CUDA_SUCCESS) return;
        uuid_string(&u, dv->uuid, sizeof dv->uuid);
        attr(&dv->sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d);
        attr(&dv->max_threads_per_sm, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, d);
        dv->nvml = NULL;
        if (have_nvml && (cc_fault(CC_FP_NVML_DEVICE) || byuuid(dv->uuid, &dv->nvml) != NVML_SUCCESS)) {
            cc_warn("NVML does not know device %d (%s)", i, dv->uuid);
            dv->nvml = NULL;
        }
    }
    ndevs = n;
    __atomic_store_n(&discovered, 1, __ATOMIC_RELEASE);
}

int cc_devices_count(void)
{
    if (__builtin_expect(__atomic_load_n(&discovered, __ATOMIC_ACQUIRE), 1)) return ndevs;
    /* Not pthread_once: discovery fails before the application's cuInit and
     * must be retried later. */
    pthread_mutex_lock(&discover_mu);
    if (!__atomic_load_n(&discovered, __ATOMIC_ACQUIRE)) discover();
    pthread_mutex_unlock(&discover_mu);
    return __atomic_load_n(&discovered, __ATOMIC_ACQUIRE) ? ndevs : 0;
}

const struct cc_device_id *cc_device(int ordinal)
{
    int n = cc_devices_count();
    return ordinal >= 0 && ordinal < n ? &devs[ordinal] : NULL;
}

int cc_device_current(void)
{
    int n = cc_devices_count();
    if (n == 1) return 0;
    CUdevice d;
    if (!real_ctx_get_device || real_ctx_get_device(&d) != CUDA_SUCCESS) return -1;
    return d >= 0 && d < n ? (int)d : -1;
}

/* The ordinal of context ctx's device, -1 when it cannot tell (the
 * context pushed, its device read, popped: three driver calls; the
 * current context's costs one). Only for drivers before CUDA 12.8. */
static int device_of_ctx(CUcontext ctx)
{
    int n = cc_devices_count();
    if (n == 1) return 0;
    CUcontext cur = NULL;
    if (!ctx || !real_ctx_get_current || real_ctx_get_current(&cur) != CUDA_SUCCESS) return -1;
    if (ctx == cur) return cc_device_current();
    /* Another context: made current for one query, then the caller's
     * restored (the pop returns exactly what the push added). */
    if (!real_ctx_push || !real_ctx_pop || real_ctx_push(ctx) != CUDA_SUCCESS) return -1;
    int o = cc_device_current();
    CUcontext popped;
    real_ctx_pop(&popped);
    return o;
}

/* The device of stream s, one of n: its own, not the current context's. */
static int CC_CONTROL_POINT(stream_device)(CUstream s, int ptsz, int n)
{
    if (s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD) return cc_device_current();
    __typeof__(&cuStreamGetDevice) dev = ptsz ? real_stream_device_ptsz : real_stream_device;
    CUdevice d;
    CUresult r = dev ? dev(s, &d) : CUDA_ERROR_NOT_FOUND;
    if (r == CUDA_SUCCESS) return d >= 0 && d < n ? (int)d : -1;
    /* Only a driver without the query takes the context route: with a bad
     * handle cuStreamGetCtx is undefined, and the launch fails anyway. */
    if (r != CUDA_ERROR_NOT_FOUND && r != CUDA_ERROR_NOT_SUPPORTED) return -1;
    __typeof__(&cuStreamGetCtx) ctx = ptsz ? real_stream_ctx_ptsz : real_stream_ctx;
    CUcontext c;
    if (!ctx || ctx(s, &c) != CUDA_SUCCESS) return -1;
    return device_of_ctx(c);
}

int cc_device_of_stream(CUstream s, int ptsz)
{
    int n = cc_devices_count();
    if (n == 1) return 0;
    return stream_device(s, ptsz, n);
}
