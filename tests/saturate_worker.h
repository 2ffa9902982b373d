/* A test worker that saturates the device with one-wave 1.5 ms kernels (4
 * per sync) until t0 + warm + run and writes to `out` the device time of the
 * batches completed inside [t0 + warm, t0 + warm + run): its work, in
 * seconds, then the time it was kept from running over that window, in
 * seconds: its threads runnable without a core (tests/runq.h: the launching
 * thread and the library's watcher, whose late refills hold the work down
 * too: 24.6 % at cap 30 in compute.watcher.cheap beside a suite and a CI
 * run, 2026-12-05), its waits for the simulator's lock, and the part of the
 * window that passed before it was set up. Returns 0, or 1 on failure. For
 * tests that exec themselves as workers (tests/containers_run.h). */
#ifndef CC_TEST_SATURATE_WORKER_H
#define CC_TEST_SATURATE_WORKER_H

#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>

#include "check.h"
#include "compute_mp.h"
#include "runq.h"
#include "spin_setup.h"

/* The same with kernels of the simulator's function `spin` (spin_<N>us),
 * each kernel_s of device time, per_sync of them between synchronizes. */
static inline int saturate_worker_with(const char *out, uint64_t t0, uint64_t warm_ns, uint64_t run_ns,
                                       const char *spin, double kernel_s, int per_sync)
{
    CUfunction fn;
    CUstream stream;
    int sms;
    spin_setup(spin, &fn, &stream, &sms);
    if (check_failures) return 1;
    /* Set up after the window began (contexts made one at a time, on a
     * loaded machine: a worker ready past the whole window, 0 % at cap 30
     * in compute.watcher.cheap beside a suite loop, 2026-12-05): that part
     * of the window is counted as waited too. */
    uint64_t ready = mp_now(), from = t0 + warm_ns;
    double late = ready > from ? (double)(ready - from < run_ns ? ready - from : run_ns) * 1e-9 : 0;
    /* And the time inside a call waiting for the simulator's shared lock
     * whose holder the machine stopped running (cuSimTestLockStallNs): the
     * waiter sleeps, so its run-queue wait does not show it. */
    uint64_t (*lock_stall)(void) = (uint64_t (*)(void))dlsym(RTLD_DEFAULT, "cuSimTestLockStallNs");
    /* Both read before every batch until the window begins: read at the
     * first batch after it, they left out whatever the call that spanned
     * its start waited (a run with no batch in the window read as unstarved). */
    double q0 = runq_proc_s();
    uint64_t s0 = lock_stall ? lock_stall() : 0;
    double work = 0;
    while (mp_now() < t0 + warm_ns + run_ns) {
        if (mp_now() < from) q0 = runq_proc_s(), s0 = lock_stall ? lock_stall() : 0;
        for (int i = 0; i < per_sync; i++)
            CHECK_CU(cuLaunchKernel(fn, (unsigned)sms, 1, 1, 32, 1, 1, 0, stream, NULL, NULL));
        CHECK_CU(cuStreamSynchronize(stream));
        if (check_failures) return 1;
        uint64_t now = mp_now();
        if (now >= t0 + warm_ns && now < t0 + warm_ns + run_ns) work += per_sync * kernel_s;
    }
    double waited = runq_proc_s() - q0 + (lock_stall ? (double)(lock_stall() - s0) * 1e-9 : 0);
    FILE *f = fopen(out, "w");
    if (!f) return 1;
    fprintf(f, "%.6f %.6f\n", work, late + waited);
    return fclose(f) != 0;
}

static inline int saturate_worker(const char *out, uint64_t t0, uint64_t warm_ns, uint64_t run_ns)
{
    return saturate_worker_with(out, t0, warm_ns, run_ns, "spin_1500us", 1.5e-3, 4);
}

#endif
