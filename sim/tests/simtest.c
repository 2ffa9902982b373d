#include "simtest.h"

#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char g_dir[256];
static pid_t g_owner;

static void cleanup(void)
{
    if (getpid() != g_owner)
        return;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cleanup of %s failed\n", g_dir);
}

void st_setup(void)
{
    snprintf(g_dir, sizeof g_dir, "/tmp/simtest-XXXXXX");
    CHECK(mkdtemp(g_dir) != NULL);
    setenv("CUDACAP_SIM_DIR", g_dir, 1);
    g_owner = getpid();
    atexit(cleanup);
    setvbuf(stdout, NULL, _IONBF, 0);
}

double st_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

double st_runq_ms(void)
{
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    unsigned long long run = 0, wait = 0;
    int ok = f && fscanf(f, "%llu %llu", &run, &wait) == 2;
    if (f) fclose(f);
    return ok ? (double)wait / 1e6 : 0;
}

void st_sleep_until_ms(double ms)
{
    struct timespec ts = { (time_t)(ms / 1e3), (long)((ms - (double)(time_t)(ms / 1e3) * 1e3) * 1e6) };
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {
    }
}

CUcontext st_ctx(void)
{
    CUcontext c;
    CU(cuInit(0));
    CU(cuDevicePrimaryCtxRetain(&c, 0));
    CU(cuCtxSetCurrent(c));
    return c;
}

CUfunction st_func(const char *name)
{
    CUmodule m;
    CUfunction f;
    CU(cuModuleLoadData(&m, "any image"));
    CU(cuModuleGetFunction(&f, m, name));
    return f;
}

int st_fork(int (*fn)(void *), void *arg)
{
    fflush(NULL);
    pid_t p = fork();
    CHECK(p >= 0);
    if (p == 0)
        _exit(fn(arg));
    return p;
}

int st_wait(int pid)
{
    int st;
    CHECK(waitpid(pid, &st, 0) == pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

size_t st_used(void)
{
    size_t f, t;
    CU(cuMemGetInfo(&f, &t));
    return t - f;
}
