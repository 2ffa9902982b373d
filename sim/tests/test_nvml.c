/* 3: NVML utilisation of known duty cycles; 6: PIDs, UUIDs, process memory. */
#include "simtest.h"

#include <string.h>
#include <unistd.h>

#include "cudacap/nvml_api.h"

#define MiB (1ull << 20)

struct duty {
    int dev;
    double kernel_ms, offset_ms, start_ms;
    int check;              /* expected device utilisation, -1: none */
};

#define PERIODS 115
#define PERIOD_MS 10.0

static int run_duty(void *arg)
{
    struct duty *d = arg;
    CUcontext c;
    CU(cuInit(0));
    CU(cuDevicePrimaryCtxRetain(&c, d->dev));
    CU(cuCtxSetCurrent(c));
    char name[32];
    snprintf(name, sizeof name, "spin_%dus", (int)(d->kernel_ms * 1000));
    CUfunction f = st_func(name);
    /* Under load a launch or the query can come late; each late millisecond
     * can move a 1 s window's figure by 0.1 point: the tolerance grows by
     * that much (a flake seen once with three suites running beside it). */
    double late = 0;
    for (int i = 0; i < PERIODS; i++) {
        double at = d->start_ms + d->offset_ms + i * PERIOD_MS;
        st_sleep_until_ms(at);
        double l = st_ms() - at;
        if (l > late) late = l;
        CU(cuLaunchKernel(f, 132, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    }
    /* Late launches end late: nothing may still run at the query ("nothing
     * since now" below failed once under an ASan suite). */
    CU(cuCtxSynchronize());
    st_sleep_until_ms(d->start_ms + PERIODS * PERIOD_MS);
    if (d->check < 0) {
        usleep(300000);
        return 0;
    }
    CHECK(nvmlInit_v2() == NVML_SUCCESS);
    nvmlDevice_t h;
    CHECK(nvmlDeviceGetHandleByIndex_v2((unsigned)d->dev, &h) == NVML_SUCCESS);
    nvmlUtilization_t u;
    CHECK(nvmlDeviceGetUtilizationRates(h, &u) == NVML_SUCCESS);
    late += st_ms() - (d->start_ms + PERIODS * PERIOD_MS);
    double tol = 2 + late / 10;
    nvmlProcessUtilizationSample_t s[8];
    unsigned n = 8;
    CHECK(nvmlDeviceGetProcessUtilization(h, s, &n, 0) == NVML_SUCCESS);
    unsigned sum = 0;
    for (unsigned i = 0; i < n; i++)
        sum += s[i].smUtil;
    printf("device %d: util %u%% (want %d), %u process samples, sum %u%%\n", d->dev, u.gpu, d->check, n, sum);
    NEAR(u.gpu, d->check, tol);
    NEAR(sum, d->check, tol);
    CHECK(n == (d->dev == 3 ? 2u : 1u));
    if (d->dev != 3) {
        CHECK(s[0].pid == (unsigned)getpid());
        CHECK(s[0].timeStamp > 0);
        /* nothing since "now" */
        unsigned m = 8;
        CHECK(nvmlDeviceGetProcessUtilization(h, s, &m, s[0].timeStamp) == NVML_ERROR_NOT_FOUND);
        /* last 100 ms only: still the duty cycle. The window ends at the
         * query, so a query late by L ms holds L ms of idle time after the
         * last kernel: 1 point a millisecond here, not the 1 s window's 0.1
         * (45 for 50 with the query 8.8 ms late, beside two suites). */
        m = 8;
        CHECK(nvmlDeviceGetProcessUtilization(h, s, &m, s[0].timeStamp - 100000) == NVML_SUCCESS);
        NEAR(s[0].smUtil, d->check, 3 + late);
    }
    nvmlShutdown();
    return 0;
}

static int pid_child(void *arg)
{
    int *fds = arg;
    setenv("CUDACAP_SIM_PID_OFFSET", "100000", 1);
    st_ctx();
    CUdeviceptr p;
    CU(cuMemAlloc(&p, 100 * MiB));
    char c = 1;
    CHECK(write(fds[1], &c, 1) == 1);
    CHECK(read(fds[2], &c, 1) == 1);
    return 0;
}

int main(void)
{
    st_setup();
    setenv("CUDACAP_SIM_DEVICES", "4", 1);
    setenv("CUDACAP_SIM_UTIL_WINDOW_MS", "1000", 1);
    setenv("CUDACAP_SIM_CTX_MEM", "256m", 1);

    /* UUIDs, names, memory, version */
    CU(cuInit(0));
    CHECK(nvmlDeviceGetCount_v2(&(unsigned){ 0 }) == NVML_ERROR_UNINITIALIZED);
    CHECK(nvmlInit_v2() == NVML_SUCCESS);
    unsigned cnt;
    CHECK(nvmlDeviceGetCount_v2(&cnt) == NVML_SUCCESS && cnt == 4);
    char drv[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
    CHECK(nvmlSystemGetDriverVersion(drv, sizeof drv) == NVML_SUCCESS && strcmp(drv, "999.99-sim") == 0);
    for (int i = 0; i < 4; i++) {
        CUuuid cu;
        CU(cuDeviceGetUuid(&cu, i));
        const unsigned char *b = (const unsigned char *)cu.bytes;
        char want[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
        snprintf(want, sizeof want, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                 b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
        nvmlDevice_t h, h2;
        char got[NVML_DEVICE_UUID_V2_BUFFER_SIZE], name[NVML_DEVICE_NAME_V2_BUFFER_SIZE];
        CHECK(nvmlDeviceGetHandleByIndex_v2((unsigned)i, &h) == NVML_SUCCESS);
        CHECK(nvmlDeviceGetUUID(h, got, sizeof got) == NVML_SUCCESS);
        CHECK(strcmp(got, want) == 0);
        CHECK(nvmlDeviceGetHandleByUUID(want, &h2) == NVML_SUCCESS && h2 == h);
        unsigned idx;
        CHECK(nvmlDeviceGetIndex(h, &idx) == NVML_SUCCESS && idx == (unsigned)i);
        CHECK(nvmlDeviceGetName(h, name, sizeof name) == NVML_SUCCESS);
        char cname[96];
        CU(cuDeviceGetName(cname, sizeof cname, i));
        CHECK(strcmp(name, cname) == 0 && strcmp(name, "cudacap simulated GPU") == 0);
        if (i == 0)
            printf("uuid %s\n", got);
    }
    nvmlDevice_t h0;
    CHECK(nvmlDeviceGetHandleByIndex_v2(0, &h0) == NVML_SUCCESS);
    nvmlMemory_v2_t m2 = { .version = 0 };
    CHECK(nvmlDeviceGetMemoryInfo_v2(h0, &m2) == NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
    m2.version = nvmlMemory_v2;
    CHECK(nvmlDeviceGetMemoryInfo_v2(h0, &m2) == NVML_SUCCESS && m2.total == 80ull << 30 && m2.used == 0);

    /* PIDs with CUDACAP_SIM_PID_OFFSET, context + allocation in process memory */
    int fds[4];
    CHECK(pipe(fds) == 0 && pipe(fds + 2) == 0);
    int pipefd[3] = { 0, fds[1], fds[2] }; /* child writes [1], reads [2] */
    int child = st_fork(pid_child, pipefd);
    char c;
    CHECK(read(fds[0], &c, 1) == 1);
    unsigned n = 0;
    CHECK(nvmlDeviceGetComputeRunningProcesses_v3(h0, &n, NULL) == NVML_ERROR_INSUFFICIENT_SIZE && n == 1);
    nvmlProcessInfo_t pi[4];
    n = 4;
    CHECK(nvmlDeviceGetComputeRunningProcesses_v3(h0, &n, pi) == NVML_SUCCESS && n == 1);
    CHECK(pi[0].pid == (unsigned)child + 100000 && pi[0].usedGpuMemory == 356 * MiB);
    nvmlProcessInfo_v1_t p1[4];
    n = 4;
    CHECK(nvmlDeviceGetComputeRunningProcesses(h0, &n, p1) == NVML_SUCCESS && n == 1);
    CHECK(p1[0].pid == (unsigned)child + 100000 && p1[0].usedGpuMemory == 356 * MiB);
    nvmlProcessInfo_v2_t p2[4];
    n = 4;
    CHECK(nvmlDeviceGetComputeRunningProcesses_v2(h0, &n, p2) == NVML_SUCCESS && n == 1);
    CHECK(p2[0].usedGpuMemory == 356 * MiB);
    CHECK(nvmlDeviceGetMemoryInfo_v2(h0, &m2) == NVML_SUCCESS && m2.used == 356 * MiB);
    /* our own context appears with our own pid (no offset here) */
    CUcontext ctx;
    CU(cuDevicePrimaryCtxRetain(&ctx, 0));
    n = 4;
    CHECK(nvmlDeviceGetComputeRunningProcesses_v3(h0, &n, pi) == NVML_SUCCESS && n == 2);
    int seen = 0;
    for (unsigned i = 0; i < n; i++)
        if (pi[i].pid == (unsigned)getpid() && pi[i].usedGpuMemory == 256 * MiB)
            seen = 1;
    CHECK(seen);
    CU(cuDevicePrimaryCtxRelease(0));
    CHECK(write(fds[3], &c, 1) == 1);
    CHECK(st_wait(child) == 0);
    n = 4;
    CHECK(nvmlDeviceGetComputeRunningProcesses_v3(h0, &n, pi) == NVML_SUCCESS && n == 0);
    printf("pids/uuids/process memory ok\n");

    /* duty cycles on devices 0..2 at once; device 3: two processes at 25 % each */
    double start = st_ms() + 150;
    struct duty d[5] = {
        { 0, 5.0, 0, start, 50 }, { 1, 2.0, 0, start, 20 }, { 2, 8.0, 0, start, 80 },
        { 3, 2.5, 0, start, -1 }, { 3, 2.5, 5.0, start, 50 },
    };
    int pids[5];
    for (int i = 0; i < 5; i++)
        pids[i] = st_fork(run_duty, &d[i]);
    for (int i = 0; i < 5; i++)
        CHECK(st_wait(pids[i]) == 0);
    return 0;
}
