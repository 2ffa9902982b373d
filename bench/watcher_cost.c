/* What the compute cap costs off the launch path: the
 * watcher thread's CPU, and what each NVML call it could make costs.
 *   bench_watcher_cost nvml [N]
 *       not preloaded: N calls (default 200) of each NVML query the watcher
 *       uses or could use, CPU and wall microseconds per call.
 *   bench_watcher_cost watcher SECONDS busy|idle
 *       run under the preload with CUDACAP_SM_LIMIT set (bench_watcher_cost
 *       sets 30 when unset): busy launches one-wave kernels back to back,
 *       syncing every 4; idle launches one kernel a second. Prints the
 *       watcher thread's CPU time as a share of one core.
 * On the simulator: LD_LIBRARY_PATH=build/sim. On a GPU: the real libraries. */
#include <dirent.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_common.h"
#include "cudacap/nvml_api.h"

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef nvmlReturn_t (*init_fn)(void);
typedef nvmlReturn_t (*handle_fn)(unsigned, nvmlDevice_t *);
typedef nvmlReturn_t (*procutil_fn)(nvmlDevice_t, nvmlProcessUtilizationSample_t *, unsigned *,
                                    unsigned long long);
typedef nvmlReturn_t (*util_fn)(nvmlDevice_t, nvmlUtilization_t *);
typedef nvmlReturn_t (*samples_fn)(nvmlDevice_t, nvmlSamplingType_t, unsigned long long, nvmlValueType_t *,
                                   unsigned *, nvmlSample_t *);
typedef nvmlReturn_t (*procs_fn)(nvmlDevice_t, unsigned *, nvmlProcessInfo_t *);

static int nvml_costs(int n)
{
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (!h) {
        fprintf(stderr, "no libnvidia-ml.so.1: %s\n", dlerror());
        return 1;
    }
    init_fn init = (init_fn)dlsym(h, "nvmlInit_v2");
    handle_fn get = (handle_fn)dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
    procutil_fn pu = (procutil_fn)dlsym(h, "nvmlDeviceGetProcessUtilization");
    util_fn ur = (util_fn)dlsym(h, "nvmlDeviceGetUtilizationRates");
    procs_fn cp = (procs_fn)dlsym(h, "nvmlDeviceGetComputeRunningProcesses_v3");
    samples_fn gs = (samples_fn)dlsym(h, "nvmlDeviceGetSamples");
    nvmlDevice_t d;
    if (!init || !get || init() != NVML_SUCCESS || get(0, &d) != NVML_SUCCESS) return 1;
    static nvmlProcessUtilizationSample_t buf[512];
    static nvmlProcessInfo_t procs[256];
    static nvmlSample_t smp[512];
    unsigned got = 0; /* device-wide samples of the last second, per call */
    for (int which = 0; which < 4; which++) {
        double c0 = thread_cpu_s(), w0 = bench_now();
        int ok = 0;
        for (int i = 0; i < n; i++) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            unsigned long long last = (unsigned long long)ts.tv_sec * 1000000ull - 1000000ull;
            unsigned k = 512;
            nvmlUtilization_t u;
            nvmlValueType_t t;
            nvmlReturn_t r = which == 0 ? (pu ? pu(d, buf, &k, last) : NVML_ERROR_NOT_SUPPORTED)
                           : which == 1 ? (ur ? ur(d, &u) : NVML_ERROR_NOT_SUPPORTED)
                           : which == 2 ? (k = 256, cp ? cp(d, &k, procs) : NVML_ERROR_NOT_SUPPORTED)
                                        : (gs ? gs(d, NVML_GPU_UTILIZATION_SAMPLES, last, &t, &k, smp)
                                              : NVML_ERROR_NOT_SUPPORTED);
            ok += r == NVML_SUCCESS || r == NVML_ERROR_NOT_FOUND;
            if (which == 3 && r == NVML_SUCCESS) got = k;
        }
        static const char *name[] = {"nvmlDeviceGetProcessUtilization", "nvmlDeviceGetUtilizationRates",
                                     "nvmlDeviceGetComputeRunningProcesses_v3",
                                     "nvmlDeviceGetSamples(GPU_UTILIZATION)"};
        printf("%-42s %8.1f us CPU %8.1f us wall per call (%d/%d answered)\n", name[which],
               (thread_cpu_s() - c0) * 1e6 / n, (bench_now() - w0) * 1e6 / n, ok, n);
    }
    /* The device-wide samples' period: their count over the last second and
     * the gaps of their timestamps. */
    printf("nvmlDeviceGetSamples: %u samples cover the last second", got);
    for (unsigned i = 1; i < got && i < 8; i++)
        printf("%s%lld", i == 1 ? "; gaps (us): " : " ",
               (long long)smp[i].timeStamp - (long long)smp[i - 1].timeStamp);
    printf("\n");
    return 0;
}

/* CPU seconds of this process's thread named `name`, or -1. */
static double named_thread_cpu(const char *name)
{
    DIR *dir = opendir("/proc/self/task");
    if (!dir) return -1;
    struct dirent *e;
    double cpu = -1;
    while ((e = readdir(dir)) && cpu < 0) {
        char p[288], comm[64] = "";
        snprintf(p, sizeof p, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(p, "re");
        if (!f) continue;
        if (!fgets(comm, sizeof comm, f)) comm[0] = 0;
        fclose(f);
        comm[strcspn(comm, "\n")] = 0;
        if (strcmp(comm, name) != 0) continue;
        /* The thread's own CPU clock, in ns (stat's ticks are 10 ms coarse):
         * Linux's clock id for a thread is ~tid << 3 | CPUCLOCK_PERTHREAD |
         * CPUCLOCK_SCHED, as perf and Go's runtime build it. */
        pid_t tid = (pid_t)atoi(e->d_name);
        clockid_t id = (clockid_t)((~(unsigned)tid << 3) | 6u);
        struct timespec ts;
        if (clock_gettime(id, &ts) == 0) cpu = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    }
    closedir(dir);
    return cpu;
}

static int watcher_cpu(double secs, int busy)
{
    CUfunction fn;
    CUstream s;
    if (bench_cuda_setup("spin_0us", &fn, &s)) return 1;
    CUdevice dev;
    int sms = 1;
    BENCH_CU(cuCtxGetDevice(&dev));
    BENCH_CU(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    BENCH_CU(cuLaunchKernel(fn, (unsigned)sms, 1, 1, 32, 1, 1, 0, s, NULL, NULL)); /* starts the watcher */
    double c0 = named_thread_cpu("cudacap-watch"), t0 = bench_now();
    long launches = 0;
    while (bench_now() - t0 < secs) {
        if (busy) {
            for (int i = 0; i < 4; i++, launches++)
                BENCH_CU(cuLaunchKernel(fn, (unsigned)sms, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
            BENCH_CU(cuStreamSynchronize(s));
        } else {
            BENCH_CU(cuLaunchKernel(fn, (unsigned)sms, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
            launches++;
            usleep(1000000);
        }
    }
    double c1 = named_thread_cpu("cudacap-watch"), t = bench_now() - t0;
    if (c0 < 0 || c1 < 0) {
        fprintf(stderr, "no thread named cudacap-watch: run under the preload with an SM cap\n");
        return 1;
    }
    printf("watcher (%s, %ld launches, %.1f s): %.3f %% of a core (%.1f ms CPU)\n",
           busy ? "busy" : "idle", launches, t, 100 * (c1 - c0) / t, (c1 - c0) * 1e3);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "nvml") == 0) return nvml_costs(argc > 2 ? atoi(argv[2]) : 200);
    if (argc > 3 && strcmp(argv[1], "watcher") == 0) {
        if (!getenv("CUDACAP_SM_LIMIT")) setenv("CUDACAP_SM_LIMIT", "30", 1);
        return watcher_cpu(atof(argv[2]), strcmp(argv[3], "busy") == 0);
    }
    fprintf(stderr, "usage: %s nvml [N] | watcher SECONDS busy|idle\n", argv[0]);
    return 2;
}
