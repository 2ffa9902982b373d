/* Oversubscription on the simulator (docs/memory.md, "Oversubscription"),
 * preloaded, one container: a 1 GiB device cap and 1 GiB beyond it
 * (CUDACAP_MEM_LIMIT=1g CUDACAP_MEM_OVERSUBSCRIBE=1g, or the seed's
 * CUDA_MEM_LIMIT_0=2g CUDA_MEM_RATIO_0=2), 16 MiB contexts, an 8 GiB card.
 * The witnesses are the simulator's: its device high-water mark
 * (cuSimTestPeakMem, every process counted) and the managed bytes each
 * process holds with the host as preferred location (cuSimTestManaged).
 *
 *   fill      64 MiB pieces until refused: 1.5-2 GiB granted, the device's
 *             usage never past 1 GiB, the part past it host-resident and
 *             usable, cuMemGetInfo total 2 GiB; all back after the frees
 *   share     four processes fill together: exactly 31 pieces among them
 *             (960 MiB of device beside four contexts, 1024 MiB of host)
 *   kill      a process holding 1 GiB of host part is killed (-9): the
 *             next one gets it all back at once
 *   families  past the device cap, stream-ordered, pool, VMM and array
 *             allocations are refused while cuMemAlloc is served from host
 *   safety    (no cap from the environment: each case sets its own) a
 *             cgroup memory.max below the oversubscription, a cgroup or a
 *             node with too little left for the next piece, and a device
 *             without concurrent managed access: refused, with the reason
 * Exit 0 pass, 1 fail. */
#include <cuda.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

#define MIB (1ull << 20)
#define PIECE (64 * MIB)
#define MAXP 256

static unsigned long long peak(void)
{
    static int (*f)(int, unsigned long long *);
    if (!f) f = (int (*)(int, unsigned long long *))dlsym(RTLD_DEFAULT, "cuSimTestPeakMem");
    unsigned long long b = 0;
    if (!f || f(0, &b) != 0) return ~0ull;
    return b;
}

static unsigned long long host_managed(void)
{
    static int (*f)(unsigned long long *, unsigned long long *);
    if (!f) f = (int (*)(unsigned long long *, unsigned long long *))dlsym(RTLD_DEFAULT, "cuSimTestManaged");
    unsigned long long all = 0, host = 0;
    if (!f || f(&all, &host) != 0) return ~0ull;
    return host;
}

static void info(uint64_t *used, uint64_t *total)
{
    size_t f = 0, t = 0;
    CHECK_CU(cuMemGetInfo(&f, &t));
    *used = t - f, *total = t;
}

static void ctx(void)
{
    CUcontext c;
    CHECK_CU(cuInit(0));
    CHECK_CU(cuDevicePrimaryCtxRetain(&c, 0));
    CHECK_CU(cuCtxSetCurrent(c));
}

/* 64 MiB pieces until refused; each touched (a memset and a read back). */
static int fill(CUdeviceptr *p, CUresult *last)
{
    int n = 0;
    while (n < MAXP && (*last = cuMemAlloc(&p[n], PIECE)) == CUDA_SUCCESS) {
        unsigned v = 0;
        CHECK_CU(cuMemsetD32(p[n] + PIECE - 64, 0xabcd0000u + (unsigned)n, 4));
        CHECK_CU(cuMemcpyDtoH(&v, p[n] + PIECE - 64, sizeof v));
        CHECK(v == 0xabcd0000u + (unsigned)n, "piece %d reads %x", n, v);
        n++;
    }
    return n;
}

static void free_all(CUdeviceptr *p, int n)
{
    for (int i = 0; i < n; i++) CHECK_CU(cuMemFree(p[i]));
}

static int mode_fill(void)
{
    CUdeviceptr p[MAXP];
    CUresult last;
    uint64_t used0, total;
    ctx();
    info(&used0, &total);
    CHECK(total == 2048 * MIB, "cuMemGetInfo total %llu MiB, want cap + oversubscription 2048",
          (unsigned long long)(total / MIB));
    int n = fill(p, &last);
    uint64_t used, t2;
    info(&used, &t2);
    unsigned long long pk = peak(), host = host_managed();
    printf("fill: %d x 64 MiB granted (%llu MiB), refused with %d; device peak %llu MiB, host part "
           "%llu MiB; cuMemGetInfo %llu of %llu MiB\n", n, (unsigned long long)n * 64, (int)last,
           pk / MIB, host / MIB, (unsigned long long)(used / MIB), (unsigned long long)(t2 / MIB));
    CHECK(last == CUDA_ERROR_OUT_OF_MEMORY, "refusal %d", (int)last);
    CHECK((uint64_t)n * PIECE >= 1536 * MIB && (uint64_t)n * PIECE <= 2048 * MIB, "granted %d pieces", n);
    CHECK(pk <= 1024 * MIB, "device usage reached %llu MiB past the 1 GiB cap", pk / MIB);
    CHECK(host == 1024 * MIB, "host-resident managed memory %llu MiB, want the whole 1024", host / MIB);
    CHECK(used == used0 + (uint64_t)n * PIECE, "cuMemGetInfo used %llu", (unsigned long long)used);
    free_all(p, n);
    info(&used, &t2);
    CHECK(used == used0 && host_managed() == 0, "after the frees: %llu MiB used, %llu host",
          (unsigned long long)(used / MIB), host_managed() / MIB);
    /* and all of it again */
    int again = fill(p, &last);
    CHECK(again == n, "second fill %d, first %d", again, n);
    free_all(p, again);
    CHECK_EXIT();
}

/* ---- several processes ---------------------------------------------------- */

static int pipes[2];

static void say_int(int v) { CHECK(write(pipes[1], &v, sizeof v) == sizeof v, "pipe"); }

static int kids(int n, void (*body)(int, int), int arg)
{
    int pids[8];
    for (int i = 0; i < n; i++) {
        pids[i] = fork();
        if (pids[i] == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive a failed test */
            body(i, arg);
            _exit(check_failures ? 1 : 0);
        }
    }
    int bad = 0;
    for (int i = 0; i < n; i++) {
        int st;
        waitpid(pids[i], &st, 0);
        bad += !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    }
    return bad;
}

static int go[2], done[2]; /* the parent releases the fillers together, then lets them free */

static void share_body(int i, int nproc)
{
    (void)i;
    CUdeviceptr p[MAXP];
    CUresult last;
    char c;
    ctx();
    CHECK(write(pipes[1], "r", 1) == 1, "ready");
    CHECK(read(go[0], &c, 1) == 1, "go");
    int n = fill(p, &last);
    CHECK(last == CUDA_ERROR_OUT_OF_MEMORY, "refusal %d", (int)last);
    int rep[2] = {n, (int)(host_managed() / MIB)}; /* one write: atomic on a pipe */
    CHECK(write(pipes[1], rep, sizeof rep) == sizeof rep, "report");
    /* hold until every process has filled: nobody frees into another's fill */
    CHECK(read(done[0], &c, 1) == 1, "done");
    free_all(p, n);
    (void)nproc;
}

static int mode_share(void)
{
    const int np = 4;
    CHECK(pipe(pipes) == 0 && pipe(go) == 0 && pipe(done) == 0, "pipes");
    int pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        _exit(kids(np, share_body, np));
    }
    close(pipes[1]); /* a filler that dies ends the reads instead of hanging them */
    char c;
    for (int i = 0; i < np; i++) CHECK(read(pipes[0], &c, 1) == 1, "ready %d", i);
    CHECK(write(go[1], "gggg", np) == np, "go");
    int pieces = 0, host = 0;
    for (int i = 0; i < np; i++) {
        int rep[2] = {0, 0};
        CHECK(read(pipes[0], rep, sizeof rep) == sizeof rep, "report");
        pieces += rep[0], host += rep[1];
    }
    CHECK(write(done[1], "dddd", np) == np, "done");
    int st;
    waitpid(pid, &st, 0);
    unsigned long long pk = peak();
    printf("share: 4 processes got %d x 64 MiB together, %d MiB of it host-resident; device peak %llu MiB\n",
           pieces, host, pk / MIB);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "a filler failed");
    CHECK(pieces == 31, "%d pieces, want exactly 31 (960 MiB of device beside 4 contexts + 1024 of host)",
          pieces);
    CHECK(host == 1024, "host part %d MiB, want exactly 1024", host);
    CHECK(pk <= 1024 * MIB, "device usage reached %llu MiB", pk / MIB);
    CHECK_EXIT();
}

static int mode_kill(void)
{
    CHECK(pipe(pipes) == 0, "pipe");
    int pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        CUdeviceptr p[MAXP];
        CUresult last;
        ctx();
        say_int(fill(p, &last));
        pause();
        _exit(0);
    }
    int n = 0;
    CHECK(read(pipes[0], &n, sizeof n) == sizeof n, "child report");
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ctx();
    CUdeviceptr p[MAXP];
    CUresult last;
    int m = fill(p, &last);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    printf("kill: the killed process held %d x 64 MiB; the next got %d (%llu MiB host) in %.1f ms\n", n, m,
           host_managed() / MIB, ms);
    CHECK(n == 31 && m == 31, "killed %d, next %d: the host part was not reclaimed", n, m);
    CHECK(host_managed() == 1024 * MIB, "host part %llu", host_managed() / MIB);
    free_all(p, m);
    CHECK_EXIT();
}

static int mode_families(void)
{
    CUdeviceptr p[MAXP], d;
    int n = 0;
    ctx();
    /* the device part first: cuMemAlloc until the first piece goes to the host */
    while (n < MAXP && cuMemAlloc(&p[n], PIECE) == CUDA_SUCCESS && host_managed() == 0) n++;
    CHECK(host_managed() == PIECE, "the first piece past the cap is not host-resident (%llu)", host_managed());
    n++;
    CUstream st;
    CHECK_CU(cuStreamCreate(&st, 0));
    CHECK(cuMemAllocAsync(&d, PIECE, st) == CUDA_ERROR_OUT_OF_MEMORY, "async served past the cap");
    CUmemoryPool pool;
    CHECK_CU(cuDeviceGetDefaultMemPool(&pool, 0));
    CHECK(cuMemAllocFromPoolAsync(&d, PIECE, pool, st) == CUDA_ERROR_OUT_OF_MEMORY, "pool served");
    CUmemGenericAllocationHandle h;
    CUmemAllocationProp prop = {.type = CU_MEM_ALLOCATION_TYPE_PINNED,
                                .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0}};
    CHECK(cuMemCreate(&h, PIECE, &prop, 0) == CUDA_ERROR_OUT_OF_MEMORY, "VMM served past the cap");
    CUarray arr;
    CUDA_ARRAY_DESCRIPTOR ad = {.Width = 4096, .Height = 4096, .Format = CU_AD_FORMAT_FLOAT, .NumChannels = 1};
    CHECK(cuArrayCreate(&arr, &ad) == CUDA_ERROR_OUT_OF_MEMORY, "array served past the cap");
    size_t pitch = 0;
    CHECK_CU(cuMemAllocPitch(&p[n], &pitch, 1000, PIECE / 1024, 4));
    CHECK(pitch == 1024 && host_managed() == 2 * PIECE, "pitch past the cap: %zu, host %llu", pitch,
          host_managed());
    n++;
    CHECK_CU(cuMemAllocManaged(&p[n], PIECE, CU_MEM_ATTACH_GLOBAL));
    CHECK(host_managed() == 3 * PIECE, "managed past the cap not advised to the host");
    n++;
    CHECK(peak() <= 1024 * MIB, "device peak %llu", peak() / MIB);
    printf("families: past the cap async, pool, VMM and arrays refused; alloc, pitch, managed served "
           "from host (%llu MiB)\n", host_managed() / MIB);
    free_all(p, n);
    CHECK(host_managed() == 0, "host part left %llu", host_managed());
    CHECK_EXIT();
}

/* ---- safety: each case in a fresh process with its own environment ------- */

static char self[4096], root[4096];

static void put(const char *rel, const char *text)
{
    char path[8192];
    snprintf(path, sizeof path, "%s%s", root, rel);
    for (char *s = path + strlen(root) + 1; (s = strchr(s, '/')); s++) {
        *s = 0;
        mkdir(path, 0755);
        *s = '/';
    }
    FILE *f = fopen(path, "w");
    CHECK(f && fputs(text, f) >= 0 && fclose(f) == 0, "write %s", path);
}

/* Runs "self probe" with env (NAME=VALUE, ...) added; its stdout + stderr
 * into out. The probe prints "probe: N pieces, T MiB total". */
static void probe(char *out, size_t len, const char *const *env)
{
    int fd[2];
    CHECK(pipe(fd) == 0, "pipe");
    int pid = fork();
    if (pid == 0) {
        for (; *env; env += 2) setenv(env[0], env[1], 1);
        dup2(fd[1], 1), dup2(fd[1], 2);
        close(fd[0]);
        execl(self, self, "probe", (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    size_t at = 0;
    ssize_t k;
    while (at + 1 < len && (k = read(fd[0], out + at, len - 1 - at)) > 0) at += (size_t)k;
    out[at] = 0;
    close(fd[0]);
    waitpid(pid, NULL, 0);
}

static int mode_probe(void)
{
    CUdeviceptr p[MAXP];
    CUresult last;
    uint64_t used, total;
    ctx();
    info(&used, &total);
    int n = fill(p, &last);
    printf("probe: %d pieces, %llu MiB total\n", n, (unsigned long long)(total / MIB));
    free_all(p, n);
    return 0;
}

static void expect(const char *what, const char *out, const char *has, int pieces)
{
    char want[64];
    snprintf(want, sizeof want, "probe: %d pieces", pieces);
    printf("%s: %s", what, strstr(out, "probe:") ? strstr(out, "probe:") : "(no probe line)\n");
    CHECK(strstr(out, want), "%s: want \"%s\" in:\n%s", what, want, out);
    CHECK(!has || strstr(out, has), "%s: want \"%s\" in:\n%s", what, has, out);
}

/* The container's limits file (cap/limits.h) with a 1 GiB cap and, when
 * over_line, that oversubscription line. */
static void limits_file(const char *over_line)
{
    char text[512], path[4096];
    int n = snprintf(text, sizeof text, "cudacap-limits 1\ngeneration 1\nmem 1073741824\n%s",
                     over_line ? over_line : "");
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < n; i++) h = (h ^ (unsigned char)text[i]) * 1099511628211ull;
    snprintf(text + n, sizeof text - (size_t)n, "checksum fnv1a64:%016llx\n", (unsigned long long)h);
    snprintf(path, sizeof path, "%s/limits.d", getenv("CUDACAP_STATE_DIR")); /* cap/limits.h */
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/limits.d/limits", getenv("CUDACAP_STATE_DIR"));
    FILE *f = fopen(path, "w");
    CHECK(f && fputs(text, f) >= 0 && fclose(f) == 0, "limits file %s", path);
    chmod(path, 0644);
}

static int mode_safety(const char *dir)
{
    char out[8192];
    snprintf(root, sizeof root, "%s/hostroot", dir);
    mkdir(dir, 0755);
    mkdir(root, 0755);
    put("/proc/meminfo", "MemTotal:       67108864 kB\nMemAvailable:   33554432 kB\n");
    put("/proc/self/cgroup", "0::/\n");
    put("/sys/fs/cgroup/memory.max", "536870912\n"); /* 512 MiB: cannot back 1 GiB */
    put("/sys/fs/cgroup/memory.current", "0\n");
    const char *base[] = {"CUDACAP_MEM_LIMIT", "1g", "CUDACAP_MEM_OVERSUBSCRIBE", "1g",
                          "CUDACAP_TEST_HOST_ROOT", root, NULL};
    probe(out, sizeof out, base);
    expect("cgroup limit below it", out, "container's memory limit (cgroup memory.max) is 512 MiB and cannot back it", 15);
    put("/sys/fs/cgroup/memory.max", "max\n");
    probe(out, sizeof out, base);
    expect("no cgroup limit", out, NULL, 31);
    put("/sys/fs/cgroup/memory.max", "4294967296\n");
    put("/sys/fs/cgroup/memory.current", "4261412864\n"); /* 32 MiB left */
    probe(out, sizeof out, base);
    expect("cgroup nearly full", out, "refusing 64 MiB: the container's memory limit (cgroup memory.max) has 32 MiB left", 15);
    put("/sys/fs/cgroup/memory.current", "0\n");
    put("/proc/meminfo", "MemAvailable:      32768 kB\n"); /* 32 MiB: not one piece */
    probe(out, sizeof out, base);
    expect("node nearly full", out, "the node (MemAvailable) has 32 MiB left", 15);
    put("/proc/meminfo", "MemAvailable:   33554432 kB\n");
    const char *noconc[] = {"CUDACAP_MEM_LIMIT", "1g", "CUDACAP_MEM_OVERSUBSCRIBE", "1g",
                            "CUDACAP_TEST_HOST_ROOT", root, "CUDACAP_SIM_NO_CONCURRENT_MANAGED", "1", NULL};
    probe(out, sizeof out, noconc);
    expect("no concurrent managed access", out, "no concurrent managed access", 15);
    CHECK(strstr(out, "1024 MiB total"), "total without oversubscription: %s", out);
    /* A limits file in force: its oversubscription, never the environment's. */
    const char *envonly[] = {"CUDACAP_MEM_LIMIT", "1g", "CUDACAP_MEM_OVERSUBSCRIBE", "1g",
                             "CUDACAP_TEST_HOST_ROOT", root, NULL};
    limits_file(NULL);
    probe(out, sizeof out, envonly);
    expect("limits file without mem_over", out, "oversubscription from the environment is ignored", 15);
    limits_file("mem_over 536870912\n");
    const char *fileonly[] = {"CUDACAP_TEST_HOST_ROOT", root, NULL};
    probe(out, sizeof out, fileonly);
    expect("limits file with mem_over 512 MiB", out, "1536 MiB total", 23);
    char lp[4096];
    snprintf(lp, sizeof lp, "%s/limits.d/limits", getenv("CUDACAP_STATE_DIR"));
    unlink(lp);
    CHECK_EXIT();
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    alarm(50); /* a hang fails the test, with its output, before ctest's timeout */
    ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
    if (k > 0) self[k] = 0;
    if (!dlsym(RTLD_DEFAULT, "cuSimTestManaged")) {
        fprintf(stderr, "needs the simulator (cuSimTestManaged)\n");
        return 1;
    }
    const char *sd = getenv("CUDACAP_STATE_DIR");
    if (sd && strcmp(mode, "probe") != 0) { /* a fresh container: nothing left by an earlier run */
        char path[4096];
        snprintf(path, sizeof path, "%s/memory.region", sd);
        unlink(path);
    }
    if (!strcmp(mode, "fill")) return mode_fill();
    if (!strcmp(mode, "share")) return mode_share();
    if (!strcmp(mode, "kill")) return mode_kill();
    if (!strcmp(mode, "families")) return mode_families();
    if (!strcmp(mode, "probe")) return mode_probe();
    if (!strcmp(mode, "safety") && argc > 2) return mode_safety(argv[2]);
    fprintf(stderr, "usage: %s fill|share|kill|families|safety DIR\n", argv[0]);
    return 2;
}
