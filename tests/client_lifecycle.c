/* Process life: init from many threads at once, and fork of an initialised
 * (and of an uninitialised) process. Run preloaded with CUDACAP_COUNT_CALLS=1
 * against the simulator. */
#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "ptx.h"

static long long (*count)(const char *);
static pthread_barrier_t barrier;
#define NTHREADS 8
static void *seen[NTHREADS];

static void *racer(void *arg)
{
    int i = (int)(long)arg;
    pthread_barrier_wait(&barrier);
    /* The first intercepted call of the process, from 8 threads at once. */
    void *p = NULL;
    if (cuGetProcAddress_v2("cuLaunchKernel", &p, 12000, 0, NULL) != CUDA_SUCCESS) p = NULL;
    seen[i] = p;
    if (cuInit(0) != CUDA_SUCCESS) seen[i] = NULL;
    return NULL;
}

static void threads_init(void)
{
    pthread_t t[NTHREADS];
    pthread_barrier_init(&barrier, NULL, NTHREADS);
    for (long i = 0; i < NTHREADS; i++) pthread_create(&t[i], NULL, racer, (void *)i);
    for (int i = 0; i < NTHREADS; i++) pthread_join(t[i], NULL);
    void *ours = dlsym(RTLD_DEFAULT, "cuLaunchKernel");
    for (int i = 0; i < NTHREADS; i++)
        CHECK(seen[i] == ours, "thread %d got %p, want cudacap's %p", i, seen[i], ours);
    CHECK(count("cuInit") == NTHREADS, "cuInit counted %lld, want %d", count("cuInit"), NTHREADS);
    CHECK(count("cuGetProcAddress_v2") == NTHREADS, "gpa counted %lld", count("cuGetProcAddress_v2"));
}

/* In a child: the driver still works through cudacap, counters still count. */
static int child_work(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fn;
    CUdeviceptr d;
    CHECK_CU(cuInit(0));
    CHECK_CU(cuDeviceGet(&dev, 0));
    CHECK_CU(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK_CU(cuCtxSetCurrent(ctx));
    long long a = count("cuMemAlloc_v2"), l = count("cuLaunchKernel_ptsz");
    CHECK_CU(cuMemAlloc(&d, 1 << 20));
    CHECK_CU(cuMemFree(d));
    CHECK_CU(cuModuleLoadData(&mod, test_ptx));
    CHECK_CU(cuModuleGetFunction(&fn, mod, "spin_10us"));
    void *p = NULL;
    CHECK_CU(cuGetProcAddress_v2("cuLaunchKernel", &p, 13000,
                                 CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, NULL));
    if (p) CHECK_CU(((__typeof__(&cuLaunchKernel))p)(fn, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    CHECK_CU(cuCtxSynchronize());
    CHECK(count("cuMemAlloc_v2") == a + 1, "child alloc not counted");
    CHECK(count("cuLaunchKernel_ptsz") == l + 1, "child ptsz launch not counted");
    return check_failures ? 1 : 0;
}

static void fork_child(const char *what)
{
    pid_t pid = fork();
    if (pid == 0) _exit(child_work());
    int st = 0;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "%s: child failed (status 0x%x)", what, st);
}

int main(void)
{
    count = (long long (*)(const char *))dlsym(RTLD_DEFAULT, "cudacap_call_count");
    if (!count) {
        fprintf(stderr, "libcudacap.so is not preloaded\n");
        return 1;
    }
    if (count("cuInit") != 0) {
        fprintf(stderr, "expected no CUDA calls before main\n");
        return 1;
    }
    /* A child forked before any CUDA call initialises itself. */
    fork_child("fork before init");
    threads_init();
    CHECK(child_work() == 0, "parent work");
    /* A child forked after init keeps working, and so does the parent. */
    fork_child("fork after init");
    fork_child("second fork after init");
    CHECK(child_work() == 0, "parent work after fork");
    CHECK_EXIT();
}
