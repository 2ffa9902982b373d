/* What each driver call of a timed launch costs on a real GPU: the p50 and
 * p99 of 20,000 calls each, interleaved with empty-kernel launches on one
 * stream without a sync (the shape of "16 shapes x 62 launches, no sync").
 * Build: gcc -O2 -I/usr/local/cuda/include callcost.c -l:libcuda.so.1 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static const char ptx[] = ".version 7.0\n.target sm_70\n.address_size 64\n.visible .entry e()\n{\nret;\n}\n";
static double now_us(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec * 1e-3; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
#define N 20000
static double t[N];
static void report(const char *what) {
  qsort(t, N, sizeof t[0], cmp);
  printf("%-44s p50 %6.2f  p90 %6.2f  p99 %6.2f us\n", what, t[N / 2], t[N * 9 / 10], t[N * 99 / 100]);
}
int main(void) {
  CUdevice d; CUcontext c; CUmodule m; CUfunction f; CUstream s; CUevent ev[64];
  cuInit(0); cuDeviceGet(&d, 0); cuDevicePrimaryCtxRetain(&c, d); cuCtxSetCurrent(c);
  cuModuleLoadData(&m, ptx); cuModuleGetFunction(&f, m, "e"); cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
  for (int i = 0; i < 64; i++) cuEventCreate(&ev[i], 0);
  CUstreamCaptureStatus cs; CUcontext cur; CUstreamCaptureMode mode;
#define LOOP(what, call) \
  for (int i = 0; i < N; i++) { cuLaunchKernel(f, 1 + i % 16, 1, 1, 32, 1, 1, 0, s, 0, 0); \
    if (i % 256 == 255) cuStreamSynchronize(s); double a = now_us(); call; t[i] = now_us() - a; } \
  cuStreamSynchronize(s); report(what);
  LOOP("cuLaunchKernel (empty, 16 grid sizes)", cuLaunchKernel(f, 1 + i % 16, 1, 1, 32, 1, 1, 0, s, 0, 0))
  LOOP("cuStreamIsCapturing", cuStreamIsCapturing(s, &cs))
  LOOP("cuCtxGetCurrent", cuCtxGetCurrent(&cur))
  LOOP("cuEventRecord", cuEventRecord(ev[i % 64], s))
  LOOP("cuThreadExchangeStreamCaptureMode", (mode = CU_STREAM_CAPTURE_MODE_RELAXED, cuThreadExchangeStreamCaptureMode(&mode)))
  LOOP("cuEventQuery (just recorded, stream busy)", (cuEventRecord(ev[i % 64], s), a = now_us(), cuEventQuery(ev[i % 64])))
  LOOP("cuEventQuery (recorded 64 launches ago)", cuEventQuery(ev[(i + 1) % 64]))
  LOOP("cuEventElapsedTime (pair done)", ({ float ms; cuEventElapsedTime(&ms, ev[(i + 2) % 64], ev[(i + 3) % 64]); }))
  LOOP("record + launch + query + record (a timed launch)", (cuEventRecord(ev[i % 64], s), cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, 0, 0), cuEventQuery(ev[i % 64]), cuEventRecord(ev[(i + 32) % 64], s)))
  LOOP("record + launch + record (no query)", (cuEventRecord(ev[i % 64], s), cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, 0, 0), cuEventRecord(ev[(i + 32) % 64], s)))
  /* How long a launch of a new shape waits for the previous one's timing
   * (one uncharged launch in flight, gate.c): from an empty kernel's launch
   * returning to its end event reading done, polled without sleeping. */
  LOOP("launch, then until its end event is done", (cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, 0, 0), cuEventRecord(ev[i % 64], s), a = now_us(), ({ while (cuEventQuery(ev[i % 64]) == CUDA_ERROR_NOT_READY) {} })))
  return 0;
}
