/* Containers of saturating workers run at once (tests/saturate_worker.h):
 * each container its own state folder and cap, its workers this test's
 * executable re-run as `--worker OUT T0`, each with the environment named
 * in its container. For compute_cheap.c, compute_preempt.c and
 * compute_twocont.c. */
#ifndef CC_TEST_CONTAINERS_RUN_H
#define CC_TEST_CONTAINERS_RUN_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "compute_mp.h"

struct cont {
    char state[512], census[600]; /* census: state + "/census" */
    int cap, nproc;
    const char *env[4]; /* "NAME=VALUE" for its workers, NULL-ended */
    /* The share; its workers' longest run-queue wait or the time the
     * machine did not run the parent's probe in the window, whichever is
     * longer, s. */
    double pct, starved;
};

/* Waits for the n workers while probing the machine: sleeps 2 ms at a time,
 * each time storing to a page of a shared file mapping beside `dir` (as the
 * library and the simulator store to theirs, so a write-back stall of the
 * file system stalls the probe as it stalls them), and adds up the
 * wake-ups more than 5 ms late that fall in [from, to). Run-queue wait alone
 * misses time the whole machine loses outside the run queues (a virtual
 * CPU not run by its host, tasks blocked in reclaim or I/O): in the TSan
 * suite of a CI run beside a suite loop (2026-12-06) three workers at cap
 * 30 completed no batch in their 3 s window, each waiting under 0.6 s on
 * a run queue, their watchers 15 cycles in 5 s where 50 are due. Sets
 * *bad to the workers that failed; returns the time lost, s. */
static inline double containers_wait(const pid_t *pids, int n, const char *dir, uint64_t from, uint64_t to,
                                     int *bad)
{
    char pf[700];
    snprintf(pf, sizeof pf, "%s.probe", dir); /* beside the folder: not the library's */
    int fd = open(pf, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    uint64_t *page = NULL;
    if (fd >= 0 && ftruncate(fd, 4096) == 0) {
        void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        page = m == MAP_FAILED ? NULL : m;
    }
    if (fd >= 0) close(fd);
    int done[8] = {0}, left = n;
    double lost = 0;
    *bad = 0;
    while (left > 0) {
        for (int i = 0; i < n; i++) {
            int st = 0;
            pid_t p = done[i] ? 0 : pids[i] <= 0 ? -1 : waitpid(pids[i], &st, WNOHANG);
            if (p == 0) continue;
            done[i] = 1, left--;
            *bad += p < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0;
        }
        uint64_t t = mp_now();
        usleep(2000);
        if (page) __atomic_add_fetch(page, 1, __ATOMIC_RELAXED);
        uint64_t now = mp_now(), a = t + 2000000, b = now;
        if (b < a + 5000000) continue;
        if (a < from) a = from;
        if (b > to) b = to;
        if (b > a) lost += (double)(b - a) * 1e-9;
    }
    if (page) munmap(page, 4096);
    return lost;
}

/* Runs the containers' workers at once; fills each one's share of run_ns
 * (the workers' measured window, after warm_ns: their `--worker` mode's). Each worker counts its calls of the
 * port's fault points in the container's census file. */
static inline void containers_run(char *argv0, struct cont *c, int nc, uint64_t warm_ns, uint64_t run_ns)
{
    char t0s[32], out[8][600]; /* state + "/work.N" */
    pid_t pids[8];
    int k = 0;
    uint64_t t0 = mp_now();
    snprintf(t0s, sizeof t0s, "%llu", (unsigned long long)t0);
    for (int j = 0; j < nc; j++) {
        mkdir(c[j].state, 0700);
        int n = snprintf(c[j].census, sizeof c[j].census, "%s/census", c[j].state);
        CHECK(n > 0 && (size_t)n < sizeof c[j].census, "state folder name too long");
        unlink(c[j].census);
        for (int i = 0; i < c[j].nproc && k < 8; i++, k++) {
            n = snprintf(out[k], sizeof out[k], "%s/work.%d", c[j].state, i);
            CHECK(n > 0 && (size_t)n < sizeof out[k], "state folder name too long");
            unlink(out[k]);
            pids[k] = fork();
            if (pids[k] == 0) {
                char cap[8];
                snprintf(cap, sizeof cap, "%d", c[j].cap);
                setenv("CUDACAP_STATE_DIR", c[j].state, 1);
                setenv("CUDACAP_SM_LIMIT", cap, 1);
                setenv("CUDACAP_TEST_FAULT_COUNT", c[j].census, 1);
                for (int e = 0; e < 4 && c[j].env[e]; e++) putenv((char *)c[j].env[e]);
                execl("/proc/self/exe", argv0, "--worker", out[k], t0s, (char *)NULL);
                _exit(127);
            }
            CHECK(pids[k] > 0, "fork failed");
        }
    }
    int bad = 0;
    double lost = containers_wait(pids, k, c[0].state, t0 + warm_ns, t0 + warm_ns + run_ns, &bad);
    CHECK(bad == 0, "a worker failed");
    if (lost > 0.05) printf("the machine did not run the probe for %.2f s of the window\n", lost);
    k = 0;
    for (int j = 0; j < nc; j++) {
        double w = 0;
        c[j].starved = lost;
        for (int i = 0; i < c[j].nproc && k < 8; i++, k++) {
            FILE *f = fopen(out[k], "r");
            double x = 0, q = 0;
            CHECK(f && fscanf(f, "%lf %lf", &x, &q) == 2, "no result from %s", out[k]);
            if (f) fclose(f);
            w += x;
            if (q > c[j].starved) c[j].starved = q;
        }
        c[j].pct = w / ((double)run_ns / 1e9) * 100;
    }
}

#endif
