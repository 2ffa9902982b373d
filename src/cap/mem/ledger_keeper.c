/* The memory ledger (cap/memledger.h): the keeper thread of a process
 * (one each), which re-publishes when the region changes (ledger_rebuild.c)
 * and rejoins the container's region once it can. */
#include "cap/memledger.h"

#include <pthread.h>
#include <unistd.h>

#include "cap/mem/ledger_internal.h"
#include "common/log.h"
#include "cudacap/abi_mem_region.h"
#include "os/os.h"
#include "region/region.h"
#include "common/assert.h"

static void *keeper(void *arg);

void ml_start_keeper(void)
{
    if (ml.keeper) return;
    ml.keeper = 1;
    /* No signals there but the synchronous ones (os.h): a blocked SIGBUS
     * from a fault would kill the process instead of reaching the guard. */
    if (cc_os_thread(keeper, NULL, "cudacap-keep") != 0)
        cc_info("memory cap: no keeper thread; this process re-publishes only when it allocates");
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
    cc_assert_held(&ml.mu);
    struct cc_region_spec spec = ml_spec();
    struct cc_region_opts o = {.fixed = ml.sh.r, .keep_fd = 1, .try_lock = 1, .quiet = 1};
    void *base = cc_region_open_ex(ml.dir, &spec, &o);
    if (!base) return; /* not yet, or busy: the next check */
    cc_mem_region_t *r = base;
    ml.sh.r = r;
    if (ml.fd >= 0) close(ml.fd);
    ml.fd = o.fd;
    ml.fdev = o.dev;
    ml.fino = o.ino;
    uint32_t me = ml_take_key(ml.fd);
    if (!me) { /* no liveness byte: a slot would be reaped at once; the next check */
        close(ml.fd); /* the init lock goes with it */
        ml.fd = -1;
        return;
    }
    ml.key = me;
    if (o.rebuilt) ml_rebuild_wait(r, ml.fd);
    uint32_t gen = __atomic_load_n(&r->generation, __ATOMIC_SEQ_CST);
    cc_region_unlock_init(ml.fd);
    for (uint32_t i = 0; i < CC_MEM_SLOTS; i++)
        if (__atomic_load_n(&r->proc[i].owner, __ATOMIC_ACQUIRE) == me)
            ml_reap_if_dead(r, (int)i, -1);
    int s = ml_claim_slot(r);
    if (s < 0) { /* full: stay on our own (the attach's warning said so) */
        ml.rejoin = 0;
        close(ml.fd);
        ml.fd = -1;
        return;
    }
    int dev[NBINDS];
    for (int h = 0; h < ml.nbinds; h++) {
        struct bind *b = &ml.binds[h];
        dev[h] = -1;
        if (__atomic_load_n(&b->l, __ATOMIC_RELAXED) != &ml.pv) continue;
        dev[h] = ml_find_dev(r, b->key, b->uuid, ml_bind_cap_shown(b));
        if (dev[h] < 0) continue; /* no entry: it stays on its own */
        __atomic_store_n(&r->used[dev[h]][s], __atomic_load_n(&b->m_used, __ATOMIC_SEQ_CST),
                         __ATOMIC_SEQ_CST);
        __atomic_store_n(&r->overhead[dev[h]][s], __atomic_load_n(&b->m_ovh, __ATOMIC_SEQ_CST),
                         __ATOMIC_SEQ_CST);
        __atomic_store_n(&r->host_used[dev[h]][s], __atomic_load_n(&b->m_host, __ATOMIC_SEQ_CST),
                         __ATOMIC_SEQ_CST);
        ml_heal_ctx(r, dev[h], b);
    }
    ml_publish_owner(r, s);
    __atomic_store_n(&ml.sh.slot, s, __ATOMIC_RELAXED);
    __atomic_store_n(&ml.sh.gen, gen, __ATOMIC_RELAXED);
    ml.sh.shared = 1;
    ml.rejoin = 0;
    for (int h = 0; h < ml.nbinds; h++) {
        struct bind *b = &ml.binds[h];
        if (dev[h] < 0) continue;
        __atomic_store_n(&b->d, dev[h], __ATOMIC_RELAXED);
        __atomic_store_n(&b->l, &ml.sh, __ATOMIC_RELEASE);
        /* What changed in flight on the private ledger meanwhile. */
        ml_repair(&r->used[dev[h]][s], &b->m_used);
        ml_repair(&r->overhead[dev[h]][s], &b->m_ovh);
        ml_repair(&r->host_used[dev[h]][s], &b->m_host);
    }
    cc_info("memory cap: %s/%s can be used now; this process joined the container's cap (slot %d)",
            ml.dir, CC_MEM_REGION_FILE, s);
}

static void *keeper(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&ml.mu);
        cc_mem_region_t *r = ml.sh.shared ? ml.sh.r : NULL;
        uint32_t gen = ml.sh.gen;
        pthread_mutex_unlock(&ml.mu);
        if (!r) { /* private: nothing to keep, unless the file may become usable */
            pthread_mutex_lock(&ml.mu);
            int again = ml.rejoin;
            pthread_mutex_unlock(&ml.mu);
            if (!again) return NULL;
            cc_os_sleep_ns(CC_ML_KEEP_NS);
            pthread_mutex_lock(&ml.mu);
            if (ml.rejoin && !ml.sh.shared) rejoin_locked();
            pthread_mutex_unlock(&ml.mu);
            continue;
        }
        if (__atomic_load_n(&r->generation, __ATOMIC_SEQ_CST) == gen)
            cc_os_futex_wait(&r->generation, gen, CC_ML_KEEP_NS);
        pthread_mutex_lock(&ml.mu);
        ml_check_locked(1);
        pthread_mutex_unlock(&ml.mu);
    }
    return NULL;
}
