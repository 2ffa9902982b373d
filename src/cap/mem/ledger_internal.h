/* The memory ledger's inside (cap/memledger.h is its API; the layout of the
 * region is include/cudacap/abi_mem_region.h): the state and helpers its files
 * share. Hidden, never exported: the attribute on each declaration also lets
 * the hot path reach them without the GOT, as when they were one file's
 * statics.
 *
 *   ledger_attach.c   attach, the private-ledger fallback, device binds, fork
 *   ledger_slots.c    liveness, process slots, the sweep, host pids
 *   ledger_rebuild.c  a rebuilt or replaced region: re-publish, rekey, heal
 *   ledger_keeper.c   the keeper thread, and rejoining the container's region
 *   ledger_reserve.c  the exact check-and-reserve (its proof) and the counts
 *
 * ml.mu guards attach, binds and re-publication; functions named *_locked
 * want it held. */
#ifndef CC_MEM_LEDGER_INTERNAL_H
#define CC_MEM_LEDGER_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "cudacap/abi_mem_region.h"
#include "common/controls.h"
#include "region/region.h"

#define CC_ML_HIDDEN __attribute__((visibility("hidden")))

struct ledger {
    cc_mem_region_t *r;
    int slot;     /* -1: not (yet) attached in this process (atomic, relaxed) */
    int shared;   /* 1: the container's region; 0: private memory */
    uint32_t gen; /* the region generation our slot was published into */
};

/* A bound in a rebuild: how long a rebuilder waits for the live processes to
 * re-publish, and the keeper's period. */
#define CC_ML_REPUBLISH_WAIT_NS 1000000000ll
#define CC_ML_KEEP_NS 100000000l

/* Handles: index into binds; a device entry of the shared or the private
 * ledger. Written under ml.mu before the handle is returned; l and d change
 * (atomic stores, under ml.mu) when the process re-publishes. The mirrors
 * are this process's own tracking (ledger_rebuild.c says why it wins). */
#define NBINDS (2 * CC_MEM_DEVS)
struct bind {
    struct ledger *l;
    int d;
    uint64_t key;
    uint64_t cap;       /* per-slot clamp (the cap this process applies; relaxed:
                         * cc_ml_set_cap changes it while others read it) */
    char uuid[CC_MEM_UUID_LEN];
    uint64_t m_used;    /* mirror of our used[d][slot] (atomic) */
    uint64_t m_ovh;     /* mirror of our overhead[d][slot] */
    uint64_t m_host;    /* mirror of our host_used[d][slot] (oversubscription) */
    uint64_t m_ctx;     /* a context's size as we learned or saw it (relaxed) */
};
/* The ledger's whole per-process state, one object owned by
 * ledger_attach.c (it is defined and reset on fork there); the other
 * ledger files reach it as `ml`. Fields marked (ml.mu) are written under
 * the mutex. */
struct ml_state {
    struct ledger sh, pv;  /* the container's region, and the private fallback */
    int attached;          /* 1 once the attach of this process ran */
    char dir[1024];        /* the state folder */
    pthread_mutex_t mu;    /* attach, binds and re-publication (*_locked) */
    int fd;                /* memory.region, holding our liveness byte (shared ledger) */
    dev_t fdev;            /* its identity, to notice a replaced file */
    ino_t fino;
    int keeper;            /* the keeper thread runs in this process */
    int rejoin;            /* attach found no usable file: the keeper retries (ml.mu) */
    uint32_t host_pid;
    uint32_t key;          /* our process key in the shared region (region/proc_key.h); 0 none */
    struct bind binds[NBINDS];
    int nbinds;
};
CC_ML_HIDDEN extern struct ml_state ml;

static inline uint32_t hw_of(const cc_mem_region_t *r)
{
    uint32_t hw = __atomic_load_n(&r->slots_hw, __ATOMIC_SEQ_CST);
    return hw > CC_MEM_SLOTS ? CC_MEM_SLOTS : hw; /* never trust the file */
}

/* How far the sweep and the sum look: every slot (the first version
 * trusted slots_hw, which the file may lie about). */
static inline uint32_t CC_CONTROL_POINT(scan_end)(const cc_mem_region_t *r)
{
    (void)r;
    return CC_MEM_SLOTS;
}

/* ledger_attach.c */
CC_ML_HIDDEN void ml_attach_locked(const char *dir);
CC_ML_HIDDEN void ml_go_private_locked(const char *why);
CC_ML_HIDDEN int ml_find_dev(cc_mem_region_t *r, uint64_t key, const char *uuid, uint64_t limit);
/* The cap a bind shows in the region's device entry: 0 (none) for a cap
 * removed after binding (UINT64_MAX). */
static inline uint64_t ml_bind_cap_shown(const struct bind *b)
{
    uint64_t c = __atomic_load_n(&b->cap, __ATOMIC_RELAXED);
    return c == UINT64_MAX ? 0 : c;
}

/* ledger_slots.c */
/* Takes a key (and its liveness byte) for us on the region file at fd:
 * the key, or 0 with errno. */
CC_ML_HIDDEN uint32_t ml_take_key(int fd);
CC_ML_HIDDEN void ml_clear_slot(cc_mem_region_t *r, int i);
CC_ML_HIDDEN int ml_reap_if_dead(cc_mem_region_t *r, int i, int mine);
CC_ML_HIDDEN int ml_sweep(struct ledger *l);
CC_ML_HIDDEN int ml_claim_slot(cc_mem_region_t *r);
CC_ML_HIDDEN void ml_publish_owner(cc_mem_region_t *r, int i);

/* ledger_rebuild.c */
CC_ML_HIDDEN struct cc_region_spec ml_spec(void);
CC_ML_HIDDEN void ml_rebuild_wait(cc_mem_region_t *r, int fd);
CC_ML_HIDDEN void ml_heal_ctx(cc_mem_region_t *r, int d, const struct bind *b);
CC_ML_HIDDEN void ml_repair(uint64_t *cell, const uint64_t *mirror);
CC_ML_HIDDEN void ml_republish_locked(int full);
CC_ML_HIDDEN void ml_check_locked(int full);

/* ledger_keeper.c */
CC_ML_HIDDEN void ml_start_keeper(void);

#endif
