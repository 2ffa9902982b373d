/* The memory ledger (memledger.h). Layout in include/cudacap/mem_region.h.
 *
 * EXACT CHECK-AND-RESERVE WITHOUT A LOCK
 * A process reserves b bytes on device d by
 *   (1) adding b to its OWN slot, used[d][me]    (seq_cst read-modify-write)
 *   (2) reading slots_hw and every slot < hw     (seq_cst loads)
 *   (3) committing if the sum <= cap, else subtracting b again and failing.
 * Claim: the bytes of committed, not yet released reservations never exceed
 * the cap. Proof: all the operations above are seq_cst, so they lie in one
 * total order S consistent with each process's program order. Take the set
 * of reservations committed and outstanding at any moment and let X be the
 * one whose add (1) comes last in S. X's loads (2) follow X's add in S, so
 * they follow every other member's add, and read each member's slot no
 * smaller than that member's outstanding committed bytes (a slot only goes
 * down by a release of bytes that are then no longer outstanding, or by a
 * failed attempt's take-back of its own add). A slot claimed late is still
 * read: its owner raises slots_hw (seq_cst) before its first add, so before
 * X's load of slots_hw. Hence X's sum >= the outstanding total, and X
 * committed only if that sum <= cap. Concurrent attempts can only make each
 * other fail (each may see the other's transient add); a failing reserver
 * therefore retries a few times, with its own add taken back, while the
 * others' bytes alone leave room, so contention does not look like OOM.
 * A process killed between (1) and (3) leaves b in its slot; the liveness
 * sweep reclaims the whole slot. tests/mem_ledger_mp.c ("race") checks the claim with 8
 * processes, and fails with the sum replaced by the own slot only
 * (-DCC_ML_TEST_LOCAL_ONLY, the negative control).
 * "Every slot" is every one of the CC_MEM_SLOTS slots whose owner word is
 * not 0 (seq_cst load; a claimer stores its owner word before its first add),
 * not those below slots_hw: one corrupted hw word must not hide live slots.
 * Each other slot counts at most cap + 1 (one corrupted count costs at
 * most the cap, and a slot past the cap refuses everything anyway), and our
 * own slot counts at least our private mirror of it (below).
 *
 * THE PROCESS'S OWN TRACKING IS AUTHORITATIVE
 * Each bind keeps a private mirror of what this process put in its slot
 * (changed before the shared count on the way up, after it on the way
 * down, so the mirror is never below the shared count's truth). Whenever the
 * region was rebuilt (its generation changed), replaced by the SIGBUS guard,
 * moved to another inode, or our slot was taken or its counts differ from
 * the mirror, the process re-publishes: it takes a slot again and stores the
 * mirror into it (a repair of the counts alone is a CAS from the value read,
 * so a concurrent add is never overwritten: at worst the slot over-counts an
 * operation in flight, until the next check). A keeper thread per process
 * checks every CC_ML_KEEP_NS and wakes at once on the generation futex; a
 * rebuilder waits, with the init lock held (so nobody new attaches), until
 * every live process (found by its liveness lock byte, not by the region)
 * has re-published, or CC_ML_REPUBLISH_WAIT_NS passed (docs/memory.md). */
#include "cap/memledger.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "cudacap/counters.h"
#include "cudacap/mem_region.h"
#include "region/region.h"
#include "region/specs.h"

struct ledger {
    cc_mem_region_t *r;
    int slot;     /* -1: not (yet) attached in this process (atomic, relaxed) */
    int shared;   /* 1: the container's region; 0: private memory */
    uint32_t gen; /* the region generation our slot was published into */
};

static struct ledger g_sh, g_pv;
static int g_attached; /* 1 once the attach of this process ran */
static char g_dir[1024];
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_fd = -1;  /* memory.region, holding our liveness byte (shared ledger) */
static dev_t g_fdev;
static ino_t g_fino;
static int g_keeper;   /* the keeper thread runs in this process */
static int g_rejoin;   /* attach found no usable file: the keeper tries again (g_mu) */
static uint32_t g_host_pid;

/* A bound in a rebuild: how long a rebuilder waits for the live processes to
 * re-publish, and the keeper's period. */
#define CC_ML_REPUBLISH_WAIT_NS 1000000000ll
#define CC_ML_KEEP_NS 100000000l

/* Handles: index into binds; a device entry of the shared or the private
 * ledger. Written under g_mu before the handle is returned; l and d change
 * (atomic stores, under g_mu) when the process re-publishes. */
#define NBINDS (2 * CC_MEM_DEVS)
static struct bind {
    struct ledger *l;
    int d;
    uint64_t key;
    uint64_t cap;       /* per-slot clamp (the cap this process applies) */
    char uuid[CC_MEM_UUID_LEN];
    uint64_t m_used;    /* mirror of our used[d][slot] (atomic) */
    uint64_t m_ovh;     /* mirror of our overhead[d][slot] */
    uint64_t m_ctx;     /* a context's size as we learned or saw it (relaxed) */
} g_binds[NBINDS];

/* A rebuilt or rejoined region forgot the context size (or holds garbage
 * there): put back ours. */
static void heal_ctx(cc_mem_region_t *r, int d, const struct bind *b)
{
    uint64_t mine = __atomic_load_n(&b->m_ctx, __ATOMIC_RELAXED);
    uint64_t v = __atomic_load_n(&r->ctx_size[d], __ATOMIC_RELAXED);
    if (mine && (!v || (b->cap && v > b->cap))) /* forgotten, or garbage */
        __atomic_store_n(&r->ctx_size[d], mine, __ATOMIC_RELAXED);
}
static int g_nbinds;

static uint64_t sat_add(uint64_t a, uint64_t b) { return a + b < a ? UINT64_MAX : a + b; }

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- liveness ---------------------------------------------------------- */

/* Reads field 3 (state) and 22 (start time) of /proc/<pid>/stat. The comm
 * field may hold spaces and parentheses: parse after the LAST ')'. */
static int read_stat(pid_t pid, char *state, uint64_t *start)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return -1;
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    if (!p || p[1] != ' ') return -1;
    p += 2; /* field 3 */
    *state = *p;
    for (int f = 3; f < 22; f++) {
        p = strchr(p, ' ');
        if (!p) return -1;
        p++;
    }
    *start = strtoull(p, NULL, 10);
    return 0;
}

uint64_t cc_ml_start_time(pid_t pid)
{
    char st;
    uint64_t t;
    return read_stat(pid, &st, &t) == 0 ? t : 0;
}

int cc_ml_pid_alive(uint32_t pid, uint64_t start_time)
{
    if (pid == 0 || pid >= CC_MEM_REAPING) return 0;
    if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) return 0;
    char st;
    uint64_t t;
    if (read_stat((pid_t)pid, &st, &t) != 0) return 1; /* no /proc: trust kill */
    if (st == 'Z' || st == 'X') return 0;
    if (start_time && t != start_time) return 0; /* the pid was reused */
    return 1;
}

/* ---- liveness locks ------------------------------------------------------ */

static int live_lock(int fd, uint32_t pid)
{
    if (fd < 0 || pid == 0 || pid >= CC_MEM_LIVE_PIDS) return -1;
    return cc_lock_range(fd, (off_t)(CC_MEM_LIVE_BASE + pid), 1, F_WRLCK, 0);
}

/* 1: pid holds its liveness byte; 0: it does not; -1: cannot tell. */
static int live_held(uint32_t pid)
{
    if (g_fd < 0 || pid == 0 || pid >= CC_MEM_LIVE_PIDS) return -1;
    if (pid == (uint32_t)getpid()) return 1;
    off_t at, n;
    return cc_lock_query(g_fd, (off_t)(CC_MEM_LIVE_BASE + pid), 1, &at, &n);
}

/* The pids holding a liveness byte, other than us (at most max). */
static int live_pids(int fd, uint32_t *out, int max)
{
    off_t lo_s[64], hi_s[64];
    int top = 0, n = 0;
    lo_s[top] = (off_t)CC_MEM_LIVE_BASE + 1;
    hi_s[top++] = (off_t)(CC_MEM_LIVE_BASE + CC_MEM_LIVE_PIDS);
    while (top > 0 && n < max) {
        off_t lo = lo_s[--top], hi = hi_s[top];
        if (lo >= hi) continue;
        off_t at, len;
        if (cc_lock_query(fd, lo, hi - lo, &at, &len) != 1) continue;
        if (at < lo) at = lo;
        off_t end = at + len > hi ? hi : at + len;
        for (off_t p = at; p < end && n < max; p++) out[n++] = (uint32_t)(p - (off_t)CC_MEM_LIVE_BASE);
        if (top + 2 > 64) break; /* bounded: never more than 64 ranges pending */
        lo_s[top] = lo, hi_s[top++] = at;
        lo_s[top] = end, hi_s[top++] = hi;
    }
    return n;
}

/* ---- slots ------------------------------------------------------------- */

__attribute__((unused)) static uint32_t hw_of(const cc_mem_region_t *r)
{
    uint32_t hw = __atomic_load_n(&r->slots_hw, __ATOMIC_SEQ_CST);
    return hw > CC_MEM_SLOTS ? CC_MEM_SLOTS : hw; /* never trust the file */
}

/* How far the sweep and the sum look: every slot, unless the control
 * build trusts slots_hw as the first version did. */
static uint32_t scan_end(const cc_mem_region_t *r)
{
#ifdef CC_ML_TEST_TRUST_HW /* negative control of mem.region.slots */
    return hw_of(r);
#else
    (void)r;
    return CC_MEM_SLOTS;
#endif
}

/* Empties slot i, which we own as its reaper (or its dead owner's image).
 * Counts first, owner last (release): a new owner finds zeros. */
static void clear_slot(cc_mem_region_t *r, int i)
{
    for (int d = 0; d < CC_MEM_DEVS; d++) {
        __atomic_store_n(&r->used[d][i], 0, __ATOMIC_SEQ_CST);
        __atomic_store_n(&r->overhead[d][i], 0, __ATOMIC_SEQ_CST);
    }
    __atomic_store_n(&r->proc[i].host_pid, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&r->proc[i].start_time, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&r->proc[i].owner, 0, __ATOMIC_SEQ_CST);
}

/* Whether the owner of a slot lives: its liveness byte first (independent
 * of the region's content), then the pid and its start time. */
static int owner_alive(uint32_t pid, uint64_t start_time)
{
    /* Held: the process with that pid is attached now (a pid reused by a
     * new process is no better: that process reaps the slots naming its pid
     * when it attaches). One fcntl, no /proc read. */
    int held = live_held(pid);
    if (held >= 0) return held;
    return cc_ml_pid_alive(pid, start_time);
}

/* Reaps slot i if its owner (or its interrupted reaper) is dead, or if it
 * names our own pid without being our slot (left by this pid before an
 * exec, or a copy). Returns 1 when reaped. */
static int reap_if_dead(cc_mem_region_t *r, int i, int mine)
{
#ifdef CC_ML_TEST_NO_SWEEP
    (void)r, (void)i, (void)mine, (void)owner_alive;
    return 0; /* negative control: killed processes' bytes stay */
#else
    uint32_t o = __atomic_load_n(&r->proc[i].owner, __ATOMIC_ACQUIRE);
    if (o == 0 || i == mine) return 0;
    /* After the free-slot test: getpid is a system call, and a sweep of the
     * 512 slots called it for each (255 us a refusal at the cap). */
    uint32_t me = (uint32_t)getpid();
    if (o & CC_MEM_REAPING) {
        uint32_t p = o & ~CC_MEM_REAPING;
        if (p == me) return 0; /* our own claim in progress (another thread) */
        if (owner_alive(p, 0)) return 0; /* reaper or claimer at work */
    } else if (o != me) {
        uint64_t st = __atomic_load_n(&r->proc[i].start_time, __ATOMIC_RELAXED);
        if (owner_alive(o, st)) return 0;
    }
    /* Take the slot for cleaning; losing the CAS means someone else did. */
    if (!__atomic_compare_exchange_n(&r->proc[i].owner, &o, CC_MEM_REAPING | me, 0,
                                     __ATOMIC_SEQ_CST, __ATOMIC_ACQUIRE))
        return 0;
    clear_slot(r, i);
    return 1;
#endif
}

static int sweep(struct ledger *l)
{
    if (!l->r || !l->shared) return 0;
    int n = 0;
    uint32_t end = scan_end(l->r);
    int mine = __atomic_load_n(&l->slot, __ATOMIC_RELAXED);
    for (uint32_t i = 0; i < end; i++) n += reap_if_dead(l->r, (int)i, mine);
    return n;
}

static void check_locked(int full);

int cc_ml_sweep(void)
{
    int n = sweep(&g_sh);
    /* And our own slot: the queries that sweep (cuMemGetInfo, NVML) show
     * a repaired figure. */
    pthread_mutex_lock(&g_mu);
    check_locked(0);
    pthread_mutex_unlock(&g_mu);
    return n;
}

/* Claims a free slot for us: owner CC_MEM_REAPING | pid while we fill it
 * (counted, and left alone by sweepers while we live); the caller stores
 * the counts and then publish_owner(). */
static int claim_slot(cc_mem_region_t *r)
{
    uint32_t me = (uint32_t)getpid();
    for (int i = 0; i < CC_MEM_SLOTS; i++) {
        if (__atomic_load_n(&r->proc[i].owner, __ATOMIC_RELAXED)) continue;
        /* Display (cudacap status) only: the sum scans every slot. */
        uint32_t hw = __atomic_load_n(&r->slots_hw, __ATOMIC_SEQ_CST);
        while (hw < (uint32_t)i + 1 &&
               !__atomic_compare_exchange_n(&r->slots_hw, &hw, (uint32_t)i + 1, 0,
                                            __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
        }
        uint32_t z = 0;
        if (!__atomic_compare_exchange_n(&r->proc[i].owner, &z, CC_MEM_REAPING | me, 0,
                                         __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
            continue;
        /* Free slots may hold garbage (they are never summed): reset. */
        for (int d = 0; d < CC_MEM_DEVS; d++) {
            __atomic_store_n(&r->used[d][i], 0, __ATOMIC_SEQ_CST);
            __atomic_store_n(&r->overhead[d][i], 0, __ATOMIC_SEQ_CST);
        }
        __atomic_store_n(&r->proc[i].start_time, cc_ml_start_time((pid_t)me), __ATOMIC_RELAXED);
        __atomic_store_n(&r->proc[i].host_pid, g_host_pid, __ATOMIC_RELAXED);
        return i;
    }
    return -1;
}

static void publish_owner(cc_mem_region_t *r, int i)
{
    /* Seq-cst: ordered before our first add to the slot (the proof). */
    __atomic_store_n(&r->proc[i].owner, (uint32_t)getpid(), __ATOMIC_SEQ_CST);
}

static int private_ready(void)
{
    if (g_pv.r) return 1;
    /* MAP_PRIVATE: a fork child gets a copy, which it zeroes (it owns none
     * of the parent's allocations). */
    void *p = mmap(NULL, sizeof(cc_mem_region_t), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 0;
    g_pv.r = p;
    g_pv.r->proc[0].owner = (uint32_t)getpid();
    g_pv.r->slots_hw = 1;
    g_pv.slot = 0;
    g_pv.shared = 0;
    return 1;
}

static uint32_t new_generation(void)
{
    uint32_t g = (uint32_t)(mono_ns() ^ ((uint64_t)getpid() * 2654435761u));
    return g ? g : 1;
}

/* Region init (after the rebuild's memset, before the magic): a generation
 * that differs from the one any live process published into. */
static void region_init(void *base, void *arg)
{
    (void)arg;
    cc_mem_region_t *r = base;
    __atomic_store_n(&r->generation, new_generation(), __ATOMIC_SEQ_CST);
}

static struct cc_region_spec ml_spec(void)
{
    struct cc_region_spec s = cc_mem_region_spec;
    s.init = region_init;
    return s;
}

static long futex(uint32_t *w, int op, uint32_t val, const struct timespec *ts)
{
    return syscall(SYS_futex, w, op, val, ts, NULL, 0);
}

/* We rebuilt the region (init lock held, so nobody attaches meanwhile):
 * every live process that had a slot re-publishes before we go on, or the
 * bound passes. Live processes are those holding a liveness byte. */
static void rebuild_wait(cc_mem_region_t *r, int fd)
{
#ifdef CC_ML_TEST_NO_REPUBLISH /* negative control of mem.preload.rebuild */
    (void)r, (void)fd, (void)live_pids;
    return;
#else
    static uint32_t pids[CC_MEM_SLOTS];
    int n = live_pids(fd, pids, CC_MEM_SLOTS), left = n;
    if (n == 0) return;
    futex(&r->generation, FUTEX_WAKE, INT32_MAX, NULL);
    uint64_t t0 = mono_ns();
    while (left > 0) {
        left = 0;
        for (int k = 0; k < n; k++) {
            if (!pids[k]) continue;
            int done = 0;
            for (int i = 0; i < CC_MEM_SLOTS && !done; i++)
                done = __atomic_load_n(&r->proc[i].owner, __ATOMIC_ACQUIRE) == pids[k];
            off_t at, len;
            if (!done && cc_lock_query(fd, (off_t)(CC_MEM_LIVE_BASE + pids[k]), 1, &at, &len) != 1)
                done = 1; /* gone */
            if (done) pids[k] = 0;
            else left++;
        }
        if (left == 0) break;
        if (mono_ns() - t0 > (uint64_t)CC_ML_REPUBLISH_WAIT_NS) {
            cc_warn("memory cap: %s/%s was rebuilt; %d live process(es) did not re-publish "
                    "their memory within 1 s, the container may pass its cap by what they hold",
                    g_dir, CC_MEM_REGION_FILE, left);
            break;
        }
        futex(&r->generation, FUTEX_WAKE, INT32_MAX, NULL);
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    cc_info("memory cap: rebuilt %s/%s; %d live process(es) re-published in %.1f ms", g_dir,
            CC_MEM_REGION_FILE, n - left, (double)(mono_ns() - t0) / 1e6);
#endif
}

static void republish_locked(int full);
static void *keeper(void *arg);

static void start_keeper(void)
{
    if (g_keeper) return;
    g_keeper = 1;
    pthread_t th;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&th, &at, keeper, NULL) != 0)
        cc_info("memory cap: no keeper thread; this process re-publishes only when it allocates");
    pthread_attr_destroy(&at);
}

/* Binds of the shared ledger move to the private one with their mirrors
 * (the region cannot hold us any more): per-process cap from here on. */
static void go_private_locked(const char *why)
{
    cc_warn("memory cap: %s/%s: %s; this process is capped on its own (per-process cap)", g_dir,
            CC_MEM_REGION_FILE, why);
    for (int h = 0; h < g_nbinds; h++) {
        struct bind *b = &g_binds[h];
        if (__atomic_load_n(&b->l, __ATOMIC_RELAXED) != &g_sh) continue;
        int d = -1;
        for (int k = 0; k < CC_MEM_DEVS && d < 0; k++) {
            uint64_t key = g_pv.r->dev[k].key;
            if (key == b->key || key == 0) {
                g_pv.r->dev[k].key = b->key;
                d = k;
            }
        }
        if (d < 0) continue;
        __atomic_store_n(&g_pv.r->used[d][0], __atomic_load_n(&b->m_used, __ATOMIC_SEQ_CST),
                         __ATOMIC_SEQ_CST);
        __atomic_store_n(&g_pv.r->overhead[d][0], __atomic_load_n(&b->m_ovh, __ATOMIC_SEQ_CST),
                         __ATOMIC_SEQ_CST);
        __atomic_store_n(&b->d, d, __ATOMIC_RELAXED);
        __atomic_store_n(&b->l, &g_pv, __ATOMIC_RELEASE);
    }
    g_sh.shared = 0;
}

static void attach_locked(const char *dir)
{
    if (g_attached) return;
    g_attached = 1;
    if (dir && dir != g_dir) snprintf(g_dir, sizeof g_dir, "%s", dir);
    if (!private_ready()) cc_error("cannot map a private memory ledger; memory is not capped");
    /* No folder (""): the configuration already said why, once. */
    struct cc_region_spec spec = ml_spec();
    /* A fork child maps the inherited file again, at the same address, for
     * a descriptor (and liveness byte) of its own. */
    struct cc_region_opts o = {.fixed = g_sh.r, .keep_fd = 1};
    void *base = g_dir[0] ? cc_region_open_ex(g_dir, &spec, &o) : NULL;
    if (!base) {
        g_sh.shared = 0;
        if (g_sh.r) go_private_locked("cannot be mapped again");
        if (g_dir[0]) {
            cc_warn("memory cap: the container-wide ledger %s/%s is unavailable; this process "
                    "is capped on its own (per-process cap)", g_dir, CC_MEM_REGION_FILE);
#ifndef CC_ML_TEST_NO_REJOIN /* negative control of faults.lib */
            g_rejoin = 1; /* until the path names a file we can use: rejoin_locked */
#endif
            start_keeper();
        }
        return;
    }
    g_sh.r = base;
    g_fd = o.fd;
    g_fdev = o.dev;
    g_fino = o.ino;
    uint32_t me = (uint32_t)getpid();
    /* Before any slot: from now on a rebuilder waits for us. */
    if (live_lock(g_fd, me) != 0)
        cc_info("memory cap: no liveness lock (%s); a rebuild will not wait for this process",
                strerror(errno));
    if (o.rebuilt) rebuild_wait(g_sh.r, g_fd);
    __atomic_store_n(&g_sh.gen, __atomic_load_n(&g_sh.r->generation, __ATOMIC_SEQ_CST),
                     __ATOMIC_RELAXED);
    cc_region_unlock_init(g_fd);
    g_sh.shared = 1;
    __atomic_store_n(&g_sh.slot, -1, __ATOMIC_RELAXED);
    /* Slots naming our pid belong to this pid before an exec, or to a dead
     * process whose pid we reuse: reap them before claiming ours. */
    for (uint32_t i = 0; i < CC_MEM_SLOTS; i++)
        if (__atomic_load_n(&g_sh.r->proc[i].owner, __ATOMIC_ACQUIRE) == me)
            reap_if_dead(g_sh.r, (int)i, -1);
    int s = claim_slot(g_sh.r);
    if (s < 0 && sweep(&g_sh) > 0) s = claim_slot(g_sh.r);
    if (s < 0) {
        cc_warn("memory cap: all %d process slots of %s/%s are in use; this process is capped "
                "on its own (per-process cap)", CC_MEM_SLOTS, g_dir, CC_MEM_REGION_FILE);
        g_sh.shared = 0;
        return;
    }
    publish_owner(g_sh.r, s);
    __atomic_store_n(&g_sh.slot, s, __ATOMIC_RELAXED);
    if (g_nbinds) republish_locked(0); /* a fork child's binds: its (zero) mirrors */
    start_keeper();
}

int cc_ml_attach(const char *state_dir)
{
    pthread_mutex_lock(&g_mu);
    attach_locked(state_dir);
    int r = g_sh.r && g_sh.shared && g_sh.slot >= 0;
    pthread_mutex_unlock(&g_mu);
    return r;
}

/* ---- devices ----------------------------------------------------------- */

static uint64_t uuid_key(const char *uuid)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a 64 */
    for (const unsigned char *p = (const unsigned char *)uuid; *p; p++) h = (h ^ *p) * 1099511628211ull;
    return h | 1; /* 0 means a free entry */
}

static int find_dev(cc_mem_region_t *r, uint64_t key, const char *uuid, uint64_t limit)
{
    for (int d = 0; d < CC_MEM_DEVS; d++) {
        uint64_t k = __atomic_load_n(&r->dev[d].key, __ATOMIC_ACQUIRE);
        if (k == 0 && __atomic_compare_exchange_n(&r->dev[d].key, &k, key, 0, __ATOMIC_ACQ_REL,
                                                  __ATOMIC_ACQUIRE)) {
            /* Display only, so byte stores (readers may see it half written). */
            for (size_t i = 0; i < CC_MEM_UUID_LEN; i++) {
                char c = *uuid ? *uuid++ : 0;
                __atomic_store_n(&r->dev[d].uuid[i], i + 1 < CC_MEM_UUID_LEN ? c : 0,
                                 __ATOMIC_RELAXED);
            }
            k = key;
        }
        if (k == key) {
            if (limit) __atomic_store_n(&r->dev[d].limit, limit, __ATOMIC_RELAXED);
            return d;
        }
    }
    return -1;
}

/* ---- re-publication ------------------------------------------------------ */

/* The path names another file than the one we hold (replaced, or swapped
 * back after a swap): 1 when it is a regular file we could use. */
static int path_moved(void)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/%s", g_dir, CC_MEM_REGION_FILE);
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    return st.st_dev != g_fdev || st.st_ino != g_fino;
}

/* Maps the file again over our address (after the guard replaced it, or
 * when the path names another file, or the header is not ours): with our
 * descriptor when the file is whole and valid (no lock needed: a rebuilder
 * publishes the magic before it waits for us), else through the init lock
 * without waiting (busy: try again at the next check). 1 when mapped. */
static int remap_locked(int moved)
{
    struct cc_region_spec spec = ml_spec();
    struct stat st;
    if (!moved && g_fd >= 0 && fstat(g_fd, &st) == 0 && st.st_size == (off_t)spec.file_size) {
        void *p = mmap(g_sh.r, spec.file_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                       g_fd, 0);
        if (p != MAP_FAILED) {
            cc_region_unfault(g_sh.r);
            if (cc_region_valid(g_sh.r, &spec)) return 1;
        }
    }
    struct cc_region_opts o = {.fixed = g_sh.r, .keep_fd = 1, .try_lock = 1, .quiet = 1};
    void *b = cc_region_open_ex(g_dir, &spec, &o);
    if (!b) {
        if (errno != EAGAIN)
            cc_log_once(CC_LOG_WARN, "memory cap: %s/%s cannot be mapped again (%s); this process "
                                     "counts on its own until it can", g_dir, CC_MEM_REGION_FILE,
                        strerror(errno));
        return 0;
    }
    uint32_t me = (uint32_t)getpid();
    if (g_fd >= 0 && g_fd != o.fd) close(g_fd); /* our old liveness byte goes with it */
    g_fd = o.fd;
    g_fdev = o.dev;
    g_fino = o.ino;
    live_lock(g_fd, me);
    if (o.rebuilt) rebuild_wait(g_sh.r, g_fd);
    cc_region_unlock_init(g_fd);
    return 1;
}

/* Count repair: from the value read to the mirror, by CAS (see the top). */
static void repair(uint64_t *cell, const uint64_t *mirror)
{
    uint64_t s = __atomic_load_n(cell, __ATOMIC_SEQ_CST);
    uint64_t m = __atomic_load_n(mirror, __ATOMIC_SEQ_CST);
    if (s != m) __atomic_compare_exchange_n(cell, &s, m, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
}

/* Our device entry must be the first one that carries our device's key: a
 * forged key would otherwise split the container for good (a joiner claims
 * another entry, and each side sums a column the other does not write).
 * No entry has our key: ours gets it back in place (CAS from what we read).
 * Another entry has it first (a joiner claimed one): our counts move there
 * (new cells first: an over-count, never an under-count, meanwhile). Returns
 * the entry we count in. */
static int rekey_locked(cc_mem_region_t *r, struct bind *b, int s)
{
    int d = __atomic_load_n(&b->d, __ATOMIC_RELAXED);
#ifdef CC_ML_TEST_NO_REKEY /* negative control of faults.lib */
    (void)r, (void)s;
    return d;
#endif
    uint64_t k = __atomic_load_n(&r->dev[d].key, __ATOMIC_ACQUIRE);
    if (__builtin_expect(k == b->key, 1) && d == 0) return d; /* first entry, ours */
    int first = -1;
    for (int i = 0; i < CC_MEM_DEVS && first < 0; i++)
        if (__atomic_load_n(&r->dev[i].key, __ATOMIC_ACQUIRE) == b->key) first = i;
    if (first < 0)
        __atomic_compare_exchange_n(&r->dev[d].key, &k, b->key, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_RELAXED);
    int nd = find_dev(r, b->key, b->uuid, 0);
    if (nd < 0 || nd == d) return d;
    __atomic_store_n(&r->used[nd][s], __atomic_load_n(&b->m_used, __ATOMIC_SEQ_CST), __ATOMIC_SEQ_CST);
    __atomic_store_n(&r->overhead[nd][s], __atomic_load_n(&b->m_ovh, __ATOMIC_SEQ_CST),
                     __ATOMIC_SEQ_CST);
    __atomic_store_n(&b->d, nd, __ATOMIC_RELAXED);
    __atomic_store_n(&r->used[d][s], 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&r->overhead[d][s], 0, __ATOMIC_SEQ_CST);
    cc_info("memory cap: %s/%s: the entry of %s changed its key; this process counts in entry %d "
            "again", g_dir, CC_MEM_REGION_FILE, b->uuid, nd);
    return nd;
}

/* Makes our slot in the region say what this process holds (g_mu held). */
static void republish_locked(int full)
{
#ifdef CC_ML_TEST_NO_REPUBLISH
    return;
#endif
    if (!g_sh.r || !g_sh.shared || __atomic_load_n(&g_sh.slot, __ATOMIC_RELAXED) < 0) return;
    struct cc_region_spec spec = ml_spec();
    cc_mem_region_t *r = g_sh.r;
    int faulted = cc_region_faulted(r);
    int moved = full && path_moved(); /* a stat: the keeper's checks only */
    if (faulted || moved || !cc_region_valid(r, &spec)) {
        /* Not mapped again: keep what we have and try at the next check;
         * after a fault that is the guard's zeroed copy, in which we count
         * alone (per-process cap) meanwhile. */
        if (!remap_locked(moved) && !cc_region_faulted(r)) return;
    }
    uint32_t me = (uint32_t)getpid();
    uint32_t gen = __atomic_load_n(&r->generation, __ATOMIC_SEQ_CST);
    int s = __atomic_load_n(&g_sh.slot, __ATOMIC_RELAXED);
    int keep = gen == g_sh.gen && __atomic_load_n(&r->proc[s].owner, __ATOMIC_SEQ_CST) == me;
    if (keep) { /* same region, our slot: repair the counts only */
        for (int h = 0; h < g_nbinds; h++) {
            struct bind *b = &g_binds[h];
            if (__atomic_load_n(&b->l, __ATOMIC_RELAXED) != &g_sh) continue;
            int d = rekey_locked(r, b, s);
            repair(&r->used[d][s], &b->m_used);
            repair(&r->overhead[d][s], &b->m_ovh);
            heal_ctx(r, d, b);
        }
        return;
    }
    int ns = claim_slot(r);
    if (ns < 0 && sweep(&g_sh) > 0) ns = claim_slot(r);
    if (ns < 0) {
        go_private_locked("no process slot after a rebuild");
        return;
    }
    for (int h = 0; h < g_nbinds; h++) {
        struct bind *b = &g_binds[h];
        if (__atomic_load_n(&b->l, __ATOMIC_RELAXED) != &g_sh) continue;
        int d = find_dev(r, b->key, b->uuid, b->cap);
        if (d < 0) continue; /* no entry: its bytes stay out (warned at bind) */
        __atomic_store_n(&r->used[d][ns], __atomic_load_n(&b->m_used, __ATOMIC_SEQ_CST),
                         __ATOMIC_SEQ_CST);
        __atomic_store_n(&r->overhead[d][ns], __atomic_load_n(&b->m_ovh, __ATOMIC_SEQ_CST),
                         __ATOMIC_SEQ_CST);
        heal_ctx(r, d, b);
        __atomic_store_n(&b->d, d, __ATOMIC_RELAXED);
    }
    publish_owner(r, ns);
    /* Our old slot, if it still names us, is a copy: give it back. */
    if (gen == g_sh.gen && s != ns && __atomic_load_n(&r->proc[s].owner, __ATOMIC_SEQ_CST) == me)
        clear_slot(r, s);
    __atomic_store_n(&g_sh.slot, ns, __ATOMIC_RELAXED);
    __atomic_store_n(&g_sh.gen, gen, __ATOMIC_RELAXED);
    cc_info("memory cap: re-published this process's memory into %s/%s (slot %d)", g_dir,
            CC_MEM_REGION_FILE, ns);
}

/* What the keeper checks (full: also whether the path names another file),
 * and, without the stat, what runs before a refusal and in queries. */
static void check_locked(int full)
{
    if (!g_sh.r || !g_sh.shared) return;
    int s = __atomic_load_n(&g_sh.slot, __ATOMIC_RELAXED);
    if (s < 0) return;
    republish_locked(full); /* cheap when nothing changed: a few loads */
}

/* ---- rejoining ------------------------------------------------------------
 * Attach found no usable memory.region (a FIFO, a folder, a link or another
 * user's file in its place, a folder that cannot be made): the process caps
 * itself alone, and the keeper tries again every CC_ML_KEEP_NS (an open that
 * fails: no CPU to speak of). Once the path names a file it can use, the
 * process takes a slot there and publishes what it holds (its mirrors), so
 * the container's cap covers it again. Before, it stayed on its own for
 * good: a process started after the file was fixed did not see its bytes
 * (tests/faults_lib.c, "before: FIFO in place of memory.region": 4 x cap). */
static void rejoin_locked(void)
{
    struct cc_region_spec spec = ml_spec();
    struct cc_region_opts o = {.fixed = g_sh.r, .keep_fd = 1, .try_lock = 1, .quiet = 1};
    void *base = cc_region_open_ex(g_dir, &spec, &o);
    if (!base) return; /* not yet, or busy: the next check */
    cc_mem_region_t *r = base;
    g_sh.r = r;
    if (g_fd >= 0) close(g_fd);
    g_fd = o.fd;
    g_fdev = o.dev;
    g_fino = o.ino;
    uint32_t me = (uint32_t)getpid();
    live_lock(g_fd, me);
    if (o.rebuilt) rebuild_wait(r, g_fd);
    uint32_t gen = __atomic_load_n(&r->generation, __ATOMIC_SEQ_CST);
    cc_region_unlock_init(g_fd);
    for (uint32_t i = 0; i < CC_MEM_SLOTS; i++)
        if (__atomic_load_n(&r->proc[i].owner, __ATOMIC_ACQUIRE) == me) reap_if_dead(r, (int)i, -1);
    int s = claim_slot(r);
    if (s < 0) { /* full: stay on our own (the attach's warning said so) */
        g_rejoin = 0;
        close(g_fd);
        g_fd = -1;
        return;
    }
    int dev[NBINDS];
    for (int h = 0; h < g_nbinds; h++) {
        struct bind *b = &g_binds[h];
        dev[h] = -1;
        if (__atomic_load_n(&b->l, __ATOMIC_RELAXED) != &g_pv) continue;
        dev[h] = find_dev(r, b->key, b->uuid, b->cap);
        if (dev[h] < 0) continue; /* no entry: it stays on its own */
        __atomic_store_n(&r->used[dev[h]][s], __atomic_load_n(&b->m_used, __ATOMIC_SEQ_CST),
                         __ATOMIC_SEQ_CST);
        __atomic_store_n(&r->overhead[dev[h]][s], __atomic_load_n(&b->m_ovh, __ATOMIC_SEQ_CST),
                         __ATOMIC_SEQ_CST);
        heal_ctx(r, dev[h], b);
    }
    publish_owner(r, s);
    __atomic_store_n(&g_sh.slot, s, __ATOMIC_RELAXED);
    __atomic_store_n(&g_sh.gen, gen, __ATOMIC_RELAXED);
    g_sh.shared = 1;
    g_rejoin = 0;
    for (int h = 0; h < g_nbinds; h++) {
        struct bind *b = &g_binds[h];
        if (dev[h] < 0) continue;
        __atomic_store_n(&b->d, dev[h], __ATOMIC_RELAXED);
        __atomic_store_n(&b->l, &g_sh, __ATOMIC_RELEASE);
        /* What changed in flight on the private ledger meanwhile. */
        repair(&r->used[dev[h]][s], &b->m_used);
        repair(&r->overhead[dev[h]][s], &b->m_ovh);
    }
    cc_info("memory cap: %s/%s can be used now; this process joined the container's cap (slot %d)",
            g_dir, CC_MEM_REGION_FILE, s);
}

static void *keeper(void *arg)
{
    (void)arg;
    /* No signals here, except the synchronous ones: a blocked SIGBUS from
     * a fault would kill the process instead of reaching the guard. */
    sigset_t set;
    sigfillset(&set);
    sigdelset(&set, SIGBUS);
    sigdelset(&set, SIGSEGV);
    sigdelset(&set, SIGFPE);
    sigdelset(&set, SIGILL);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    for (;;) {
        pthread_mutex_lock(&g_mu);
        cc_mem_region_t *r = g_sh.shared ? g_sh.r : NULL;
        uint32_t gen = g_sh.gen;
        pthread_mutex_unlock(&g_mu);
        if (!r) { /* private: nothing to keep, unless the file may become usable */
            pthread_mutex_lock(&g_mu);
            int again = g_rejoin;
            pthread_mutex_unlock(&g_mu);
            if (!again) return NULL;
            nanosleep(&(struct timespec){0, CC_ML_KEEP_NS}, NULL);
            pthread_mutex_lock(&g_mu);
            if (g_rejoin && !g_sh.shared) rejoin_locked();
            pthread_mutex_unlock(&g_mu);
            continue;
        }
        struct timespec ts = {0, CC_ML_KEEP_NS};
        if (__atomic_load_n(&r->generation, __ATOMIC_SEQ_CST) == gen)
            futex(&r->generation, FUTEX_WAIT, gen, &ts);
        pthread_mutex_lock(&g_mu);
        check_locked(1);
        pthread_mutex_unlock(&g_mu);
    }
    return NULL;
}

int cc_ml_device(const char *state_dir, const char *uuid, uint64_t limit)
{
    uint64_t key = uuid_key(uuid ? uuid : "");
    pthread_mutex_lock(&g_mu);
    attach_locked(state_dir);
    int h = -1;
    for (int i = 0; i < g_nbinds; i++)
        if (g_binds[i].key == key) h = i;
    if (h < 0 && g_nbinds < NBINDS) {
        struct ledger *l = g_sh.shared && g_sh.slot >= 0 ? &g_sh : &g_pv;
        int d = find_dev(l->r, key, uuid ? uuid : "", limit);
        if (d < 0 && l == &g_sh) {
            cc_warn("memory cap: %s/%s has no free device entry for %s; this process caps that "
                    "device on its own", g_dir, CC_MEM_REGION_FILE, uuid);
            l = &g_pv;
            d = find_dev(l->r, key, uuid ? uuid : "", limit);
        }
        if (d >= 0) {
            h = g_nbinds++;
            struct bind *b = &g_binds[h];
            memset(b, 0, sizeof *b);
            b->key = key;
            b->cap = limit;
            snprintf(b->uuid, sizeof b->uuid, "%s", uuid ? uuid : "");
            __atomic_store_n(&b->d, d, __ATOMIC_RELAXED);
            __atomic_store_n(&b->l, l, __ATOMIC_RELEASE);
        }
    }
    pthread_mutex_unlock(&g_mu);
    if (h < 0) {
        cc_log_once(CC_LOG_ERROR, "memory cap: no ledger entry for %s (internal error)", uuid);
        h = 0; /* never out of range for the callers; binds[0] exists once any device bound */
    }
    return h;
}

/* ---- reserve / release ------------------------------------------------- */

/* The slot we count in, attaching again in a fork child, re-publishing
 * first when the region changed under us (one relaxed load when not). */
static inline struct ledger *ledger_of(int h, int *d, int *slot)
{
    struct bind *b = &g_binds[h];
    struct ledger *l = __atomic_load_n(&b->l, __ATOMIC_ACQUIRE);
    if (__builtin_expect(!l, 0)) return NULL;
    if (__builtin_expect(__atomic_load_n(&l->slot, __ATOMIC_RELAXED) < 0 ||
                             (l == &g_sh && __atomic_load_n(&l->r->generation, __ATOMIC_RELAXED) !=
                                                __atomic_load_n(&l->gen, __ATOMIC_RELAXED)),
                         0)) {
        pthread_mutex_lock(&g_mu);
        attach_locked(g_dir);
        if (g_sh.slot >= 0) republish_locked(0);
        pthread_mutex_unlock(&g_mu);
        l = __atomic_load_n(&b->l, __ATOMIC_ACQUIRE);
        if (__atomic_load_n(&l->slot, __ATOMIC_RELAXED) < 0) { /* no slot (full region): count privately */
            pthread_mutex_lock(&g_mu);
            go_private_locked("no process slot");
            pthread_mutex_unlock(&g_mu);
            l = __atomic_load_n(&b->l, __ATOMIC_ACQUIRE);
            if (l != &g_pv) return NULL;
        }
    }
    *d = __atomic_load_n(&b->d, __ATOMIC_RELAXED);
    *slot = __atomic_load_n(&l->slot, __ATOMIC_RELAXED);
    return l;
}

/* Container's use of device d: every owned slot, each at most clampv, our
 * own at least its mirror. Cost: 512 owner words (8 KiB, sequential) plus
 * the counts of the owned slots. */
static uint64_t sum_dev(const struct ledger *l, const struct bind *b, int d, int mine)
{
    uint64_t own = sat_add(__atomic_load_n(&l->r->used[d][mine], __ATOMIC_SEQ_CST),
                           __atomic_load_n(&l->r->overhead[d][mine], __ATOMIC_SEQ_CST));
    uint64_t mirror = sat_add(__atomic_load_n(&b->m_used, __ATOMIC_SEQ_CST),
                              __atomic_load_n(&b->m_ovh, __ATOMIC_SEQ_CST));
    if (own < mirror) own = mirror;
#ifdef CC_ML_TEST_LOCAL_ONLY
    /* Negative control: a per-process cap instead of the container-wide one. */
    return own;
#else
    /* Another slot over the cap refuses everything: cap + 1 says as much. */
    uint64_t clampv = b->cap && b->cap < UINT64_MAX ? b->cap + 1 : UINT64_MAX;
    uint32_t end = scan_end(l->r);
    uint64_t s = 0;
    for (uint32_t i = 0; i < end; i++) {
        uint64_t v;
        if ((int)i == mine) {
            s = sat_add(s, own); /* ours is exact: never clamped */
            continue;
        } else {
#ifndef CC_ML_TEST_TRUST_HW
            if (!__atomic_load_n(&l->r->proc[i].owner, __ATOMIC_SEQ_CST)) continue;
#endif
            v = sat_add(__atomic_load_n(&l->r->used[d][i], __ATOMIC_SEQ_CST),
                        __atomic_load_n(&l->r->overhead[d][i], __ATOMIC_SEQ_CST));
        }
#ifndef CC_ML_TEST_TRUST_HW
        if (v > clampv) v = clampv;
#else
        (void)clampv;
#endif
        s = sat_add(s, v);
    }
    return s;
#endif
}

#define RESERVE_TRIES 8

static void sub_clamped(uint64_t *p, uint64_t bytes)
{
    /* Never below zero, whatever the file holds: CAS loop, clamped. */
    uint64_t v = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(p, &v, v > bytes ? v - bytes : 0, 0, __ATOMIC_SEQ_CST,
                                        __ATOMIC_RELAXED)) {
    }
}

/* The cell reserve_in counts in: allocations, or overhead (contexts). */
static inline uint64_t *cell_of(struct ledger *l, int d, int slot, int ovh)
{
    return ovh ? &l->r->overhead[d][slot] : &l->r->used[d][slot];
}

static inline int reserve_in(int h, uint64_t bytes, uint64_t cap, int ovh)
{
    int d, slot;
    struct ledger *l = ledger_of(h, &d, &slot);
    if (__builtin_expect(!l, 0)) return cap && bytes > cap ? -1 : 0;
    struct bind *b = &g_binds[h];
    uint64_t *mine = cell_of(l, d, slot, ovh), *mir = ovh ? &b->m_ovh : &b->m_used;
    int swept = 0, checked = 0;
    for (int t = 0;; t++) {
        __atomic_add_fetch(mir, bytes, __ATOMIC_SEQ_CST);           /* mirror first */
        __atomic_add_fetch(mine, bytes, __ATOMIC_SEQ_CST);          /* (1) */
        if (!cap) return 0;
        uint64_t total = sum_dev(l, b, d, slot);                   /* (2) */
        if (total <= cap) return 0;                                /* (3) commit */
        __atomic_sub_fetch(mine, bytes, __ATOMIC_SEQ_CST);          /* take back */
        __atomic_sub_fetch(mir, bytes, __ATOMIC_SEQ_CST);
        if (bytes > cap || t + 1 >= RESERVE_TRIES) return -1;
        uint64_t others = total - bytes; /* includes our own earlier bytes */
        if (!swept) { /* dead processes may hold what we need */
            swept = 1;
            if (sweep(l) > 0) continue;
        }
        if (!checked && l == &g_sh) { /* our own slot may be wrong (repaired) */
            checked = 1;
            pthread_mutex_lock(&g_mu);
            check_locked(0);
            pthread_mutex_unlock(&g_mu);
            l = ledger_of(h, &d, &slot);
            if (!l) return -1;
            mine = cell_of(l, d, slot, ovh);
        }
        if (others > cap - bytes) return -1; /* no room even without contention */
        /* Only concurrent attempts were in the way: let them finish. */
        if (t < 2) sched_yield();
        else nanosleep(&(struct timespec){0, 20000L << (t - 2)}, NULL);
    }
}

int cc_ml_reserve(int h, uint64_t bytes, uint64_t cap) { return reserve_in(h, bytes, cap, 0); }

int cc_ml_reserve_overhead(int h, uint64_t bytes, uint64_t cap)
{
    return reserve_in(h, bytes, cap, 1);
}

void cc_ml_unreserve_overhead(int h, uint64_t bytes)
{
    int d, slot;
    struct ledger *l = ledger_of(h, &d, &slot);
    if (!l) return;
    sub_clamped(&l->r->overhead[d][slot], bytes); /* shared first, mirror after */
    sub_clamped(&g_binds[h].m_ovh, bytes);
}

/* A context's size as the container learned it (0: not yet). Untrusted file
 * content: at most the cap this process applies (a larger value would only
 * refuse every context). */
uint64_t cc_ml_ctx_size(int h)
{
    int d, slot;
    struct ledger *l = ledger_of(h, &d, &slot);
    if (!l) return 0;
    uint64_t v = __atomic_load_n(&l->r->ctx_size[d], __ATOMIC_RELAXED);
    uint64_t cap = g_binds[h].cap;
    if (cap && v > cap) v = 0; /* garbage (no context is larger than the cap): unknown */
    if (v) __atomic_store_n(&g_binds[h].m_ctx, v, __ATOMIC_RELAXED); /* kept for a rebuild */
    else v = __atomic_load_n(&g_binds[h].m_ctx, __ATOMIC_RELAXED);
    return v;
}

void cc_ml_set_ctx_size(int h, uint64_t bytes)
{
    int d, slot;
    struct ledger *l = ledger_of(h, &d, &slot);
    if (!l) return;
    __atomic_store_n(&g_binds[h].m_ctx, bytes, __ATOMIC_RELAXED);
    __atomic_store_n(&l->r->ctx_size[d], bytes, __ATOMIC_RELAXED);
}

/* Refusals are counted for the node's exporter (cudacap/counters.h), in the
 * shared file only: the private ledger maps no file past its struct. The
 * hook layer calls this once per refusal the program sees. */
void cc_ml_count_refusal(int h)
{
    int d, slot;
    struct ledger *l = ledger_of(h, &d, &slot);
    if (l == &g_sh && d >= 0 && d < CC_MEM_DEVS)
        __atomic_fetch_add(&cc_mem_counters(l->r)->refusals[d], 1, __ATOMIC_RELAXED);
}

void cc_ml_charge(int h, uint64_t bytes)
{
    int d, slot;
    struct ledger *l = ledger_of(h, &d, &slot);
    if (!l) return;
    __atomic_add_fetch(&g_binds[h].m_used, bytes, __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&l->r->used[d][slot], bytes, __ATOMIC_SEQ_CST);
}

void cc_ml_release(int h, uint64_t bytes)
{
    int d, slot;
    struct ledger *l = ledger_of(h, &d, &slot);
    if (!l) return;
    sub_clamped(&l->r->used[d][slot], bytes); /* shared first, mirror after */
    sub_clamped(&g_binds[h].m_used, bytes);
}

void cc_ml_set_overhead(int h, uint64_t bytes)
{
    int d, slot;
    struct ledger *l = ledger_of(h, &d, &slot);
    if (!l) return;
    __atomic_store_n(&g_binds[h].m_ovh, bytes, __ATOMIC_SEQ_CST);
    __atomic_store_n(&l->r->overhead[d][slot], bytes, __ATOMIC_SEQ_CST);
}

uint64_t cc_ml_overhead(int h)
{
    int d, slot;
    struct ledger *l = ledger_of(h, &d, &slot);
    return l ? __atomic_load_n(&g_binds[h].m_ovh, __ATOMIC_RELAXED) : 0;
}

uint64_t cc_ml_used(int h)
{
    int d, slot;
    struct ledger *l = ledger_of(h, &d, &slot);
    return l ? sum_dev(l, &g_binds[h], d, slot) : 0;
}

uint64_t cc_ml_own(int h)
{
    int d, slot;
    struct ledger *l = ledger_of(h, &d, &slot);
    return l ? __atomic_load_n(&g_binds[h].m_used, __ATOMIC_RELAXED) : 0;
}

int cc_ml_shared(int h)
{
    int d, slot;
    struct ledger *l = ledger_of(h, &d, &slot);
    return l && l->shared;
}

/* ---- host pid ---------------------------------------------------------- */

void cc_ml_set_host_pid(uint32_t host_pid)
{
    pthread_mutex_lock(&g_mu);
    __atomic_store_n(&g_host_pid, host_pid, __ATOMIC_RELAXED);
    int s = __atomic_load_n(&g_sh.slot, __ATOMIC_RELAXED);
    if (g_sh.r && s >= 0) __atomic_store_n(&g_sh.r->proc[s].host_pid, host_pid, __ATOMIC_RELAXED);
    if (g_pv.r) g_pv.r->proc[0].host_pid = host_pid;
    pthread_mutex_unlock(&g_mu);
}

uint32_t cc_ml_host_pid(void) { return __atomic_load_n(&g_host_pid, __ATOMIC_RELAXED); }

int cc_ml_host_pid_taken(uint32_t host_pid)
{
    if (!g_sh.r || !g_sh.shared) return 0;
    int mine = __atomic_load_n(&g_sh.slot, __ATOMIC_RELAXED);
    for (uint32_t i = 0; i < CC_MEM_SLOTS; i++) {
        if ((int)i == mine) continue;
        uint32_t o = __atomic_load_n(&g_sh.r->proc[i].owner, __ATOMIC_ACQUIRE);
        if (o && !(o & CC_MEM_REAPING) &&
            __atomic_load_n(&g_sh.r->proc[i].host_pid, __ATOMIC_RELAXED) == host_pid &&
            owner_alive(o, __atomic_load_n(&g_sh.r->proc[i].start_time, __ATOMIC_RELAXED)))
            return 1;
    }
    return 0;
}

uint32_t cc_ml_nspid_host(void)
{
    FILE *f = fopen("/proc/self/status", "re");
    if (!f) return 0;
    char line[256];
    uint32_t host = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "NSpid:", 6) != 0) continue;
        char *p = line + 6, *end;
        unsigned long first = strtoul(p, &end, 10);
        int levels = end != p;
        while (end != p) {
            p = end;
            strtoul(p, &end, 10);
            if (end != p) levels++;
        }
        if (levels > 1) host = (uint32_t)first;
        break;
    }
    fclose(f);
    return host;
}

/* ---- fork -------------------------------------------------------------- */

void cc_ml_fork_child(void)
{
    /* Single-threaded here. The mutex may have been held by a parent thread
     * at fork: re-initialise it. */
    pthread_mutex_init(&g_mu, NULL);
    g_sh.slot = -1;
    g_attached = 0;
    g_keeper = 0; /* threads do not survive fork */
    g_rejoin = 0;
    g_host_pid = 0;
    /* The inherited descriptor shares the parent's open file description,
     * and with it the parent's liveness byte: ours comes with our own. */
    if (g_fd >= 0) close(g_fd);
    g_fd = -1;
    for (int h = 0; h < g_nbinds; h++) g_binds[h].m_used = g_binds[h].m_ovh = 0;
    if (g_pv.r) {
        memset(g_pv.r->used, 0, sizeof g_pv.r->used);
        memset(g_pv.r->overhead, 0, sizeof g_pv.r->overhead);
        g_pv.r->proc[0].owner = (uint32_t)getpid();
        g_pv.r->proc[0].host_pid = 0;
    }
}
