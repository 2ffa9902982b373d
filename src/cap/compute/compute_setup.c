/* The compute cap's per-process state (compute.h): whether this process is
 * capped (cc_compute_mode), each capped device's setup, the container's
 * compute region (opened at the first setup; when unusable then, retried by
 * the watcher: the rejoin, below), and this process's slot in its process
 * table. Admission (gate.c) reads what is set up here. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cap/device.h"
#include "cap/compute/bucket.h"
#include "cap/compute/capture.h"
#include "cap/cfg.h"
#include "cap/compute/compute.h"
#include "cap/compute/compute_region.h"
#include "cap/compute/controller.h"
#include "cap/compute/election.h" /* CC_PERIOD_NS */
#include "cap/compute/gate.h"
#include "cap/port.h"
#include "common/fork.h"
#include "common/log.h"
#include "common/assert.h"
#include "os/os.h"

enum cc_compute_mode cc_compute_mode;
/* Each device's setup is its record's compute part (cap/device.h); the
 * container-level state below is under the records' one lock too
 * (cc_device_lock: "the lock" in the comments here). */
static int cdev_order[CC_MAX_DEVICES], n_order;
/* Written under the lock (release: the first setup, or the rejoin), read
 * anywhere (acquire, cc_compute_region) or under the lock (region_locked). */
static cc_compute_region_t *region;
static int region_tried, shared_off;
/* The region was unusable at the first setup (and sharing is on, with a
 * folder): the watcher retries (cc_compute_rejoin). Under the lock; the
 * watcher's unlocked check is relaxed (it looks again under the lock). */
static int rejoin_wanted;
static int my_slot = -1; /* this process's slot in the process table */
/* Our key in the region (its descriptor holds the key's liveness byte) and
 * that file's identity, for a fork child's own key. Written under the lock
 * (keep_key_locked; fork_child), read without it by cc_compute_key and
 * cc_compute_pkey: every field is stored and loaded atomically. A key goes
 * from none (0) to one, never from one key to another (the first open, the
 * rejoin and a fork child's registration all start from 0): it is stored
 * last, with release, so a reader that loads it with acquire and finds it
 * set reads the descriptor and base stored with it. */
static struct cc_pkey pkey = {.fd = -1};
static struct stat pkey_file;
static int pkey_stale; /* a fork child: the parent's descriptor, not ours yet */
/* This pid is in the region's process table: written under the lock, read
 * relaxed outside it (a stale 0 only takes the lock, which reads it again). */
int cc_compute_registered;

uint32_t cc_compute_host_pid(void) { return cc_port()->host_pid_known(); }

/* The hook layer's discovery tells us here (compute.h): cap asks through the
 * port, the hook tells through this cap-owned call; neither includes the
 * other's headers upward. */
void cc_compute_note_host_pid(uint32_t hp)
{
    /* Seq-cst with register_proc's pair: either we see its slot, or it
     * sees our pid (hostpid.c stores it seq-cst before calling). */
    int s = __atomic_load_n(&my_slot, __ATOMIC_SEQ_CST);
    cc_compute_region_t *r = cc_compute_region(); /* stored before my_slot */
    if (s >= 0 && r) __atomic_store_n(&r->proc[s].host_pid, hp, __ATOMIC_RELEASE);
}
/* Acquire: pairs with the release store of the first setup or the rejoin
 * (the mapping's address written before it). */
cc_compute_region_t *cc_compute_region(void) { return __atomic_load_n(&region, __ATOMIC_ACQUIRE); }
/* Relaxed: every writer holds the lock, and so does the caller. */
static cc_compute_region_t *region_locked(void) { return __atomic_load_n(&region, __ATOMIC_RELAXED); }
int cc_compute_ndev(void) { return __atomic_load_n(&n_order, __ATOMIC_ACQUIRE); }
struct cc_compute_device *cc_compute_dev_at(int i) { return &cc_devrec(cdev_order[i])->compute; }

void cc_compute_pkey(struct cc_pkey *k)
{
    k->fd = -1, k->base = 0;
    k->key = __atomic_load_n(&pkey.key, __ATOMIC_ACQUIRE);
    if (k->key) {
        k->fd = __atomic_load_n(&pkey.fd, __ATOMIC_RELAXED);
        k->base = __atomic_load_n(&pkey.base, __ATOMIC_RELAXED);
    }
}

uint32_t cc_compute_key(void)
{
    uint32_t k = __atomic_load_n(&pkey.key, __ATOMIC_RELAXED);
    return k ? k : (uint32_t)getpid();
}

/* The descriptor and key of a fresh open (the lock held). A plain struct
 * store here raced with cc_compute_key's atomic load (TSan, once a launch
 * thread read the key). */
static void keep_key_locked(struct cc_pkey *k)
{
    cc_assert_held(cc_device_mu());
    cc_assert(__atomic_load_n(&pkey.key, __ATOMIC_RELAXED) == 0);
    if (k->fd >= 0 && cc_os_fstat(k->fd, &pkey_file) != 0) memset(&pkey_file, 0, sizeof pkey_file);
    __atomic_store_n(&pkey.fd, k->fd, __ATOMIC_RELAXED);
    __atomic_store_n(&pkey.base, k->base, __ATOMIC_RELAXED);
    __atomic_store_n(&pkey.key, k->key, __ATOMIC_RELEASE);
    pkey_stale = 0;
}

static void register_proc(void)
{
    cc_compute_region_t *r = region_locked();
    if (cc_compute_registered || !r) return;
    if (pkey_stale) { /* a fork child: the inherited descriptor holds the parent's key */
        struct cc_pkey k;
        if (cc_compute_rekey(cc_cfg.state_dir, &k, &pkey_file) == 0) keep_key_locked(&k);
        pkey_stale = 0;
    }
    int s = cc_compute_register_proc(r, &pkey, cc_port()->host_pid_known());
    if (s < 0)
        cc_log_once(CC_LOG_WARN, "compute region: %s; this process's utilization is not counted "
                                 "for the container",
                    pkey.key ? "process table full" : "no liveness byte of its own");
    __atomic_store_n(&my_slot, s, __ATOMIC_SEQ_CST);
    uint32_t hp = cc_port()->host_pid_known(); /* found meanwhile (another thread) */
    if (s >= 0 && hp) __atomic_store_n(&r->proc[s].host_pid, hp, __ATOMIC_RELEASE);
    __atomic_store_n(&cc_compute_registered, 1, __ATOMIC_RELAXED);
}

void cc_compute_register_slow(void)
{
    if (cc_compute_region() == NULL) return; /* per-process buckets: no table to join */
    cc_device_lock();
    register_proc();
    cc_device_unlock();
}

static void open_region_locked(void)
{
    cc_assert_held(cc_device_mu());
    if (region_tried) return;
    region_tried = 1;
    shared_off = !cc_cfg.shared_bucket;
    if (shared_off) {
        cc_info("CUDACAP_SHARED_BUCKET=0: per-process compute buckets");
        return;
    }
    /* No folder (""): the configuration already said why, once. */
    if (!cc_cfg.state_dir[0]) return;
    struct cc_pkey k;
    cc_compute_region_t *r = cc_compute_region_open(cc_cfg.state_dir, &k);
    if (r) {
        keep_key_locked(&k);
        __atomic_store_n(&region, r, __ATOMIC_RELEASE);
        return;
    }
    cc_warn("compute cap: no shared region; this process uses its own bucket (and tries the "
            "region again every second), so until then the container's processes together "
            "may exceed the cap");
#ifndef CC_TEST_NO_COMPUTE_REJOIN /* negative control: tests/compute_rejoin.c */
    __atomic_store_n(&rejoin_wanted, 1, __ATOMIC_RELAXED);
#endif
}

/* A view's pointers into line, its stamp and elastic state; the limits this
 * process runs with into the elastic state, for cudacap status (display:
 * each process keeps its own from its environment). */
static void fill_view(struct cc_compute_view *v, const struct cc_compute_device *d, int idx,
                      cc_compute_dev_t *line, uint64_t *accrued, cc_compute_elastic_t *el,
                      cc_compute_pace_t *pace)
{
    v->idx = idx;
    v->line = line;
    v->drip.accrued_ns = accrued;
    v->drip.share = &line->share;
    v->drip.capacity = d->capacity;
    v->drip.burst = (int64_t)cc_cfg.sm_burst_ms * 1000000;
#ifdef CC_TEST_NO_BURST /* negative control of compute.step.burst: the knob ignored */
    v->drip.burst = 0;
#endif
    v->drip.pace = pace;
    /* An elastic line's share may reach the soft limit's (bucket.c). */
    v->drip.share_ceiling = d->soft_pm ? (int64_t)(CC_PERIOD_NS * d->soft_pm / 1000) * 5 / 4 : 0;
    v->el = el;
    __atomic_store_n(&el->hard_pm, (uint16_t)d->cap_pm, __ATOMIC_RELAXED);
    __atomic_store_n(&el->soft_pm, (uint16_t)d->soft_pm, __ATOMIC_RELAXED);
}

/* The per-process view: a zeroed line of its own, seeded as a new shared
 * line is (compute_region.c, init_line). 0, or -1 out of memory. */
static int own_view(struct cc_compute_device *d)
{
    cc_compute_dev_t *line = aligned_alloc(64, sizeof *line);
    if (!line) return -1;
    memset(line, 0, sizeof *line);
    cc_ctrl_state_t st = cc_ctrl_initial(d->cap_pm, d->nominal);
    line->tokens = 0;
    line->share = st.share;
    line->up_limit_pm = st.up_limit_pm;
    line->excl_debounced = st.excl_debounced;
    d->own_accrued = 0;
    fill_view(&d->own, d, -1, line, &d->own_accrued, &d->own_el, &d->own_pace);
    return 0;
}

static void setup_locked(struct cc_devrec *rec, int ordinal)
{
    cc_assert_held(cc_device_mu());
    struct cc_compute_device *d = &rec->compute;
    d->ordinal = ordinal;
    uint32_t pct = cc_cfg_sm_capped(ordinal) ? cc_cfg_sm(ordinal) : 0;
    if (pct == 0) {
        __atomic_store_n(&d->state, CC_DEV_UNCAPPED, __ATOMIC_RELEASE);
        return;
    }
    /* A device whose UUID cannot be read has no line in the region (lines
     * are keyed by UUID) and no NVML handle: still capped, by this process
     * alone on its cost model. (It ran uncapped, unsaid: the fault loop,
     * device_info at its first call.) */
    int known = cc_device_identify_locked(rec, ordinal);
    nvmlDevice_t nvml = known ? rec->nvml : NULL;
    if (!known)
        cc_warn("compute cap: device %d's UUID cannot be read; this process caps its launches "
                "there on its own (a per-process bucket, no NVML samples)", ordinal);
    d->uuid_known = known;
    open_region_locked();
    d->cap_pm = pct * 10;
    uint32_t soft = cc_cfg_sm_soft(ordinal);
#ifdef CC_TEST_NO_ELASTIC /* negative control: the soft limit ignored */
    soft = 0;
#endif
    d->soft_pm = soft > pct && soft <= 100 ? soft * 10 : 0;
    d->nominal = (int64_t)(CC_PERIOD_NS * pct / 100);
    d->capacity = d->nominal + d->nominal / 4;
    d->nvml = nvml;
    cc_compute_region_t *r = region_locked();
    int idx = -1;
    if (r) {
        idx = known ? cc_compute_claim_device(r, rec->uuid, d->nominal, d->cap_pm) : -1;
        if (idx < 0 && known)
            cc_warn("compute region: no line for device %s; per-process bucket", rec->uuid);
        register_proc();
    }
    if (idx >= 0) {
        fill_view(&d->shared, d, idx, &r->dev[idx], &r->accrued_ns[idx], &r->elastic[idx],
                  &r->pace[idx]);
        __atomic_store_n(&d->view, &d->shared, __ATOMIC_RELEASE);
    } else if (own_view(d) == 0) {
        __atomic_store_n(&d->view, &d->own, __ATOMIC_RELEASE);
    } else {
        cc_warn("compute cap: out of memory; device %d runs uncapped", ordinal);
        __atomic_store_n(&d->state, CC_DEV_UNCAPPED, __ATOMIC_RELEASE);
        return;
    }
    cdev_order[n_order] = ordinal;
    __atomic_store_n(&n_order, n_order + 1, __ATOMIC_RELEASE);
    if (d->soft_pm)
        cc_info("compute cap on device %d: %u%%, elastic up to %u%% (%s bucket, line %d)", ordinal,
                pct, d->soft_pm / 10, idx >= 0 ? "shared" : "per-process", idx);
    else
        cc_info("compute cap on device %d: %u%% (%s bucket, line %d)", ordinal, pct,
                idx >= 0 ? "shared" : "per-process", idx);
    __atomic_store_n(&d->state, CC_DEV_CAPPED, __ATOMIC_RELEASE);
}

int cc_compute_device_untold(void)
{
    /* Acquire: pairs with setup's release of n_order (cdev_order written). */
    int n = __atomic_load_n(&n_order, __ATOMIC_ACQUIRE);
    if (n == 1) return cdev_order[0];
    /* None set up yet: the one capped device there is, if one (charging it
     * for a launch that ran elsewhere over-throttles; passing one that ran
     * there would not cap at all). */
    int only = -1, many = 0;
    for (int i = 0; n == 0 && i < CC_MAX_DEVICES; i++) {
        char uuid[CC_PORT_UUID_LEN];
        nvmlDevice_t h;
        if (cc_cfg_sm_capped(i) && cc_port()->device_info(i, uuid, &h) == 0)
            many += only >= 0, only = i;
    }
    if (n == 0 && only >= 0 && !many) return only;
    cc_log_once(CC_LOG_WARN, "compute cap: a launch's device could not be told (the driver did not "
                             "say which context is current) and %d devices are capped here; such "
                             "launches are not charged", n);
    return -1;
}

struct cc_compute_device *cc_compute_dev_setup(int ordinal)
{
    struct cc_devrec *rec = cc_devrec(ordinal);
    if (!rec) return NULL;
    struct cc_compute_device *d = &rec->compute;
    cc_device_lock();
    if (d->state == CC_DEV_UNSET) setup_locked(rec, ordinal);
    cc_device_unlock();
    return d;
}

/* ---- rejoining ------------------------------------------------------------
 * The region was unusable at the first setup (a FIFO, a folder, a link in
 * its place, a file that could not be mapped): this process capped itself
 * alone, and N such processes of one container got N x the cap, for good.
 * Now the watcher calls this about once a second until the region opens;
 * then the process takes its slot in the process table and each capped
 * device with a known UUID moves to its shared line. */

/* One device onto line idx of r (the lock held, on the watcher thread).
 * The private bucket's tokens are abandoned, not carried over: the shared
 * line's own bucket and controller govern from the switch on, so what the
 * private bucket still admits is only the launches that loaded its view
 * before the switch (one per launching thread, admitted as they would have
 * been), and it can never hold more than its ceiling: the container passes
 * its cap by at most one private bucket's capacity, once, per process. */
static void join_line_locked(struct cc_devrec *rec, cc_compute_region_t *r)
{
    cc_assert_held(cc_device_mu());
    struct cc_compute_device *d = &rec->compute;
    /* Relaxed: the view is written only under the lock. */
    if (__atomic_load_n(&d->view, __ATOMIC_RELAXED) != &d->own || !d->uuid_known) return;
    int idx = cc_compute_claim_device(r, rec->uuid, d->nominal, d->cap_pm);
    if (idx < 0) {
        cc_warn("compute region: no line for device %s; this process keeps its own bucket there",
                rec->uuid);
        return;
    }
    fill_view(&d->shared, d, idx, &r->dev[idx], &r->accrued_ns[idx], &r->elastic[idx],
                  &r->pace[idx]);
    /* Release: a launch that loads the new view sees its fields (the old
     * one stays valid for a launch still inside it). */
    __atomic_store_n(&d->view, &d->shared, __ATOMIC_RELEASE);
    cc_info("compute cap: joined the container's shared region; device %d on line %d", d->ordinal,
            idx);
}

int cc_compute_rejoin(void)
{
    if (!__atomic_load_n(&rejoin_wanted, __ATOMIC_RELAXED)) return 0;
    /* Outside the lock: an open is file-system calls, and launch threads
     * setting up a device wait on the lock. Never blocks (try_lock). */
    struct cc_pkey k;
    cc_compute_region_t *r = cc_compute_region_try_open(cc_cfg.state_dir, &k);
    if (!r) return 0; /* still unusable, or being built: the next try */
    cc_device_lock();
    keep_key_locked(&k);
    /* Before the slot: a host pid noted from here on finds it (note_host_pid). */
    __atomic_store_n(&region, r, __ATOMIC_RELEASE);
    __atomic_store_n(&rejoin_wanted, 0, __ATOMIC_RELAXED);
    register_proc();
    for (int i = 0; i < n_order; i++) join_line_locked(cc_devrec(cdev_order[i]), r);
    cc_device_unlock();
    return 1;
}

static void fork_child(void)
{
    /* The mapping is inherited (MAP_SHARED): the child shares the bucket.
     * Its own pid goes into the process table on its next capped launch. */
    __atomic_store_n(&cc_compute_registered, 0, __ATOMIC_RELAXED);
    /* The inherited descriptor shares the parent's open file description
     * and so its key's byte: closed here (the parent's lock stays), a
     * descriptor and key of our own at registration. */
    if (pkey.fd >= 0) close(pkey.fd);
    __atomic_store_n(&pkey.key, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&pkey.fd, -1, __ATOMIC_RELAXED);
    pkey_stale = 1;
    __atomic_store_n(&my_slot, -1, __ATOMIC_SEQ_CST);
}

/* The record's reset runs this per device (cap/device.c), before or after
 * fork_child above: neither touches the other's state. */
void cc_compute_dev_fork(struct cc_compute_device *d)
{
    d->last_pub_ns = 0;
    memset(d->probe, 0, sizeof d->probe); /* the parent's pending timings */
}

static void decide_mode(void)
{
    int on = 0;
    for (int i = 0; i < CC_MAX_DEVICES; i++)
        if (cc_cfg_sm_capped(i)) on = 1;
    if (on) { /* the cap's modules are in use from here: each registers its fork reset */
        cc_fork_child_register(fork_child);
        cc_capture_init();
        cc_cost_init();
        cc_watcher_init();
    }
    __atomic_store_n(&cc_compute_mode, on ? CC_COMPUTE_CAPPED : CC_COMPUTE_UNCAPPED,
                     __ATOMIC_RELEASE);
}

void cc_compute_decide_mode(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, decide_mode);
}
