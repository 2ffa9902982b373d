/* The memory ledger (cap/memledger.h): attaching a process to the
 * container's region, the private ledger it falls back on, its device binds,
 * and a fork child's fresh start. The state shared by the ledger's files is
 * defined here (cap/mem/ledger_internal.h). */
#include "cap/memledger.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cap/mem/ledger_internal.h"
#include "common/fork.h"
#include "common/log.h"
#include "cudacap/abi_counters.h"
#include "cudacap/abi_mem_region.h"
#include "os/os.h"
#include "region/region.h"
#include "common/assert.h"

struct ml_state ml = {.mu = PTHREAD_MUTEX_INITIALIZER, .fd = -1};

static int private_ready(void)
{
    if (ml.pv.r) return 1;
    /* MAP_PRIVATE: a fork child gets a copy, which it zeroes (it owns none
     * of the parent's allocations). */
    void *p = cc_os_map_private(sizeof(cc_mem_region_t));
    if (!p) return 0;
    ml.pv.r = p;
    ml.pv.r->proc[0].owner = (uint32_t)getpid();
    ml.pv.r->slots_hw = 1;
    ml.pv.slot = 0;
    ml.pv.shared = 0;
    return 1;
}

/* Binds of the shared ledger move to the private one with their mirrors
 * (the region cannot hold us any more): per-process cap from here on. */
void ml_go_private_locked(const char *why)
{
    cc_assert_held(&ml.mu);
    cc_warn("memory cap: %s/%s: %s; this process is capped on its own (per-process cap)", ml.dir,
            CC_MEM_REGION_FILE, why);
    for (int h = 0; h < ml.nbinds; h++) {
        struct bind *b = &ml.binds[h];
        if (__atomic_load_n(&b->l, __ATOMIC_RELAXED) != &ml.sh) continue;
        int d = -1;
        for (int k = 0; k < CC_MEM_DEVS && d < 0; k++) {
            uint64_t key = ml.pv.r->dev[k].key;
            if (key == b->key || key == 0) {
                ml.pv.r->dev[k].key = b->key;
                d = k;
            }
        }
        if (d < 0) continue;
        __atomic_store_n(&ml.pv.r->used[d][0], __atomic_load_n(&b->m_used, __ATOMIC_SEQ_CST),
                         __ATOMIC_SEQ_CST);
        __atomic_store_n(&ml.pv.r->overhead[d][0], __atomic_load_n(&b->m_ovh, __ATOMIC_SEQ_CST),
                         __ATOMIC_SEQ_CST);
        __atomic_store_n(&ml.pv.r->host_used[d][0], __atomic_load_n(&b->m_host, __ATOMIC_SEQ_CST),
                         __ATOMIC_SEQ_CST);
        __atomic_store_n(&b->d, d, __ATOMIC_RELAXED);
        __atomic_store_n(&b->l, &ml.pv, __ATOMIC_RELEASE);
    }
    ml.sh.shared = 0;
}

/* Try the shared ledger again until the path names a file we can use
 * (rejoin_locked). */
static void CC_CONTROL_POINT(want_rejoin)(void) { ml.rejoin = 1; }

void ml_attach_locked(const char *dir)
{
    cc_assert_held(&ml.mu);
    if (ml.attached) return;
    cc_fork_child_register(cc_ml_fork_child); /* before our state; again (a fork child): no-op */
    ml.attached = 1;
    if (dir && dir != ml.dir) snprintf(ml.dir, sizeof ml.dir, "%s", dir);
    if (!private_ready()) cc_error("cannot map a private memory ledger; memory is not capped");
    /* No folder (""): the configuration already said why, once. */
    struct cc_region_spec spec = ml_spec();
    /* A fork child maps the inherited file again, at the same address, for
     * a descriptor (and liveness byte) of its own. */
    struct cc_region_opts o = {.fixed = ml.sh.r, .keep_fd = 1};
    void *base = ml.dir[0] ? cc_region_open_ex(ml.dir, &spec, &o) : NULL;
    if (!base) {
        ml.sh.shared = 0;
        if (ml.sh.r) ml_go_private_locked("cannot be mapped again");
        if (ml.dir[0]) {
            cc_warn("memory cap: the container-wide ledger %s/%s is unavailable; this process "
                    "is capped on its own (per-process cap)", ml.dir, CC_MEM_REGION_FILE);
            want_rejoin();
            ml_start_keeper();
        }
        return;
    }
    ml.sh.r = base;
    ml.fd = o.fd;
    ml.fdev = o.dev;
    ml.fino = o.ino;
    /* Before any slot: from now on a rebuilder waits for us. Without it a
     * rebuild by another process would not wait for our re-publishing, and
     * what it grants meanwhile would pass the cap by our bytes (the fault
     * loop, lock at its 3rd call: 272 MiB under 256): so a transient
     * failure is retried, and a lasting one keeps this process on its own. */
    ml.key = ml_take_key(ml.fd);
    for (int i = 0; !ml.key && i < 3; i++) {
        cc_os_sleep_ns(1000000);
        ml.key = ml_take_key(ml.fd);
    }
    if (!ml.key) {
        cc_region_unlock_init(ml.fd);
        ml.sh.shared = 0;
        if (ml.nbinds) {
            ml_go_private_locked("no liveness lock");
        } else {
            cc_warn("memory cap: %s/%s: no liveness lock (%s); this process is capped on its own "
                    "(per-process cap)", ml.dir, CC_MEM_REGION_FILE, strerror(errno));
        }
        return;
    }
    if (o.rebuilt) ml_rebuild_wait(ml.sh.r, ml.fd);
    __atomic_store_n(&ml.sh.gen, __atomic_load_n(&ml.sh.r->generation, __ATOMIC_SEQ_CST),
                     __ATOMIC_RELAXED);
    cc_region_unlock_init(ml.fd);
    ml.sh.shared = 1;
    __atomic_store_n(&ml.sh.slot, -1, __ATOMIC_RELAXED);
    /* Slots naming our key belong to this process before an exec, or to a
     * dead process whose key we reuse: reap them before claiming ours. */
    uint32_t me = ml.key;
    for (uint32_t i = 0; i < CC_MEM_SLOTS; i++)
        if (__atomic_load_n(&ml.sh.r->proc[i].owner, __ATOMIC_ACQUIRE) == me)
            ml_reap_if_dead(ml.sh.r, (int)i, -1);
    int s = ml_claim_slot(ml.sh.r);
    if (s < 0 && ml_sweep(&ml.sh) > 0) s = ml_claim_slot(ml.sh.r);
    if (s < 0) {
        cc_warn("memory cap: all %d process slots of %s/%s are in use; this process is capped "
                "on its own (per-process cap)", CC_MEM_SLOTS, ml.dir, CC_MEM_REGION_FILE);
        ml.sh.shared = 0;
        return;
    }
    ml_publish_owner(ml.sh.r, s);
    __atomic_store_n(&ml.sh.slot, s, __ATOMIC_RELAXED);
    if (ml.nbinds) ml_republish_locked(0); /* a fork child's binds: its (zero) mirrors */
    ml_start_keeper();
}

int cc_ml_attach(const char *state_dir)
{
    pthread_mutex_lock(&ml.mu);
    ml_attach_locked(state_dir);
    int r = ml.sh.r && ml.sh.shared && ml.sh.slot >= 0;
    pthread_mutex_unlock(&ml.mu);
    return r;
}

void cc_ml_count_config_errors(const char *state_dir, unsigned errors, int refused)
{
    pthread_mutex_lock(&ml.mu);
    ml_attach_locked(state_dir);
    if (ml.sh.r && ml.sh.shared) {
        cc_config_counters_t *c = cc_config_counters(ml.sh.r);
        __atomic_fetch_add(&c->errors, (uint64_t)errors, __ATOMIC_RELAXED);
        if (refused) __atomic_fetch_add(&c->refused, 1, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&ml.mu);
}

/* ---- devices ----------------------------------------------------------- */

static uint64_t uuid_key(const char *uuid)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a 64 */
    for (const unsigned char *p = (const unsigned char *)uuid; *p; p++) h = (h ^ *p) * 1099511628211ull;
    return h | 1; /* 0 means a free entry */
}

int ml_find_dev(cc_mem_region_t *r, uint64_t key, const char *uuid, uint64_t limit)
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
    pthread_mutex_lock(&ml.mu);
    ml_attach_locked(state_dir);
    int h = -1;
    for (int i = 0; i < ml.nbinds; i++)
        if (ml.binds[i].key == key) h = i;
    if (h < 0 && ml.nbinds < NBINDS) {
        struct ledger *l = ml.sh.shared && ml.sh.slot >= 0 ? &ml.sh : &ml.pv;
        /* No private ledger either (its mapping failed: said at attach). */
        int d = l->r ? ml_find_dev(l->r, key, uuid ? uuid : "", limit) : -1;
        if (d < 0 && l == &ml.sh && private_ready()) {
            cc_warn("memory cap: %s/%s has no free device entry for %s; this process caps that "
                    "device on its own", ml.dir, CC_MEM_REGION_FILE, uuid);
            l = &ml.pv;
            d = ml_find_dev(l->r, key, uuid ? uuid : "", limit);
        }
        if (d >= 0) {
            h = ml.nbinds++;
            struct bind *b = &ml.binds[h];
            memset(b, 0, sizeof *b);
            b->key = key;
            b->cap = limit;
            snprintf(b->uuid, sizeof b->uuid, "%s", uuid ? uuid : "");
            __atomic_store_n(&b->d, d, __ATOMIC_RELAXED);
            __atomic_store_n(&b->l, l, __ATOMIC_RELEASE);
        }
    }
    pthread_mutex_unlock(&ml.mu);
    if (h < 0)
        cc_log_once(CC_LOG_ERROR, "memory cap: no ledger entry for %s; the device runs uncapped", uuid);
    return h;
}

void cc_ml_set_cap(int h, uint64_t cap)
{
    if (h < 0 || h >= NBINDS) return;
    struct bind *b = &ml.binds[h];
    struct ledger *l = __atomic_load_n(&b->l, __ATOMIC_ACQUIRE);
    if (!l) return;
    __atomic_store_n(&b->cap, cap, __ATOMIC_RELAXED);
    int d = __atomic_load_n(&b->d, __ATOMIC_RELAXED);
    if (l->r && d >= 0 && d < CC_MEM_DEVS) /* display: cudacap status */
        __atomic_store_n(&l->r->dev[d].limit, ml_bind_cap_shown(b), __ATOMIC_RELAXED);
}

uint32_t cc_ml_limits_gen(int h)
{
    if (h < 0 || h >= NBINDS) return 0;
    /* Acquire: pairs with the release that published the bind (l->r set). */
    struct ledger *l = __atomic_load_n(&ml.binds[h].l, __ATOMIC_ACQUIRE);
    return l == &ml.sh && l->r ? __atomic_load_n(&l->r->limits_gen, __ATOMIC_RELAXED) : 0;
}

/* ---- fork -------------------------------------------------------------- */

void cc_ml_fork_child(void)
{
    /* Single-threaded here. The mutex may have been held by a parent thread
     * at fork: re-initialise it. */
    pthread_mutex_init(&ml.mu, NULL);
    ml.sh.slot = -1;
    ml.attached = 0;
    ml.keeper = 0; /* threads do not survive fork */
    ml.rejoin = 0;
    ml.host_pid = 0;
    ml.key = 0; /* our own comes with our own descriptor, at attach */
    /* The inherited descriptor shares the parent's open file description,
     * and with it the parent's liveness byte: ours comes with our own. */
    if (ml.fd >= 0) close(ml.fd);
    ml.fd = -1;
    for (int h = 0; h < ml.nbinds; h++) ml.binds[h].m_used = ml.binds[h].m_ovh = ml.binds[h].m_host = 0;
    if (ml.pv.r) {
        memset(ml.pv.r->used, 0, sizeof ml.pv.r->used);
        memset(ml.pv.r->overhead, 0, sizeof ml.pv.r->overhead);
        memset(ml.pv.r->host_used, 0, sizeof ml.pv.r->host_used);
        ml.pv.r->proc[0].owner = (uint32_t)getpid();
        ml.pv.r->proc[0].host_pid = 0;
    }
}
