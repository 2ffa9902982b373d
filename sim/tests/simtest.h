/* Helpers for the simulator's own tests. */
#ifndef SIMTEST_H
#define SIMTEST_H
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c); exit(1); } } while (0)
#define CU(call) do { CUresult r_ = (call); if (r_ != CUDA_SUCCESS) { fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #call, (int)r_); exit(1); } } while (0)
#define NEAR(v, want, tol) do { double v_ = (v), w_ = (want); if (v_ < w_ - (tol) || v_ > w_ + (tol)) { \
    fprintf(stderr, "%s:%d: %s = %.3f, want %.3f +- %.3f\n", __FILE__, __LINE__, #v, v_, w_, (double)(tol)); exit(1); } } while (0)

/* Makes a private CUDACAP_SIM_DIR (removed at exit) and sets defaults. */
void st_setup(void);
double st_ms(void);                 /* CLOCK_MONOTONIC in ms */
/* This thread's time runnable without a core so far, ms
 * (/proc/thread-self/schedstat; 0 where it cannot be read). */
double st_runq_ms(void);
void st_sleep_until_ms(double ms);
CUcontext st_ctx(void);             /* cuInit + primary context of device 0, made current */
CUfunction st_func(const char *name);
/* Runs fn(arg) in a child process; returns pid. */
int st_fork(int (*fn)(void *), void *arg);
int st_wait(int pid);               /* exit status */
size_t st_used(void);               /* cuMemGetInfo's total - free, bytes */
#endif
