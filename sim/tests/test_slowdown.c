/* CUDACAP_SIM_SLOWDOWN_PCT: a kernel runs longer the busier the device was
 * over the last 200 ms (the H200 under its power limit: sim/README.md).
 * Event-timed, so scheduling noise does not enter the figures. */
#include "simtest.h"

#include <string.h>

/* The event-timed duration of one launch of G blocks queued behind
 * whatever the stream already holds (ms). */
static float timed(CUfunction f, unsigned blocks)
{
    CUevent a, b;
    CU(cuEventCreate(&a, 0));
    CU(cuEventCreate(&b, 0));
    CU(cuEventRecord(a, NULL));
    CU(cuLaunchKernel(f, blocks, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    CU(cuEventRecord(b, NULL));
    CU(cuEventSynchronize(b));
    float ms = 0;
    CU(cuEventElapsedTime(&ms, a, b));
    CU(cuEventDestroy(a));
    CU(cuEventDestroy(b));
    return ms;
}

int main(void)
{
    st_setup();
    setenv("CUDACAP_SIM_SMS", "132", 1);
    setenv("CUDACAP_SIM_SLOWDOWN_PCT", "50", 1);
    st_ctx();
    CUfunction f = st_func("spin_10000us");
    /* An idle device (nothing in the last 200 ms): the nominal 10 ms. */
    st_sleep_until_ms(st_ms() + 250);
    float idle = timed(f, 132);
    /* 30 back-to-back kernels: from the 20th on the last 200 ms were all
     * busy: each takes 10 ms x 1.5. The last one timed alone. */
    for (int i = 0; i < 30; i++)
        CU(cuLaunchKernel(f, 132, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    CU(cuCtxSynchronize());
    float busy = timed(f, 132);
    /* Half busy: 10 ms on, 10 ms off for 200 ms, then one timed. */
    st_sleep_until_ms(st_ms() + 250);
    for (int i = 0; i < 10; i++) {
        double t = st_ms();
        CU(cuLaunchKernel(f, 132, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
        CU(cuCtxSynchronize());
        st_sleep_until_ms(t + 20.0);
    }
    float half = timed(f, 132);
    printf("idle %.2f ms, busy %.2f ms, about half busy %.2f ms\n", idle, busy, half);
    NEAR(idle, 10.0, 0.5);
    NEAR(busy, 15.0, 0.5);
    CHECK(half > 11.0 && half < 14.5);
    return 0;
}
