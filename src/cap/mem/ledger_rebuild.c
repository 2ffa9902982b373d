/* The memory ledger (cap/memledger.h) when the region changes under a
 * process: rebuilt, replaced, moved to another file, or its content wrong.
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
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cap/mem/ledger_internal.h"
#include "common/log.h"
#include "cudacap/abi_mem_region.h"
#include "os/os.h"
#include "region/proc_key.h"
#include "region/region.h"
#include "region/specs.h"
#include "common/clock.h"
#include "common/assert.h"

static uint32_t new_generation(void)
{
    uint32_t g = (uint32_t)(cc_mono_ns() ^ ((uint64_t)getpid() * 2654435761u));
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

struct cc_region_spec ml_spec(void)
{
    struct cc_region_spec s = cc_mem_region_spec;
    s.init = region_init;
    return s;
}

/* We rebuilt the region (init lock held, so nobody attaches meanwhile):
 * every live process that had a slot re-publishes before we go on, or the
 * bound passes. Live processes are those holding a liveness byte. */
static void CC_CONTROL_POINT(wait_republished)(cc_mem_region_t *r, int fd)
{
    static uint32_t pids[CC_MEM_SLOTS];
    int n = cc_pkey_scan(fd, CC_MEM_LIVE_BASE, pids, CC_MEM_SLOTS), left = n;
    if (n == 0) return;
    cc_os_futex_wake_all(&r->generation);
    uint64_t t0 = cc_mono_ns();
    while (left > 0) {
        left = 0;
        for (int k = 0; k < n; k++) {
            if (!pids[k]) continue;
            int done = 0;
            for (int i = 0; i < CC_MEM_SLOTS && !done; i++)
                done = __atomic_load_n(&r->proc[i].owner, __ATOMIC_ACQUIRE) == pids[k];
            off_t at, len;
            if (!done && cc_os_lock_query(fd, (off_t)(CC_MEM_LIVE_BASE + pids[k]), 1, &at, &len) != 1)
                done = 1; /* gone */
            if (done) pids[k] = 0;
            else left++;
        }
        if (left == 0) break;
        if (cc_mono_ns() - t0 > (uint64_t)CC_ML_REPUBLISH_WAIT_NS) {
            cc_warn("memory cap: %s/%s was rebuilt; %d live process(es) did not re-publish "
                    "their memory within 1 s, the container may pass its cap by what they hold",
                    ml.dir, CC_MEM_REGION_FILE, left);
            break;
        }
        cc_os_futex_wake_all(&r->generation);
        cc_os_sleep_ns(1000000);
    }
    cc_info("memory cap: rebuilt %s/%s; %d live process(es) re-published in %.1f ms", ml.dir,
            CC_MEM_REGION_FILE, n - left, (double)(cc_mono_ns() - t0) / 1e6);
}

void ml_rebuild_wait(cc_mem_region_t *r, int fd) { wait_republished(r, fd); }

/* A rebuilt or rejoined region forgot the context size (or holds garbage
 * there): put back ours. */
void ml_heal_ctx(cc_mem_region_t *r, int d, const struct bind *b)
{
    uint64_t mine = __atomic_load_n(&b->m_ctx, __ATOMIC_RELAXED);
    uint64_t v = __atomic_load_n(&r->ctx_size[d], __ATOMIC_RELAXED);
    uint64_t cap = __atomic_load_n(&b->cap, __ATOMIC_RELAXED);
    if (mine && (!v || (cap && v > cap))) /* forgotten, or garbage */
        __atomic_store_n(&r->ctx_size[d], mine, __ATOMIC_RELAXED);
}

/* ---- re-publication ------------------------------------------------------ */

/* The path names another file than the one we hold (replaced, or swapped
 * back after a swap): 1 when it is a regular file we could use. */
static int path_moved(void)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/%s", ml.dir, CC_MEM_REGION_FILE);
    struct stat st;
    if (cc_os_lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    return st.st_dev != ml.fdev || st.st_ino != ml.fino;
}

/* Maps the file again over our address (after the guard replaced it, or
 * when the path names another file, or the header is not ours): with our
 * descriptor when the file is whole and valid (no lock needed: a rebuilder
 * publishes the magic before it waits for us), else through the init lock
 * without waiting (busy: try again at the next check). 1 when mapped. */
static int remap_locked(int moved)
{
    cc_assert_held(&ml.mu);
    struct cc_region_spec spec = ml_spec();
    struct stat st;
    if (!moved && ml.fd >= 0 && cc_os_fstat(ml.fd, &st) == 0 && st.st_size == (off_t)spec.file_size) {
        if (cc_os_map_shared(ml.sh.r, spec.file_size, ml.fd, 1)) {
            cc_region_unfault(ml.sh.r);
            if (cc_region_valid(ml.sh.r, &spec)) return 1;
        }
    }
    struct cc_region_opts o = {.fixed = ml.sh.r, .keep_fd = 1, .try_lock = 1, .quiet = 1};
    void *b = cc_region_open_ex(ml.dir, &spec, &o);
    if (!b) {
        if (errno != EAGAIN)
            cc_log_once(CC_LOG_WARN, "memory cap: %s/%s cannot be mapped again (%s); this process "
                                     "counts on its own until it can", ml.dir, CC_MEM_REGION_FILE,
                        strerror(errno));
        return 0;
    }
    if (ml.fd >= 0 && ml.fd != o.fd) close(ml.fd); /* our old liveness byte goes with it */
    ml.fd = o.fd;
    ml.fdev = o.dev;
    ml.fino = o.ino;
    /* Our old byte went with the old descriptor: a key again (perhaps
     * another one; re-publication follows it). None: a slot of ours would
     * be reaped as dead, so this process counts on its own. */
    uint32_t key = ml_take_key(ml.fd);
    for (int i = 0; !key && i < 3; i++) {
        cc_os_sleep_ns(1000000);
        key = ml_take_key(ml.fd);
    }
    if (!key) {
        cc_region_unlock_init(ml.fd);
        ml_go_private_locked("no liveness lock");
        return 0;
    }
    ml.key = key;
    if (o.rebuilt) ml_rebuild_wait(ml.sh.r, ml.fd);
    cc_region_unlock_init(ml.fd);
    return 1;
}

/* Count repair: from the value read to the mirror, by CAS (see the top). */
void ml_repair(uint64_t *cell, const uint64_t *mirror)
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
static int CC_CONTROL_POINT(rekey_locked)(cc_mem_region_t *r, struct bind *b, int s)
{
    cc_assert_held(&ml.mu);
    int d = __atomic_load_n(&b->d, __ATOMIC_RELAXED);
    uint64_t k = __atomic_load_n(&r->dev[d].key, __ATOMIC_ACQUIRE);
    if (__builtin_expect(k == b->key, 1) && d == 0) return d; /* first entry, ours */
    int first = -1;
    for (int i = 0; i < CC_MEM_DEVS && first < 0; i++)
        if (__atomic_load_n(&r->dev[i].key, __ATOMIC_ACQUIRE) == b->key) first = i;
    if (first < 0)
        __atomic_compare_exchange_n(&r->dev[d].key, &k, b->key, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_RELAXED);
    int nd = ml_find_dev(r, b->key, b->uuid, 0);
    if (nd < 0 || nd == d) return d;
    __atomic_store_n(&r->used[nd][s], __atomic_load_n(&b->m_used, __ATOMIC_SEQ_CST), __ATOMIC_SEQ_CST);
    __atomic_store_n(&r->overhead[nd][s], __atomic_load_n(&b->m_ovh, __ATOMIC_SEQ_CST),
                     __ATOMIC_SEQ_CST);
    __atomic_store_n(&r->host_used[nd][s], __atomic_load_n(&b->m_host, __ATOMIC_SEQ_CST),
                     __ATOMIC_SEQ_CST);
    __atomic_store_n(&b->d, nd, __ATOMIC_RELAXED);
    __atomic_store_n(&r->used[d][s], 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&r->overhead[d][s], 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&r->host_used[d][s], 0, __ATOMIC_SEQ_CST);
    cc_info("memory cap: %s/%s: the entry of %s changed its key; this process counts in entry %d "
            "again", ml.dir, CC_MEM_REGION_FILE, b->uuid, nd);
    return nd;
}

static void CC_CONTROL_POINT(republish_locked)(int full)
{
    if (!ml.sh.r || !ml.sh.shared || __atomic_load_n(&ml.sh.slot, __ATOMIC_RELAXED) < 0) return;
    struct cc_region_spec spec = ml_spec();
    cc_mem_region_t *r = ml.sh.r;
    int faulted = cc_region_faulted(r);
    int moved = full && path_moved(); /* a stat: the keeper's checks only */
    if (faulted || moved || !cc_region_valid(r, &spec)) {
        /* Not mapped again: keep what we have and try at the next check;
         * after a fault that is the guard's zeroed copy, in which we count
         * alone (per-process cap) meanwhile. */
        if (!remap_locked(moved) && !cc_region_faulted(r)) return;
        if (!ml.sh.shared) return; /* no key on the file: on our own now */
    }
    uint32_t me = ml.key;
    uint32_t gen = __atomic_load_n(&r->generation, __ATOMIC_SEQ_CST);
    int s = __atomic_load_n(&ml.sh.slot, __ATOMIC_RELAXED);
    int keep = gen == ml.sh.gen && __atomic_load_n(&r->proc[s].owner, __ATOMIC_SEQ_CST) == me;
    if (keep) { /* same region, our slot: repair the counts only */
        for (int h = 0; h < ml.nbinds; h++) {
            struct bind *b = &ml.binds[h];
            if (__atomic_load_n(&b->l, __ATOMIC_RELAXED) != &ml.sh) continue;
            int d = rekey_locked(r, b, s);
            ml_repair(&r->used[d][s], &b->m_used);
            ml_repair(&r->overhead[d][s], &b->m_ovh);
            ml_repair(&r->host_used[d][s], &b->m_host);
            ml_heal_ctx(r, d, b);
        }
        return;
    }
    int ns = ml_claim_slot(r);
    if (ns < 0 && ml_sweep(&ml.sh) > 0) ns = ml_claim_slot(r);
    if (ns < 0) {
        ml_go_private_locked("no process slot after a rebuild");
        return;
    }
    for (int h = 0; h < ml.nbinds; h++) {
        struct bind *b = &ml.binds[h];
        if (__atomic_load_n(&b->l, __ATOMIC_RELAXED) != &ml.sh) continue;
        int d = ml_find_dev(r, b->key, b->uuid, ml_bind_cap_shown(b));
        if (d < 0) continue; /* no entry: its bytes stay out (warned at bind) */
        __atomic_store_n(&r->used[d][ns], __atomic_load_n(&b->m_used, __ATOMIC_SEQ_CST),
                         __ATOMIC_SEQ_CST);
        __atomic_store_n(&r->overhead[d][ns], __atomic_load_n(&b->m_ovh, __ATOMIC_SEQ_CST),
                         __ATOMIC_SEQ_CST);
        __atomic_store_n(&r->host_used[d][ns], __atomic_load_n(&b->m_host, __ATOMIC_SEQ_CST),
                         __ATOMIC_SEQ_CST);
        ml_heal_ctx(r, d, b);
        __atomic_store_n(&b->d, d, __ATOMIC_RELAXED);
    }
    ml_publish_owner(r, ns);
    /* Our old slot, if it still names us, is a copy: give it back. */
    if (gen == ml.sh.gen && s != ns && __atomic_load_n(&r->proc[s].owner, __ATOMIC_SEQ_CST) == me)
        ml_clear_slot(r, s);
    __atomic_store_n(&ml.sh.slot, ns, __ATOMIC_RELAXED);
    __atomic_store_n(&ml.sh.gen, gen, __ATOMIC_RELAXED);
    cc_info("memory cap: re-published this process's memory into %s/%s (slot %d)", ml.dir,
            CC_MEM_REGION_FILE, ns);
}

/* Makes our slot in the region say what this process holds (ml.mu held). */
void ml_republish_locked(int full)
{
    cc_assert_held(&ml.mu);
    republish_locked(full);
}

/* What the keeper checks (full: also whether the path names another file),
 * and, without the stat, what runs before a refusal and in queries. */
void ml_check_locked(int full)
{
    cc_assert_held(&ml.mu);
    if (!ml.sh.r || !ml.sh.shared) return;
    int s = __atomic_load_n(&ml.sh.slot, __ATOMIC_RELAXED);
    if (s < 0) return;
    ml_republish_locked(full); /* cheap when nothing changed: a few loads */
}
