/* Containers of saturating workers run at once (tests/saturate_worker.h):
 * each container its own state folder and cap, its workers this test's
 * executable re-run as `--worker OUT T0`, each with the environment named
 * in its container. For compute_cheap.c and compute_preempt.c. */
#ifndef CC_TEST_CONTAINERS_RUN_H
#define CC_TEST_CONTAINERS_RUN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "compute_mp.h"

struct cont {
    char state[512], census[600]; /* census: state + "/census" */
    int cap, nproc;
    const char *env[4]; /* "NAME=VALUE" for its workers, NULL-ended */
    double pct, starved; /* the share; its workers' longest run-queue wait, s */
};

/* Runs the containers' workers at once; fills each one's share of run_ns
 * (the workers' measured window). Each worker counts its calls of the
 * port's fault points in the container's census file. */
static inline void containers_run(char *argv0, struct cont *c, int nc, uint64_t run_ns)
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
    CHECK(mp_wait_all(pids, k) == 0, "a worker failed");
    k = 0;
    for (int j = 0; j < nc; j++) {
        double w = 0;
        c[j].starved = 0;
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
