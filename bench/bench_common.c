#include "bench_common.h"

#include <ftw.h>

#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int bench_read_child(char *const argv[], char *const set[], const char *const unset[], char *buf,
                     size_t size)
{
    int fd[2];
    if (size == 0 || pipe(fd) != 0) return -1;
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        for (int i = 0; set && set[i]; i++) putenv(set[i]);
        for (int i = 0; unset && unset[i]; i++) unsetenv(unset[i]);
        execv(argv[0], argv);
        _exit(127);
    }
    close(fd[1]);
    size_t n = 0;
    ssize_t r;
    while (n < size - 1 && (r = read(fd[0], buf + n, size - 1 - n)) > 0) n += (size_t)r;
    buf[n] = 0;
    close(fd[0]);
    int st;
    if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st)) return -1;
    return WEXITSTATUS(st);
}

static int run_worker(const char *self, const char *arg, const char *preload, double *out)
{
    char pre[4096], buf[128];
    snprintf(pre, sizeof pre, "LD_PRELOAD=%s", preload ? preload : "");
    char *const argv[] = {(char *)self, (char *)arg, NULL}, *const set[] = {pre, NULL};
    const char *const unset[] = {"LD_PRELOAD", NULL};
    if (bench_read_child(argv, preload ? set : NULL, preload ? NULL : unset, buf, sizeof buf) != 0)
        return -1;
    *out = strtod(buf, NULL);
    return *out > 0 ? 0 : -1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int bench_compare(const char *self, const char *worker_arg, int rounds, double *bare,
                  double *preloaded, const char *preload_path)
{
    double b[64], p[64];
    if (rounds > 64) rounds = 64;
    for (int i = 0; i < rounds; i++) {
        /* Alternate the order so drift (clocks, caches) hits both sides. */
        int first_bare = i % 2 == 0;
        if (run_worker(self, worker_arg, first_bare ? NULL : preload_path, first_bare ? &b[i] : &p[i]) ||
            run_worker(self, worker_arg, first_bare ? preload_path : NULL, first_bare ? &p[i] : &b[i]))
            return -1;
        fprintf(stderr, "round %d: bare %.0f/s preloaded %.0f/s\n", i + 1, b[i], p[i]);
    }
    qsort(b, (size_t)rounds, sizeof b[0], cmp_double);
    qsort(p, (size_t)rounds, sizeof p[0], cmp_double);
    *bare = b[rounds / 2];
    *preloaded = p[rounds / 2];
    return 0;
}

const char *bench_library(const char *argv0)
{
    (void)argv0;
    const char *env = getenv("CUDACAP_LIB");
    if (env && *env) return env;
    static char path[PATH_MAX];
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return "libcudacap.so";
    exe[n] = 0;
    snprintf(path, sizeof path, "%s/../lib/libcudacap.so", dirname(exe));
    return path;
}

int bench_cuda_setup(const char *name, CUfunction *fn, CUstream *s)
{
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    BENCH_CU(cuInit(0));
    BENCH_CU(cuDeviceGet(&dev, 0));
    BENCH_CU(cuDevicePrimaryCtxRetain(&ctx, dev));
    BENCH_CU(cuCtxSetCurrent(ctx));
    BENCH_CU(cuModuleLoadData(&mod, bench_ptx));
    BENCH_CU(cuModuleGetFunction(fn, mod, name));
    BENCH_CU(cuStreamCreate(s, CU_STREAM_NON_BLOCKING));
    return 0;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)st, (void)f;
    if (flag == FTW_DP) rmdir(p);
    else unlink(p);
    return 0;
}

void bench_rmtree(const char *path)
{
    nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}
