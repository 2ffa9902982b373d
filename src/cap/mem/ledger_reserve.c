/* The memory ledger (cap/memledger.h): reserve, charge, release, and the
 * counts.
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
 * sweep (ledger_slots.c) reclaims the whole slot. tests/mem_ledger_mp.c
 * ("race") checks the claim with 8 processes, and fails with the sum
 * replaced by the own slot only (-DCC_ML_TEST_LOCAL_ONLY, the negative
 * control).
 * "Every slot" is every one of the CC_MEM_SLOTS slots whose owner word is
 * not 0 (seq_cst load; a claimer stores its owner word before its first add),
 * not those below slots_hw: one corrupted hw word must not hide live slots.
 * Each other slot counts at most cap + 1 (one corrupted count costs at
 * most the cap, and a slot past the cap refuses everything anyway), and our
 * own slot counts at least our private mirror of it (ledger_rebuild.c).
 * The proof needs a slot never to go down on an add: an add saturates at
 * 2^64 - 1 (count_add), so a forged count near 2^64 cannot wrap to a few
 * bytes that every other process would read as a nearly empty slot until
 * the keeper repaired it (tests/mem_state_faults.c, "wrap"). */
#include "cap/memledger.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>

#include "cap/mem/ledger_internal.h"
#include "cudacap/abi_counters.h"
#include "cudacap/abi_mem_region.h"
#include "os/os.h"

static uint64_t sat_add(uint64_t a, uint64_t b) { return a + b < a ? UINT64_MAX : a + b; }

/* ---- reserve / release ------------------------------------------------- */

/* The slot we count in, attaching again in a fork child, re-publishing
 * first when the region changed under us (one relaxed load when not). */
static inline struct ledger *ledger_of(int h, int *d, int *slot)
{
    struct bind *b = &ml.binds[h];
    struct ledger *l = __atomic_load_n(&b->l, __ATOMIC_ACQUIRE);
    if (__builtin_expect(!l, 0)) return NULL;
    if (__builtin_expect(__atomic_load_n(&l->slot, __ATOMIC_RELAXED) < 0 ||
                             (l == &ml.sh && __atomic_load_n(&l->r->generation, __ATOMIC_RELAXED) !=
                                                __atomic_load_n(&l->gen, __ATOMIC_RELAXED)),
                         0)) {
        pthread_mutex_lock(&ml.mu);
        ml_attach_locked(ml.dir);
        if (ml.sh.slot >= 0) ml_republish_locked(0);
        pthread_mutex_unlock(&ml.mu);
        l = __atomic_load_n(&b->l, __ATOMIC_ACQUIRE);
        if (__atomic_load_n(&l->slot, __ATOMIC_RELAXED) < 0) { /* no slot (full region): count privately */
            pthread_mutex_lock(&ml.mu);
            ml_go_private_locked("no process slot");
            pthread_mutex_unlock(&ml.mu);
            l = __atomic_load_n(&b->l, __ATOMIC_ACQUIRE);
            if (l != &ml.pv) return NULL;
        }
    }
    *d = __atomic_load_n(&b->d, __ATOMIC_RELAXED);
    *slot = __atomic_load_n(&l->slot, __ATOMIC_RELAXED);
    return l;
}

/* What another process's slot i counts for on device d: nothing when the
 * slot has no owner, at most clampv. */
static inline uint64_t CC_CONTROL_POINT(slot_use)(const cc_mem_region_t *r, uint32_t i, int d, uint64_t clampv)
{
    if (!__atomic_load_n(&r->proc[i].owner, __ATOMIC_SEQ_CST)) return 0;
    uint64_t v = sat_add(__atomic_load_n(&r->used[d][i], __ATOMIC_SEQ_CST),
                         __atomic_load_n(&r->overhead[d][i], __ATOMIC_SEQ_CST));
    return v > clampv ? clampv : v;
}

/* The container's use of device d: our own (exact, never clamped) and
 * every other slot's (slot_use). */
static uint64_t CC_CONTROL_POINT(container_use)(const struct ledger *l, const struct bind *b, int d, int mine,
                                                uint64_t own)
{
    /* Another slot over the cap refuses everything: cap + 1 says as much. */
    uint64_t cap = __atomic_load_n(&b->cap, __ATOMIC_RELAXED);
    uint64_t clampv = cap && cap < UINT64_MAX ? cap + 1 : UINT64_MAX;
    uint32_t end = scan_end(l->r);
    uint64_t s = 0;
    for (uint32_t i = 0; i < end; i++) s = sat_add(s, (int)i == mine ? own : slot_use(l->r, i, d, clampv));
    return s;
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
    return container_use(l, b, d, mine, own);
}

/* The container's oversubscription in use on device d: host_used of every
 * owned slot, each other one at most over + 1, our own at least its mirror
 * (the same rules as sum_dev, on the second dimension). */
static uint64_t CC_CONTROL_POINT(container_host)(const struct ledger *l, int d, int mine, uint64_t own,
                                                 uint64_t over)
{
    uint64_t clampv = over && over < UINT64_MAX ? over + 1 : UINT64_MAX, s = 0;
    for (uint32_t i = 0; i < CC_MEM_SLOTS; i++) {
        if ((int)i == mine) {
            s = sat_add(s, own);
            continue;
        }
        if (!__atomic_load_n(&l->r->proc[i].owner, __ATOMIC_SEQ_CST)) continue;
        uint64_t v = __atomic_load_n(&l->r->host_used[d][i], __ATOMIC_SEQ_CST);
        s = sat_add(s, v > clampv ? clampv : v);
    }
    return s;
}

static uint64_t sum_host(const struct ledger *l, const struct bind *b, int d, int mine, uint64_t over)
{
    uint64_t own = __atomic_load_n(&l->r->host_used[d][mine], __ATOMIC_SEQ_CST);
    uint64_t mirror = __atomic_load_n(&b->m_host, __ATOMIC_SEQ_CST);
    if (own < mirror) own = mirror;
    return container_host(l, d, mine, own, over);
}

#define RESERVE_TRIES 8

/* A shared count of ours grows by bytes, at most to 2^64 - 1 (see the top).
 * Cost: a load and one seq_cst CAS without contention, as a fetch_add; our
 * slot's cells are written by this process alone but for the repairs. */
static inline void CC_CONTROL_POINT(count_add)(uint64_t *p, uint64_t bytes)
{
    uint64_t v = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(p, &v, sat_add(v, bytes), 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
    }
}

static void sub_clamped(uint64_t *p, uint64_t bytes)
{
    /* Never below zero, whatever the file holds: CAS loop, clamped. */
    uint64_t v = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(p, &v, v > bytes ? v - bytes : 0, 0, __ATOMIC_SEQ_CST,
                                        __ATOMIC_RELAXED)) {
    }
}

/* The cell reserve_in counts in: allocations (DIM_USED), overhead
 * (contexts), or host memory beyond the cap (oversubscription). */
enum { DIM_USED, DIM_OVH, DIM_HOST };
static inline uint64_t *cell_of(struct ledger *l, int d, int slot, int dim)
{
    return dim == DIM_OVH ? &l->r->overhead[d][slot] : dim == DIM_HOST ? &l->r->host_used[d][slot]
                                                                       : &l->r->used[d][slot];
}

/* Inlined into both callers: the allocation path's one call into the ledger. */
static inline __attribute__((always_inline)) int reserve_in(int h, uint64_t bytes, uint64_t cap, int dim)
{
    int d, slot;
    struct ledger *l = ledger_of(h, &d, &slot);
    if (__builtin_expect(!l, 0)) return cap && bytes > cap ? -1 : 0;
    struct bind *b = &ml.binds[h];
    uint64_t *mine = cell_of(l, d, slot, dim);
    uint64_t *mir = dim == DIM_OVH ? &b->m_ovh : dim == DIM_HOST ? &b->m_host : &b->m_used;
    int swept = 0, checked = 0;
    for (int t = 0;; t++) {
        __atomic_add_fetch(mir, bytes, __ATOMIC_SEQ_CST);           /* mirror first */
        count_add(mine, bytes);                                     /* (1) */
        if (!cap) return 0;
        uint64_t total = dim == DIM_HOST ? sum_host(l, b, d, slot, cap)
                                         : sum_dev(l, b, d, slot); /* (2) */
        if (total <= cap) return 0;                                /* (3) commit */
        sub_clamped(mine, bytes);                                   /* take back */
        __atomic_sub_fetch(mir, bytes, __ATOMIC_SEQ_CST);
        if (bytes > cap || t + 1 >= RESERVE_TRIES) return -1;
        uint64_t others = total - bytes; /* includes our own earlier bytes */
        if (!swept) { /* dead processes may hold what we need */
            swept = 1;
            if (ml_sweep(l) > 0) continue;
        }
        if (!checked && l == &ml.sh) { /* our own slot may be wrong (repaired) */
            checked = 1;
            uint64_t was = __atomic_load_n(mine, __ATOMIC_SEQ_CST);
            pthread_mutex_lock(&ml.mu);
            ml_check_locked(0);
            pthread_mutex_unlock(&ml.mu);
            l = ledger_of(h, &d, &slot);
            if (!l) return -1;
            mine = cell_of(l, d, slot, dim);
            /* Repaired (a forged count of ours, a new slot): `others` is stale. */
            if (__atomic_load_n(mine, __ATOMIC_SEQ_CST) != was) continue;
        }
        if (others > cap - bytes) return -1; /* no room even without contention */
        /* Only concurrent attempts were in the way: let them finish. */
        if (t < 2) sched_yield();
        else cc_os_sleep_ns(20000ull << (t - 2));
    }
}

int cc_ml_reserve(int h, uint64_t bytes, uint64_t cap) { return reserve_in(h, bytes, cap, DIM_USED); }

int cc_ml_reserve_overhead(int h, uint64_t bytes, uint64_t cap)
{
    return reserve_in(h, bytes, cap, DIM_OVH);
}

/* Oversubscription: the same exact check on the host dimension, against
 * over (the proof above holds cell for cell). */
int cc_ml_host_reserve(int h, uint64_t bytes, uint64_t over)
{
    if (!over) return -1; /* none allowed (0 would mean "no cap" to reserve_in) */
    return reserve_in(h, bytes, over, DIM_HOST);
}

void cc_ml_host_release(int h, uint64_t bytes)
{
    int d, slot;
    struct ledger *l = ledger_of(h, &d, &slot);
    if (!l) return;
    sub_clamped(&l->r->host_used[d][slot], bytes); /* shared first, mirror after */
    sub_clamped(&ml.binds[h].m_host, bytes);
}

uint64_t cc_ml_host_used(int h)
{
    int d, slot;
    struct ledger *l = ledger_of(h, &d, &slot);
    return l ? sum_host(l, &ml.binds[h], d, slot, 0) : 0;
}

void cc_ml_set_host_limit(int h, uint64_t over)
{
    int d, slot;
    struct ledger *l = ledger_of(h, &d, &slot);
    if (l) __atomic_store_n(&l->r->host_limit[d], over, __ATOMIC_RELAXED);
}

uint64_t cc_ml_host_own(int h)
{
    int d, slot;
    struct ledger *l = ledger_of(h, &d, &slot);
    return l ? __atomic_load_n(&ml.binds[h].m_host, __ATOMIC_RELAXED) : 0;
}

void cc_ml_unreserve_overhead(int h, uint64_t bytes)
{
    int d, slot;
    struct ledger *l = ledger_of(h, &d, &slot);
    if (!l) return;
    sub_clamped(&l->r->overhead[d][slot], bytes); /* shared first, mirror after */
    sub_clamped(&ml.binds[h].m_ovh, bytes);
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
    uint64_t cap = __atomic_load_n(&ml.binds[h].cap, __ATOMIC_RELAXED);
    if (cap && v > cap) v = 0; /* garbage (no context is larger than the cap): unknown */
    if (v) __atomic_store_n(&ml.binds[h].m_ctx, v, __ATOMIC_RELAXED); /* kept for a rebuild */
    else v = __atomic_load_n(&ml.binds[h].m_ctx, __ATOMIC_RELAXED);
    return v;
}

void cc_ml_set_ctx_size(int h, uint64_t bytes)
{
    int d, slot;
    struct ledger *l = ledger_of(h, &d, &slot);
    if (!l) return;
    __atomic_store_n(&ml.binds[h].m_ctx, bytes, __ATOMIC_RELAXED);
    __atomic_store_n(&l->r->ctx_size[d], bytes, __ATOMIC_RELAXED);
}

/* Refusals are counted for the node's exporter (cudacap/abi_counters.h), in the
 * shared file only: the private ledger maps no file past its struct. The
 * hook layer calls this once per refusal the program sees. */
void cc_ml_count_refusal(int h)
{
    int d, slot;
    struct ledger *l = ledger_of(h, &d, &slot);
    if (l == &ml.sh && d >= 0 && d < CC_MEM_DEVS)
        __atomic_fetch_add(&cc_mem_counters(l->r)->refusals[d], 1, __ATOMIC_RELAXED);
}

void cc_ml_charge(int h, uint64_t bytes)
{
    int d, slot;
    struct ledger *l = ledger_of(h, &d, &slot);
    if (!l) return;
    __atomic_add_fetch(&ml.binds[h].m_used, bytes, __ATOMIC_SEQ_CST);
    count_add(&l->r->used[d][slot], bytes);
}

void cc_ml_release(int h, uint64_t bytes)
{
    int d, slot;
    struct ledger *l = ledger_of(h, &d, &slot);
    if (!l) return;
    sub_clamped(&l->r->used[d][slot], bytes); /* shared first, mirror after */
    sub_clamped(&ml.binds[h].m_used, bytes);
}

void cc_ml_set_overhead(int h, uint64_t bytes)
{
    int d, slot;
    struct ledger *l = ledger_of(h, &d, &slot);
    if (!l) return;
    __atomic_store_n(&ml.binds[h].m_ovh, bytes, __ATOMIC_SEQ_CST);
    __atomic_store_n(&l->r->overhead[d][slot], bytes, __ATOMIC_SEQ_CST);
}

uint64_t cc_ml_overhead(int h)
{
    int d, slot;
    struct ledger *l = ledger_of(h, &d, &slot);
    return l ? __atomic_load_n(&ml.binds[h].m_ovh, __ATOMIC_RELAXED) : 0;
}

uint64_t cc_ml_used(int h)
{
    int d, slot;
    struct ledger *l = ledger_of(h, &d, &slot);
    return l ? sum_dev(l, &ml.binds[h], d, slot) : 0;
}

uint64_t cc_ml_own(int h)
{
    int d, slot;
    struct ledger *l = ledger_of(h, &d, &slot);
    return l ? __atomic_load_n(&ml.binds[h].m_used, __ATOMIC_RELAXED) : 0;
}

int cc_ml_shared(int h)
{
    int d, slot;
    struct ledger *l = ledger_of(h, &d, &slot);
    return l && l->shared;
}
