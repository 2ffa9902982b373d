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
 * (-DCC_ML_TEST_LOCAL_ONLY, the negative control). */
#include "cap/memledger.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "cudacap/mem_region.h"
#include "region/region.h"
#include "region/specs.h"

struct ledger {
    cc_mem_region_t *r;
    int slot;   /* -1: not (yet) attached in this process */
    int shared; /* 1: the container's region; 0: private memory */
};

static struct ledger g_sh, g_pv;
static int g_attached; /* 1 once the attach of this process ran */
static char g_dir[1024];
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;

/* Handles: index into binds; a device entry of the shared or the private
 * ledger. Written under g_mu before the handle is returned. */
#define NBINDS (2 * CC_MEM_DEVS)
static struct bind {
    struct ledger *l;
    int d;
    uint64_t key;
} g_binds[NBINDS];
static int g_nbinds;

static uint64_t sat_add(uint64_t a, uint64_t b) { return a + b < a ? UINT64_MAX : a + b; }

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

/* ---- slots ------------------------------------------------------------- */

static uint32_t hw_of(const cc_mem_region_t *r)
{
    uint32_t hw = __atomic_load_n(&r->slots_hw, __ATOMIC_SEQ_CST);
    return hw > CC_MEM_SLOTS ? CC_MEM_SLOTS : hw; /* never trust the file */
}

/* Empties slot i, which we own as its reaper (or its dead owner's image).
 * Counts first, owner last (release): a new owner finds zeros. */
__attribute__((unused)) static void clear_slot(cc_mem_region_t *r, int i)
{
    for (int d = 0; d < CC_MEM_DEVS; d++) {
        __atomic_store_n(&r->used[d][i], 0, __ATOMIC_SEQ_CST);
        __atomic_store_n(&r->overhead[d][i], 0, __ATOMIC_SEQ_CST);
    }
    __atomic_store_n(&r->proc[i].host_pid, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&r->proc[i].start_time, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&r->proc[i].owner, 0, __ATOMIC_RELEASE);
}

/* Reaps slot i if its owner (or its interrupted reaper) is dead, or if it
 * names our own pid without being our slot (left by this pid before an
 * exec). Returns 1 when reaped. */
static int reap_if_dead(cc_mem_region_t *r, int i, int mine)
{
#ifdef CC_ML_TEST_NO_SWEEP
    (void)r, (void)i, (void)mine;
    return 0; /* negative control: killed processes' bytes stay */
#else
    uint32_t me = (uint32_t)getpid();
    uint32_t o = __atomic_load_n(&r->proc[i].owner, __ATOMIC_ACQUIRE);
    if (o == 0 || i == mine) return 0;
    if (o & CC_MEM_REAPING) {
        if (cc_ml_pid_alive(o & ~CC_MEM_REAPING, 0)) return 0; /* reaper at work */
    } else if (o != me) {
        uint64_t st = __atomic_load_n(&r->proc[i].start_time, __ATOMIC_RELAXED);
        if (cc_ml_pid_alive(o, st)) return 0;
    }
    /* Take the slot for cleaning; losing the CAS means someone else did. */
    if (!__atomic_compare_exchange_n(&r->proc[i].owner, &o, CC_MEM_REAPING | me, 0,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return 0;
    clear_slot(r, i);
    return 1;
#endif
}

static int sweep(struct ledger *l)
{
    if (!l->r || !l->shared) return 0;
    int n = 0;
    uint32_t hw = hw_of(l->r);
    for (uint32_t i = 0; i < hw; i++) n += reap_if_dead(l->r, (int)i, l->slot);
    return n;
}

int cc_ml_sweep(void) { return sweep(&g_sh); }

static int claim_slot(cc_mem_region_t *r)
{
    uint32_t me = (uint32_t)getpid();
    for (int i = 0; i < CC_MEM_SLOTS; i++) {
        if (__atomic_load_n(&r->proc[i].owner, __ATOMIC_RELAXED)) continue;
        /* Raise the high-water mark BEFORE owning the slot: every owned slot
         * is below it, so a claimer killed right after its CAS leaves a slot
         * the sweep sees; and before any add to it (the proof above). */
        uint32_t hw = __atomic_load_n(&r->slots_hw, __ATOMIC_SEQ_CST);
        while (hw < (uint32_t)i + 1 &&
               !__atomic_compare_exchange_n(&r->slots_hw, &hw, (uint32_t)i + 1, 0,
                                            __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
        }
        uint32_t z = 0;
        if (!__atomic_compare_exchange_n(&r->proc[i].owner, &z, me, 0, __ATOMIC_ACQ_REL,
                                         __ATOMIC_RELAXED))
            continue;
        /* Counts are zero (clear_slot stores them before freeing the owner;
         * a fresh region is zero); reset anyway: the file is not trusted. */
        for (int d = 0; d < CC_MEM_DEVS; d++) {
            __atomic_store_n(&r->used[d][i], 0, __ATOMIC_SEQ_CST);
            __atomic_store_n(&r->overhead[d][i], 0, __ATOMIC_SEQ_CST);
        }
        __atomic_store_n(&r->proc[i].start_time, cc_ml_start_time((pid_t)me), __ATOMIC_RELAXED);
        __atomic_store_n(&r->proc[i].host_pid, 0, __ATOMIC_RELAXED);
        return i;
    }
    return -1;
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

static void attach_locked(const char *dir)
{
    if (g_attached) return;
    g_attached = 1;
    if (dir && dir != g_dir) snprintf(g_dir, sizeof g_dir, "%s", dir);
    if (!private_ready()) cc_error("cannot map a private memory ledger; memory is not capped");
    /* No folder (""): the configuration already said why, once. */
    if (!g_sh.r && g_dir[0]) g_sh.r = cc_region_open(g_dir, &cc_mem_region_spec);
    if (!g_sh.r) {
        if (g_dir[0])
            cc_warn("memory cap: the container-wide ledger %s/%s is unavailable; this process "
                    "is capped on its own (per-process cap)", g_dir, CC_MEM_REGION_FILE);
        return;
    }
    g_sh.shared = 1;
    g_sh.slot = -1;
    /* Slots naming our pid belong to this pid before an exec, or to a dead
     * process whose pid we reuse: reap them before claiming ours. */
    uint32_t me = (uint32_t)getpid(), hw = hw_of(g_sh.r);
    for (uint32_t i = 0; i < hw; i++)
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
    g_sh.slot = s;
}

int cc_ml_attach(const char *state_dir)
{
    pthread_mutex_lock(&g_mu);
    attach_locked(state_dir);
    int r = g_sh.r && g_sh.slot >= 0;
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
            g_binds[h] = (struct bind){l, d, key};
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

/* The slot we count in, attaching again in a fork child. */
static inline struct ledger *ledger_of(int h, int *d)
{
    struct bind *b = &g_binds[h];
    *d = b->d;
    struct ledger *l = b->l;
    if (__builtin_expect(!l, 0)) return NULL;
    if (__builtin_expect(l->slot < 0, 0)) {
        pthread_mutex_lock(&g_mu);
        attach_locked(g_dir);
        pthread_mutex_unlock(&g_mu);
        if (l->slot < 0) { /* no slot any more (full region): count privately */
            l = &g_pv;
            int pd = find_dev(g_pv.r, b->key, "", 0);
            if (pd < 0) return NULL;
            *d = pd;
        }
    }
    return l;
}

/* Container's use of device d: every slot below the high-water mark. Cost:
 * hw/8 cache lines of used[] and of overhead[]. */
static uint64_t sum_dev(const struct ledger *l, int d)
{
#ifdef CC_ML_TEST_LOCAL_ONLY
    /* Negative control: a per-process cap instead of the container-wide one. */
    return sat_add(__atomic_load_n(&l->r->used[d][l->slot], __ATOMIC_SEQ_CST),
                   __atomic_load_n(&l->r->overhead[d][l->slot], __ATOMIC_SEQ_CST));
#else
    uint32_t hw = hw_of(l->r);
    uint64_t s = 0;
    for (uint32_t i = 0; i < hw; i++) {
        s = sat_add(s, __atomic_load_n(&l->r->used[d][i], __ATOMIC_SEQ_CST));
        s = sat_add(s, __atomic_load_n(&l->r->overhead[d][i], __ATOMIC_SEQ_CST));
    }
    return s;
#endif
}

#define RESERVE_TRIES 8

int cc_ml_reserve(int h, uint64_t bytes, uint64_t cap)
{
    int d;
    struct ledger *l = ledger_of(h, &d);
    if (__builtin_expect(!l, 0)) return cap && bytes > cap ? -1 : 0;
    uint64_t *mine = &l->r->used[d][l->slot];
    int swept = 0;
    for (int t = 0;; t++) {
        __atomic_add_fetch(mine, bytes, __ATOMIC_SEQ_CST);          /* (1) */
        if (!cap) return 0;
        uint64_t total = sum_dev(l, d);                            /* (2) */
        if (total <= cap) return 0;                                /* (3) commit */
        __atomic_sub_fetch(mine, bytes, __ATOMIC_SEQ_CST);          /* take back */
        if (bytes > cap || t + 1 >= RESERVE_TRIES) return -1;
        uint64_t others = total - bytes; /* includes our own earlier bytes */
        if (!swept) { /* dead processes may hold what we need */
            swept = 1;
            if (sweep(l) > 0) continue;
        }
        if (others > cap - bytes) return -1; /* no room even without contention */
        /* Only concurrent attempts were in the way: let them finish. */
        if (t < 2) sched_yield();
        else nanosleep(&(struct timespec){0, 20000L << (t - 2)}, NULL);
    }
}

void cc_ml_charge(int h, uint64_t bytes)
{
    int d;
    struct ledger *l = ledger_of(h, &d);
    if (l) __atomic_add_fetch(&l->r->used[d][l->slot], bytes, __ATOMIC_SEQ_CST);
}

void cc_ml_release(int h, uint64_t bytes)
{
    int d;
    struct ledger *l = ledger_of(h, &d);
    if (!l) return;
    uint64_t *mine = &l->r->used[d][l->slot];
    /* Never below zero, whatever the file holds: CAS loop, clamped. */
    uint64_t v = __atomic_load_n(mine, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(mine, &v, v > bytes ? v - bytes : 0, 0, __ATOMIC_SEQ_CST,
                                        __ATOMIC_RELAXED)) {
    }
}

void cc_ml_set_overhead(int h, uint64_t bytes)
{
    int d;
    struct ledger *l = ledger_of(h, &d);
    if (l) __atomic_store_n(&l->r->overhead[d][l->slot], bytes, __ATOMIC_SEQ_CST);
}

uint64_t cc_ml_overhead(int h)
{
    int d;
    struct ledger *l = ledger_of(h, &d);
    return l ? __atomic_load_n(&l->r->overhead[d][l->slot], __ATOMIC_RELAXED) : 0;
}

uint64_t cc_ml_used(int h)
{
    int d;
    struct ledger *l = ledger_of(h, &d);
    return l ? sum_dev(l, d) : 0;
}

uint64_t cc_ml_own(int h)
{
    int d;
    struct ledger *l = ledger_of(h, &d);
    return l ? __atomic_load_n(&l->r->used[d][l->slot], __ATOMIC_RELAXED) : 0;
}

int cc_ml_shared(int h)
{
    int d;
    struct ledger *l = ledger_of(h, &d);
    return l && l->shared;
}

/* ---- host pid ---------------------------------------------------------- */

void cc_ml_set_host_pid(uint32_t host_pid)
{
    pthread_mutex_lock(&g_mu);
    if (g_sh.r && g_sh.slot >= 0)
        __atomic_store_n(&g_sh.r->proc[g_sh.slot].host_pid, host_pid, __ATOMIC_RELAXED);
    if (g_pv.r) g_pv.r->proc[0].host_pid = host_pid;
    pthread_mutex_unlock(&g_mu);
}

uint32_t cc_ml_host_pid(void)
{
    if (g_sh.r && g_sh.slot >= 0)
        return __atomic_load_n(&g_sh.r->proc[g_sh.slot].host_pid, __ATOMIC_RELAXED);
    return g_pv.r ? g_pv.r->proc[0].host_pid : 0;
}

int cc_ml_host_pid_taken(uint32_t host_pid)
{
    if (!g_sh.r || !g_sh.shared) return 0;
    uint32_t hw = hw_of(g_sh.r);
    for (uint32_t i = 0; i < hw; i++) {
        if ((int)i == g_sh.slot) continue;
        uint32_t o = __atomic_load_n(&g_sh.r->proc[i].owner, __ATOMIC_ACQUIRE);
        if (o && !(o & CC_MEM_REAPING) &&
            __atomic_load_n(&g_sh.r->proc[i].host_pid, __ATOMIC_RELAXED) == host_pid)
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
    if (g_pv.r) {
        memset(g_pv.r->used, 0, sizeof g_pv.r->used);
        memset(g_pv.r->overhead, 0, sizeof g_pv.r->overhead);
        g_pv.r->proc[0].owner = (uint32_t)getpid();
        g_pv.r->proc[0].host_pid = 0;
    }
}
