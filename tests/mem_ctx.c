/* Context admission on the simulator, through the interposer:
 * a context is admitted against the memory cap like an allocation.
 *
 *   late   A fills a 2 GiB container (its 256 MiB context plus buffers up to
 *          the cap); three late processes then create contexts
 *          (cuDevicePrimaryCtxRetain twice, cuCtxCreate once). Each gets
 *          CUDA_ERROR_OUT_OF_MEMORY, and the simulator's per-process memory
 *          of all of them, sampled every millisecond, never passes the cap.
 *          After A frees 512 MiB a late process gets its context (nothing
 *          lost), and fills the rest exactly.
 *   fork   the same with fork: A at the cap forks; the child's context is
 *          refused; after A frees, a second child's context fits.
 *   learn  two devices whose contexts take 64 and 32 MiB. A learns both
 *          sizes (memory.region, ctx_size); with 48 MiB left on each, B's
 *          context fits on device 1 and is refused on device 0: the learned
 *          sizes decide, not the 512 MiB default.
 *   code   48 MiB left: cuCtxSetLimit heaps and stacks past the cap are
 *          refused with CUDA_ERROR_OUT_OF_MEMORY (the stack bound: bytes x
 *          SMs x 2048 threads), those that fit are counted exactly; a module
 *          load (no bound) goes through and the next allocation is refused;
 *          after the unload an allocation fits again. Right after the
 *          unload NVML's memory view agrees with cuMemGetInfo's
 *          (mem_views.h); checked by hand: nvml.c's own view of before
 *          the port layer (no overhead re-measure) fails there, still counting
 *          the unloaded module's 32 MiB.
 *
 * Negative controls (tests/memory.cmake, WILL_FAIL): the library built with
 * -DCC_TEST_CTX_CONTROL and CC_TEST_CTX_CONTROL=noadmit (no admission: the
 * late contexts pass the cap) fails late and fork; =nolearn (the size is
 * never published: the default decides) fails learn; =nocode (limits and
 * loads not counted) fails code. Each was run and fails
 * every time: the outcome does not depend on timing. */
#include <cuda.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "mp_util.h"
#include "cudacap/abi_mem_region.h"
#include "cudacap/nvml_api.h"
#include "mem_views.h"

#define MIB (1ull << 20)

struct shared {
    int stage, stop;
    int late_rc[3];
    uint64_t nvml_max, truth, ledger;
};
static struct shared *S;

static uint64_t nvml_total(void)
{
    nvmlProcessInfo_t p[128];
    uint64_t s = 0;
    for (unsigned d = 0; d < 2; d++) {
        nvmlDevice_t h;
        unsigned n = 128;
        if (nvmlDeviceGetHandleByIndex_v2(d, &h) != NVML_SUCCESS) break;
        if (nvmlDeviceGetComputeRunningProcesses_v3(h, &n, p) != NVML_SUCCESS) continue;
        for (unsigned i = 0; i < n && i < 128; i++) s += p[i].usedGpuMemory;
        if (d == 0) break; /* late and fork use device 0 only */
    }
    return s;
}

static void wait_stage(int v)
{
    while (__atomic_load_n(&S->stage, __ATOMIC_ACQUIRE) < v) usleep(500);
}

static void set_stage(int v) { __atomic_store_n(&S->stage, v, __ATOMIC_RELEASE); }

static CUresult ctx_on(int dev, int create, CUcontext *c)
{
    CUdevice d;
    CUresult r = cuInit(0);
    if (!r) r = cuDeviceGet(&d, dev);
    if (!r) r = create ? cuCtxCreate(c, NULL, 0, d) : cuDevicePrimaryCtxRetain(c, d);
    if (!r) r = cuCtxSetCurrent(*c);
    return r;
}

static uint64_t used_here(void)
{
    size_t f = 0, t = 0;
    return cuMemGetInfo(&f, &t) == CUDA_SUCCESS ? t - f : UINT64_MAX;
}

/* Allocates until refused, 64 MiB then 1 MiB chunks; returns the bytes. */
static uint64_t fill(CUdeviceptr *keep, int *n, int max)
{
    uint64_t got = 0;
    for (uint64_t sz = 64 * MIB; sz >= MIB; sz /= 64)
        while (*n < max && cuMemAlloc(&keep[*n], sz) == CUDA_SUCCESS) (*n)++, got += sz;
    return got;
}

/* Samples the simulator's total until told to stop. */
static pid_t sampler(void)
{
    pid_t p = fork();
    if (p == 0) {
        while (!__atomic_load_n(&S->stop, __ATOMIC_ACQUIRE)) {
            uint64_t t = nvml_total(), m = __atomic_load_n(&S->nvml_max, __ATOMIC_RELAXED);
            if (t > m) __atomic_store_n(&S->nvml_max, t, __ATOMIC_RELAXED);
            usleep(1000);
        }
        _exit(0);
    }
    return p;
}

static uint64_t env_cap(void)
{
    const char *v = getenv("CUDACAP_MEM_LIMIT");
    return v ? strtoull(v, NULL, 10) << 30 : 0; /* "2g" */
}

/* ---- late ------------------------------------------------------------------ */

static void late_child(int i)
{
    CUcontext c;
    wait_stage(1);
    CUresult r = ctx_on(0, i == 2, &c);
    __atomic_store_n(&S->late_rc[i], (int)r + 1, __ATOMIC_RELEASE);
    if (i != 0) _exit(0);
    wait_stage(3); /* A freed 512 MiB: now it fits */
    if (r != CUDA_SUCCESS) r = ctx_on(0, 0, &c); /* (the no-admission control had it) */
    CUdeviceptr keep[256];
    int n = 0;
    if (r == CUDA_SUCCESS) fill(keep, &n, 256);
    __atomic_store_n(&S->late_rc[0], (int)r + 1, __ATOMIC_RELEASE);
    S->ledger = used_here();
    set_stage(4);
    wait_stage(5);
    _exit(0);
}

static int late(int forking)
{
    uint64_t cap = env_cap();
    pid_t smp = sampler(), a = fork(), kids[3] = {0, 0, 0};
    if (a == 0) {
        CUcontext c;
        if (ctx_on(0, 0, &c) != CUDA_SUCCESS) _exit(3);
        CUdeviceptr keep[256];
        int n = 0;
        fill(keep, &n, 256);
        if (forking) { /* children of a process at the cap, CUDA already up */
            pid_t k = fork();
            if (k == 0) {
                CUresult r = ctx_on(0, 0, &c);
                __atomic_store_n(&S->late_rc[0], (int)r + 1, __ATOMIC_RELEASE);
                _exit(0);
            }
            waitpid(k, NULL, 0);
        }
        set_stage(1);
        wait_stage(2);
        /* 512 MiB: the first eight are 64 MiB chunks (the last may be 1 MiB
         * ones when a transient refusal cut the 64 MiB phase short). */
        for (int i = 0; i < 8 && i < n; i++) cuMemFree(keep[i]);
        if (forking) {
            pid_t k = fork();
            if (k == 0) {
                CUresult r = ctx_on(0, 0, &c);
                CUdeviceptr more[256];
                int m = 0;
                if (r == CUDA_SUCCESS) fill(more, &m, 256);
                __atomic_store_n(&S->late_rc[1], (int)r + 1, __ATOMIC_RELEASE);
                S->ledger = used_here();
                set_stage(4);
                wait_stage(5);
                _exit(0);
            }
            /* A child that died without answering fails the checks, not
             * the run: stage 4 comes either way. */
            while (__atomic_load_n(&S->stage, __ATOMIC_ACQUIRE) < 4 && waitpid(k, NULL, WNOHANG) == 0)
                usleep(500);
            int was = 2; /* only where the child left it: the parent may be at 5 already */
            __atomic_compare_exchange_n(&S->stage, &was, 4, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
            wait_stage(5);
            waitpid(k, NULL, 0);
        } else {
            set_stage(3);
            wait_stage(5);
        }
        _exit(0);
    }
    if (!forking)
        for (int i = 0; i < 3; i++)
            if ((kids[i] = fork()) == 0) late_child(i);
    wait_stage(1);
    if (!forking) /* all three late processes answered */
        for (int i = 0; i < 3; i++)
            while (!__atomic_load_n(&S->late_rc[i], __ATOMIC_ACQUIRE)) usleep(500);
    int first[3];
    for (int i = 0; i < 3; i++) first[i] = S->late_rc[i] - 1;
    memset(S->late_rc, 0, sizeof S->late_rc);
    set_stage(2);
    wait_stage(4);
    S->truth = nvml_total();
    int again = S->late_rc[forking ? 1 : 0] - 1;
    set_stage(5);
    waitpid(a, NULL, 0);
    for (int i = 0; i < 3; i++)
        if (kids[i]) waitpid(kids[i], NULL, 0);
    __atomic_store_n(&S->stop, 1, __ATOMIC_RELEASE);
    waitpid(smp, NULL, 0);
    printf("%s: first contexts %d %d %d (2 = out of memory), after the free %d; NVML max %llu "
           "MiB, at the end %llu MiB (ledger %llu MiB), cap %llu MiB\n",
           forking ? "fork" : "late", first[0], first[1], first[2], again,
           (unsigned long long)(S->nvml_max / MIB), (unsigned long long)(S->truth / MIB),
           (unsigned long long)(S->ledger / MIB), (unsigned long long)(cap / MIB));
    for (int i = 0; i < (forking ? 1 : 3); i++)
        CHECK(first[i] == CUDA_ERROR_OUT_OF_MEMORY, "late context %d: %d, not out of memory", i,
              first[i]);
    CHECK(again == CUDA_SUCCESS, "after the free the context was refused (%d)", again);
    CHECK(S->nvml_max <= cap, "NVML total %llu MiB passed the %llu MiB cap",
          (unsigned long long)(S->nvml_max / MIB), (unsigned long long)(cap / MIB));
    CHECK(S->truth <= cap && S->truth + 64 * MIB > cap, "the end holds %llu MiB of %llu",
          (unsigned long long)(S->truth / MIB), (unsigned long long)(cap / MIB));
    CHECK(S->ledger == S->truth, "ledger %llu != NVML %llu", (unsigned long long)S->ledger,
          (unsigned long long)S->truth);
    CHECK_EXIT();
}

/* ---- learn ----------------------------------------------------------------- */

static int learn(const char *state)
{
    pid_t a = fork();
    if (a == 0) {
        CUcontext c[2];
        for (int d = 0; d < 2; d++) {
            CUdeviceptr p;
            if (ctx_on(d, 0, &c[d]) != CUDA_SUCCESS) _exit(3);
            uint64_t ctx = used_here(); /* this context alone */
            if (cuMemAlloc(&p, 1024 * MIB - ctx - 48 * MIB) != CUDA_SUCCESS) _exit(4);
        }
        set_stage(1);
        wait_stage(3);
        _exit(0);
    }
    wait_stage(1);
    pid_t b = fork();
    if (b == 0) {
        CUcontext c;
        S->late_rc[1] = (int)ctx_on(1, 0, &c) + 1;
        S->late_rc[0] = (int)ctx_on(0, 0, &c) + 1;
        set_stage(2);
        wait_stage(3);
        _exit(0);
    }
    wait_stage(2);
    uint64_t sizes[2] = {0, 0};
    char path[1024];
    snprintf(path, sizeof path, "%s/" CC_MEM_REGION_FILE, state);
    int fd = open(path, O_RDONLY);
    const cc_mem_region_t *r =
        fd >= 0 ? mmap(NULL, sizeof *r, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
    if (r != MAP_FAILED) {
        int k = 0;
        for (int i = 0; i < CC_MEM_DEVS && k < 2; i++)
            if (r->dev[i].key) sizes[k++] = r->ctx_size[i];
        munmap((void *)r, sizeof *r);
    }
    if (fd >= 0) close(fd);
    set_stage(3);
    waitpid(a, NULL, 0);
    waitpid(b, NULL, 0);
    printf("learn: learned %llu and %llu MiB; B's context on device 1: %d, on device 0: %d\n",
           (unsigned long long)(sizes[0] / MIB), (unsigned long long)(sizes[1] / MIB),
           S->late_rc[1] - 1, S->late_rc[0] - 1);
    CHECK(sizes[0] == 64 * MIB && sizes[1] == 32 * MIB, "learned %llu and %llu bytes",
          (unsigned long long)sizes[0], (unsigned long long)sizes[1]);
    CHECK(S->late_rc[1] - 1 == CUDA_SUCCESS, "a 32 MiB context with 48 MiB left: %d",
          S->late_rc[1] - 1);
    CHECK(S->late_rc[0] - 1 == CUDA_ERROR_OUT_OF_MEMORY, "a 64 MiB context with 48 MiB left: %d",
          S->late_rc[0] - 1);
    CHECK_EXIT();
}

/* ---- code ------------------------------------------------------------------ */

static int code(void)
{
    CUcontext c;
    CUdeviceptr p, q;
    CUmodule mod;
    if (ctx_on(0, 0, &c) != CUDA_SUCCESS) return 3;
    uint64_t ctx = used_here();
    CHECK_CU(cuMemAlloc(&p, 1024 * MIB - ctx - 48 * MIB)); /* 48 MiB left */
    CUresult heap_big = cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE, (8 + 64) * MIB);
    uint64_t t1 = nvml_total();
    CUresult heap_ok = cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE, (8 + 16) * MIB);
    uint64_t u2 = used_here(), t2 = nvml_total();
    /* +200 bytes for each of 132 x 2048 threads: 52.8 MiB; +64: 16.5 MiB */
    CUresult stack_big = cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 1024 + 200);
    uint64_t t3 = nvml_total();
    CUresult stack_ok = cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 1024 + 64);
    uint64_t u4 = used_here(), t4 = nvml_total();
    /* A module (32 MiB in the simulator) has no bound: it loads, and the
     * next allocation sees it and is refused. */
    CUresult load = cuModuleLoadData(&mod, "sim");
    CUresult after_load = cuMemAlloc(&q, MIB);
    if (after_load == CUDA_SUCCESS) cuMemFree(q);
    CHECK_CU(cuModuleUnload(mod));
    /* The unload gave the module's overhead back, re-measured only later:
     * NVML's view must re-measure it as cuMemGetInfo's does. */
    mem_views_agree("module unloaded");
    CUresult after_unload = cuMemAlloc(&q, MIB); /* nothing lost */
    printf("code: heap +64 MiB %d, +16 MiB %d; stack +52.8 MiB %d, +16.5 MiB %d; module %d, "
           "then 1 MiB %d, after unload %d; NVML %llu/%llu/%llu/%llu MiB, ledger %llu/%llu\n",
           heap_big, heap_ok, stack_big, stack_ok, load, after_load, after_unload,
           (unsigned long long)(t1 / MIB), (unsigned long long)(t2 / MIB),
           (unsigned long long)(t3 / MIB), (unsigned long long)(t4 / MIB),
           (unsigned long long)(u2 / MIB), (unsigned long long)(u4 / MIB));
    CHECK(heap_big == CUDA_ERROR_OUT_OF_MEMORY, "a 64 MiB heap with 48 MiB left: %d", heap_big);
    CHECK(heap_ok == CUDA_SUCCESS && u2 == t2, "a 16 MiB heap: %d, ledger %llu != NVML %llu",
          heap_ok, (unsigned long long)u2, (unsigned long long)t2);
    CHECK(stack_big == CUDA_ERROR_OUT_OF_MEMORY, "a 52.8 MiB stack with 32 MiB left: %d",
          stack_big);
    CHECK(stack_ok == CUDA_SUCCESS && u4 == t4, "a 16.5 MiB stack: %d, ledger %llu != NVML %llu",
          stack_ok, (unsigned long long)u4, (unsigned long long)t4);
    CHECK(t1 <= 1024 * MIB && t3 <= 1024 * MIB && t4 <= 1024 * MIB, "NVML passed the cap");
    CHECK(load == CUDA_SUCCESS, "module load: %d", load);
    CHECK(after_load == CUDA_ERROR_OUT_OF_MEMORY, "1 MiB after a module filled the cap: %d",
          after_load);
    CHECK(after_unload == CUDA_SUCCESS, "1 MiB after the unload: %d", after_unload);
    CHECK_EXIT();
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s late|fork|learn|code\n", argv[0]);
        return 2;
    }
    S = mmap(NULL, sizeof *S, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (S == MAP_FAILED) return 1;
    memset(S, 0, sizeof *S);
    if (nvmlInit_v2() != NVML_SUCCESS) return 1;
    if (!strcmp(argv[1], "late")) return late(0);
    if (!strcmp(argv[1], "fork")) return late(1);
    if (!strcmp(argv[1], "code")) return code();
    if (!strcmp(argv[1], "learn")) return learn(getenv("CUDACAP_STATE_DIR"));
    return 2;
}
