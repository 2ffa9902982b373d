/* The memory ledger (cap/memledger.h): who lives, and the process slots of
 * the region. A slot is claimed by CAS on its owner word, filled, then
 * published; the sweep reclaims the slots of dead processes (their liveness
 * byte first, then /proc); the host pids recorded in the slots join the
 * region with NVML's view. */
#include "cap/memledger.h"

#include <pthread.h>
#include <unistd.h>

#include "cap/mem/ledger_internal.h"
#include "cudacap/abi_mem_region.h"
#include "os/os.h"
#include "region/proc_key.h"
#include "region/region.h"

/* ---- liveness ---------------------------------------------------------- */

uint64_t cc_ml_start_time(pid_t pid)
{
    char st;
    uint64_t t;
    return cc_os_proc_stat(pid, &st, &t) == 0 ? t : 0;
}

int cc_ml_pid_alive(uint32_t pid, uint64_t start_time)
{
    if (pid == 0 || pid >= CC_MEM_REAPING) return 0;
    if (!cc_os_pid_alive((pid_t)pid)) return 0; /* gone ("cannot tell" reads as alive) */
    char st;
    uint64_t t;
    if (cc_os_proc_stat((pid_t)pid, &st, &t) != 0) return 1; /* no /proc: trust kill */
    if (st == 'Z' || st == 'X') return 0;
    if (start_time && t != start_time) return 0; /* the pid was reused */
    return 1;
}

/* ---- liveness locks ------------------------------------------------------ */

uint32_t ml_take_key(int fd)
{
    struct cc_pkey k;
    return cc_pkey_take(&k, fd, CC_MEM_LIVE_BASE) == 0 ? k.key : 0;
}

/* 1: the key's process holds its liveness byte; 0: it does not; -1: cannot tell. */
static int live_held(uint32_t key)
{
    struct cc_pkey me = {.fd = ml.fd, .base = CC_MEM_LIVE_BASE, .key = ml.key};
    return cc_pkey_held(&me, key);
}

/* ---- slots ------------------------------------------------------------- */

/* Empties slot i, which we own as its reaper (or its dead owner's image).
 * Counts first, owner last (release): a new owner finds zeros. */
void ml_clear_slot(cc_mem_region_t *r, int i)
{
    for (int d = 0; d < CC_MEM_DEVS; d++) {
        __atomic_store_n(&r->used[d][i], 0, __ATOMIC_SEQ_CST);
        __atomic_store_n(&r->overhead[d][i], 0, __ATOMIC_SEQ_CST);
        __atomic_store_n(&r->host_used[d][i], 0, __ATOMIC_SEQ_CST);
    }
    __atomic_store_n(&r->proc[i].host_pid, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&r->proc[i].start_time, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&r->proc[i].owner, 0, __ATOMIC_SEQ_CST);
}

/* Whether the owner of a slot lives: its liveness byte first (independent
 * of the region's content), then the pid and its start time. */
static int owner_alive(uint32_t key, uint64_t start_time)
{
    /* Held: the process with that key is attached now (a key reused by a
     * new process is no better: that process reaps the slots naming its key
     * when it attaches). One fcntl, no /proc read. */
    if (key >= CC_KEY_END) return 0; /* no library writes such an owner: garbage */
    int held = live_held(key);
    if (held >= 0) return held;
    /* Cannot tell: a pid key by its /proc entry; a probed key is no pid
     * here, so it stays ("cannot tell" is alive). */
    return key < CC_KEY_PIDS ? cc_ml_pid_alive(key, start_time) : 1;
}

static int CC_CONTROL_POINT(reap_dead)(cc_mem_region_t *r, int i, int mine)
{
    uint32_t o = __atomic_load_n(&r->proc[i].owner, __ATOMIC_ACQUIRE);
    if (o == 0 || i == mine) return 0;
    uint32_t me = ml.key;
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
    ml_clear_slot(r, i);
    return 1;
}

/* Reaps slot i if its owner (or its interrupted reaper) is dead, or if it
 * names our own key without being our slot (left by this process before an
 * exec, or a copy). Returns 1 when reaped. */
int ml_reap_if_dead(cc_mem_region_t *r, int i, int mine) { return reap_dead(r, i, mine); }

int ml_sweep(struct ledger *l)
{
    if (!l->r || !l->shared) return 0;
    int n = 0;
    uint32_t end = scan_end(l->r);
    int mine = __atomic_load_n(&l->slot, __ATOMIC_RELAXED);
    for (uint32_t i = 0; i < end; i++) n += ml_reap_if_dead(l->r, (int)i, mine);
    return n;
}

int cc_ml_sweep(void)
{
    int n = ml_sweep(&ml.sh);
    /* And our own slot: the queries that sweep (cuMemGetInfo, NVML) show
     * a repaired figure. */
    pthread_mutex_lock(&ml.mu);
    ml_check_locked(0);
    pthread_mutex_unlock(&ml.mu);
    return n;
}

/* Claims a free slot for us: owner CC_MEM_REAPING | pid while we fill it
 * (counted, and left alone by sweepers while we live); the caller stores
 * the counts and then ml_publish_owner(). */
int ml_claim_slot(cc_mem_region_t *r)
{
    uint32_t me = ml.key;
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
        __atomic_store_n(&r->proc[i].start_time, cc_ml_start_time(getpid()), __ATOMIC_RELAXED);
        __atomic_store_n(&r->proc[i].host_pid, ml.host_pid, __ATOMIC_RELAXED);
        return i;
    }
    return -1;
}

void ml_publish_owner(cc_mem_region_t *r, int i)
{
    /* Seq-cst: ordered before our first add to the slot (the proof). */
    __atomic_store_n(&r->proc[i].owner, ml.key, __ATOMIC_SEQ_CST);
}

/* ---- host pid ---------------------------------------------------------- */

void cc_ml_set_host_pid(uint32_t host_pid)
{
    pthread_mutex_lock(&ml.mu);
    __atomic_store_n(&ml.host_pid, host_pid, __ATOMIC_RELAXED);
    int s = __atomic_load_n(&ml.sh.slot, __ATOMIC_RELAXED);
    if (ml.sh.r && s >= 0) __atomic_store_n(&ml.sh.r->proc[s].host_pid, host_pid, __ATOMIC_RELAXED);
    if (ml.pv.r) ml.pv.r->proc[0].host_pid = host_pid;
    pthread_mutex_unlock(&ml.mu);
}

uint32_t cc_ml_host_pid(void) { return __atomic_load_n(&ml.host_pid, __ATOMIC_RELAXED); }

int cc_ml_host_pid_taken(uint32_t host_pid)
{
    if (!ml.sh.r || !ml.sh.shared) return 0;
    int mine = __atomic_load_n(&ml.sh.slot, __ATOMIC_RELAXED);
    for (uint32_t i = 0; i < CC_MEM_SLOTS; i++) {
        if ((int)i == mine) continue;
        uint32_t o = __atomic_load_n(&ml.sh.r->proc[i].owner, __ATOMIC_ACQUIRE);
        if (o && !(o & CC_MEM_REAPING) &&
            __atomic_load_n(&ml.sh.r->proc[i].host_pid, __ATOMIC_RELAXED) == host_pid &&
            owner_alive(o, __atomic_load_n(&ml.sh.r->proc[i].start_time, __ATOMIC_RELAXED)))
            return 1;
    }
    return 0;
}

uint32_t cc_ml_nspid_host(void)
{
    /* The host's pid is the first of several levels; one level is ours. */
    uint32_t pids[1];
    return cc_os_nspid(pids, 1) > 1 ? pids[0] : 0;
}
