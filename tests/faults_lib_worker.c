/* Fault campaign, library side: a worker (tests/faults_lib.h). A capped
 * client of the simulator (this program re-executed as "worker",
 * libcudacap.so preloaded): a launching thread, and allocations, frees and
 * fills as the parent commands through the shared slot. */
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "faults_lib.h"
#include "ptx.h"

/* ---- worker ------------------------------------------------------------- */

/* g_ctx: the last device's context, where the workers allocate and launch
 * (device 0 on one simulated device); g_ctx0: device 0's, current in the
 * launching thread when there are several, so that every launch goes
 * through the stream's-device route (docs/interception.md, "Which device"). */
static CUcontext g_ctx, g_ctx0;
static CUfunction g_fn;
static int g_me;

static void *launcher(void *arg)
{
    (void)arg;
    cuCtxSetCurrent(g_ctx);
    CUstream st;
    if (cuStreamCreate(&st, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) return NULL;
    cuCtxSetCurrent(g_ctx0);
    for (unsigned i = 0;; i++) {
        void *args[] = {NULL};
        if (cuLaunchKernel(g_fn, 1, 1, 1, 32, 1, 1, 0, st, args, NULL) != CUDA_SUCCESS)
            __atomic_store_n(&S->w[g_me].err, 2, __ATOMIC_RELAXED);
        if (i % 4 == 3) cuStreamSynchronize(st);
        __atomic_add_fetch(&S->w[g_me].launches, 1, __ATOMIC_RELEASE);
        usleep(2000);
    }
    return NULL;
}

/* A full container refuses a new context (context admission): the late
 * joiner waits for the churners to drop some, at most 5 s. */
static CUresult retain(int ordinal, CUcontext *ctx)
{
    CUdevice dev;
    CUresult rr = cuDeviceGet(&dev, ordinal);
    for (int t = 0; rr == CUDA_SUCCESS && t < 2500; t++) {
        CUresult e = cuDevicePrimaryCtxRetain(ctx, dev);
        if (e != CUDA_ERROR_OUT_OF_MEMORY) return e;
        if (t == 2499) rr = e;
        usleep(2000);
    }
    return rr;
}

int worker(int id)
{
    g_me = id;
    struct wslot *w = &S->w[id];
    CUmodule mod;
    int ndev = 0;
    CUresult rr = cuInit(0);
    if (!rr) rr = cuDeviceGetCount(&ndev);
    if (!rr && ndev < 1) rr = CUDA_ERROR_NO_DEVICE;
    if (!rr) rr = retain(0, &g_ctx0);
    if (!rr) rr = ndev > 1 ? retain(ndev - 1, &g_ctx) : (g_ctx = g_ctx0, CUDA_SUCCESS);
    if (rr || cuCtxSetCurrent(g_ctx) || cuModuleLoadData(&mod, test_ptx) ||
        cuModuleGetFunction(&g_fn, mod, "spin_50us")) {
        fprintf(stderr, "worker %d: CUDA setup failed (%d)\n", id, (int)rr);
        return 3;
    }
    size_t fr, tot;
    cuMemGetInfo(&fr, &tot); /* binds the device: the context is counted */
    pthread_t th;
    if (pthread_create(&th, NULL, launcher, NULL) != 0) return 3;
    CUdeviceptr ptr[MAXHELD];
    uint64_t sz[MAXHELD];
    int n = 0, last = 0;
    uint64_t seed = 0x9e3779b97f4a7c15ull ^ ((uint64_t)getpid() << 20);
    __atomic_store_n(&w->pid, getpid(), __ATOMIC_RELAXED);
    __atomic_store_n(&w->ready, 1, __ATOMIC_RELEASE);
#define HOLD(p, s) (ptr[n] = (p), sz[n++] = (s), w->held += (s))
#define DROP(k)                                                                       \
    do {                                                                              \
        w->held -= sz[k]; /* before the free: the witness never undercounts */        \
        if (cuMemFree(ptr[k]) != CUDA_SUCCESS) __atomic_store_n(&w->err, 1, __ATOMIC_RELAXED); \
        ptr[k] = ptr[n - 1], sz[k] = sz[n - 1], n--;                                  \
    } while (0)
    for (;;) {
        int c = __atomic_load_n(&w->cmd, __ATOMIC_ACQUIRE), op = c & 15, seq = c >> 4;
        __atomic_add_fetch(&w->beats, 1, __ATOMIC_RELAXED);
        if (op == OP_CHURN) {
            uint64_t r = rnd(&seed);
            if (n < MAXHELD && (n == 0 || (r & 3) != 0)) {
                uint64_t s = (1 + (r >> 8) % 8) * MIB;
                CUdeviceptr p;
                CUresult e = cuMemAlloc(&p, s);
                if (e == CUDA_SUCCESS) HOLD(p, s), w->alloc_ok++;
                else if (e == CUDA_ERROR_OUT_OF_MEMORY) {
                    w->alloc_refused++;
                    if (n) DROP((int)((r >> 32) % (unsigned)n));
                } else __atomic_store_n(&w->err, 1, __ATOMIC_RELAXED);
            } else if (n) DROP((int)((r >> 32) % (unsigned)n));
            if ((r & 63) == 0) cuMemGetInfo(&fr, &tot);
            usleep(200); /* a core is not ours: suites run beside timing tests */
            continue;
        }
        if (seq != last) {
            if (op == OP_FREE || op == OP_EXIT)
                while (n) DROP(n - 1);
            if (op == OP_FILL) {
                uint64_t chunk[2] = {BIG, SMALL};
                for (int k = 0; k < 2; k++)
                    for (;;) {
                        CUdeviceptr p;
                        if (n >= MAXHELD || cuMemAlloc(&p, chunk[k]) != CUDA_SUCCESS) break;
                        HOLD(p, chunk[k]);
                    }
            }
            if (op == OP_EXIT) {
                __atomic_store_n(&w->ack, seq, __ATOMIC_RELEASE);
                _exit(0); /* the launcher may sit in a launch: no join */
            }
            last = seq;
            __atomic_store_n(&w->ack, seq, __ATOMIC_RELEASE);
        }
        usleep(300);
    }
}
