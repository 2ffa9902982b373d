/* cudacap_demo_worker: a small driver-API program for the demo and the CLI
 * tests. On the simulator its kernels take the time their name says.
 *   spin  --us N --blocks G --seconds S   launch spin_<N>us kernels of G
 *                                         blocks back to back for S seconds
 *   alloc --chunk MIB --seconds S         allocate MIB-sized chunks until out
 *                                         of memory, then hold them S seconds
 *   hold  --mib MIB --seconds S [--ready FILE]
 *                                         allocate MIB MiB, touch FILE, hold
 *   ctx   --seconds S [--ready FILE]       a context only: no allocation, no
 *                                         memory query; touch FILE, hold
 * Prints one line per phase; exit 0 on success, 1 on an unexpected error,
 * 2 on bad arguments. */
#include <cuda.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int bad(const char *m)
{
    fprintf(stderr, "cudacap_demo_worker: %s\n", m);
    return 2;
}

#define TRY(call)                                                                           \
    do {                                                                                    \
        CUresult r_ = (call);                                                               \
        if (r_ != CUDA_SUCCESS) {                                                           \
            fprintf(stderr, "cudacap_demo_worker[%d]: %s failed: %d\n", (int)getpid(), #call, \
                    (int)r_);                                                               \
            return 1;                                                                       \
        }                                                                                   \
    } while (0)

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0) {}
}

static void touch(const char *path)
{
    if (!path) return;
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) close(fd);
}

int main(int argc, char **argv)
{
    if (argc < 2) return bad("usage: cudacap_demo_worker spin|alloc|hold|ctx [options]");
    const char *mode = argv[1], *ready = NULL;
    uint64_t us = 1000, blocks = 132, chunk = 256ull << 20, bytes = 0;
    double seconds = 5;
    for (int i = 2; i + 1 < argc; i += 2) {
        const char *o = argv[i], *v = argv[i + 1];
        char *end = (char *)v + strlen(v); /* --ready: no number */
        if (!strcmp(o, "--us")) us = strtoull(v, &end, 10);
        else if (!strcmp(o, "--blocks")) blocks = strtoull(v, &end, 10);
        else if (!strcmp(o, "--seconds")) seconds = strtod(v, &end);
        else if (!strcmp(o, "--chunk")) chunk = strtoull(v, &end, 10) << 20;
        else if (!strcmp(o, "--mib")) bytes = strtoull(v, &end, 10) << 20;
        else if (!strcmp(o, "--ready")) ready = v;
        else return bad(o);
        if (end == v || *end) return bad(o);
    }
    if (!chunk) return bad("--chunk 0");
    if (argc % 2) return bad("options come in pairs");
    CUdevice dev;
    CUcontext ctx;
    TRY(cuInit(0));
    TRY(cuDeviceGet(&dev, 0));
    TRY(cuDevicePrimaryCtxRetain(&ctx, dev));
    TRY(cuCtxSetCurrent(ctx));
    if (!strcmp(mode, "spin")) {
        char ptx[256], name[32];
        snprintf(name, sizeof name, "spin_%lluus", (unsigned long long)us);
        snprintf(ptx, sizeof ptx,
                 ".version 7.0\n.target sm_70\n.address_size 64\n.visible .entry %s()\n{\n\tret;\n}\n",
                 name);
        CUmodule mod;
        CUfunction fn;
        TRY(cuModuleLoadData(&mod, ptx));
        TRY(cuModuleGetFunction(&fn, mod, name));
        double t0 = now_s();
        unsigned long long n = 0;
        while (now_s() - t0 < seconds) {
            TRY(cuLaunchKernel(fn, (unsigned)blocks, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
            if (++n % 4 == 0) TRY(cuCtxSynchronize()); /* keep the queue short */
        }
        TRY(cuCtxSynchronize());
        printf("pid %d: %llu launches of %s x %llu blocks in %.1f s\n", (int)getpid(), n, name,
               (unsigned long long)blocks, now_s() - t0);
    } else if (!strcmp(mode, "alloc")) {
        uint64_t got = 0;
        CUdeviceptr p;
        CUresult r;
        while ((r = cuMemAlloc(&p, chunk)) == CUDA_SUCCESS) got += chunk;
        size_t fr = 0, tot = 0;
        cuMemGetInfo(&fr, &tot);
        printf("pid %d: allocated %.2f GiB in %.0f MiB chunks, then %s; cuMemGetInfo total %.2f GiB\n",
               (int)getpid(), (double)got / (1 << 30), (double)chunk / (1 << 20),
               r == CUDA_ERROR_OUT_OF_MEMORY ? "CUDA_ERROR_OUT_OF_MEMORY" : "another error",
               (double)tot / (1 << 30));
        fflush(stdout);
        if (r != CUDA_ERROR_OUT_OF_MEMORY) return 1;
        sleep_s(seconds);
    } else if (!strcmp(mode, "hold")) {
        CUdeviceptr p;
        if (bytes) TRY(cuMemAlloc(&p, bytes));
        size_t fr = 0, tot = 0;
        TRY(cuMemGetInfo(&fr, &tot));
        printf("pid %d: holding %llu bytes; container uses %llu of %llu\n", (int)getpid(),
               (unsigned long long)bytes, (unsigned long long)(tot - fr), (unsigned long long)tot);
        fflush(stdout);
        touch(ready);
        sleep_s(seconds);
    } else if (!strcmp(mode, "ctx")) {
        printf("pid %d: holding a context\n", (int)getpid());
        fflush(stdout);
        touch(ready);
        sleep_s(seconds);
    } else {
        return bad("mode must be spin, alloc, hold or ctx");
    }
    return 0;
}
