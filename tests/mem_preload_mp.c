/* Multi-process memory-cap tests through the real interposer on the
 * simulator (run preloaded; tests/memory.cmake sets the environment).
 *
 *   race        8 processes race cuMemAlloc/cuMemFree for the last bytes of
 *               CUDACAP_MEM_LIMIT (contexts of CUDACAP_SIM_CTX_MEM each).
 *               Witnesses: the bytes they hold together (counted after each
 *               successful allocation, uncounted before each free) plus their
 *               contexts never pass the cap; nor does the simulator's own
 *               per-process memory (NVML, sampled by the parent throughout).
 *   kill        kill -9 storm at random points while processes allocate and
 *               free with cuMemAlloc/cuMemFree and cuMemAllocAsync/
 *               cuMemFreeAsync; then cuMemGetInfo of a survivor must show
 *               exactly what the survivors hold per the simulator's NVML
 *               (allocations, pool reserve, contexts) within one second.
 *   unwritable  CUDACAP_STATE_DIR below a regular file (cannot exist, even
 *               for root): a re-executed child runs, caps itself alone
 *               (allocations stop exactly at the cap) and warns once.
 *
 * Negative controls (tests/memory.cmake, WILL_FAIL): "race" preloaded with a
 * libcudacap.so built with -DCC_ML_TEST_LOCAL_ONLY (each process counts only
 * itself: a per-process cap) holds ~8x the cap together and fails; "kill"
 * preloaded with one built with -DCC_ML_TEST_NO_SWEEP (dead processes'
 * slots are never reclaimed) still counts the killed processes' bytes after
 * 1 s and fails. Both were run by ctest and fail as stated. */
#include <cuda.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "mp_util.h"
#include "cudacap/nvml_api.h"

#define MIB (1ull << 20)
#define NPROC 8
#define MAXKIDS 64

struct shared {
    int go, stop, measure, errors, finished;
    int ready[MAXKIDS];
    pid_t pids[MAXKIDS]; /* kill storm: the survivors (0: killed) */
    uint64_t ctx[MAXKIDS];
    uint64_t held_total, max_held, ok, refused;
    uint64_t nvml_max;
    double settle_ms;
    uint64_t ledger, truth;
};
static struct shared *S;

static uint64_t env_size(const char *name)
{
    const char *v = getenv(name);
    if (!v) return 0;
    char *e;
    uint64_t x = strtoull(v, &e, 10);
    if (*e == 'm' || *e == 'M') x <<= 20;
    else if (*e == 'g' || *e == 'G') x <<= 30;
    return x;
}

/* The simulator's truth: memory of the given pids (all when n < 0). */
static uint64_t nvml_used(const pid_t *pids, int n)
{
    nvmlDevice_t d;
    nvmlProcessInfo_t p[128];
    unsigned cnt = 128;
    if (nvmlDeviceGetHandleByIndex_v2(0, &d) != NVML_SUCCESS ||
        nvmlDeviceGetComputeRunningProcesses_v3(d, &cnt, p) != NVML_SUCCESS)
        return UINT64_MAX;
    uint64_t s = 0;
    for (unsigned i = 0; i < cnt; i++) {
        int take = n < 0;
        for (int k = 0; k < n && !take; k++) take = pids[k] && (unsigned)pids[k] == p[i].pid;
        if (take) s += p[i].usedGpuMemory;
    }
    return s;
}

/* A context on device 0. A full container refuses a new context with
 * CUDA_ERROR_OUT_OF_MEMORY (context admission): with until_stop, retried
 * every 5 ms until it fits or the storm ends (then 1: no context). */
static int cuda_up_or_wait(int until_stop)
{
    CUdevice dev;
    CUcontext ctx;
    CUresult r = cuInit(0);
    if (!r) r = cuDeviceGet(&dev, 0);
    while (!r && (r = cuDevicePrimaryCtxRetain(&ctx, dev)) == CUDA_ERROR_OUT_OF_MEMORY &&
           until_stop && !__atomic_load_n(&S->stop, __ATOMIC_ACQUIRE))
        usleep(5000);
    if (r == CUDA_ERROR_OUT_OF_MEMORY && until_stop) return 1;
    if (r || cuCtxSetCurrent(ctx)) {
        fprintf(stderr, "pid %d: CUDA setup failed (%d)\n", (int)getpid(), (int)r);
        _exit(3);
    }
    return 0;
}

static void cuda_up(void) { cuda_up_or_wait(0); }

static uint64_t container_used(void)
{
    size_t f = 0, t = 0;
    if (cuMemGetInfo(&f, &t) != CUDA_SUCCESS) return UINT64_MAX;
    return t - f;
}

static void spin_until(int *flag)
{
    while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE)) usleep(200);
}

/* ---- race --------------------------------------------------------------- */

static void race_child(int id)
{
    cuda_up();
    container_used(); /* binds the device: the context is counted before "go" */
    pid_t me = getpid();
    S->ctx[id] = nvml_used(&me, 1);
    __atomic_store_n(&S->ready[id], 1, __ATOMIC_RELEASE);
    spin_until(&S->go);
    uint64_t seed = 0x9e3779b97f4a7c15ull ^ ((uint64_t)me << 20), sz[256];
    CUdeviceptr ptr[256];
    int n = 0;
    uint64_t end = now_ns() + 1500000000ull;
    while (now_ns() < end) {
        uint64_t x = (1 + rnd(&seed) % 8) * MIB;
        CUresult r = n < 256 ? cuMemAlloc(&ptr[n], x) : CUDA_ERROR_OUT_OF_MEMORY;
        if (r == CUDA_SUCCESS) {
            uint64_t t = __atomic_add_fetch(&S->held_total, x, __ATOMIC_SEQ_CST);
            uint64_t m = __atomic_load_n(&S->max_held, __ATOMIC_RELAXED);
            while (t > m && !__atomic_compare_exchange_n(&S->max_held, &m, t, 0,
                                                         __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
            }
            sz[n++] = x;
            __atomic_add_fetch(&S->ok, 1, __ATOMIC_RELAXED);
        } else {
            if (r != CUDA_ERROR_OUT_OF_MEMORY) __atomic_add_fetch(&S->errors, 1, __ATOMIC_RELAXED);
            __atomic_add_fetch(&S->refused, 1, __ATOMIC_RELAXED);
        }
        if (n && rnd(&seed) % 3 == 0) { /* mostly hold: everyone fights for the last bytes */
            int k = (int)(rnd(&seed) % (uint64_t)n);
            __atomic_sub_fetch(&S->held_total, sz[k], __ATOMIC_SEQ_CST);
            if (cuMemFree(ptr[k]) != CUDA_SUCCESS) __atomic_add_fetch(&S->errors, 1, __ATOMIC_RELAXED);
            n--;
            ptr[k] = ptr[n], sz[k] = sz[n];
        }
    }
    while (n--) {
        __atomic_sub_fetch(&S->held_total, sz[n], __ATOMIC_SEQ_CST);
        cuMemFree(ptr[n]);
    }
    /* Keep the context until everyone is done: an early exit would free its
     * context memory and make room the witness does not know of. */
    __atomic_add_fetch(&S->finished, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&S->finished, __ATOMIC_SEQ_CST) < NPROC) usleep(500);
    _exit(0);
}

static int race(void)
{
    uint64_t cap = env_size("CUDACAP_MEM_LIMIT");
    CHECK(cap > 0, "CUDACAP_MEM_LIMIT must be set");
    pid_t kids[NPROC];
    for (int i = 0; i < NPROC; i++)
        if ((kids[i] = fork()) == 0) race_child(i);
    for (int i = 0; i < NPROC; i++) spin_until(&S->ready[i]);
    uint64_t ctx = 0;
    for (int i = 0; i < NPROC; i++) ctx += S->ctx[i];
    __atomic_store_n(&S->go, 1, __ATOMIC_RELEASE);
    /* Sample the simulator's truth while they race. */
    uint64_t end = now_ns() + 1400000000ull, samples = 0;
    while (now_ns() < end) {
        uint64_t u = nvml_used(kids, NPROC);
        if (u != UINT64_MAX && u > S->nvml_max) S->nvml_max = u;
        samples++;
    }
    int bad = 0;
    for (int i = 0; i < NPROC; i++) {
        int st;
        waitpid(kids[i], &st, 0);
        bad += !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    uint64_t peak = S->max_held + ctx;
    printf("race: %llu granted, %llu refused; peak held %llu MiB + contexts %llu MiB = %llu MiB; "
           "simulator peak %llu MiB (%llu samples); cap %llu MiB\n",
           (unsigned long long)S->ok, (unsigned long long)S->refused,
           (unsigned long long)(S->max_held / MIB), (unsigned long long)(ctx / MIB),
           (unsigned long long)(peak / MIB), (unsigned long long)(S->nvml_max / MIB),
           (unsigned long long)samples, (unsigned long long)(cap / MIB));
    CHECK(bad == 0, "%d racing processes failed", bad);
    CHECK(S->errors == 0, "%d calls failed with something other than OOM", S->errors);
    CHECK(peak <= cap, "the processes held %llu bytes together, cap %llu",
          (unsigned long long)peak, (unsigned long long)cap);
    CHECK(S->nvml_max <= cap, "the simulator saw %llu bytes, cap %llu",
          (unsigned long long)S->nvml_max, (unsigned long long)cap);
    CHECK(peak + 8 * MIB >= cap, "the cap was never approached (peak %llu)",
          (unsigned long long)peak);
    CHECK(S->ok > 100 && S->refused > 100, "not contested: %llu granted, %llu refused",
          (unsigned long long)S->ok, (unsigned long long)S->refused);
    CHECK_EXIT();
}

/* ---- kill storm ---------------------------------------------------------- */

static pid_t g_kids[MAXKIDS];

static void storm_child(int id)
{
    if (cuda_up_or_wait(1)) { /* the storm ended before a context fitted: holds nothing */
        __atomic_store_n(&S->ready[id], 1, __ATOMIC_RELEASE);
        while (__atomic_load_n(&S->go, __ATOMIC_ACQUIRE) != 3) usleep(1000);
        _exit(0);
    }
    container_used();
    CUstream st;
    if (cuStreamCreate(&st, 0) != CUDA_SUCCESS) _exit(3);
    uint64_t seed = 0x2545f4914f6cdd1dull ^ ((uint64_t)getpid() << 16);
    CUdeviceptr ptr[64];
    int async[64], n = 0;
    while (!__atomic_load_n(&S->stop, __ATOMIC_ACQUIRE)) {
        uint64_t x = (1 + rnd(&seed) % 16) * MIB, op = rnd(&seed) % 8;
        if (op < 3 && n < 64) {
            async[n] = op == 2;
            CUresult r = async[n] ? cuMemAllocAsync(&ptr[n], x, st) : cuMemAlloc(&ptr[n], x);
            if (r == CUDA_SUCCESS) n++;
            else if (r != CUDA_ERROR_OUT_OF_MEMORY) __atomic_add_fetch(&S->errors, 1, __ATOMIC_RELAXED);
        } else if (op < 6 && n) {
            int k = (int)(rnd(&seed) % (uint64_t)n);
            CUresult r = async[k] ? cuMemFreeAsync(ptr[k], st) : cuMemFree(ptr[k]);
            if (r != CUDA_SUCCESS) __atomic_add_fetch(&S->errors, 1, __ATOMIC_RELAXED);
            n--;
            ptr[k] = ptr[n], async[k] = async[n];
        } else if (op == 6) {
            cuStreamSynchronize(st); /* the pool gives back its idle reserve */
        }
    }
    /* Quiesce: what this process holds is now fixed; a query settles its
     * pools and context overhead (the ledger is exact at queries). */
    cuStreamSynchronize(st);
    container_used();
    __atomic_store_n(&S->ready[id], 2, __ATOMIC_RELEASE); /* 2: with a context */
    spin_until(&S->go);
    if (__atomic_load_n(&S->measure, __ATOMIC_ACQUIRE) - 1 == id) {
        /* The measuring survivor: the ledger (cuMemGetInfo, which sweeps dead
         * processes) against the simulator's memory of the survivors. */
        uint64_t t0 = now_ns(), used, truth;
        do {
            truth = nvml_used(S->pids, MAXKIDS);
            used = container_used();
        } while (used != truth && now_ns() - t0 < 1000000000ull && usleep(5000) == 0);
        S->settle_ms = (now_ns() - t0) / 1e6;
        S->ledger = used, S->truth = truth;
        __atomic_store_n(&S->go, 2, __ATOMIC_RELEASE);
    }
    while (__atomic_load_n(&S->go, __ATOMIC_ACQUIRE) != 3) usleep(1000);
    _exit(0);
}

static int storm(void)
{
    enum { ALIVE = 6, KILLS = 30 };
    uint64_t seed = now_ns() | 1;
    int next = 0, kills = 0;
    for (; next < ALIVE; next++) {
        if ((g_kids[next] = fork()) == 0) storm_child(next);
        S->pids[next] = g_kids[next];
    }
    while (kills < KILLS) {
        usleep((useconds_t)(rnd(&seed) % 15000));
        int v = (int)(rnd(&seed) % (uint64_t)next);
        if (!g_kids[v]) continue;
        kill(g_kids[v], SIGKILL);
        waitpid(g_kids[v], NULL, 0);
        g_kids[v] = S->pids[v] = 0;
        kills++;
        if (next < MAXKIDS) {
            if ((g_kids[next] = fork()) == 0) storm_child(next);
            S->pids[next] = g_kids[next];
            next++;
        }
    }
    __atomic_store_n(&S->stop, 1, __ATOMIC_RELEASE);
    int measurer = -1, alive = 0, late = 0;
    for (int i = 0; i < next; i++)
        if (g_kids[i]) {
            spin_until(&S->ready[i]);
            alive++;
            if (__atomic_load_n(&S->ready[i], __ATOMIC_ACQUIRE) != 2) late++;
            else if (measurer < 0) measurer = i;
        }
    if (measurer < 0) { /* the dead keep the container full (the no-sweep control) */
        fprintf(stderr, "kill: no survivor holds a context\n");
        __atomic_store_n(&S->go, 3, __ATOMIC_RELEASE);
        for (int i = 0; i < next; i++)
            if (g_kids[i]) waitpid(g_kids[i], NULL, 0);
        return 1;
    }
    __atomic_store_n(&S->measure, measurer + 1, __ATOMIC_RELEASE);
    __atomic_store_n(&S->go, 1, __ATOMIC_RELEASE);
    while (__atomic_load_n(&S->go, __ATOMIC_ACQUIRE) != 2) usleep(1000);
    printf("kill: %d kills, %d survivors (%d refused a context until the end); survivors hold %llu MiB (simulator), ledger %llu MiB "
           "after %.1f ms\n", kills, alive, late, (unsigned long long)(S->truth / MIB),
           (unsigned long long)(S->ledger / MIB), S->settle_ms);
    CHECK(S->ledger == S->truth, "ledger %llu != survivors' %llu after 1 s",
          (unsigned long long)S->ledger, (unsigned long long)S->truth);
    uint64_t cap = env_size("CUDACAP_MEM_LIMIT");
    CHECK(S->truth <= cap, "survivors hold %llu MiB under a %llu MiB cap (contexts are admitted)",
          (unsigned long long)(S->truth / MIB), (unsigned long long)(cap / MIB));
    CHECK(S->errors == 0, "%d calls failed with something other than OOM", S->errors);
    __atomic_store_n(&S->go, 3, __ATOMIC_RELEASE);
    for (int i = 0; i < next; i++)
        if (g_kids[i]) waitpid(g_kids[i], NULL, 0);
    CHECK_EXIT();
}

/* ---- unwritable state folder --------------------------------------------- */

static int unwritable_child(void)
{
    cuda_up();
    uint64_t cap = env_size("CUDACAP_MEM_LIMIT"), base = container_used();
    CUdeviceptr p[512];
    int n = 0;
    CUresult r;
    while (n < 512 && (r = cuMemAlloc(&p[n], 32 * MIB)) == CUDA_SUCCESS) n++;
    uint64_t at_cap = container_used();
    printf("unwritable: context %llu MiB + %d x 32 MiB granted, refused with %d; use %llu MiB "
           "of %llu\n", (unsigned long long)(base / MIB), n, (int)r,
           (unsigned long long)(at_cap / MIB), (unsigned long long)(cap / MIB));
    CHECK(r == CUDA_ERROR_OUT_OF_MEMORY, "refusal was %d, not OOM", (int)r);
    CHECK(at_cap <= cap && at_cap + 32 * MIB > cap, "use %llu at the refusal, cap %llu",
          (unsigned long long)at_cap, (unsigned long long)cap);
    while (n--) CHECK_CU(cuMemFree(p[n]));
    CHECK(container_used() == base, "not everything came back");
    CHECK_EXIT();
}

static int unwritable(const char *self)
{
    char base[900], file[1000], dir[1100], log[1000];
    snprintf(base, sizeof base, "%s", getenv("CUDACAP_STATE_DIR"));
    mkdir(base, 0700);
    snprintf(file, sizeof file, "%s/plainfile", base);
    snprintf(dir, sizeof dir, "%s/state", file);
    snprintf(log, sizeof log, "%s/stderr.txt", base);
    int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0 && write(fd, "x", 1) == 1, "cannot create %s", file);
    if (fd >= 0) close(fd);
    pid_t p = fork();
    if (p == 0) {
        int lf = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (lf >= 0) dup2(lf, 2);
        setenv("CUDACAP_STATE_DIR", dir, 1);
        execl(self, self, "unwritable-child", (char *)NULL);
        _exit(4);
    }
    int st = 0;
    waitpid(p, &st, 0);
    char buf[16384] = {0};
    fd = open(log, O_RDONLY);
    ssize_t got = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0) close(fd);
    if (got > 0) fputs(buf, stderr);
    int warns = 0;
    for (char *q = buf; (q = strstr(q, "memory cap:")); q++) warns++;
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the capped child failed (status 0x%x)", st);
    CHECK(warns == 1, "%d memory-cap warnings, expected exactly one", warns);
    CHECK(strstr(buf, "per-process cap") != NULL, "the warning does not say what happens");
    CHECK_EXIT();
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s race|kill|unwritable\n", argv[0]);
        return 2;
    }
    if (!strcmp(argv[1], "unwritable-child")) return unwritable_child();
    if (!strcmp(argv[1], "unwritable")) return unwritable(argv[0]);
    S = mmap(NULL, sizeof *S, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (S == MAP_FAILED) return 1;
    if (nvmlInit_v2() != NVML_SUCCESS) return 1;
    if (!strcmp(argv[1], "race")) return race();
    if (!strcmp(argv[1], "kill")) return storm();
    return 2;
}
