/* CUDACAP_SIM_LAUNCH_STALL_US / _EVERY: every n-th launch returns the
 * stall after its kernel was queued, and the kernel runs meanwhile (a
 * launching thread preempted after the driver's submission). */
#include "simtest.h"

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    st_setup();
    setenv("CUDACAP_SIM_LAUNCH_STALL_US", "20000", 1);
    setenv("CUDACAP_SIM_LAUNCH_STALL_EVERY", "2", 1);
    st_ctx();
    CUfunction f = st_func("spin_1000us");
    /* The first launch returns at once: the stall is on the second. A
     * preempted test thread reads long, so the quick one is bounded far
     * under the stall. */
    double t0 = st_ms();
    CU(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    double quick = st_ms() - t0;
    CU(cuCtxSynchronize());
    t0 = st_ms();
    CU(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    double stalled = st_ms() - t0;
    /* 1 ms of kernel inside 20 ms of stall: done when the call returns. */
    CUresult q = cuStreamQuery(NULL);
    printf("launch 1: %.2f ms, launch 2: %.2f ms, its kernel %s at the return\n", quick, stalled,
           q == CUDA_SUCCESS ? "done" : "not done");
    CHECK(quick < 10.0);
    CHECK(stalled >= 20.0);
    CHECK(q == CUDA_SUCCESS);
    return 0;
}
