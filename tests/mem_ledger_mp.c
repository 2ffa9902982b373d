/* Multi-process tests of the memory ledger (src/cap/mem/), no CUDA.
 *
 *   mem_ledger_mp race DIR   8 processes churn reservations against one cap
 *                            and race for the last bytes; what they hold
 *                            together must never pass the cap.
 *   mem_ledger_mp kill DIR   kill -9 storm at random points of reserve and
 *                            release; then the ledger must equal what the
 *                            survivors hold, within one second.
 *
 * Negative controls (tests/memory.cmake builds this file twice more, both
 * registered WILL_FAIL): -DCC_ML_TEST_LOCAL_ONLY replaces the container-wide
 * sum by the own slot (a per-process cap): "race" then sees the processes
 * together hold up to 8x the cap and fails. -DCC_ML_TEST_NO_SWEEP disables the
 * liveness sweep: "kill" then finds the killed processes' bytes still counted
 * and fails. Both were run by hand and by ctest and fail as stated. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cap/memledger.h"
#include "check.h"
#include "mp_util.h"
#include "cudacap/abi_mem_region.h"

#define NPROC 8
#define MIB (1ull << 20)
static const char *UUID = "GPU-00000000-test-ledg-0000-000000000000";

struct shared {
    int go, stop, finish;
    uint64_t held_total, max_seen, ok, fail;
    uint64_t held[64];
    int ready[64];
};
static struct shared *S;

static void fresh_dir(const char *dir)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
    if (system(cmd) != 0) fprintf(stderr, "cannot prepare %s\n", dir);
}

/* ---- race ------------------------------------------------------------- */

static void race_child(const char *dir, int id, uint64_t cap)
{
    int h = cc_ml_device(dir, UUID, cap);
    uint64_t seed = 0x9e3779b97f4a7c15ull ^ ((uint64_t)getpid() << 20) ^ (uint64_t)id;
    uint64_t chunks[256];
    int n = 0;
    while (!__atomic_load_n(&S->go, __ATOMIC_ACQUIRE)) {
    }
    uint64_t end = now_ns() + 1500000000ull;
    while (now_ns() < end) {
        uint64_t x = (1 + rnd(&seed) % 8) * MIB;
        if (n < 256 && cc_ml_reserve(h, x, cap) == 0) {
            /* Counted after the reserve, uncounted before the release: the
             * test's total never exceeds what the ledger let through. */
            uint64_t t = __atomic_add_fetch(&S->held_total, x, __ATOMIC_SEQ_CST);
            uint64_t m = __atomic_load_n(&S->max_seen, __ATOMIC_RELAXED);
            while (t > m && !__atomic_compare_exchange_n(&S->max_seen, &m, t, 0, __ATOMIC_RELAXED,
                                                         __ATOMIC_RELAXED)) {
            }
            chunks[n++] = x;
            __atomic_add_fetch(&S->ok, 1, __ATOMIC_RELAXED);
        } else {
            __atomic_add_fetch(&S->fail, 1, __ATOMIC_RELAXED);
        }
        /* Mostly hold (so everyone fights for the last bytes), sometimes free. */
        if (n && rnd(&seed) % 3 == 0) {
            int k = (int)(rnd(&seed) % (uint64_t)n);
            __atomic_sub_fetch(&S->held_total, chunks[k], __ATOMIC_SEQ_CST);
            cc_ml_release(h, chunks[k]);
            chunks[k] = chunks[--n];
        }
    }
    while (n) {
        __atomic_sub_fetch(&S->held_total, chunks[--n], __ATOMIC_SEQ_CST);
        cc_ml_release(h, chunks[n]);
    }
    _exit(0);
}

static int race(const char *dir)
{
    const uint64_t cap = 64 * MIB;
    pid_t kids[NPROC];
    for (int i = 0; i < NPROC; i++) {
        kids[i] = fork();
        if (kids[i] == 0) race_child(dir, i, cap);
    }
    __atomic_store_n(&S->go, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < NPROC; i++) waitpid(kids[i], NULL, 0);
    int h = cc_ml_device(dir, UUID, cap);
    printf("race: %llu reservations, %llu refused, max held together %llu MiB of a %llu MiB cap\n",
           (unsigned long long)S->ok, (unsigned long long)S->fail,
           (unsigned long long)(S->max_seen / MIB), (unsigned long long)(cap / MIB));
    CHECK(S->max_seen <= cap, "processes held %llu bytes together, cap %llu",
          (unsigned long long)S->max_seen, (unsigned long long)cap);
    CHECK(S->max_seen >= cap - 8 * MIB, "the cap was never approached (max %llu)",
          (unsigned long long)S->max_seen);
    CHECK(S->ok > 100 && S->fail > 100, "not contested: %llu ok, %llu refused",
          (unsigned long long)S->ok, (unsigned long long)S->fail);
    CHECK(cc_ml_used(h) == 0, "ledger holds %llu bytes after everyone freed",
          (unsigned long long)cc_ml_used(h));
    CHECK_EXIT();
}

/* ---- kill storm ------------------------------------------------------- */

static void kill_child(const char *dir, int id, uint64_t cap)
{
    int h = cc_ml_device(dir, UUID, cap);
    uint64_t seed = 0x2545f4914f6cdd1dull ^ ((uint64_t)getpid() << 16);
    uint64_t chunks[64];
    int n = 0;
    while (!__atomic_load_n(&S->stop, __ATOMIC_ACQUIRE)) {
        uint64_t x = (1 + rnd(&seed) % 16) * MIB;
        if (n < 64 && cc_ml_reserve(h, x, cap) == 0) chunks[n++] = x;
        if (n && rnd(&seed) % 2) {
            int k = (int)(rnd(&seed) % (uint64_t)n);
            cc_ml_release(h, chunks[k]);
            chunks[k] = chunks[--n];
        }
    }
    uint64_t held = 0;
    for (int i = 0; i < n; i++) held += chunks[i];
    S->held[id] = held;
    __atomic_store_n(&S->ready[id], 1, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&S->finish, __ATOMIC_ACQUIRE)) usleep(1000);
    while (n) cc_ml_release(h, chunks[--n]);
    _exit(0);
}

static int storm(const char *dir)
{
    const uint64_t cap = 2048 * MIB;
    enum { SLOTS = 64, KILLS = 50 };
    pid_t kids[SLOTS] = {0};
    uint64_t seed = (uint64_t)now_ns() | 1;
    for (int i = 0; i < NPROC; i++)
        if ((kids[i] = fork()) == 0) kill_child(dir, i, cap);
    int next = NPROC, kills = 0;
    /* Each kill lands at a random point of a child's reserve/release loop;
     * a fresh child replaces it, so NPROC keep churning throughout. */
    while (kills < KILLS) {
        usleep((useconds_t)(rnd(&seed) % 20000));
        int v = (int)(rnd(&seed) % (uint64_t)next);
        if (!kids[v]) continue;
        kill(kids[v], SIGKILL);
        waitpid(kids[v], NULL, 0);
        kids[v] = 0;
        kills++;
        if (next < SLOTS) {
            if ((kids[next] = fork()) == 0) kill_child(dir, next, cap);
            next++;
        }
    }
    __atomic_store_n(&S->stop, 1, __ATOMIC_RELEASE);
    uint64_t expect = 0;
    int alive = 0;
    for (int i = 0; i < next; i++) {
        if (!kids[i]) continue;
        alive++;
        while (!__atomic_load_n(&S->ready[i], __ATOMIC_ACQUIRE)) usleep(1000);
        expect += S->held[i];
    }
    int h = cc_ml_device(dir, UUID, cap);
    uint64_t t0 = now_ns(), used;
    do {
        cc_ml_sweep();
        used = cc_ml_used(h);
    } while (used != expect && now_ns() - t0 < 1000000000ull && usleep(10000) == 0);
    printf("kill: %d kills, %d survivors hold %llu MiB; ledger %llu MiB after %.1f ms\n", kills,
           alive, (unsigned long long)(expect / MIB), (unsigned long long)(used / MIB),
           (now_ns() - t0) / 1e6);
    CHECK(used == expect, "ledger %llu != survivors' %llu after 1 s", (unsigned long long)used,
          (unsigned long long)expect);
    __atomic_store_n(&S->finish, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < next; i++)
        if (kids[i]) waitpid(kids[i], NULL, 0);
    cc_ml_sweep();
    CHECK(cc_ml_used(h) == 0, "ledger holds %llu after all exits",
          (unsigned long long)cc_ml_used(h));
    CHECK_EXIT();
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s race|kill DIR\n", argv[0]);
        return 2;
    }
    fresh_dir(argv[2]);
    S = mmap(NULL, sizeof *S, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (S == MAP_FAILED) return 1;
    if (!strcmp(argv[1], "race")) return race(argv[2]);
    if (!strcmp(argv[1], "kill")) return storm(argv[2]);
    return 2;
}
