/* Host pid discovery and the NVML join of the compute cap, on the simulator
 * with CUDACAP_SIM_PID_OFFSET set: NVML reports getpid() + offset, as a
 * container's host pids differ from the pids it sees (docs/compute.md, "Host pids").
 *
 *   join   4 processes start at once (barrier before their first CUDA call),
 *          cap 30 %, each saturates the device for 4 s; creating a context
 *          takes 50 ms (CUDACAP_SIM_CTX_CREATE_MS, a real driver 100 ms or
 *          more), so the four creations overlap unless they take turns.
 *          Checked:
 *          - every process's slot holds exactly its NVML pid (pid + offset),
 *            no two slots the same;
 *          - the container utilization the sampler published is non-zero,
 *            equals the sum of the per-process figures it published, and
 *            agrees with the work the processes actually did: the cap runs
 *            on NVML's samples, not on the cost model alone;
 *          - the published sampling owner is one of the 4;
 *          - the 4 together stay near the cap.
 *   Control (compute.hostpid.join.control, WILL_FAIL): the library built
 *   with CC_TEST_NSPID_ONLY (the old first-NSpid-field discovery) records
 *   getpid() as host pid; no NVML sample joins, the published container
 *   utilization stays 0 and the first checks fail (checked by hand: the
 *   control prints "slot ... host pid N, want N+1000000" and "published
 *   container utilization 0").
 *   Control (compute.hostpid.join.control_lock, WILL_FAIL): the library
 *   built with CC_TEST_NO_ID_LOCK (no identity.lock turns): every NVML diff
 *   around a context creation sees the four new pids, none is resolved, and
 *   the slots keep host pid 0 (checked by running it: "slot of pid N: host
 *   pid 0, want N+1000000"). */
#include <cuda.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "compute_mp.h"
#include "cudacap/abi_compute_region.h"
#include "ptx.h"
#include "runq.h"

#define NPROC 4

struct shared {
    uint32_t go, ready;
    uint32_t pid[NPROC];
    double work[NPROC];
    double starved[NPROC]; /* runnable without a core over the measured 3 s */
};

static double now_s(void) { return (double)mp_now() * 1e-9; }

static int child(struct shared *sh, int k)
{
    mp_barrier(&sh->go, NPROC); /* contexts created at the same moment */
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fn;
    CUstream st;
    int sms;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
        cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS || cuCtxSetCurrent(ctx) != CUDA_SUCCESS ||
        cuModuleLoadData(&mod, test_ptx) != CUDA_SUCCESS ||
        cuModuleGetFunction(&fn, mod, "spin_1500us") != CUDA_SUCCESS ||
        cuStreamCreate(&st, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS ||
        cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev) != CUDA_SUCCESS)
        return 2;
    sh->pid[k] = (uint32_t)getpid();
    double t0 = now_s(), done = 0, measured_from = t0 + 1.0, q0 = -1;
    while (now_s() - t0 < 4.0) {
        if (q0 < 0 && now_s() >= measured_from) q0 = runq_s();
        for (int i = 0; i < 2; i++)
            if (cuLaunchKernel(fn, (unsigned)sms, 1, 1, 32, 1, 1, 0, st, NULL, NULL) != CUDA_SUCCESS)
                return 3;
        if (cuStreamSynchronize(st) != CUDA_SUCCESS) return 3;
        if (now_s() >= measured_from) done += 2 * 1.5e-3;
    }
    sh->work[k] = done;
    sh->starved[k] = q0 < 0 ? 0 : runq_s() - q0;
    return 0;
}

int main(void)
{
    const char *state = getenv("CUDACAP_STATE_DIR"), *off = getenv("CUDACAP_SIM_PID_OFFSET");
    if (!state || !off) return 77;
    uint32_t offset = (uint32_t)strtoul(off, NULL, 10);
    struct shared *sh = mp_shared(sizeof *sh);
    pid_t pids[NPROC];
    for (int k = 0; k < NPROC; k++)
        if ((pids[k] = fork()) == 0) _exit(child(sh, k));
    /* Mid-run (the 4 have run ~2 s): read what the library published. */
    usleep(2500 * 1000);
    const cc_compute_region_t *r = mp_map_compute_region(state);
    CHECK(r != NULL, "no compute region in %s", state);
    uint32_t sum_pm = 0, cont_pm = 0, owner = 0;
    double util_avg = 0;
    int samples = 0;
    if (r) {
        for (int k = 0; k < NPROC; k++) {
            int found = 0;
            for (unsigned i = 0; i < CC_COMPUTE_PROCS; i++) {
                if (__atomic_load_n(&r->proc[i].pid, __ATOMIC_ACQUIRE) != sh->pid[k]) continue;
                uint32_t hp = __atomic_load_n(&r->proc[i].host_pid, __ATOMIC_ACQUIRE);
                CHECK(hp == sh->pid[k] + offset, "slot of pid %u: host pid %u, want %u", sh->pid[k],
                      hp, sh->pid[k] + offset);
                found = 1;
            }
            CHECK(found, "pid %u has no slot", sh->pid[k]);
        }
        for (unsigned i = 0; i < CC_COMPUTE_PROCS; i++)
            for (unsigned j = i + 1; j < CC_COMPUTE_PROCS; j++) {
                uint32_t a = r->proc[i].host_pid;
                CHECK(!(a && r->proc[i].pid && r->proc[j].pid && a == r->proc[j].host_pid),
                      "slots %u and %u both claim host pid %u", i, j, a);
            }
        /* Average what was published over 1 s (the simulator's samples are
         * per period; one may be between bursts). */
        for (int t = 0; t < 10; t++) {
            uint32_t smp = __atomic_load_n(&r->dev[0].sample, __ATOMIC_ACQUIRE);
            uint32_t s = 0;
            for (unsigned i = 0; i < CC_COMPUTE_PROCS; i++) {
                uint16_t u = __atomic_load_n(&r->proc[i].util_pm[0], __ATOMIC_RELAXED);
                if (r->proc[i].pid && u != CC_COMPUTE_UTIL_UNKNOWN) s += u;
            }
            cont_pm = smp & 0xffff;
            sum_pm = s;
            util_avg += cont_pm / 10.0;
            samples++;
            /* Each figure per process is clamped and rounded: allow 1 %.
             * A quiet cycle (a full bucket, nobody waiting: the workers
             * starved of a core) clears the per-process figures and keeps
             * the last container sample (50 permille against 0 once, beside
             * two suites): compared only while some process has a figure. */
            if (sum_pm)
                CHECK(sum_pm + 10 >= cont_pm && sum_pm <= cont_pm + 10 + NPROC,
                      "container utilization %u permille, per-process sum %u", cont_pm, sum_pm);
            owner = __atomic_load_n(&r->owner[0].pid, __ATOMIC_RELAXED);
            usleep(100 * 1000);
        }
        util_avg /= samples;
    }
    int bad = mp_wait_all(pids, NPROC);
    CHECK(bad == 0, "%d worker(s) failed", bad);
    double total = 0, starved = 0;
    for (int k = 0; k < NPROC; k++) {
        total += sh->work[k];
        if (sh->starved[k] > starved) starved = sh->starved[k];
    }
    double frac = total / 3.0 * 100; /* measured over the last 3 s */
    printf("join: published container utilization %.1f%% (mean of %d reads), work done %.1f%% of "
           "the device, cap 30%%, owner %u; runnable without a core at most %.2f s of 3\n", util_avg,
           samples, frac, owner, starved);
    /* A starved run joins too (its slots' host pids are checked above, and
     * the published figure must still agree with the work done); only the
     * bounds from below wait for a run that had its cores. */
    int judged = runq_judged("join", starved, 3.0);
    if (judged)
        CHECK(util_avg > 5, "published container utilization %.1f%%: NVML samples not joined", util_avg);
    CHECK(util_avg > frac - 15 && util_avg < frac + 15,
          "published utilization %.1f%% disagrees with the work done %.1f%%", util_avg, frac);
    int own = 0;
    for (int k = 0; k < NPROC; k++) own |= owner == sh->pid[k];
    CHECK(own, "published sampling owner %u is none of the workers", owner);
    CHECK(frac < 42, "the 4 together used %.0f%% at cap 30%%", frac);
    if (judged) CHECK(frac > 18, "the 4 together used %.0f%% at cap 30%%", frac);
    CHECK_EXIT();
}
