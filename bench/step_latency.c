/* What a latency-sensitive client feels under a compute cap.
 *
 *   bench_step_latency [step] [tiny] [shapes] [gen]     (all without one)
 *
 * step:   a decode loop (tests/step_loop.h): one 0.8 ms step (a kernel, or
 *         the replay of a two-kernel graph) then a synchronize, alone in its
 *         container, at caps 20, 30, 50, 70 and 90, against bare in the same
 *         run: steps/s of bare, p50, p99 and max step, and p99 over the
 *         paced ideal (bare p50 / cap).
 * tiny:   below the cap: empty kernels launched and synchronised one by
 *         one at cap 50: launch-to-completion p50 and p99, bare and capped.
 * shapes: below the cap: 16 shapes (grid sizes) x 62 launches, no sync, at
 *         cap 50: the time inside each launch call, p50 and p99.
 * gen:    below the cap: a launch-bound generate shaped as GPT-2-small's
 *         (measured 2026-12-03: ~285 launches a token, ~200 shapes, some
 *         grids growing with the sequence, a sync a token, ~20 us of host
 *         work between launches) with the host work a fixed busy wait, so
 *         that the run-to-run spread of Python does not hide a 2 % cost:
 *         ms per token, bare and capped at 50, in BENCH_ROUNDS (default 5)
 *         rounds of two processes, which goes first alternating;
 *         BENCH_GEN_CONTROL=1: both bare (the spread bare against bare).
 *
 * Runs on the simulator by default (build/sim on LD_LIBRARY_PATH, as
 * bench_compute_accuracy); on a real GPU the step kernels are empty (the
 * PTX is), so there only tiny and shapes mean anything: the H200's step
 * figures come from tests/gpu/step_latency.py. BENCH_MEASURE (s, default
 * 3) sets the measured time of a step run. Prints; asserts nothing. */
#include <cuda.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_common.h"
#include "step_loop.h"

static const char *lib;
static double meas_s = 3;

/* ---- workers (this program again, bare or preloaded) ---------------------- */

static int setup(const char *kernel, CUfunction *fn, CUstream *s, int *sms)
{
    if (bench_cuda_setup(kernel, fn, s) != 0) return 1;
    CUdevice d;
    BENCH_CU(cuDeviceGet(&d, 0));
    BENCH_CU(cuDeviceGetAttribute(sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d));
    return 0;
}

/* Prints p50 p99 max (ms) and steps/s. */
static int worker_step(int graph)
{
    CUfunction fn;
    CUstream s;
    int sms;
    if (setup(graph ? "spin_400us" : "spin_800us", &fn, &s, &sms)) return 1;
    CUgraphExec x = graph ? step_graph(fn, (unsigned)sms, s, 2) : NULL;
    if (graph && !x) return 1;
    struct step_stats st = {0};
    BENCH_CU((CUresult)step_loop(fn, (unsigned)sms, 1, x, s, 1.0, meas_s, &st));
    printf("%f %f %f %f\n", st.p50_ms, st.p99_ms, st.max_ms, st.steps_per_s);
    return 0;
}

static int cmp_double_asc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void pct(uint64_t *t, size_t n, double *p50, double *p99)
{
    qsort(t, n, sizeof *t, step_cmp_u64);
    *p50 = n ? (double)t[n / 2] / 1e3 : 0;
    *p99 = n ? (double)t[n * 99 / 100] / 1e3 : 0;
}

/* Empty kernel + sync, 20000 times after 2000 unmeasured: p50 p99 (us). */
static int worker_tiny(void)
{
    CUfunction fn;
    CUstream s;
    int sms;
    if (setup("spin_0us", &fn, &s, &sms)) return 1;
    enum { WARM = 2000, N = 20000 };
    static uint64_t t[N];
    for (int i = 0; i < WARM + N; i++) {
        uint64_t a = step_now_ns();
        BENCH_CU(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
        BENCH_CU(cuStreamSynchronize(s));
        if (i >= WARM) t[i - WARM] = step_now_ns() - a;
    }
    double p50, p99;
    pct(t, N, &p50, &p99);
    printf("%f %f\n", p50, p99);
    return 0;
}

/* 16 grid sizes x 62 launches, round-robin, no sync: time in each launch
 * call, p50 p99 (us). */
static int worker_shapes(void)
{
    CUfunction fn;
    CUstream s;
    int sms;
    if (setup("spin_0us", &fn, &s, &sms)) return 1;
    enum { SHAPES = 16, EACH = 62, N = SHAPES * EACH };
    static uint64_t t[N];
    for (int i = 0; i < N; i++) {
        uint64_t a = step_now_ns();
        BENCH_CU(cuLaunchKernel(fn, (unsigned)(i % SHAPES) + 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
        t[i] = step_now_ns() - a;
    }
    BENCH_CU(cuStreamSynchronize(s));
    double p50, p99;
    pct(t, N, &p50, &p99);
    printf("%f %f\n", p50, p99);
    return 0;
}

/* A generate of GEN_TOKENS tokens: each token GEN_LAUNCHES launches, of
 * which GEN_GROW have a grid of the token's position (new shapes in the
 * first generate, known after), the rest cycle over GEN_FIXED grids; after
 * each launch GEN_HOST_US of host work (a busy wait, as Python's dispatch);
 * a sync ends a token. Prints the median ms per token over GEN_RUNS timed
 * generates (one before, untimed), then the mean and p99 us inside a
 * launch call. */
enum { GEN_TOKENS = 48, GEN_LAUNCHES = 285, GEN_GROW = 4, GEN_FIXED = 150, GEN_RUNS = 9,
       GEN_HOST_US = 20 };

static void gen_host_work(void)
{
    uint64_t end = step_now_ns() + GEN_HOST_US * 1000ull;
    while (step_now_ns() < end) {}
}

static int worker_gen(void)
{
    CUfunction fn;
    CUstream s;
    int sms;
    if (setup("spin_0us", &fn, &s, &sms)) return 1;
    static uint64_t call[GEN_RUNS * GEN_TOKENS * GEN_LAUNCHES];
    double per_token[GEN_RUNS];
    size_t nc = 0;
    for (int g = -1; g < GEN_RUNS; g++) {
        uint64_t t0 = step_now_ns();
        for (int t = 0; t < GEN_TOKENS; t++) {
            for (int i = 0; i < GEN_LAUNCHES; i++) {
                unsigned grid = i < GEN_GROW ? (unsigned)(1000 + 64 * i + t) : (unsigned)(i % GEN_FIXED) + 1;
                uint64_t a = step_now_ns();
                BENCH_CU(cuLaunchKernel(fn, grid, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
                if (g >= 0) call[nc++] = step_now_ns() - a;
                gen_host_work();
            }
            BENCH_CU(cuStreamSynchronize(s));
        }
        if (g >= 0) per_token[g] = (double)(step_now_ns() - t0) / 1e6 / GEN_TOKENS;
    }
    qsort(per_token, GEN_RUNS, sizeof per_token[0], cmp_double_asc);
    double sum = 0;
    for (size_t i = 0; i < nc; i++) sum += (double)call[i];
    double p50, p99;
    pct(call, nc, &p50, &p99);
    printf("%f %f %f\n", per_token[GEN_RUNS / 2], sum / (double)nc / 1e3, p99);
    return 0;
}

/* ---- the driver ------------------------------------------------------------ */

/* Runs this program's worker `what` with cap (0: bare, no preload) in a
 * fresh state folder; reads up to 4 numbers it prints. 0 or -1. */
static int run(const char *what, int cap, double out[4])
{
    char state[] = "/tmp/cc-bench-step-XXXXXX";
    if (cap && !mkdtemp(state)) return -1;
    char c[32], st[64], pre[4096], buf[256];
    snprintf(c, sizeof c, "CUDACAP_SM_LIMIT=%d", cap);
    snprintf(st, sizeof st, "CUDACAP_STATE_DIR=%s", state);
    snprintf(pre, sizeof pre, "LD_PRELOAD=%s", lib);
    char *const argv[] = {"/proc/self/exe", "--worker", (char *)what, NULL}, *const set[] = {c, st, pre, NULL};
    const char *const unset[] = {"LD_PRELOAD", NULL};
    int rc = bench_read_child(argv, cap ? set : NULL, cap ? NULL : unset, buf, sizeof buf);
    if (cap) bench_rmtree(state);
    if (rc != 0) return -1;
    int k = sscanf(buf, "%lf %lf %lf %lf", &out[0], &out[1], &out[2], &out[3]);
    return k >= 2 ? 0 : -1;
}

static void bench_steps(void)
{
    static const int caps[] = {20, 30, 50, 70, 90};
    for (int g = 0; g < 2; g++) {
        const char *what = g ? "graph" : "plain";
        double bare[4];
        if (run(what, 0, bare) != 0) {
            printf("step %s: the bare run failed\n", what);
            continue;
        }
        printf("\nstep: %s, 0.8 ms of device time a step, %.0f s measured\n", what, meas_s);
        printf("| cap | steps/s of bare | p50 ms | p99 ms | max ms | paced ideal ms | p99 / ideal |\n");
        printf("| --- | --- | --- | --- | --- | --- | --- |\n");
        printf("| none | 1.00 | %.2f | %.2f | %.2f | - | - |\n", bare[0], bare[1], bare[2]);
        for (size_t c = 0; c < sizeof caps / sizeof caps[0]; c++) {
            double v[4];
            if (run(what, caps[c], v) != 0) {
                printf("| %d | failed |\n", caps[c]);
                continue;
            }
            double ideal = bare[0] * 100.0 / caps[c];
            printf("| %d | %.3f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", caps[c], v[3] / bare[3],
                   v[0], v[1], v[2], ideal, v[1] / ideal);
        }
    }
}

static void bench_below(const char *what, const char *title)
{
    double b[4], c[4];
    if (run(what, 0, b) != 0 || run(what, 50, c) != 0) {
        printf("%s: a run failed\n", what);
        return;
    }
    printf("\n%s, cap 50: bare p50 %.1f us p99 %.1f us; capped p50 %.1f us (%.2fx) p99 %.1f us "
           "(%.2fx)\n", title, b[0], b[1], c[0], c[0] / b[0], c[1], c[1] / b[1]);
}

/* The generate, bare and capped at 50, in rounds (order alternating). */
static void bench_gen(void)
{
    int rounds = getenv("BENCH_ROUNDS") ? atoi(getenv("BENCH_ROUNDS")) : 5;
    if (rounds < 1 || rounds > 50) rounds = 5;
    /* BENCH_GEN_CONTROL=1: the "capped" process bare too, the spread of
     * bare against bare that a capped round is told apart from. */
    int cap = getenv("BENCH_GEN_CONTROL") && atoi(getenv("BENCH_GEN_CONTROL")) ? 0 : 50;
    if (!cap) printf("\ncontrol: both processes of a round bare");
    printf("\ngenerate, %d tokens x %d launches (%d of them growing shapes), %d us host work a "
           "launch, a sync a token, cap 50\n", GEN_TOKENS, GEN_LAUNCHES, GEN_GROW, GEN_HOST_US);
    printf("| round | bare ms/token | capped ms/token | bare/capped throughput | launch call mean us, "
           "bare / capped | p99 us, bare / capped |\n| --- | --- | --- | --- | --- | --- |\n");
    double r[50];
    int n = 0;
    for (int i = 0; i < rounds; i++) {
        double b[4], c[4];
        int bad = i % 2 ? (run("gen", cap, c) || run("gen", 0, b)) : (run("gen", 0, b) || run("gen", cap, c));
        if (bad) {
            printf("| %d | a run failed |\n", i + 1);
            continue;
        }
        r[n++] = b[0] / c[0];
        printf("| %d | %.3f | %.3f | %.4f | %.2f / %.2f | %.1f / %.1f |\n", i + 1, b[0], c[0], b[0] / c[0],
               b[1], c[1], b[2], c[2]);
    }
    if (!n) return;
    qsort(r, (size_t)n, sizeof r[0], cmp_double_asc);
    printf("capped throughput / bare: lowest %.4f, median %.4f (bar: >= 0.98 in each run)\n", r[0],
           r[n / 2]);
}

static int want(int argc, char **argv, const char *w)
{
    if (argc < 2) return 1;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], w)) return 1;
    return 0;
}

int main(int argc, char **argv)
{
    if (getenv("BENCH_MEASURE")) meas_s = atof(getenv("BENCH_MEASURE"));
    if (meas_s < 1) meas_s = 1;
    if (argc == 3 && !strcmp(argv[1], "--worker")) {
        if (!strcmp(argv[2], "plain") || !strcmp(argv[2], "graph"))
            return worker_step(!strcmp(argv[2], "graph"));
        if (!strcmp(argv[2], "tiny")) return worker_tiny();
        if (!strcmp(argv[2], "shapes")) return worker_shapes();
        if (!strcmp(argv[2], "gen")) return worker_gen();
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    lib = bench_library(argv[0]);
    char simdir[] = "/tmp/cc-bench-sim-XXXXXX";
    int own_sim = !getenv("CUDACAP_SIM_DIR") && mkdtemp(simdir);
    if (own_sim) setenv("CUDACAP_SIM_DIR", simdir, 1);
    printf("step latency and launch latency under a compute cap (library %s)\n", lib);
    if (want(argc, argv, "step")) bench_steps();
    if (want(argc, argv, "tiny"))
        bench_below("tiny", "empty kernels, each synchronised: launch to completion");
    if (want(argc, argv, "shapes"))
        bench_below("shapes", "16 shapes x 62 launches, no sync: time inside a launch call");
    if (want(argc, argv, "gen")) bench_gen();
    if (own_sim) bench_rmtree(simdir);
    return 0;
}
