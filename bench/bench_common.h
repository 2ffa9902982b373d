/* Shared by the benchmarks: run this same program as a worker, bare and
 * preloaded, alternating, and report medians. */
#ifndef CC_BENCH_COMMON_H
#define CC_BENCH_COMMON_H

#include <cuda.h>
#include <stdio.h>
#include <time.h>

static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* An empty kernel named like the simulator's zero-length kernel, so one
 * module image serves both: the simulator accepts any image, a real driver
 * JIT-compiles this PTX. */
static const char bench_ptx[] =
    ".version 7.0\n.target sm_70\n.address_size 64\n"
    ".visible .entry spin_0us()\n{\n\tret;\n}\n";

/* Runs `worker_arg` of this program with and without the preload for
 * `rounds` rounds; each worker prints one number (a rate per second) on
 * stdout. Fills the medians and returns 0, or -1 when a worker failed. */
int bench_compare(const char *self, const char *worker_arg, int rounds, double *bare,
                  double *preloaded, const char *preload_path);

/* Runs argv (argv[0] a path) with the variables of set ("NAME=VALUE") set
 * and those named in unset removed, both NULL-ended (or NULL); its stdout
 * into buf (NUL-ended). Its exit status, or -1 when it could not run or
 * was killed. */
int bench_read_child(char *const argv[], char *const set[], const char *const unset[], char *buf,
                     size_t size);

/* Removes the folder path and what it holds, links not followed (a
 * benchmark's temporary state and simulator folders). */
void bench_rmtree(const char *path);

/* The library next to this benchmark's build (build/lib/libcudacap.so), or
 * $CUDACAP_LIB. */
const char *bench_library(const char *argv0);

/* cuInit, the primary context of device 0 made current, the kernel NAME
 * from bench_ptx, a non-blocking stream. 0, or 1 after printing the error. */
int bench_cuda_setup(const char *name, CUfunction *fn, CUstream *s);

#define BENCH_CU(call)                                                         \
    do {                                                                       \
        CUresult r_ = (call);                                                  \
        if (r_ != CUDA_SUCCESS) {                                              \
            fprintf(stderr, "%s failed: %d\n", #call, (int)r_);                \
            return 1;                                                          \
        }                                                                      \
    } while (0)

#endif
