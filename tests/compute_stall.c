/* A launch call that stalls is not charged as device time
 * (src/cap/compute/cost.c, gap_cut). One process at cap 30
 * (CUDACAP_SM_LIMIT=30); its first launch call stalls 2 s before the
 * kernel is queued (CUDACAP_SIM_LAUNCH_STALL_MS=2000: a lazily loaded
 * module's first launch, or a thread blocked on a loaded machine). Then
 * one wave of a 1 ms kernel per launch, synchronised, for 1 s.
 *
 * The timing of that first launch spans the stall: the start event
 * completed when it was recorded, the kernel ran 2 s later. Half the
 * host's gap used to stay in the charge (a 1 ms kernel charged 1 s), and
 * the container then waited for that debt with the device idle. What the
 * gate settled from timings (CUDACAP_COUNT_CALLS's "settled", every timed
 * launch's charge) says it without a clock: about 1 ms per timed launch,
 * at most 40 of them in the second (one per 25 ms), against 1000 ms and
 * more for the one inflated timing. The program runs the work in a child
 * whose library prints that line at exit, and reads it.
 *
 * Control (compute.stall.launch.control, WILL_FAIL): the library with
 * half of any gap charged (CC_TEST_GAP_HALF) settles 1000-1040 ms; run 20
 * times beside a suite loop, it failed every run, and this test passed
 * every run. */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "ptx.h"

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int work(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f;
    CUstream s;
    int sms = 0;
    CHECK_CU(cuInit(0));
    CHECK_CU(cuDeviceGet(&dev, 0));
    CHECK_CU(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK_CU(cuCtxSetCurrent(ctx));
    CHECK_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CHECK_CU(cuModuleLoadData(&mod, test_ptx));
    CHECK_CU(cuModuleGetFunction(&f, mod, "spin_1000us"));
    CHECK_CU(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    if (check_failures) CHECK_EXIT();
    uint64_t t0 = now_ns();
    CHECK_CU(cuLaunchKernel(f, (unsigned)sms, 1, 1, 32, 1, 1, 0, s, NULL, NULL)); /* stalls */
    CHECK_CU(cuStreamSynchronize(s));
    uint64_t from = now_ns(), end = from + 1000000000ull;
    unsigned n = 0;
    while (now_ns() < end && !check_failures) {
        CHECK_CU(cuLaunchKernel(f, (unsigned)sms, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
        CHECK_CU(cuStreamSynchronize(s));
        n++;
    }
    /* For the reader; a loaded machine moves it, so it is not judged. */
    printf("first launch and sync %.3f s; then %u launches in 1 s: busy %.2f at cap 30\n",
           (double)(from - t0) / 1e9, n, n * 1e-3);
    CHECK_EXIT();
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "work") == 0) return work();
    int fd[2];
    if (pipe(fd) != 0) return 1;
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
        dup2(fd[1], 2);
        close(fd[0]);
        close(fd[1]);
        execl("/proc/self/exe", argv[0], "work", (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    char buf[16384];
    size_t len = 0;
    ssize_t r;
    while (len < sizeof buf - 1 && (r = read(fd[0], buf + len, sizeof buf - 1 - len)) > 0) len += (size_t)r;
    buf[len] = 0;
    close(fd[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    fputs(buf, stderr);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the work failed (status %d)", st);
    const char *p = strstr(buf, "settled ");
    double settled = -1;
    CHECK(p && sscanf(p, "settled %lf ms", &settled) == 1, "no \"settled\" line from the library");
    if (p) {
        printf("settled %.3f ms of device time from timings\n", settled);
        CHECK(settled >= 1.0 && settled < 300.0,
              "settled %.3f ms from timings of 1 ms kernels (a 2 s stall charged as device time?)", settled);
    }
    CHECK_EXIT();
}
