/* Caps changed while the container runs (docs/configuration.md, "Changing
 * caps while the container runs"): `cudacap set` on a folder prepared with
 * --mem 1g --sm 30, this process capped from that limits file.
 *
 *   config_live mem   holds 768 MiB under 1 GiB; set --mem 2g: the same
 *                     process reaches 1.75 GiB; set --mem 1g below its use:
 *                     the next allocation is refused and `cudacap status`
 *                     says "over cap after a decrease"; after frees bring
 *                     it under, admitted again.
 *   config_live over  holds 768 MiB under 1 GiB, no oversubscription; set
 *                     --mem-oversubscribe 1g: the same process allocates
 *                     1 GiB more, all of it in host memory (status), and
 *                     sees 2 GiB; set --mem-oversubscribe 512m below that
 *                     use: host allocations refused until frees bring it
 *                     under, then admitted up to 512 MiB.
 *   config_live mem2  two devices (CUDACAP_SIM_DEVICES=2), each holding
 *                     768 MiB under 1 GiB: set --mem-1 2g raises device 1
 *                     alone (it reaches 1.75 GiB, device 0 stays refused
 *                     past 1 GiB); set --mem-0 512m lowers device 0 below
 *                     its use: refused there, device 1 still admits what
 *                     its frees make room for; status names device 0 over
 *                     its cap, not device 1.
 *   config_live over2 two devices, each holding 768 MiB under 1 GiB: set
 *                     --mem-oversubscribe-1 1g lets device 1 allocate 1 GiB
 *                     more, in host memory (status: device 1's host use 1
 *                     GiB, device 0's none), and see 2 GiB; device 0 stays
 *                     refused past 1 GiB and sees 1 GiB.
 *   config_live sm    saturates the device at cap 30 for 3 s; set --sm 60:
 *                     from 1 s after the change, the busy share over the
 *                     next 3 s is 0.60 +- 0.03 (and was 0.30 +- 0.03).
 *   config_live sm2   the same on two devices, a thread each; set --sm-1 60:
 *                     device 1 at 0.60, device 0 still 0.30 (+- 0.03).
 *
 * Controls (WILL_FAIL, tests/limits.cmake): the library built with
 * CC_TEST_NO_LIVE reads the caps once, at start: the raise to 2 GiB is
 * refused (mem, mem2, over, over2: no oversubscription at all) and the share stays at 0.30 (sm, sm2), every run.
 * From CTest: $CLI and the preload environment. */
#include <cuda.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <pthread.h>
#include <unistd.h>

#include "check.h"
#include "runq.h"
#include "compute_mp.h"
#include "spin_setup.h"

#define MIB (1ull << 20)

static const char *cli, *root;
static char dir[600];

/* Runs the CLI without the preload; its output in buf. Exit status. */
static int run_cli(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int run_cli(char *buf, size_t len, const char *fmt, ...)
{
    char args[512], cmd[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "env -u LD_PRELOAD '%s' %s 2>&1", cli, args);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    size_t n = fread(buf, 1, len - 1, p);
    buf[n] = 0;
    int st = pclose(p);
    printf("$ cudacap %s\n%s", args, buf);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static CUdeviceptr chunk[64];
static int nchunks;

static int alloc64(void)
{
    CUdeviceptr p;
    if (nchunks >= 64 || cuMemAlloc(&p, 64 * MIB) != CUDA_SUCCESS) return -1;
    chunk[nchunks++] = p;
    return 0;
}

static uint64_t total_now(void)
{
    size_t fr = 0, tot = 0;
    CHECK_CU(cuMemGetInfo(&fr, &tot));
    return tot;
}

/* The context and 768 MiB under the 1 GiB cap (the simulator's context
 * takes 256 MiB): 0, or the failures counted. */
static int hold_768(void)
{
    CUfunction fn;
    CUstream stream;
    int sms;
    spin_setup("spin_1500us", &fn, &stream, &sms); /* the context; the rest unused */
    if (check_failures) return -1;
    for (int i = 0; i < 12; i++) CHECK(alloc64() == 0, "chunk %d of 768 MiB refused under 1 GiB", i);
    CHECK(total_now() == 1024 * MIB, "total %llu, not 1 GiB", (unsigned long long)total_now());
    return check_failures ? -1 : 0;
}

/* `cudacap set ARGS DIR`, which must say SAYS; then the same process fills
 * up to 1.75 GiB (1 GiB more), the total it sees 2 GiB. */
static void set_and_fill(const char *args, const char *says)
{
    char out[4096];
    CHECK(run_cli(out, sizeof out, "set %s %s", args, dir) == 0, "set %s failed", args);
    CHECK(strstr(out, says) != NULL, "set does not say what changed (%s)", says);
    int got = 0;
    while (nchunks < 64 && alloc64() == 0) got++;
    printf("after set %s: %d more chunks, %d MiB held\n", args, got, nchunks * 64);
    CHECK(nchunks == 28, "reached %d MiB, not 1.75 GiB, after set %s", nchunks * 64, args);
    CHECK(total_now() == 2048 * MIB, "total %llu after set %s", (unsigned long long)total_now(), args);
}

static int mem_mode(void)
{
    char out[4096];
    if (hold_768() != 0) CHECK_EXIT();
    CUdeviceptr big;
    CUresult r = cuMemAlloc(&big, 512 * MIB);
    CHECK(r == CUDA_ERROR_OUT_OF_MEMORY, "512 MiB more under 1 GiB: %d", (int)r);
    if (check_failures) CHECK_EXIT();
    set_and_fill("--mem 2g", "memory cap 1.00 GiB -> 2.00 GiB");
    if (check_failures) CHECK_EXIT();

    /* Files that change but cannot be trusted, each seen by the refused
     * allocation's look at the file: a raise to 8 GiB whose checksum was not
     * updated, a truncated file, a FIFO (never waited on), a link to a good
     * file elsewhere. Each time the cap stays 2 GiB, and nothing hangs (the
     * test's timeout). */
    char path[700], good[700];
    snprintf(path, sizeof path, "%s/limits.d/limits", dir);
    snprintf(good, sizeof good, "%s/good-limits", root);
    static const char *const bad[] = {"forged", "truncated", "fifo", "symlink"};
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", path, good);
    CHECK(system(cmd) == 0, "cp");
    for (int k = 0; k < 4; k++) {
        if (k == 0)
            snprintf(cmd, sizeof cmd, "sed 's/^mem .*/mem 8589934592/' '%s' > '%s.new' && mv '%s.new' '%s'",
                     good, path, path, path);
        else if (k == 1) snprintf(cmd, sizeof cmd, "head -2 '%s' > '%s.new' && mv '%s.new' '%s'", good, path, path, path);
        else if (k == 2) snprintf(cmd, sizeof cmd, "rm -f '%s' && mkfifo '%s'", path, path);
        else snprintf(cmd, sizeof cmd, "rm -f '%s' && ln -s '%s' '%s'", path, good, path);
        CHECK(system(cmd) == 0, "%s", cmd);
        CHECK(alloc64() != 0, "a %s limits file: 64 MiB admitted past the 2 GiB cap", bad[k]);
        CHECK(total_now() == 2048 * MIB, "a %s limits file: total %llu", bad[k],
              (unsigned long long)total_now());
    }
    snprintf(cmd, sizeof cmd, "rm -f '%s' && cp '%s' '%s' && chmod 644 '%s'", path, good, path, path);
    CHECK(system(cmd) == 0, "%s", cmd);
    if (check_failures) CHECK_EXIT();

    CHECK(run_cli(out, sizeof out, "set --mem 1g %s", dir) == 0, "set --mem 1g failed");
    CHECK(alloc64() != 0, "64 MiB admitted at 1.75 GiB held under a lowered 1 GiB cap");
    CHECK(nchunks == 28, "no process memory taken back: %d chunks", nchunks);
    run_cli(out, sizeof out, "status %s", root);
    CHECK(strstr(out, "over cap after a decrease") != NULL, "status does not say over cap");
    run_cli(out, sizeof out, "status --json %s", root);
    CHECK(strstr(out, "\"memory_over_cap\":true") != NULL, "status --json: memory_over_cap not true");
    /* Frees down to 704 MiB: under the cap again with room for one more
     * (the simulator's context takes 256 MiB of the 1 GiB). */
    while (nchunks > 11) CHECK_CU(cuMemFree(chunk[--nchunks]));
    CHECK(alloc64() == 0, "64 MiB refused at 704 MiB under 1 GiB after the frees");
    run_cli(out, sizeof out, "status --json %s", root);
    CHECK(strstr(out, "\"memory_over_cap\":false") != NULL, "still over cap after the frees");
    return check_failures ? 1 : 0;
}

/* The first device's figure named key in `cudacap status --json` (-1: none). */
static long long status_field(const char *key)
{
    char out[8192], k[64];
    run_cli(out, sizeof out, "status --json %s", root);
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *p = strstr(out, k);
    return p ? atoll(p + strlen(k)) : -1;
}

static int over_mode(void)
{
    char out[4096];
    if (hold_768() != 0) CHECK_EXIT();
    CHECK(alloc64() != 0, "832 MiB admitted under 1 GiB with its context, no oversubscription");
    if (check_failures) CHECK_EXIT();
    set_and_fill("--mem-oversubscribe 1g", "oversubscription none -> 1.00 GiB"); /* all in host memory */
    long long host = status_field("memory_host_used_bytes");
    CHECK(host == (long long)(1024 * MIB), "status: %lld bytes in host memory, not 1 GiB", host);
    if (check_failures) CHECK_EXIT();

    CHECK(run_cli(out, sizeof out, "set --mem-oversubscribe 512m %s", dir) == 0, "set failed");
    CHECK(alloc64() != 0, "64 MiB admitted with 1 GiB in host memory under a lowered 512 MiB");
    CHECK(nchunks == 28, "host memory taken back: %d chunks", nchunks);
    CHECK(status_field("memory_host_limit_bytes") == (long long)(512 * MIB), "status: host limit not 512 MiB");
    while (nchunks > 19) CHECK_CU(cuMemFree(chunk[--nchunks])); /* the last ones: host, 448 MiB left */
    CHECK(alloc64() == 0, "64 MiB refused with 448 MiB in host memory under 512 MiB");
    CHECK(alloc64() != 0, "64 MiB admitted past 512 MiB in host memory");
    return check_failures ? 1 : 0;
}

/* Two devices: chunks of 64 MiB on each, made current in turn. */
static CUcontext ctx2[2];
static CUdeviceptr chunk2[2][64];
static int n2[2];

static int alloc_on(int d)
{
    CUdeviceptr p;
    CHECK_CU(cuCtxSetCurrent(ctx2[d]));
    if (n2[d] >= 64 || cuMemAlloc(&p, 64 * MIB) != CUDA_SUCCESS) return -1;
    chunk2[d][n2[d]++] = p;
    return 0;
}

/* Both devices' contexts, each holding 768 MiB and refused past 1 GiB. */
static int open2(void)
{
    int ndev = 0;
    CHECK_CU(cuInit(0));
    CHECK_CU(cuDeviceGetCount(&ndev));
    CHECK(ndev == 2, "%d devices, not 2 (CUDACAP_SIM_DEVICES)", ndev);
    for (int d = 0; d < 2 && !check_failures; d++) {
        CUdevice dev;
        CHECK_CU(cuDeviceGet(&dev, d));
        CHECK_CU(cuDevicePrimaryCtxRetain(&ctx2[d], dev));
    }
    if (check_failures) CHECK_EXIT();
    for (int d = 0; d < 2; d++) {
        for (int i = 0; i < 12; i++) CHECK(alloc_on(d) == 0, "device %d: chunk %d refused under 1 GiB", d, i);
        CHECK(alloc_on(d) != 0, "device %d: 832 MiB admitted under 1 GiB with its context", d);
    }
    return check_failures ? -1 : 0;
}

static int mem2_mode(void)
{
    char out[4096];
    if (open2() != 0) CHECK_EXIT();

    CHECK(run_cli(out, sizeof out, "set --mem-1 2g %s", dir) == 0, "set --mem-1 2g failed");
    int got = 0;
    while (n2[1] < 28 && alloc_on(1) == 0) got++;
    printf("after device 1's raise: %d more chunks there, %d MiB held\n", got, n2[1] * 64);
    CHECK(n2[1] == 28, "device 1 reached %d MiB, not 1.75 GiB, after its raise to 2 GiB", n2[1] * 64);
    CHECK(alloc_on(0) != 0, "device 0 admitted past its 1 GiB after device 1's raise");
    if (check_failures) CHECK_EXIT();

    CHECK(run_cli(out, sizeof out, "set --mem-0 512m %s", dir) == 0, "set --mem-0 512m failed");
    CHECK(alloc_on(0) != 0, "device 0: 64 MiB admitted at 768 MiB held under a lowered 512 MiB");
    CHECK(n2[0] == 12, "device 0: memory taken back (%d chunks)", n2[0]);
    CHECK_CU(cuCtxSetCurrent(ctx2[1]));
    CHECK_CU(cuMemFree(chunk2[1][--n2[1]]));
    CHECK(alloc_on(1) == 0, "device 1: 64 MiB refused after a free under its 2 GiB");
    run_cli(out, sizeof out, "status --json %s", root);
    const char *d0 = strstr(out, "\"gpu\":0,"), *d1 = strstr(out, "\"gpu\":1,");
    CHECK(d0 && d1, "status --json: no entry for device 0 and device 1");
    if (d0 && d1) {
        static const char yes[] = "\"memory_over_cap\":true", no[] = "\"memory_over_cap\":false";
        const char *o0 = strstr(d0, "\"memory_over_cap\":"), *o1 = strstr(d1, "\"memory_over_cap\":");
        CHECK(o0 && !strncmp(o0, yes, sizeof yes - 1), "status --json: device 0 not over its cap");
        CHECK(o1 && !strncmp(o1, no, sizeof no - 1), "status --json: device 1 over its cap");
    }
    return check_failures ? 1 : 0;
}

/* Device i's figure named key in `cudacap status --json` (-1: none): the
 * entries are in device order, each from its "gpu":i. */
static long long status_dev_field(int i, const char *key)
{
    char out[8192], k[64], g[32];
    run_cli(out, sizeof out, "status --json %s", root);
    snprintf(g, sizeof g, "\"gpu\":%d,", i);
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *d = strstr(out, g), *p = d ? strstr(d, k) : NULL;
    return p ? atoll(p + strlen(k)) : -1;
}

static uint64_t total_on(int d)
{
    CHECK_CU(cuCtxSetCurrent(ctx2[d]));
    return total_now();
}

static int over2_mode(void)
{
    char out[4096];
    if (open2() != 0) CHECK_EXIT();
    CHECK(run_cli(out, sizeof out, "set --mem-oversubscribe-1 1g %s", dir) == 0, "set --mem-oversubscribe-1 failed");
    CHECK(strstr(out, "oversubscription none -> 1.00 GiB") != NULL, "set does not say what changed");
    int got = 0;
    while (n2[1] < 28 && alloc_on(1) == 0) got++;
    printf("after device 1's oversubscription: %d more chunks there, %d MiB held\n", got, n2[1] * 64);
    CHECK(n2[1] == 28, "device 1 reached %d MiB, not 1.75 GiB, with 1 GiB of oversubscription", n2[1] * 64);
    CHECK(alloc_on(0) != 0, "device 0 admitted past its 1 GiB after device 1's oversubscription");
    CHECK(total_on(1) == 2048 * MIB, "device 1 sees %llu, not 2 GiB", (unsigned long long)total_on(1));
    CHECK(total_on(0) == 1024 * MIB, "device 0 sees %llu, not 1 GiB", (unsigned long long)total_on(0));
    long long h0 = status_dev_field(0, "memory_host_used_bytes"), h1 = status_dev_field(1, "memory_host_used_bytes");
    CHECK(h1 == (long long)(1024 * MIB), "status: device 1 has %lld bytes in host memory, not 1 GiB", h1);
    CHECK(h0 == 0, "status: device 0 has %lld bytes in host memory, not none", h0);
    return check_failures ? 1 : 0;
}

/* Device time completed per 100 ms bucket since t0 (one-wave 1.5 ms
 * kernels, 4 per sync), until the end, by one thread per device (a
 * launch the cap holds blocks its thread: one thread for two devices would
 * hold the raised one to the other's cap). */
#define BUCKETS 120
struct drive {
    CUcontext ctx;
    CUfunction fn;
    CUstream stream;
    int sms, errs;
    double work[BUCKETS];
    /* The thread's and the watcher's time waiting for a CPU (schedstat,
     * waited_ns) when each bucket began: time the loop wanted to run and
     * could not, which no cap causes. */
    uint64_t waited[BUCKETS + 1];
};
static struct drive drv[2];
static uint64_t sm_t0, sm_end;

static void setup_dev(int d, struct drive *v)
{
    CUdevice dev;
    CUmodule mod;
    CHECK_CU(cuDeviceGet(&dev, d));
    CHECK_CU(cuDevicePrimaryCtxRetain(&v->ctx, dev));
    CHECK_CU(cuCtxSetCurrent(v->ctx));
    CHECK_CU(cuModuleLoadData(&mod, test_ptx));
    CHECK_CU(cuModuleGetFunction(&v->fn, mod, "spin_1500us"));
    CHECK_CU(cuStreamCreate(&v->stream, CU_STREAM_NON_BLOCKING));
    CHECK_CU(cuDeviceGetAttribute(&v->sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
}

/* This thread's run-queue wait and the library's watcher's, whose late
 * refills hold the share down too (0.207 at cap 30 once in a fresh root's
 * suite beside a suite loop, 2026-12-05), ns. */
static uint64_t waited_ns(void) { return (uint64_t)((runq_s() + runq_named_s("cudacap-watch")) * 1e9); }

/* Errors are counted per thread (CHECK's counter is the main thread's). */
static void *drive(void *arg)
{
    struct drive *v = arg;
    size_t next_b = 0; /* the first bucket whose start's wait is not recorded */
    v->errs += cuCtxSetCurrent(v->ctx) != CUDA_SUCCESS;
    while (!v->errs && mp_now() < __atomic_load_n(&sm_end, __ATOMIC_RELAXED)) {
        for (int i = 0; i < 4; i++)
            v->errs += cuLaunchKernel(v->fn, (unsigned)v->sms, 1, 1, 32, 1, 1, 0, v->stream, NULL, NULL) !=
                       CUDA_SUCCESS;
        v->errs += cuStreamSynchronize(v->stream) != CUDA_SUCCESS;
        size_t b = (size_t)((mp_now() - sm_t0) / 100000000ull);
        if (b < BUCKETS) v->work[b] += 4 * 1.5e-3;
        while (next_b <= b && next_b <= BUCKETS) v->waited[next_b++] = waited_ns();
    }
    while (next_b <= BUCKETS) v->waited[next_b++] = waited_ns(); /* buckets the loop did not reach */
    return NULL;
}

/* ndev 1: set --sm 60; ndev 2: set --sm-1 60, device 0 stays at 30. */
static int sm_mode(int ndev)
{
    char out[4096];
    CHECK_CU(cuInit(0));
    for (int d = 0; d < ndev; d++) setup_dev(d, &drv[d]);
    if (check_failures) CHECK_EXIT();
    /* The end moves to 4 s after the change once it is made: `cudacap set`
     * took 2 s beside two suites once (the window after it then ran past
     * a fixed end: shares of a third). */
    sm_t0 = mp_now(), sm_end = sm_t0 + 11000000000ull;
    pthread_t th[2];
    for (int d = 0; d < ndev; d++) CHECK(pthread_create(&th[d], NULL, drive, &drv[d]) == 0, "thread");
    if (check_failures) CHECK_EXIT();
    mp_sleep_until(sm_t0 + 3000000000ull);
    CHECK(run_cli(out, sizeof out, ndev == 1 ? "set --sm 60 %s" : "set --sm-1 60 %s", dir) == 0,
          "set failed");
    uint64_t changed_at = mp_now();
    __atomic_store_n(&sm_end, changed_at + 4000000000ull, __ATOMIC_RELAXED);
    printf("changed %.2f s after the start\n", (double)(changed_at - sm_t0) / 1e9);
    for (int d = 0; d < ndev; d++) pthread_join(th[d], NULL);
    int starved = 0;
    for (int d = 0; d < ndev; d++) {
        struct drive *v = &drv[d];
        CHECK(v->errs == 0, "device %d: %d CUDA errors", d, v->errs);
        /* Shares: 1-3 s (before), and 1 s after the change for 3 s. */
        double before = 0, after = 0, want = ndev == 1 || d == 1 ? 0.60 : 0.30;
        for (int b = 10; b < 30; b++) before += v->work[b];
        size_t a0 = (size_t)((changed_at - sm_t0) / 100000000ull) + 10;
        for (size_t b = a0; b < a0 + 30 && b < BUCKETS; b++) after += v->work[b];
        before /= 2.0, after /= 3.0;
        /* Starved of CPU (2 cores shared with a suite), the loop cannot
         * keep even its share busy: the lower bars drop by the share of the
         * window it spent waiting for a CPU. The upper bars never move. */
        size_t a1 = a0 + 30 < BUCKETS ? a0 + 30 : BUCKETS;
        double wb = (double)(v->waited[30] - v->waited[10]) / 2e9;
        double wa = (double)(v->waited[a1] - v->waited[a0]) / 3e9;
        if (wb < 0) wb = 0;
        if (wa < 0) wa = 0;
        printf("device %d: busy share %.3f at cap 30 (1-3 s), %.3f at cap %.0f (1-4 s after the change); "
               "waiting for a CPU %.3f and %.3f of those windows\n", d, before, after, want * 100, wb, wa);
        CHECK(before > 0.27 - wb && before < 0.33, "device %d: share %.3f at cap 30", d, before);
        CHECK(after > want - 0.03 - wa && after < want + 0.03, "device %d: share %.3f 1 s after the change (cap %.0f)",
              d, after, want * 100);
        if (wb > RUNQ_STARVED_FRACTION || wa > RUNQ_STARVED_FRACTION) starved = 1;
    }
    /* A bar lowered by more than a fifth no longer tells the new cap from
     * the old (the control, its cap left at 30, read 0.198 against a bar
     * of 0.193 after waiting 0.377 of the window): such a run says nothing
     * either way. An upper bar it broke still fails it. */
    if (!check_failures && starved) {
        printf("SKIPPED: waiting for a CPU over a fifth of a window; the change not judged\n");
        return 77;
    }
    return check_failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    cli = getenv("CLI");
    root = getenv("CUDACAP_STATE_DIR");
    if (argc != 2 || !cli || !root) {
        fprintf(stderr, "usage: CLI=... CUDACAP_STATE_DIR=... config_live mem|mem2|over|over2|sm|sm2\n");
        return 2;
    }
    /* The container's folder under the root `cudacap status` lists. */
    mkdir(root, 0700);
    snprintf(dir, sizeof dir, "%s/c", root);
    setenv("CUDACAP_STATE_DIR", dir, 1);
    char out[2048];
    /* The folder prepared before the first CUDA call reads the caps. */
    CHECK(run_cli(out, sizeof out, "prepare --mem 1g --sm 30 %s", dir) == 0, "prepare failed");
    if (check_failures) CHECK_EXIT();
    if (!strcmp(argv[1], "mem")) return mem_mode();
    if (!strcmp(argv[1], "mem2")) return mem2_mode();
    if (!strcmp(argv[1], "over")) return over_mode();
    if (!strcmp(argv[1], "over2")) return over2_mode();
    if (!strcmp(argv[1], "sm")) return sm_mode(1);
    if (!strcmp(argv[1], "sm2")) return sm_mode(2);
    return 2;
}
