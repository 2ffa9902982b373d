/* An idle container costs the watcher no NVML query (the
 * per-process query takes 2.5 ms of CPU on the H200, and the watcher spent
 * 1.5 % of a core, idle or busy). Under CUDACAP_SM_LIMIT=30: 1 s of
 * back-to-back 1.5 ms kernels, then 2.5 s of nothing. The region's NVML call
 * counter must grow while busy (sampling is not suppressed: >= 5 in the
 * second) and by at most 2 over the last 2 s of idleness (the bucket is full
 * again after ~0.5 s). Control (compute.idle.control, WILL_FAIL): the library
 * built with CC_TEST_SAMPLE_IDLE samples every cycle: ~20 calls in those 2 s;
 * checked by running it. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "compute_mp.h"
#include "spin_setup.h"

int main(void)
{
    CUfunction fn;
    CUstream s;
    int sms;
    if (spin_setup("spin_1500us", &fn, &s, &sms) != 0) CHECK_EXIT();
    const char *state = getenv("CUDACAP_STATE_DIR");
    CHECK_CU(cuLaunchKernel(fn, (unsigned)sms, 1, 1, 32, 1, 1, 0, s, NULL, NULL)); /* makes the region */
    const cc_compute_region_t *r = state ? mp_map_compute_region(state) : NULL;
    CHECK(r != NULL, "no compute region in %s", state ? state : "(unset)");
    if (!r) CHECK_EXIT();
    uint32_t start = __atomic_load_n(&r->dev[0].nvml_calls, __ATOMIC_RELAXED);
    uint64_t until = mp_now() + 1000000000ull;
    while (mp_now() < until && !check_failures) {
        for (int i = 0; i < 4; i++) CHECK_CU(cuLaunchKernel(fn, (unsigned)sms, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
        CHECK_CU(cuStreamSynchronize(s));
    }
    uint32_t busy = __atomic_load_n(&r->dev[0].nvml_calls, __ATOMIC_RELAXED) - start;
    mp_msleep(500);
    uint32_t c0 = __atomic_load_n(&r->dev[0].nvml_calls, __ATOMIC_RELAXED);
    mp_msleep(2000);
    uint32_t c1 = __atomic_load_n(&r->dev[0].nvml_calls, __ATOMIC_RELAXED);
    printf("NVML calls: %u in 1 s busy, %u in 2 s idle\n", busy, c1 - c0);
    CHECK(busy >= 5, "only %u NVML calls in a busy second", busy);
    CHECK(c1 - c0 <= 2, "%u NVML calls in 2 s of idleness", c1 - c0);
    CHECK_EXIT();
}
