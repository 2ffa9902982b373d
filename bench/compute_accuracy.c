/* Compute cap accuracy on the simulator. Prints figures;
 * asserts nothing.
 *
 *   LD_LIBRARY_PATH=build/sim build/bench/bench_compute_accuracy [scenario...]
 *
 * Scenarios: matrix (caps 10/30/50/70 x 1/4/8 processes x two shapes),
 * containers (two containers caps 30 and 50 on one device), long (50 ms
 * kernels, cap 30), burst (idle 2 s then burst, cap 50), owner (kill the
 * sampling owner), baseline (4 processes, CUDACAP_SHARED_BUCKET=0),
 * overhead (launch cost with a cap, bucket never empty).
 * Default: all. BENCH_WARM / BENCH_MEASURE set the warm-up and measured
 * seconds (3 and 10); BENCH_CAPS / BENCH_PROCS restrict the matrix
 * ("30,70", "1,8"); BENCH_CONTROLLER sets CUDACAP_CONTROLLER.
 * CUDACAP_COUNT_CALLS=1: each worker prints the library's counts at its
 * exit (the gate's, and where its watcher's cycles went).
 *
 * Utilization is measured like the library does: NVML per-process samples
 * every 100 ms since the previous call, summed over a container's pids. The
 * two shapes take the same device time per launch: one wave of spin_1500us
 * (SMs blocks) and 64 waves of spin_24us (64 x SMs blocks). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_common.h"
#include "cudacap/abi_compute_region.h"
#include "cudacap/nvml_api.h"

#define MAXW 16
struct shm { /* one per worker, in a file the orchestrator maps */
    double first_launch_s; /* from start to the first launch returning */
    double gpu_s;          /* device seconds of work completed */
    double gpu_s_at[64];   /* gpu_s at each whole second since start */
};

/* ---------------- worker ---------------- */
static int worker(const char *shmfile, const char *fname, unsigned waves, double run_s,
                  double idle_at, double idle_for)
{
    int fd = open(shmfile, O_RDWR);
    if (fd < 0) return 2;
    struct shm *m = mmap(NULL, sizeof *m, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) return 2;
    double t0 = bench_now();
    CUfunction fn;
    CUstream s;
    if (bench_cuda_setup(fname, &fn, &s) != 0) return 1;
    int sms = 0;
    CUdevice dev;
    BENCH_CU(cuCtxGetDevice(&dev));
    BENCH_CU(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    unsigned us = (unsigned)atoi(fname + 5);
    double per_launch = (double)waves * us * 1e-6;
    unsigned blocks = waves * (unsigned)sms;
    int first = 1, idled = 0;
    double done = 0, prev_done = 0;
    int last_sec = -1;
    for (;;) {
        double now = bench_now() - t0;
        if (now >= run_s) break;
        if (!idled && idle_for > 0 && now >= idle_at) {
            usleep((useconds_t)(idle_for * 1e6));
            idled = 1;
        }
        /* A few launches in flight, then wait: a queue of a few ms, as a
         * training loop with a sync per step would have. */
        int batch = per_launch >= 0.02 ? 1 : 4;
        for (int i = 0; i < batch; i++) BENCH_CU(cuLaunchKernel(fn, blocks, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
        if (first) {
            m->first_launch_s = bench_now() - t0;
            first = 0;
        }
        BENCH_CU(cuStreamSynchronize(s));
        done += batch * per_launch;
        m->gpu_s = done;
        int sec = (int)(bench_now() - t0);
        /* Seconds without a completed batch keep the value before it. */
        for (int k = last_sec + 1; k < sec && k < 64; k++) m->gpu_s_at[k] = prev_done;
        if (sec >= 0 && sec < 64) m->gpu_s_at[sec] = done;
        if (sec > last_sec) last_sec = sec;
        prev_done = done;
    }
    return 0;
}

/* Launch rate of empty kernels (for the capped hot path's overhead). */
static int overhead_worker(void)
{
    CUfunction fn;
    CUstream s;
    if (bench_cuda_setup("spin_0us", &fn, &s) != 0) return 1;
    for (int i = 0; i < 1000; i++) BENCH_CU(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
    BENCH_CU(cuStreamSynchronize(s));
    long n = 0;
    double t0 = bench_now(), t;
    do {
        for (int i = 0; i < 1000; i++) BENCH_CU(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
        BENCH_CU(cuStreamSynchronize(s));
        n += 1000;
        t = bench_now();
    } while (t - t0 < 1.0);
    printf("%.1f\n", (double)n / (t - t0));
    return 0;
}

/* ---------------- orchestrator ---------------- */
static const char *self_lib;
static char simdir[256];
static __typeof__(&nvmlInit_v2) n_init;
static __typeof__(&nvmlDeviceGetHandleByIndex_v2) n_handle;
static __typeof__(&nvmlDeviceGetProcessUtilization) n_putil;
static nvmlDevice_t ndev;
static double warm_s = 3, meas_s = 10;

static int load_nvml(void)
{
    Dl_info di;
    if (!dladdr((void *)&cuInit, &di) || !di.dli_fname) return -1;
    char path[512];
    snprintf(path, sizeof path, "%s", di.dli_fname);
    char *slash = strrchr(path, '/');
    if (slash) strcpy(slash + 1, "libnvidia-ml.so.1");
    void *h = dlopen(path, RTLD_NOW);
    if (!h) h = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (!h) return -1;
    n_init = (__typeof__(n_init))dlsym(h, "nvmlInit_v2");
    n_handle = (__typeof__(n_handle))dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
    n_putil = (__typeof__(n_putil))dlsym(h, "nvmlDeviceGetProcessUtilization");
    if (!n_init || !n_handle || !n_putil || n_init() != NVML_SUCCESS) return -1;
    return n_handle(0, &ndev) == NVML_SUCCESS ? 0 : -1;
}

static unsigned long long real_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (unsigned long long)ts.tv_sec * 1000000ull + (unsigned long long)ts.tv_nsec / 1000;
}

struct cont { /* a container: a state folder, a cap, its workers */
    char state[256];
    int cap;
    int n;
    pid_t pid[MAXW];
    struct shm *m[MAXW];
    double samples[400];
    int ns;
};

static pid_t spawn(struct cont *c, int i, const char *fname, unsigned waves, double run_s,
                   double idle_at, double idle_for, const char *extra_env)
{
    char shmfile[8192];
    snprintf(shmfile, sizeof shmfile, "%s/w%d.shm", c->state, i);
    int fd = open(shmfile, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, sizeof(struct shm)) != 0) return -1;
    c->m[i] = mmap(NULL, sizeof(struct shm), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    pid_t p = fork();
    if (p == 0) {
        char cap[16], w[16], r[32], ia[32], ifo[32];
        snprintf(cap, sizeof cap, "%d", c->cap);
        snprintf(w, sizeof w, "%u", waves);
        snprintf(r, sizeof r, "%f", run_s);
        snprintf(ia, sizeof ia, "%f", idle_at);
        snprintf(ifo, sizeof ifo, "%f", idle_for);
        if (c->cap > 0) setenv("CUDACAP_SM_LIMIT", cap, 1);
        else unsetenv("CUDACAP_SM_LIMIT");
        setenv("CUDACAP_STATE_DIR", c->state, 1);
        setenv("LD_PRELOAD", self_lib, 1);
        if (extra_env) putenv((char *)extra_env);
        execl("/proc/self/exe", "bench_compute_accuracy", "--worker", shmfile, fname, w, r, ia,
              ifo, (char *)NULL);
        _exit(127);
    }
    c->pid[i] = p;
    return p;
}

/* 100 ms samples of each container's utilization (percent), from t=0 for
 * total_s seconds. kill_at >= 0: SIGKILL c[0]'s worker 0 then, and report
 * the longest gap between sample publications in its region after it. */
static void sample_loop(struct cont *cs, int nc, double total_s, double kill_at, double *gap_beats)
{
    unsigned long long seen = real_us();
    double t0 = bench_now(), next = 0.1;
    const cc_compute_region_t *reg = NULL;
    uint64_t last_pub = 0, kill_ns = 0, max_gap = 0;
    int killed = 0;
    while (bench_now() - t0 < total_s) {
        double now = bench_now() - t0;
        if (kill_at >= 0) {
            if (!reg) {
                char p[8192];
                snprintf(p, sizeof p, "%s/%s", cs[0].state, CC_COMPUTE_FILE);
                int fd = open(p, O_RDONLY);
                if (fd >= 0) {
                    void *b = mmap(NULL, CC_COMPUTE_FILE_SIZE, PROT_READ, MAP_SHARED, fd, 0);
                    if (b != MAP_FAILED) reg = b;
                    close(fd);
                }
            }
            if (reg) {
                uint64_t pub = __atomic_load_n(&reg->dev[0].sample_ns, __ATOMIC_ACQUIRE);
                if (killed && pub != last_pub && last_pub) {
                    uint64_t from = last_pub > kill_ns ? last_pub : kill_ns;
                    if (pub - from > max_gap) max_gap = pub - from;
                }
                last_pub = pub;
            }
            if (!killed && now >= kill_at) {
                kill(cs[0].pid[0], SIGKILL);
                struct timespec ts;
                clock_gettime(CLOCK_MONOTONIC, &ts);
                kill_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
                killed = 1;
            }
        }
        if (now < next) {
            usleep(2000);
            continue;
        }
        next += 0.1;
        nvmlProcessUtilizationSample_t buf[256];
        unsigned n = 256;
        nvmlReturn_t r = n_putil(ndev, buf, &n, seen);
        seen = real_us();
        for (int c = 0; c < nc; c++) {
            double u = 0;
            for (unsigned k = 0; r == NVML_SUCCESS && k < n; k++)
                for (int w = 0; w < cs[c].n; w++)
                    if ((pid_t)buf[k].pid == cs[c].pid[w]) u += buf[k].smUtil;
            if (cs[c].ns < 400) cs[c].samples[cs[c].ns++] = u;
        }
    }
    if (gap_beats) *gap_beats = max_gap / 1e8;
}

static void reap(struct cont *c)
{
    /* With CUDACAP_COUNT_CALLS=1 the workers end on their own (a second
     * later), so that their exit reports print. */
    int count = getenv("CUDACAP_COUNT_CALLS") && atoi(getenv("CUDACAP_COUNT_CALLS")) > 0;
    for (int i = 0; i < c->n; i++) {
        if (!count) kill(c->pid[i], SIGTERM);
        waitpid(c->pid[i], NULL, 0);
    }
    bench_rmtree(c->state); /* (its region stays mapped where read) */
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

struct stats { double avg, p90, work, jain, first_max; };

static struct stats summarize(struct cont *c, double from_s, double to_s)
{
    struct stats st = {0};
    int a = (int)(from_s * 10 + 0.5), b = (int)(to_s * 10 + 0.5);
    if (b > c->ns) b = c->ns;
    double tmp[400];
    int k = 0;
    for (int i = a; i < b; i++) tmp[k++] = c->samples[i];
    for (int i = 0; i < k; i++) st.avg += tmp[i];
    st.avg = k ? st.avg / k : 0;
    qsort(tmp, (size_t)k, sizeof tmp[0], cmp_d);
    st.p90 = k ? tmp[(int)(0.9 * (k - 1) + 0.5)] : 0;
    double s1 = 0, s2 = 0;
    int fa = (int)from_s, fb = (int)to_s;
    for (int i = 0; i < c->n; i++) {
        double w = c->m[i]->gpu_s_at[fb - 1] - c->m[i]->gpu_s_at[fa - 1];
        st.work += w;
        s1 += w;
        s2 += w * w;
        if (c->m[i]->first_launch_s > st.first_max) st.first_max = c->m[i]->first_launch_s;
    }
    st.jain = s2 > 0 ? s1 * s1 / (c->n * s2) : 0;
    return st;
}

static int mkstate(struct cont *c)
{
    snprintf(c->state, sizeof c->state, "/tmp/cc-bench-XXXXXX");
    return mkdtemp(c->state) ? 0 : -1;
}

static const cc_compute_region_t *map_region(const char *state)
{
    char p[8192];
    snprintf(p, sizeof p, "%s/%s", state, CC_COMPUTE_FILE);
    int fd = open(p, O_RDONLY);
    if (fd < 0) return NULL;
    void *b = mmap(NULL, CC_COMPUTE_FILE_SIZE, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    return b == MAP_FAILED ? NULL : b;
}

static double worst_err, worst_p90;

/* One run: nc containers, all workers with the same shape. */
static void run(const char *label, int nc, const int *caps, int nproc, const char *fname,
                unsigned waves, double uncapped_work, const char *extra_env)
{
    struct cont cs[2];
    memset(cs, 0, sizeof cs);
    double total = warm_s + meas_s + 0.5;
    for (int c = 0; c < nc; c++) {
        if (mkstate(&cs[c]) != 0) return;
        cs[c].cap = caps[c];
        cs[c].n = nproc;
        for (int i = 0; i < nproc; i++) spawn(&cs[c], i, fname, waves, total + 1, 0, 0, extra_env);
    }
    sample_loop(cs, nc, total, -1, NULL);
    for (int c = 0; c < nc; c++) {
        const cc_compute_region_t *reg = map_region(cs[c].state);
        uint32_t calls0 = reg ? reg->dev[0].nvml_calls : 0;
        (void)calls0;
        struct stats st = summarize(&cs[c], warm_s, warm_s + meas_s);
        double err = st.avg - cs[c].cap;
        double ratio = uncapped_work > 0 ? st.work / (cs[c].cap / 100.0 * uncapped_work) : 0;
        /* NVML calls/s: total calls over the whole run (read at the end). */
        double calls = reg ? reg->dev[0].nvml_calls / total : 0;
        printf("%-10s cap %2d%% procs %d %-12s avg %5.1f%% (err %+5.1f pp)  p90 %5.1f  "
               "work/(cap x uncapped) %.3f  jain %.3f  first launch %.2fs  nvml %.1f/s\n",
               label, cs[c].cap, nproc, fname, st.avg, err, st.p90, ratio, st.jain, st.first_max,
               calls);
        /* The bars apply to the matrix and to two containers; the baseline
         * (per-process buckets) and 50 ms kernels (100 ms samples of 0 or
         * 50 %) are reported, not scored. */
        if (!strcmp(label, "matrix") || !strcmp(label, "2-cont")) {
            if (fabs(err) > fabs(worst_err)) worst_err = err;
            if (st.p90 - cs[c].cap > worst_p90) worst_p90 = st.p90 - cs[c].cap;
        }
        fflush(stdout);
    }
    for (int c = 0; c < nc; c++) reap(&cs[c]);
}

static double uncapped(const char *fname, unsigned waves)
{
    struct cont c;
    memset(&c, 0, sizeof c);
    if (mkstate(&c) != 0) return 0;
    c.cap = 0;
    c.n = 1;
    double total = warm_s + meas_s + 0.5;
    spawn(&c, 0, fname, waves, total + 1, 0, 0, NULL);
    sample_loop(&c, 1, total, -1, NULL);
    struct stats st = summarize(&c, warm_s, warm_s + meas_s);
    reap(&c);
    printf("uncapped   %-12s avg %5.1f%%  work %.2f device-s in %.0f s\n", fname, st.avg, st.work,
           meas_s);
    return st.work;
}

static int want(int argc, char **argv, const char *name)
{
    if (argc < 2) return 1;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], name)) return 1;
    return 0;
}

static int in_list(const char *env, int v)
{
    const char *s = getenv(env);
    if (!s || !*s) return 1;
    char buf[128];
    snprintf(buf, sizeof buf, ",%s,", s);
    char key[16];
    snprintf(key, sizeof key, ",%d,", v);
    return strstr(buf, key) != NULL;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--overhead")) return overhead_worker();
    if (argc == 8 && !strcmp(argv[1], "--worker"))
        return worker(argv[2], argv[3], (unsigned)atoi(argv[4]), atof(argv[5]), atof(argv[6]),
                      atof(argv[7]));
    signal(SIGPIPE, SIG_IGN);
    if (getenv("BENCH_WARM")) warm_s = atof(getenv("BENCH_WARM"));
    if (getenv("BENCH_MEASURE")) meas_s = atof(getenv("BENCH_MEASURE"));
    if (warm_s < 1) warm_s = 1;
    if (meas_s < 1) meas_s = 1;
    self_lib = bench_library(argv[0]);
    snprintf(simdir, sizeof simdir, "/tmp/cc-bench-sim-XXXXXX");
    if (!mkdtemp(simdir)) return 1;
    setenv("CUDACAP_SIM_DIR", simdir, 1);
    if (getenv("BENCH_CONTROLLER")) setenv("CUDACAP_CONTROLLER", getenv("BENCH_CONTROLLER"), 1);
    if (load_nvml() != 0) {
        fprintf(stderr, "cannot load the simulator's NVML (LD_LIBRARY_PATH=build/sim?)\n");
        return 1;
    }
    printf("compute cap accuracy on the simulator: warm-up %.0f s, measured %.0f s, 100 ms "
           "samples; controller %s\n", warm_s, meas_s,
           getenv("CUDACAP_CONTROLLER") ? getenv("CUDACAP_CONTROLLER") : "auto");
    const char *shapes[2] = {"spin_1500us", "spin_24us"};
    unsigned waves[2] = {1, 64};
    double unc[2] = {0, 0};
    if (want(argc, argv, "matrix") || want(argc, argv, "containers") || want(argc, argv, "baseline"))
        for (int s = 0; s < 2; s++) unc[s] = uncapped(shapes[s], waves[s]);
    if (want(argc, argv, "matrix")) {
        const int capv[4] = {10, 30, 50, 70}, procv[3] = {1, 4, 8};
        for (int p = 0; p < 3; p++)
            for (int c = 0; c < 4; c++)
                for (int s = 0; s < 2; s++) {
                    if (!in_list("BENCH_CAPS", capv[c]) || !in_list("BENCH_PROCS", procv[p])) continue;
                    run("matrix", 1, &capv[c], procv[p], shapes[s], waves[s], unc[s], NULL);
                }
    }
    if (want(argc, argv, "containers")) {
        const int caps[2] = {30, 50};
        run("2-cont", 2, caps, 2, shapes[0], waves[0], unc[0], NULL);
    }
    if (want(argc, argv, "baseline")) {
        const int cap = 30;
        run("per-proc", 1, &cap, 4, shapes[0], waves[0], unc[0], "CUDACAP_SHARED_BUCKET=0");
    }
    if (want(argc, argv, "long")) {
        const int cap = 30;
        run("long", 1, &cap, 1, "spin_50000us", 1, unc[0] > 0 ? unc[0] : meas_s, NULL);
    }
    if (want(argc, argv, "burst")) {
        struct cont c;
        memset(&c, 0, sizeof c);
        if (mkstate(&c) == 0) {
            c.cap = 50;
            c.n = 1;
            spawn(&c, 0, shapes[0], 1, 7, 3, 2, NULL);
            sample_loop(&c, 1, 7, -1, NULL);
            reap(&c);
            struct stats before = summarize(&c, 1, 3), first = summarize(&c, 5, 6);
            printf("burst      cap 50%% busy 3 s, idle 2 s, burst: before idle %.1f%%, first "
                   "second of the burst %.1f%% (overshoot %+.1f pp)\n", before.avg, first.avg,
                   first.avg - 50);
        }
    }
    if (want(argc, argv, "owner")) {
        struct cont c;
        memset(&c, 0, sizeof c);
        if (mkstate(&c) == 0) {
            c.cap = 50;
            c.n = 4;
            spawn(&c, 0, shapes[0], 1, 9, 0, 0, NULL);
            usleep(500000); /* worker 0 starts first: it takes the sampling lock */
            for (int i = 1; i < 4; i++) spawn(&c, i, shapes[0], 1, 9, 0, 0, NULL);
            double gap = 0;
            sample_loop(&c, 1, 7, 4, &gap);
            reap(&c);
            struct stats after = summarize(&c, 5, 7);
            printf("owner      4 procs cap 50%%, owner killed at 4 s: longest gap between "
                   "samples after the kill %.2f beats; utilization after %.1f%%\n", gap, after.avg);
        }
    }
    if (want(argc, argv, "overhead")) {
        /* Capped hot path: cap 99 %, empty kernels (the bucket never runs
         * dry), preloaded vs bare. */
        struct cont c;
        memset(&c, 0, sizeof c);
        if (mkstate(&c) == 0) {
            setenv("CUDACAP_SM_LIMIT", "99", 1);
            setenv("CUDACAP_STATE_DIR", c.state, 1);
            double bare, pre;
            if (bench_compare("/proc/self/exe", "--overhead", 5, &bare, &pre, self_lib) == 0)
                printf("overhead   cap 99%%, empty kernels: bare %.3f us/launch, capped %.3f "
                       "us/launch (+%.3f us)\n", 1e6 / bare, 1e6 / pre, 1e6 / pre - 1e6 / bare);
            unsetenv("CUDACAP_SM_LIMIT");
            bench_rmtree(c.state);
        }
    }
    printf("worst (matrix, 2-cont): average error %+.1f pp, p90 - cap %+.1f pp\n", worst_err,
           worst_p90);
    bench_rmtree(simdir);
    return 0;
}
