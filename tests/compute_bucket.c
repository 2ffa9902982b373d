/* The shared bucket across processes (cudacap_core, no CUDA).
 *
 *   deductions  8 processes x 500k concurrent takes on one MAP_SHARED bucket:
 *               none lost. Negative control: built with -DCC_TEST_PLAIN_TAKE
 *               (load + store instead of CAS) the same run loses deductions
 *               (ctest compute.bucket.deductions.control, WILL_FAIL).
 *   bypass      consumers take while another process adds tokens and runs
 *               the anti-jitter bypass (trim the bucket to a target) in a
 *               loop: every token is accounted for (final = start + added +
 *               trims - taken). Negative
 *               control: -DCC_TEST_BYPASS_STORE (the seed's store) resurrects
 *               tokens (compute.bucket.bypass.control, WILL_FAIL).
 *   pace        who waits (cc_pace_contended): one process alone is paced,
 *               two processes waiting within the window mean lumps, until
 *               the window passes; forged stamps give 0 or 1, nothing else;
 *               then two real processes waiting in turn on a shared record
 *               both see lumps. Negative control: -DCC_TEST_NO_PACE_DETECT
 *               (never lumps; compute.bucket.pace.control, WILL_FAIL),
 *               checked by running it: the two-pid cases fail. */
#include <string.h>

#include "check.h"
#include "compute_mp.h"
#include "controls/bucket.h" /* cap/compute/bucket.h, and its controls under their switches */

struct shm {
    int64_t bucket __attribute__((aligned(64)));
    uint32_t barrier;
    int64_t taken[16];
    int64_t deltas;
    uint32_t stop;
    uint64_t bypasses;
};

static int deductions(void)
{
    enum { N = 8, M = 1000000 };
    struct shm *s = mp_shared(sizeof *s);
    const int64_t start = 1000000000000ll;
    s->bucket = start;
    pid_t pids[N];
    for (int i = 0; i < N; i++) {
        if ((pids[i] = fork()) == 0) {
            mp_barrier(&s->barrier, N);
            int64_t n = 0;
            for (int k = 0; k < M; k++) n += cc_bucket_try_take(&s->bucket, 1);
            s->taken[i] = n;
            _exit(0);
        }
    }
    CHECK(mp_wait_all(pids, N) == 0, "a child failed");
    int64_t taken = 0;
    for (int i = 0; i < N; i++) taken += s->taken[i];
    CHECK(taken == (int64_t)N * M, "takes admitted %lld of %lld", (long long)taken,
          (long long)N * M);
    int64_t lost = s->bucket - (start - taken);
    CHECK(lost == 0, "%lld deductions lost (bucket %lld, expected %lld)", (long long)lost,
          (long long)s->bucket, (long long)(start - taken));
    printf("deductions: %lld concurrent takes from %d processes, %lld lost\n", (long long)taken, N,
           (long long)lost);
    return 0;
}

static int bypass(void)
{
    enum { N = 4, M = 300000 };
    struct shm *s = mp_shared(sizeof *s);
    const int64_t target = 1000000000ll;
    s->bucket = target;
    pid_t pids[N + 1];
    for (int i = 0; i < N; i++) {
        if ((pids[i] = fork()) == 0) {
            mp_barrier(&s->barrier, N + 1);
            int64_t n = 0;
            /* Keep taking until the bypass really ran while we took: on a
             * busy machine the two may otherwise never overlap, and then
             * even a store loses nothing (the control would pass). */
            uint64_t b0 = __atomic_load_n(&s->bypasses, __ATOMIC_RELAXED);
            for (int k = 0; k < M || __atomic_load_n(&s->bypasses, __ATOMIC_RELAXED) < b0 + 20000; k++)
                n += cc_bucket_try_take(&s->bucket, 1);
            s->taken[i] = n;
            _exit(0);
        }
    }
    if ((pids[N] = fork()) == 0) {
        mp_barrier(&s->barrier, N + 1);
        int64_t sum = 0;
        while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
            /* Lift it above target so the trim has work (a refill would). */
            cc_bucket_add(&s->bucket, 64, INT64_MAX);
            sum += 64;
            sum += cc_bucket_trim_to(&s->bucket, target);
            __atomic_add_fetch(&s->bypasses, 1, __ATOMIC_RELAXED);
        }
        s->deltas = sum;
        _exit(0);
    }
    CHECK(mp_wait_all(pids, N) == 0, "a consumer failed");
    __atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
    CHECK(mp_wait_all(&pids[N], 1) == 0, "the bypass process failed");
    int64_t taken = 0;
    for (int i = 0; i < N; i++) taken += s->taken[i];
    int64_t expect = target + s->deltas - taken;
    CHECK(s->bucket == expect, "bucket %lld, accounted %lld: %lld tokens resurrected",
          (long long)s->bucket, (long long)expect, (long long)(s->bucket - expect));
    printf("bypass: %lld takes during bypasses (sum of deltas %lld), bucket %lld, accounted %lld\n",
           (long long)taken, (long long)s->deltas, (long long)s->bucket, (long long)expect);
    return 0;
}

static void pace(void)
{
    cc_compute_pace_t p;
    memset(&p, 0, sizeof p);
    const uint64_t T = 1000000000000ull, MS = 1000000ull;
    CHECK(cc_pace_contended(&p, 100, T) == 0, "a first waiter alone");
    CHECK(cc_pace_contended(&p, 100, T + MS) == 0, "the same process again");
    CHECK(cc_pace_contended(&p, 200, T + 2 * MS) == 1, "a second process within the window");
    CHECK(cc_pace_contended(&p, 100, T + 3 * MS) == 1, "the first process sees it too");
    CHECK(cc_pace_contended(&p, 100, T + 150 * MS) == 1, "still within the window");
    CHECK(cc_pace_contended(&p, 100, T + 300 * MS) == 0, "alone again after the window");
    CHECK(cc_pace_contended(&p, 200, T + 900 * MS) == 0, "another process, long after");
    /* Forged stamps: never a crash, never stuck in lumps for longer than a
     * window past now. */
    p.multi_ns = UINT64_MAX;
    CHECK(cc_pace_contended(&p, 200, T + MS) == 0, "a multi stamp far in the future");
    p.multi_ns = T + 2 * CC_PACE_WINDOW_NS;
    p.wait_ns = UINT64_MAX;
    p.pid = 300;
    CHECK(cc_pace_contended(&p, 200, T) == 0, "a wait stamp in the future is no overlap");
    CHECK(cc_pace_contended(NULL, 200, T) == 0, "no record: paced");

    /* Two processes on one shared record, waiting in turn. */
    cc_compute_pace_t *sp = mp_shared(sizeof *sp);
    /* seen[k]: calls that found contention, of counted[k]: the calls made
     * once the other process had made its first (one held off its core
     * after the barrier leaves the other alone meanwhile: 19 of 50 once,
     * beside two suites); [4]: the start barrier; [5 + k]: calls made. */
    uint32_t *seen = mp_shared(8 * sizeof *seen), *counted = seen + 2;
    memset(sp, 0, sizeof *sp);
    pid_t pids[2];
    for (int k = 0; k < 2; k++) {
        pids[k] = fork();
        if (pids[k] == 0) {
            mp_barrier(&seen[4], 2);
            for (int i = 0; i < 50; i++) {
                int other = __atomic_load_n(&seen[5 + (1 - k)], __ATOMIC_ACQUIRE) > 0;
                int c = cc_pace_contended(sp, (uint32_t)getpid(), mp_now());
                __atomic_add_fetch(&seen[5 + k], 1, __ATOMIC_RELEASE);
                if (other) counted[k]++, seen[k] += (uint32_t)c;
                mp_msleep(1);
            }
            _exit(0);
        }
    }
    CHECK(mp_wait_all(pids, 2) == 0, "a child failed");
    printf("pace: two waiting processes saw lumps %u of %u and %u of %u times\n", seen[0], counted[0], seen[1],
           counted[1]);
    for (int k = 0; k < 2; k++)
        if (counted[k] >= 10) /* fewer: the other ran alone nearly throughout */
            CHECK(seen[k] * 2 > counted[k], "process %d saw lumps %u of %u times", k, seen[k], counted[k]);
}

int main(int argc, char **argv)
{
    const char *which = argc > 1 ? argv[1] : "all";
    if (!strcmp(which, "deductions") || !strcmp(which, "all")) deductions();
    if (!strcmp(which, "bypass") || !strcmp(which, "all")) bypass();
    if (!strcmp(which, "pace") || !strcmp(which, "all")) pace();
    CHECK_EXIT();
}
