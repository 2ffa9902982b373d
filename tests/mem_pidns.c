/* mem.pidns: processes of one container in separate pid namespaces (a
 * sidecar, a nested runtime), each its own pid 1, share one state folder.
 * Three workers, each started by
 * `unshare --pid --fork --mount-proc --kill-child`, create a context and
 * allocate 64 MiB pieces until refused while the others hold theirs:
 *  - what they hold together, contexts included (the simulator's NVML
 *    figure for their pids), stays within CUDACAP_MEM_LIMIT;
 *  - compute.region lists each with its own key and its own host pid;
 *  - one is killed (its namespace with it); a fourth, in a new namespace,
 *    gets at least the dead one's bytes (its memory slot was reaped by the
 *    liveness byte) and takes over its compute slot.
 * The simulator reports pid 1 + CUDACAP_SIM_PID_OFFSET for each worker,
 * (k + 1) x 100000, so NVML tells them apart as a host would.
 *
 * Negative control mem.pidns.control (WILL_FAIL): the library built with
 * -DCC_TEST_PID_KEY (the pid is the only key, as before): the second and
 * third pid 1 find their liveness byte held and cap themselves alone, so
 * the three hold 3 x the cap: 3 x 1024 MiB (960 MiB of pieces and a 64 MiB
 * context each). Run 20 times (ctest --repeat until-fail:20): failed every
 * time, as mem.pidns passed every time.
 *
 * Without a usable unshare (no util-linux, or namespaces refused) the test
 * skips (77); without util-linux under CUDACAP_REQUIRE_TOOLS=1 it fails. */
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
#include "cudacap/abi_compute_region.h"
#include "cudacap/nvml_api.h"
#include "mp_util.h"
#include "ptx.h"

#define MIB (1ull << 20)
#define PIECE (64 * MIB)
#define NW 4 /* three at once, then one more after a kill */

struct shared {
    int ready[NW], done[NW], go, stop;
    uint64_t held[NW], nvml[NW];
    int refused_oom[NW];
};
static struct shared *S;

static uint32_t nvml_pid_of(int k) { return (uint32_t)(k + 1) * 100000u + 1u; }

/* The simulator's memory of NVML pid pid (0: none listed). */
static uint64_t nvml_mem(uint32_t pid)
{
    nvmlDevice_t d;
    nvmlProcessInfo_t p[128];
    unsigned n = 128;
    if (nvmlDeviceGetHandleByIndex_v2(0, &d) != NVML_SUCCESS ||
        nvmlDeviceGetComputeRunningProcesses_v3(d, &n, p) != NVML_SUCCESS)
        return 0;
    for (unsigned i = 0; i < n; i++)
        if (p[i].pid == pid) return p[i].usedGpuMemory;
    return 0;
}

static int wait_flag(int *f, int secs)
{
    uint64_t end = now_ns() + (uint64_t)secs * 1000000000ull;
    while (!__atomic_load_n(f, __ATOMIC_ACQUIRE))
        if (now_ns() > end) return -1;
        else usleep(1000);
    return 0;
}

/* The fourth worker starts as soon as the killed one's unshare is reaped;
 * its pid 1 may still be dying, its memory and context still counted, and a
 * full container refuses a new context: it retries for up to 10 s (under
 * load once refused at 1024 of 1024 MiB, 2026-12-03). */
static CUresult retain(CUcontext *ctx, CUdevice dev)
{
    CUresult r = CUDA_ERROR_OUT_OF_MEMORY;
    for (int i = 0; i < 1000 && r == CUDA_ERROR_OUT_OF_MEMORY; i++) {
        if (i) usleep(10000);
        r = cuDevicePrimaryCtxRetain(ctx, dev);
    }
    return r;
}

static int worker(int k)
{
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fn;
    size_t f, t;
    if (cuInit(0) || cuDeviceGet(&dev, 0) || retain(&ctx, dev) || cuCtxSetCurrent(ctx) ||
        cuMemGetInfo(&f, &t) || cuModuleLoadData(&mod, test_ptx) ||
        cuModuleGetFunction(&fn, mod, "spin_10us")) {
        fprintf(stderr, "worker %d (pid %d): CUDA setup failed\n", k, (int)getpid());
        return 3;
    }
    /* A capped launch: this process registers in compute.region. */
    for (int i = 0; i < 4; i++) cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
    cuCtxSynchronize();
    __atomic_store_n(&S->ready[k], 1, __ATOMIC_RELEASE);
    if (wait_flag(&S->go, 60)) return 4;
    CUdeviceptr p;
    CUresult r;
    /* A pause between pieces: the workers take turns at the last bytes. */
    while ((r = cuMemAlloc(&p, PIECE)) == CUDA_SUCCESS) S->held[k] += PIECE, usleep(3000);
    S->refused_oom[k] = r == CUDA_ERROR_OUT_OF_MEMORY;
    S->nvml[k] = nvml_mem(nvml_pid_of(k));
    __atomic_store_n(&S->done[k], 1, __ATOMIC_RELEASE);
    wait_flag(&S->stop, 120);
    return 0;
}

static pid_t spawn(const char *self, int k)
{
    pid_t c = fork();
    if (c != 0) return c;
    char off[32], idx[16];
    snprintf(off, sizeof off, "%u", (k + 1) * 100000u);
    snprintf(idx, sizeof idx, "%d", k);
    setenv("CUDACAP_SIM_PID_OFFSET", off, 1);
    execlp("unshare", "unshare", "--pid", "--fork", "--mount-proc", "--kill-child", self, "worker", idx,
           (char *)NULL);
    _exit(127);
}

/* Live slots of the compute table naming NVML pid hp (its key in *key). */
static int compute_slots(const char *dir, uint32_t hp, uint32_t *key)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, CC_COMPUTE_FILE);
    int fd = open(path, O_RDONLY);
    if (fd < 0) return -1;
    const cc_compute_region_t *r = mmap(NULL, CC_COMPUTE_FILE_SIZE, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (r == MAP_FAILED) return -1;
    int n = 0;
    for (unsigned i = 0; i < CC_COMPUTE_PROCS; i++) {
        uint32_t pid = __atomic_load_n(&r->proc[i].pid, __ATOMIC_ACQUIRE);
        if (pid && __atomic_load_n(&r->proc[i].host_pid, __ATOMIC_ACQUIRE) == hp) n++, *key = pid;
    }
    munmap((void *)r, CC_COMPUTE_FILE_SIZE);
    return n;
}

/* Until each of the workers' host pids is in the table once (10 s). */
static int wait_registered(const char *dir, const int *ks, int n, uint32_t *keys)
{
    uint64_t end = now_ns() + 10000000000ull;
    for (;;) {
        int ok = 1;
        for (int i = 0; i < n; i++) ok &= compute_slots(dir, nvml_pid_of(ks[i]), &keys[i]) == 1;
        if (ok || now_ns() > end) return ok;
        usleep(10000);
    }
}

static int parent(const char *self)
{
    /* A missing tool fails where CI installed the tools; a kernel or
     * container that refuses new namespaces is no missing tool: skipped. */
    if (system("command -v unshare >/dev/null 2>&1") != 0 && getenv("CUDACAP_REQUIRE_TOOLS") &&
        !strcmp(getenv("CUDACAP_REQUIRE_TOOLS"), "1")) {
        fprintf(stderr, "FAIL: no unshare (Debian package util-linux) and CUDACAP_REQUIRE_TOOLS=1\n");
        return 1;
    }
    if (system("unshare --pid --fork --mount-proc --kill-child true >/dev/null 2>&1") != 0) {
        printf("SKIP: unshare --pid --fork --mount-proc does not work here\n");
        return 77;
    }
    const char *dir = getenv("CUDACAP_STATE_DIR");
    const char *sim = getenv("CUDACAP_SIM_DIR");
    if (!dir || !sim) return 2;
    char cmd[2600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", dir, sim);
    if (system(cmd) != 0) return 2;
    uint64_t cap = 1024 * MIB;
    if (nvmlInit_v2() != NVML_SUCCESS) return 2;

    pid_t w[NW] = {0};
    for (int k = 0; k < 3; k++) w[k] = spawn(self, k);
    for (int k = 0; k < 3; k++) CHECK(wait_flag(&S->ready[k], 60) == 0, "worker %d not ready", k);
    __atomic_store_n(&S->go, 1, __ATOMIC_RELEASE);
    for (int k = 0; k < 3; k++) CHECK(wait_flag(&S->done[k], 60) == 0, "worker %d not done", k);
    uint64_t sum = 0;
    for (int k = 0; k < 3; k++) {
        printf("worker %d: holds %llu MiB, NVML %llu MiB, refused with OOM: %d\n", k,
               (unsigned long long)(S->held[k] / MIB), (unsigned long long)(S->nvml[k] / MIB),
               S->refused_oom[k]);
        sum += S->nvml[k];
        CHECK(S->refused_oom[k], "worker %d stopped on another error", k);
        CHECK(S->nvml[k] >= S->held[k], "worker %d: NVML does not list it", k);
    }
    printf("three pid namespaces: %llu MiB together, cap %llu MiB\n", (unsigned long long)(sum / MIB),
           (unsigned long long)(cap / MIB));
    CHECK(sum <= cap, "the container holds %llu MiB over a %llu MiB cap",
          (unsigned long long)(sum / MIB), (unsigned long long)(cap / MIB));

    int ks[3] = {0, 1, 2};
    uint32_t keys[3] = {0};
    CHECK(wait_registered(dir, ks, 3, keys), "compute.region does not list each worker's host pid once");
    printf("compute keys: %u %u %u\n", keys[0], keys[1], keys[2]);
    CHECK(keys[0] != keys[1] && keys[1] != keys[2] && keys[0] != keys[2], "two workers share a key");

    /* Kill worker 1 and its namespace; a fourth takes its place. */
    kill(w[1], SIGKILL);
    waitpid(w[1], NULL, 0);
    w[3] = spawn(self, 3);
    CHECK(wait_flag(&S->ready[3], 60) == 0, "worker 3 not ready");
    __atomic_store_n(&S->go, 1, __ATOMIC_RELEASE);
    CHECK(wait_flag(&S->done[3], 60) == 0, "worker 3 not done");
    printf("after the kill: worker 3 holds %llu MiB (worker 1 held %llu MiB)\n",
           (unsigned long long)(S->held[3] / MIB), (unsigned long long)(S->held[1] / MIB));
    CHECK(S->held[3] >= S->held[1], "the killed worker's bytes did not come back");
    uint64_t live = S->nvml[0] + S->nvml[2] + S->nvml[3];
    CHECK(live <= cap, "after the kill: %llu MiB over a %llu MiB cap", (unsigned long long)(live / MIB),
          (unsigned long long)(cap / MIB));
    int ks2[3] = {0, 2, 3};
    CHECK(wait_registered(dir, ks2, 3, keys), "compute.region does not list the live workers once");
    uint32_t dead;
    CHECK(compute_slots(dir, nvml_pid_of(1), &dead) == 0, "the killed worker's compute slot stays");

    __atomic_store_n(&S->stop, 1, __ATOMIC_RELEASE);
    for (int k = 0; k < NW; k++) {
        if (k == 1 || !w[k]) continue;
        int st;
        waitpid(w[k], &st, 0);
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "worker %d failed", k);
    }
    return check_failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    /* The workers map the same file: the parent's MAP_SHARED memory does not
     * survive exec. */
    char path[1100];
    const char *dir = getenv("CUDACAP_STATE_DIR");
    if (!dir) return 2;
    snprintf(path, sizeof path, "%s.sync", dir);
    int is_worker = argc >= 3 && !strcmp(argv[1], "worker");
    int fd = open(path, O_RDWR | O_CREAT | (is_worker ? 0 : O_TRUNC), 0600);
    if (fd < 0 || ftruncate(fd, sizeof *S) != 0) return 2;
    S = mmap(NULL, sizeof *S, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (S == MAP_FAILED) return 2;
    if (is_worker) return worker(atoi(argv[2]));
    return parent(argv[0]);
}
