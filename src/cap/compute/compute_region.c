#include "cap/compute/compute_region.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cap/compute/controller.h"
#include "os/os.h"
#include "region/proc_key.h"
#include "region/region.h"
#include "region/specs.h"

/* Mapped, with our key's byte held on the descriptor kept open (none: key
 * 0, the process table will not hold us, the bucket is still shared). */
static cc_compute_region_t *open_keyed(const char *dir, struct cc_region_opts *o, struct cc_pkey *k)
{
    o->keep_fd = 1;
    cc_compute_region_t *r = cc_region_open_ex(dir, &cc_compute_region_spec, o);
    k->fd = -1, k->key = 0, k->base = CC_COMPUTE_LIVE_BASE;
    if (!r) return NULL;
    cc_region_unlock_init(o->fd);
    int got = cc_pkey_take(k, o->fd, CC_COMPUTE_LIVE_BASE);
    for (int i = 0; got != 0 && errno != EAGAIN && i < 3; i++) { /* a failing lock: again */
        cc_os_sleep_ns(1000000);
        got = cc_pkey_take(k, o->fd, CC_COMPUTE_LIVE_BASE);
    }
    if (got != 0) k->key = 0; /* k->fd stays: liveness queries of others still work */
    return r;
}

cc_compute_region_t *cc_compute_region_open(const char *dir, struct cc_pkey *k)
{
    struct cc_region_opts o = {0};
    return open_keyed(dir, &o, k);
}

cc_compute_region_t *cc_compute_region_try_open(const char *dir, struct cc_pkey *k)
{
    struct cc_region_opts o = {.try_lock = 1, .quiet = 1};
    return open_keyed(dir, &o, k);
}

int cc_compute_rekey(const char *dir, struct cc_pkey *k, const struct stat *was)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/%s", dir, CC_COMPUTE_FILE);
    const char *why;
    k->fd = -1, k->key = 0, k->base = CC_COMPUTE_LIVE_BASE;
    int fd = cc_state_open(path, O_RDWR, 0, &why);
    if (fd < 0) return -1;
    struct stat st;
    /* Another file at the path: its bytes would not be the mapping's. */
    if (cc_os_fstat(fd, &st) != 0 || st.st_dev != was->st_dev || st.st_ino != was->st_ino) {
        close(fd);
        return -1;
    }
    if (cc_pkey_take(k, fd, CC_COMPUTE_LIVE_BASE) != 0) k->key = 0;
    return 0;
}

static void init_line(cc_compute_dev_t *d, int64_t nominal, uint32_t cap_pm)
{
    cc_ctrl_state_t st = cc_ctrl_initial(cap_pm, nominal);
    /* Seeded when the line is built, never by a later joiner: a process
     * starting late must not reset a converged controller. */
    memset(d, 0, sizeof *d);
    /* Empty: the container's share accrues from its first launch on. A full
     * period at start let a deep queue at process start take cap + a period
     * in its first second; the first launch waits one drip lump. */
    (void)nominal;
    d->tokens = 0;
    d->share = st.share;
    d->up_limit_pm = st.up_limit_pm;
    d->excl_debounced = st.excl_debounced;
}

int cc_compute_claim_device(cc_compute_region_t *r, const char *uuid, int64_t nominal,
                            uint32_t cap_pm)
{
    size_t n = strlen(uuid);
    if (n == 0 || n >= CC_COMPUTE_UUID_LEN) return -1;
    /* Waits for lines being claimed share one bound (100 ms): a table of
     * lines stuck at "being claimed" (killed claimers, random bytes) costs
     * that once, not 100 ms a line. */
    int budget = 1000;
    for (int pass = 0; pass < 2; pass++) {
        for (unsigned i = 0; i < CC_COMPUTE_DEVICES; i++) {
            cc_compute_uuid_t *u = &r->uuid[i];
            uint32_t st = __atomic_load_n(&u->state, __ATOMIC_ACQUIRE);
            if (st == 0) {
                uint32_t zero = 0;
                if (__atomic_compare_exchange_n(&u->state, &zero, 1, 0, __ATOMIC_ACQ_REL,
                                                __ATOMIC_ACQUIRE)) {
                    memcpy(u->uuid, uuid, n + 1);
                    init_line(&r->dev[i], nominal, cap_pm);
                    __atomic_store_n(&r->accrued_ns[i], 0, __ATOMIC_RELAXED);
                    memset(&r->elastic[i], 0, sizeof r->elastic[i]);
                    memset(&r->pace[i], 0, sizeof r->pace[i]);
                    __atomic_store_n(&u->state, 2, __ATOMIC_RELEASE);
                    return (int)i;
                }
                st = zero;
            }
            /* Being claimed: the claimer only copies 44 bytes and 64 more;
             * wait a little (bounded: a claimer killed mid-claim leaves the
             * slot at 1 for good, and we must not hang on it). */
            for (; st == 1 && budget > 0; budget--) {
                cc_os_sleep_ns(100000);
                st = __atomic_load_n(&u->state, __ATOMIC_ACQUIRE);
            }
            if (st == 2 && strncmp(u->uuid, uuid, CC_COMPUTE_UUID_LEN) == 0) return (int)i;
        }
    }
    return -1;
}

/* By the key's liveness byte; cannot tell counts as alive (os/os.h): a
 * registration is never freed from under a live process. */
static int alive(const struct cc_pkey *me, uint32_t key) { return cc_pkey_alive(me, key); }

int cc_compute_register_proc(cc_compute_region_t *r, const struct cc_pkey *me, uint32_t host_pid)
{
    uint32_t pid = me->key;
    if (!pid) return -1;
    for (unsigned i = 0; i < CC_COMPUTE_PROCS; i++) {
        cc_compute_proc_t *p = &r->proc[i];
        if (__atomic_load_n(&p->pid, __ATOMIC_ACQUIRE) == pid) {
            if (host_pid) __atomic_store_n(&p->host_pid, host_pid, __ATOMIC_RELEASE);
            return (int)i;
        }
    }
    for (unsigned i = 0; i < CC_COMPUTE_PROCS; i++) {
        cc_compute_proc_t *p = &r->proc[i];
        uint32_t cur = __atomic_load_n(&p->pid, __ATOMIC_ACQUIRE);
        if (cur != 0 && alive(me, cur)) continue;
        if (__atomic_compare_exchange_n(&p->pid, &cur, pid, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
            __atomic_store_n(&p->host_pid, host_pid, __ATOMIC_RELEASE);
            /* A reused slot must not show its last owner's figures. */
            for (unsigned d = 0; d < CC_COMPUTE_DEVICES; d++)
                __atomic_store_n(&p->util_pm[d], (uint16_t)CC_COMPUTE_UTIL_UNKNOWN, __ATOMIC_RELAXED);
            return (int)i;
        }
    }
    return -1;
}

int cc_compute_is_member(const cc_compute_region_t *r, uint32_t host_pid)
{
    if (host_pid == 0) return 0;
    for (unsigned i = 0; i < CC_COMPUTE_PROCS; i++)
        if (__atomic_load_n(&r->proc[i].host_pid, __ATOMIC_ACQUIRE) == host_pid &&
            __atomic_load_n(&r->proc[i].pid, __ATOMIC_ACQUIRE) != 0)
            return 1;
    return 0;
}

int cc_compute_host_pid_taken(const cc_compute_region_t *r, uint32_t host_pid, const struct cc_pkey *me)
{
    if (host_pid == 0) return 0;
    for (unsigned i = 0; i < CC_COMPUTE_PROCS; i++) {
        uint32_t pid = __atomic_load_n(&r->proc[i].pid, __ATOMIC_ACQUIRE);
        if (pid == 0 || pid == me->key) continue;
        if (__atomic_load_n(&r->proc[i].host_pid, __ATOMIC_ACQUIRE) == host_pid && alive(me, pid)) return 1;
    }
    return 0;
}

void cc_compute_publish_procs(cc_compute_region_t *r, unsigned line, const uint32_t *host_pids,
                              const uint16_t *util_pm, unsigned n)
{
    if (line >= CC_COMPUTE_DEVICES) return;
    for (unsigned i = 0; i < CC_COMPUTE_PROCS; i++) {
        cc_compute_proc_t *p = &r->proc[i];
        if (__atomic_load_n(&p->pid, __ATOMIC_ACQUIRE) == 0) continue;
        uint32_t hp = __atomic_load_n(&p->host_pid, __ATOMIC_ACQUIRE);
        /* Known but absent from the samples: it ran nothing this period. */
        uint16_t u = hp ? 0 : (uint16_t)CC_COMPUTE_UTIL_UNKNOWN;
        for (unsigned k = 0; hp && k < n; k++)
            if (host_pids[k] == hp) {
                u = util_pm[k];
                break;
            }
        __atomic_store_n(&p->util_pm[line], u, __ATOMIC_RELAXED);
    }
}

void cc_compute_publish_owner(cc_compute_region_t *r, unsigned line, uint32_t pid,
                              uint32_t host_pid)
{
    if (line >= CC_COMPUTE_DEVICES) return;
    /* Compare first: the owner republishes every period; no needless
     * cache-line writes. */
    if (__atomic_load_n(&r->owner[line].pid, __ATOMIC_RELAXED) != pid)
        __atomic_store_n(&r->owner[line].pid, pid, __ATOMIC_RELAXED);
    if (__atomic_load_n(&r->owner[line].host_pid, __ATOMIC_RELAXED) != host_pid)
        __atomic_store_n(&r->owner[line].host_pid, host_pid, __ATOMIC_RELAXED);
}
