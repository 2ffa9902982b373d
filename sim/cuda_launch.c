/* Modules, libraries, functions named spin_<N>us, and kernel launches. */
#include "cuda_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static CUresult module_new(CUmodule *m)
{
    SIM_CHECK_INIT();
    if (!m)
        return CUDA_ERROR_INVALID_VALUE;
    struct sim_module *x = sim_obj_alloc(sizeof *x);
    if (!x)
        return CUDA_ERROR_OUT_OF_MEMORY;
    /* Code and data of the module (CUDACAP_SIM_MODULE_MEM each) on the
     * current context's device, as a driver loads them at load time. */
    struct sim_ctx *c = sim_cur_ctx();
    uint64_t b = sim_config()->module_mem;
    if (b && c && sim_charge((uint32_t)c->dev, b) != 0) {
        sim_obj_free(x);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    x->dev = c ? c->dev : 0;
    x->bytes = c ? b : 0;
    x->magic = MAG_MODULE;
    *m = (CUmodule)x;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleLoad(CUmodule *module, const char *fname)
{
    if (!fname)
        return CUDA_ERROR_INVALID_VALUE;
    return module_new(module);
}

CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image)
{
    (void)image;
    return module_new(module);
}

CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
                                    CUjit_option *options, void **optionValues)
{
    (void)image;
    (void)numOptions;
    (void)options;
    (void)optionValues;
    return module_new(module);
}

CUresult CUDAAPI cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin)
{
    (void)fatCubin;
    return module_new(module);
}

static void module_free(struct sim_module *m)
{
    pthread_mutex_lock(&sim_lk);
    struct sim_func *f = m->funcs;
    m->funcs = NULL;
    m->magic = 0;
    pthread_mutex_unlock(&sim_lk);
    if (m->bytes) sim_uncharge((uint32_t)m->dev, m->bytes);
    while (f) {
        struct sim_func *n = f->next;
        f->magic = 0;
        sim_obj_free(f);
        f = n;
    }
    sim_obj_free(m);
}

CUresult CUDAAPI cuModuleUnload(CUmodule hmod)
{
    struct sim_module *m = (struct sim_module *)hmod;
    if (!m || m->magic != MAG_MODULE)
        return CUDA_ERROR_INVALID_HANDLE;
    module_free(m);
    return CUDA_SUCCESS;
}

/* Parses spin_<N>us; returns 0 on success. */
static int parse_spin(const char *name, uint64_t *us)
{
    if (strncmp(name, "spin_", 5) != 0)
        return -1;
    const char *p = name + 5;
    if (*p < '0' || *p > '9')
        return -1;
    uint64_t v = 0;
    while (*p >= '0' && *p <= '9') {
        v = v * 10 + (uint64_t)(*p - '0');
        if (v > 3600ull * 1000000ull)
            return -1;
        p++;
    }
    if (strcmp(p, "us") != 0)
        return -1;
    *us = v;
    return 0;
}

static CUresult get_func(struct sim_module *m, const char *name, struct sim_func **out)
{
    if (!out || !name)
        return CUDA_ERROR_INVALID_VALUE;
    if (!m || m->magic != MAG_MODULE)
        return CUDA_ERROR_INVALID_HANDLE;
    uint64_t us;
    if (parse_spin(name, &us) != 0)
        return CUDA_ERROR_NOT_FOUND;
    pthread_mutex_lock(&sim_lk);
    struct sim_func *f = m->funcs;
    while (f && strcmp(f->name, name) != 0)
        f = f->next;
    if (!f && (f = sim_obj_alloc(sizeof *f)) != NULL) {
        f->magic = MAG_FUNC;
        f->spin_us = us;
        snprintf(f->name, sizeof f->name, "%s", name);
        f->next = m->funcs;
        m->funcs = f;
    }
    pthread_mutex_unlock(&sim_lk);
    *out = f;
    return f ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
    return get_func((struct sim_module *)hmod, name, (struct sim_func **)hfunc);
}

/* Libraries share the module representation; CUkernel == CUfunction. */
CUresult CUDAAPI cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions,
                                   void **jitOptionsValues, unsigned int numJitOptions,
                                   CUlibraryOption *libraryOptions, void **libraryOptionValues,
                                   unsigned int numLibraryOptions)
{
    (void)code;
    (void)jitOptions;
    (void)jitOptionsValues;
    (void)numJitOptions;
    (void)libraryOptions;
    (void)libraryOptionValues;
    (void)numLibraryOptions;
    return module_new((CUmodule *)library);
}

CUresult CUDAAPI cuLibraryLoadFromFile(CUlibrary *library, const char *fileName, CUjit_option *jitOptions,
                                       void **jitOptionsValues, unsigned int numJitOptions,
                                       CUlibraryOption *libraryOptions, void **libraryOptionValues,
                                       unsigned int numLibraryOptions)
{
    (void)fileName;
    return cuLibraryLoadData(library, NULL, jitOptions, jitOptionsValues, numJitOptions, libraryOptions,
                             libraryOptionValues, numLibraryOptions);
}

CUresult CUDAAPI cuLibraryUnload(CUlibrary library)
{
    return cuModuleUnload((CUmodule)library);
}

CUresult CUDAAPI cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
    return get_func((struct sim_module *)library, name, (struct sim_func **)pKernel);
}

CUresult CUDAAPI cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
    struct sim_func *f = (struct sim_func *)kernel;
    if (!pFunc)
        return CUDA_ERROR_INVALID_VALUE;
    if (!f || f->magic != MAG_FUNC)
        return CUDA_ERROR_INVALID_HANDLE;
    *pFunc = (CUfunction)f;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc)
{
    if (!pi)
        return CUDA_ERROR_INVALID_VALUE;
    if (!hfunc || ((struct sim_func *)hfunc)->magic != MAG_FUNC)
        return CUDA_ERROR_INVALID_HANDLE;
    switch (attrib) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = 1024; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *pi = 16; break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION:
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *pi = 90; break;
    default: *pi = 0; break;
    }
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value)
{
    (void)attrib;
    (void)value;
    return hfunc ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult CUDAAPI cuFuncGetName(const char **name, CUfunction hfunc)
{
    struct sim_func *f = (struct sim_func *)hfunc;
    if (!name || !f || f->magic != MAG_FUNC)
        return CUDA_ERROR_INVALID_VALUE;
    *name = f->name;
    return CUDA_SUCCESS;
}

/* ---- launches ---- */
/* A launch into a capture becomes a kernel node of its graph and runs
 * nothing; otherwise it goes on the device timeline after the stream's tail. */
CUresult sim_launch_on(struct sim_func *f, unsigned gx, unsigned gy, unsigned gz, struct sim_stream *st)
{
    if (!f || f->magic != MAG_FUNC)
        return CUDA_ERROR_INVALID_HANDLE;
    if (gx == 0 || gy == 0 || gz == 0)
        return CUDA_ERROR_INVALID_VALUE;
    int dev = st->ctx->dev;
    uint64_t blocks = (uint64_t)gx * gy * gz;
    uint64_t sms = sim_shm()->dev[dev].sms;
    uint64_t dur = (blocks + sms - 1) / sms * f->spin_us * 1000ull;
    struct sim_capture *cap;
    pthread_mutex_lock(&sim_lk);
    CUresult r = sim_capture_enqueue(st, &cap);
    if (r == CUDA_SUCCESS && cap) {
        struct sim_node *n = sim_obj_alloc(sizeof *n); /* its lock nests inside sim_lk */
        if (!n) {
            r = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            n->magic = MAG_NODE;
            n->type = CU_GRAPH_NODE_TYPE_KERNEL;
            n->kparams.func = (CUfunction)f;
            n->kparams.gridDimX = gx;
            n->kparams.gridDimY = gy;
            n->kparams.gridDimZ = gz;
            n->kparams.blockDimX = n->kparams.blockDimY = n->kparams.blockDimZ = 1;
            r = sim_graph_add(cap->graph, n); /* frees n on failure */
        }
    } else if (r == CUDA_SUCCESS) {
        uint64_t end = sim_timeline_append((uint32_t)dev, st->tail, dur);
        sim_stream_advance(st, end);
    }
    pthread_mutex_unlock(&sim_lk);
    return r;
}

/* CUDACAP_SIM_LAUNCH_STALL_US: the launching thread held up after its
 * kernel was queued, as a loaded host preempts it between the driver's
 * submission and the call's return; the kernel runs meanwhile. Counted per
 * process (relaxed: only the period matters). */
static void launch_stall(void)
{
    const struct sim_config *c = sim_config();
    static uint32_t n;
    if (!c->launch_stall_ns || __atomic_add_fetch(&n, 1, __ATOMIC_RELAXED) % c->launch_stall_every)
        return;
    struct timespec ts = {(time_t)(c->launch_stall_ns / 1000000000ull), (long)(c->launch_stall_ns % 1000000000ull)};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static CUresult launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, CUstream h, int ptsz)
{
    CUresult r;
    struct sim_stream *st = sim_stream_get(h, ptsz, &r);
    if (!st)
        return r;
    r = sim_launch_on((struct sim_func *)f, gx, gy, gz, st);
    if (r == CUDA_SUCCESS)
        launch_stall();
    return r;
}

#define LAUNCH_ARGS CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, \
    unsigned int by, unsigned int bz, unsigned int smem, CUstream h
#define UNUSED_LAUNCH (void)bx; (void)by; (void)bz; (void)smem

CUresult CUDAAPI cuLaunchKernel(LAUNCH_ARGS, void **kernelParams, void **extra)
{
    UNUSED_LAUNCH; (void)kernelParams; (void)extra;
    return launch(f, gx, gy, gz, h, 0);
}

CUresult CUDAAPI cuLaunchKernel_ptsz(LAUNCH_ARGS, void **kernelParams, void **extra)
{
    UNUSED_LAUNCH; (void)kernelParams; (void)extra;
    return launch(f, gx, gy, gz, h, 1);
}

CUresult CUDAAPI cuLaunchCooperativeKernel(LAUNCH_ARGS, void **kernelParams)
{
    UNUSED_LAUNCH; (void)kernelParams;
    return launch(f, gx, gy, gz, h, 0);
}

CUresult CUDAAPI cuLaunchCooperativeKernel_ptsz(LAUNCH_ARGS, void **kernelParams)
{
    UNUSED_LAUNCH; (void)kernelParams;
    return launch(f, gx, gy, gz, h, 1);
}

static CUresult launch_ex(const CUlaunchConfig *config, CUfunction f, int ptsz)
{
    if (!config)
        return CUDA_ERROR_INVALID_VALUE;
    return launch(f, config->gridDimX, config->gridDimY, config->gridDimZ, config->hStream, ptsz);
}

CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra)
{
    (void)kernelParams;
    (void)extra;
    return launch_ex(config, f, 0);
}

CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
                                       void **extra)
{
    (void)kernelParams;
    (void)extra;
    return launch_ex(config, f, 1);
}

CUresult CUDAAPI cuLaunchCooperativeKernelMultiDevice(CUDA_LAUNCH_PARAMS *launchParamsList, unsigned int numDevices,
                                                      unsigned int flags)
{
    (void)flags;
    if (!launchParamsList || numDevices == 0)
        return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < numDevices; i++) {
        CUDA_LAUNCH_PARAMS *p = &launchParamsList[i];
        CUresult r = launch(p->function, p->gridDimX, p->gridDimY, p->gridDimZ, p->hStream, 0);
        if (r != CUDA_SUCCESS)
            return r;
    }
    return CUDA_SUCCESS;
}

/* The deprecated launches (cuda.h still declares them): the block shape set
 * before through cuFuncSetBlockShape, the grid here; cuLaunch is one block.
 * cuLaunch and cuLaunchGrid use the current context's NULL stream. */
CUresult CUDAAPI cuLaunch(CUfunction f)
{
    return launch(f, 1, 1, 1, NULL, 0);
}

CUresult CUDAAPI cuLaunchGrid(CUfunction f, int grid_width, int grid_height)
{
    if (grid_width <= 0 || grid_height <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    return launch(f, (unsigned)grid_width, (unsigned)grid_height, 1, NULL, 0);
}

CUresult CUDAAPI cuLaunchGridAsync(CUfunction f, int grid_width, int grid_height, CUstream hStream)
{
    if (grid_width <= 0 || grid_height <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    return launch(f, (unsigned)grid_width, (unsigned)grid_height, 1, hStream, 0);
}

CUresult CUDAAPI cuFuncSetBlockShape(CUfunction hfunc, int x, int y, int z)
{
    struct sim_func *f = (struct sim_func *)hfunc;
    if (!f || f->magic != MAG_FUNC)
        return CUDA_ERROR_INVALID_HANDLE;
    return x > 0 && y > 0 && z > 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, CUfunction func, int blockSize,
                                                             size_t dynamicSMemSize)
{
    (void)func;
    (void)dynamicSMemSize;
    if (!numBlocks || blockSize <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    int n = 2048 / blockSize;
    *numBlocks = n > 32 ? 32 : n < 1 ? 1 : n;
    return CUDA_SUCCESS;
}
