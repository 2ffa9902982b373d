/* An inference server's decode loop, as a latency-sensitive client runs it:
 * one step = one launch (a kernel, or the replay of a captured graph) or
 * several (an eager step), then a synchronize; the time of every step is
 * kept, and the time spent inside each step's later launch calls. Shared by the test
 * compute.step (tests/compute_step.c) and bench/step_latency.c, so the
 * figure the benchmark prints is the one the test bounds. */
#ifndef CC_TEST_STEP_LOOP_H
#define CC_TEST_STEP_LOOP_H

#include <cuda.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "runq.h"

struct step_stats {
    double p50_ms, p99_ms, max_ms; /* step times over the measured seconds */
    /* The same less the time the stepping thread waited for a CPU during
     * each step (/proc/thread-self/schedstat): what a step takes on a
     * machine with a core to spare. A cap paces by sleeping, never by
     * waiting on a run queue, so this takes out only the machine's load
     * (2 cores beside a second suite: a step woken late). Equal to the
     * above where schedstat cannot be read. */
    double p50_cpu_ms, p99_cpu_ms;
    double steps_per_s;
    unsigned n;
    double later_p90_us; /* inside a step's 2nd and later launch calls: their p90 */
};

static inline uint64_t step_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int step_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* A graph of `kernels` launches of fn (blocks x 32 threads each) captured
 * on s and instantiated; NULL when the driver refuses any step. */
static inline CUgraphExec step_graph(CUfunction fn, unsigned blocks, CUstream s, int kernels)
{
    CUgraph g = NULL;
    CUgraphExec x = NULL;
    if (cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL) != CUDA_SUCCESS) return NULL;
    for (int i = 0; i < kernels; i++)
        cuLaunchKernel(fn, blocks, 1, 1, 32, 1, 1, 0, s, NULL, NULL);
    if (cuStreamEndCapture(s, &g) != CUDA_SUCCESS || !g) return NULL;
    if (cuGraphInstantiateWithFlags(&x, g, 0) != CUDA_SUCCESS) x = NULL;
    cuGraphDestroy(g);
    return x;
}

/* Runs steps for warm_s seconds unmeasured, then secs measured. A step is
 * per_step launches of fn (graph NULL) or one replay of graph, then
 * cuStreamSynchronize(s). 0, or the failing CUresult. */
static inline int step_loop(CUfunction fn, unsigned blocks, int per_step, CUgraphExec graph,
                            CUstream s, double warm_s, double secs, struct step_stats *out)
{
    size_t cap = 1u << 16, n = 0, nl = 0;
    uint64_t *t = malloc(cap * sizeof *t), *l = malloc(cap * sizeof *l), *c = malloc(cap * sizeof *c);
    if (!t || !l || !c) {
        free(t);
        free(l);
        free(c);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    int qfd = runq_open();
    uint64_t q_prev = runq_fd_ns(qfd);
    uint64_t start = step_now_ns(), measure = start + (uint64_t)(warm_s * 1e9),
             end = measure + (uint64_t)(secs * 1e9), prev = start;
    for (;;) {
        CUresult r = CUDA_SUCCESS;
        for (int k = 0; k < (graph ? 1 : per_step) && r == CUDA_SUCCESS; k++) {
            uint64_t a = step_now_ns();
            r = graph ? cuGraphLaunch(graph, s)
                      : cuLaunchKernel(fn, blocks, 1, 1, 32, 1, 1, 0, s, NULL, NULL);
            if (k > 0 && prev >= measure && nl < cap) l[nl++] = step_now_ns() - a;
        }
        if (r == CUDA_SUCCESS) r = cuStreamSynchronize(s);
        if (r != CUDA_SUCCESS) {
            free(t);
            free(l);
            free(c);
            if (qfd >= 0) close(qfd);
            return (int)r;
        }
        uint64_t now = step_now_ns(), q = runq_fd_ns(qfd), waited = q > q_prev ? q - q_prev : 0;
        if (prev >= measure && n < cap) {
            t[n] = now - prev;
            c[n] = t[n] > waited ? t[n] - waited : 0;
            n++;
        }
        prev = now, q_prev = q;
        if (now >= end) break;
    }
    qsort(l, nl, sizeof *l, step_cmp_u64);
    out->later_p90_us = nl ? (double)l[nl * 9 / 10] / 1e3 : 0;
    free(l);
    if (qfd >= 0) close(qfd);
    qsort(c, n, sizeof *c, step_cmp_u64);
    out->p50_cpu_ms = n ? (double)c[n / 2] / 1e6 : 0;
    out->p99_cpu_ms = n ? (double)c[(n * 99) / 100] / 1e6 : 0;
    free(c);
    qsort(t, n, sizeof *t, step_cmp_u64);
    out->n = (unsigned)n;
    out->p50_ms = n ? (double)t[n / 2] / 1e6 : 0;
    out->p99_ms = n ? (double)t[(n * 99) / 100] / 1e6 : 0;
    out->max_ms = n ? (double)t[n - 1] / 1e6 : 0;
    out->steps_per_s = secs > 0 ? (double)n / secs : 0;
    free(t);
    return 0;
}

#endif
