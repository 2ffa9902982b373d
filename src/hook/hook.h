/* The interposer's core: function ids, real entry points, lazy init, and the
 * prologue every wrapper starts with (cc_cuda_real, cc_nvml_real). Cost on
 * a hot path (a launch): one acquire load and one predictable branch for
 * init, one plain load and branch for call counting, then the indirect call
 * to the driver. */
#ifndef CC_HOOK_H
#define CC_HOOK_H

#include <cuda.h>
#include <stdint.h>

#include "cudacap/nvml_api.h"

/* cuda.h maps cuGetProcAddress to the 5-argument _v2; the 4-argument one is
 * still exported by every CUDA 12/13 driver under the plain name. */
#undef cuGetProcAddress
CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);

/* cuda.h maps cuStreamBeginCapture to _v2 (with a mode); the CUDA 10.0 ABI
 * without one is still exported under the plain name. */
#undef cuStreamBeginCapture
#undef cuStreamEndCapture
#undef cuStreamBeginCaptureToGraph
CUresult cuStreamBeginCapture(CUstream);
CUresult cuStreamBeginCapture_ptsz(CUstream);
CUresult cuStreamBeginCapture_v2_ptsz(CUstream, CUstreamCaptureMode);
CUresult cuStreamEndCapture_ptsz(CUstream, CUgraph *);
CUresult cuStreamBeginCaptureToGraph_ptsz(CUstream, CUgraph, const CUgraphNode *,
                                          const CUgraphEdgeData *, size_t, CUstreamCaptureMode);

/* Per-thread-default-stream twins: same ABI as the legacy entry point. */
__typeof__(cuLaunchKernel) cuLaunchKernel_ptsz;
__typeof__(cuLaunchKernelEx) cuLaunchKernelEx_ptsz;
__typeof__(cuLaunchCooperativeKernel) cuLaunchCooperativeKernel_ptsz;
__typeof__(cuGraphLaunch) cuGraphLaunch_ptsz;
/* memory */
__typeof__(cuMemAllocAsync) cuMemAllocAsync_ptsz;
__typeof__(cuMemAllocFromPoolAsync) cuMemAllocFromPoolAsync_ptsz;
__typeof__(cuGraphInstantiateWithParams) cuGraphInstantiateWithParams_ptsz;
__typeof__(cuGraphUpload) cuGraphUpload_ptsz;
/* The CUDA 11 instantiate ABI, declared by cuda.h only for the driver. */
CUresult cuGraphInstantiate_v2(CUgraphExec *, CUgraph, CUgraphNode *, char *, size_t);
/* Older context-creation ABIs (wrapped in ctx_create.c); cuda.h
 * declares them only for the driver. */
CUresult cuCtxCreate_v2(CUcontext *, unsigned int, CUdevice);
CUresult cuCtxCreate_v3(CUcontext *, CUexecAffinityParam *, int, unsigned int, CUdevice);

#define CC_EXPORT __attribute__((visibility("default")))

enum cc_fn {
#define CC_CU(name, base, ver, ptsz) CC_FN_##name,
#define CC_NVML(name) CC_FN_##name,
#include "hooks.def"
#undef CC_CU
#undef CC_NVML
    CC_FN_COUNT
};

enum cc_lib { CC_LIB_CUDA = 0, CC_LIB_NVML = 1 };

struct cc_hook {
    const char *name; /* exported name */
    const char *base; /* cuGetProcAddress name */
    void *hook;       /* our wrapper */
    int32_t min_version;
    uint8_t ptsz;
    uint8_t lib;
};

extern const struct cc_hook cc_hooks[CC_FN_COUNT];

/* Real entry points, indexed by enum cc_fn. Written only inside the one-time
 * init of their library, before the release store of its ready flag; read
 * after the acquire load of that flag. NULL: the driver lacks it. */
extern void *cc_real[CC_FN_COUNT];
extern int cc_cuda_ready, cc_nvml_ready;
extern int cc_count_calls; /* CUDACAP_COUNT_CALLS, fixed at init */
extern uint64_t cc_calls[CC_FN_COUNT];

void cc_cuda_init(void);
/* 1: this process is refused the GPU for its configuration (init.c). */
extern int cc_cuda_refused;
void cc_nvml_init(void);

static inline void cc_enter_cuda(enum cc_fn id)
{
    if (__builtin_expect(!__atomic_load_n(&cc_cuda_ready, __ATOMIC_ACQUIRE), 0)) cc_cuda_init();
    if (__builtin_expect(cc_count_calls, 0))
        __atomic_fetch_add(&cc_calls[id], 1, __ATOMIC_RELAXED);
}

static inline void cc_enter_nvml(enum cc_fn id)
{
    if (__builtin_expect(!__atomic_load_n(&cc_nvml_ready, __ATOMIC_ACQUIRE), 0)) cc_nvml_init();
    if (__builtin_expect(cc_count_calls, 0))
        __atomic_fetch_add(&cc_calls[id], 1, __ATOMIC_RELAXED);
}

/* The real entry point, typed as the exported function. */
#define CC_REAL(name) ((__typeof__(&name))cc_real[CC_FN_##name])

/* What a wrapper returns when the installed driver lacks the entry point:
 * an error (logged once per entry), never a call through NULL. */
CUresult cc_cuda_missing(enum cc_fn id);
nvmlReturn_t cc_nvml_missing(enum cc_fn id);

/* The prologue of every wrapper: init, count the call, and the real entry
 * point of id; NULL when the driver lacks it, and the wrapper then returns
 * cc_cuda_missing(id) (the return stays in the wrapper, in sight). Inlined:
 * on a launch it is the same loads and branches as written out. */
static inline __attribute__((always_inline)) void *cc_cuda_real(enum cc_fn id)
{
    cc_enter_cuda(id);
    return cc_real[id];
}

static inline __attribute__((always_inline)) void *cc_nvml_real(enum cc_fn id)
{
    cc_enter_nvml(id);
    return cc_real[id];
}

/* The same, typed as the exported function `name` (a call expression; a
 * macro only for the id and the type it derives from the name). */
#define CC_CUDA_REAL(name) ((__typeof__(&name))cc_cuda_real(CC_FN_##name))
#define CC_NVML_REAL(name) ((__typeof__(&name))cc_nvml_real(CC_FN_##name))

/* Loading (loader.c). */
extern void *(*cc_real_dlsym)(void *, const char *);
void cc_resolve_real_dlsym(void);
void *cc_open_lib(enum cc_lib lib);
/* A real entry point we call but do not intercept (cuDeviceGetUuid_v2,
 * nvmlDeviceGetProcessUtilization...): resolved in the real library, never
 * through our dlsym. NULL before that library is initialised or if absent.
 * Call cc_cuda_init()/cc_nvml_init() first. Resolve once and cache. */
void *cc_lib_sym(enum cc_lib lib, const char *name);

/* The cap layer's port over the real libraries (port_real.c, cap/port.h):
 * filled and installed once, by cc_cuda_init() after the driver is open. */
void cc_port_real_install(void);

/* Routing (route.c). */
int cc_hook_by_name(const char *name);
void cc_route_build(void);
void *cc_route_proc(const char *symbol, void *pfn, int cuda_version, cuuint64_t flags);

/* Process-wide init shared by both libraries (init.c): log level, config,
 * fork handler. Idempotent. */
void cc_process_init(void);

#endif
