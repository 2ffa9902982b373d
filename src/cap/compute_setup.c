/* The compute cap's per-process state (compute.h): whether this process is
 * capped (cc_compute_mode), each capped device's setup, the container's
 * compute region opened once, and this process's slot in its process
 * table. Admission (gate.c) reads what is set up here. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cap/bucket.h"
#include "cap/capture.h"
#include "cap/cfg.h"
#include "cap/compute.h"
#include "cap/compute_region.h"
#include "cap/controller.h"
#include "cap/election.h" /* CC_PERIOD_NS */
#include "cap/gate.h"
#include "cap/port.h"
#include "common/fork.h"
#include "common/log.h"

enum cc_compute_mode cc_compute_mode;
static struct cc_compute_device cdevs[CC_MAX_DEVICES];
static int cdev_order[CC_MAX_DEVICES], n_order;
static pthread_mutex_t setup_mu = PTHREAD_MUTEX_INITIALIZER;
static cc_compute_region_t *region;
static int region_tried, shared_off;
static int my_slot = -1; /* this process's slot in the process table */
static int registered; /* this pid is in the region's process table */

uint32_t cc_compute_host_pid(void) { return cc_port()->host_pid_known(); }

/* The hook layer's discovery tells us here (compute.h): cap asks through the
 * port, the hook tells through this cap-owned call; neither includes the
 * other's headers upward. */
void cc_compute_note_host_pid(uint32_t hp)
{
    /* Seq-cst with register_proc's pair: either we see its slot, or it
     * sees our pid (hostpid.c stores it seq-cst before calling). */
    int s = __atomic_load_n(&my_slot, __ATOMIC_SEQ_CST);
    if (s >= 0 && region) __atomic_store_n(&region->proc[s].host_pid, hp, __ATOMIC_RELEASE);
}
cc_compute_region_t *cc_compute_region(void) { return region; }
int cc_compute_ndev(void) { return __atomic_load_n(&n_order, __ATOMIC_ACQUIRE); }
struct cc_compute_device *cc_compute_dev_at(int i) { return &cdevs[cdev_order[i]]; }

static void register_proc(void)
{
    if (registered || !region) return;
    int s = cc_compute_register_proc(region, (uint32_t)getpid(), cc_port()->host_pid_known());
    if (s < 0)
        cc_log_once(CC_LOG_WARN, "compute region: process table full; this process's "
                                 "utilization is not counted for the container");
    __atomic_store_n(&my_slot, s, __ATOMIC_SEQ_CST);
    uint32_t hp = cc_port()->host_pid_known(); /* found meanwhile (another thread) */
    if (s >= 0 && hp) __atomic_store_n(&region->proc[s].host_pid, hp, __ATOMIC_RELEASE);
    registered = 1;
}

void cc_compute_register_here(void)
{
    if (__builtin_expect(!registered && region != NULL, 0)) {
        pthread_mutex_lock(&setup_mu);
        register_proc();
        pthread_mutex_unlock(&setup_mu);
    }
}

static void open_region_locked(void)
{
    if (region_tried) return;
    region_tried = 1;
    shared_off = !cc_cfg.shared_bucket;
    if (shared_off) {
        cc_info("CUDACAP_SHARED_BUCKET=0: per-process compute buckets");
        return;
    }
    /* No folder (""): the configuration already said why, once. */
    if (!cc_cfg.state_dir[0]) return;
    region = cc_compute_region_open(cc_cfg.state_dir);
    if (!region)
        cc_warn("compute cap: no shared region; this process uses its own bucket, so the "
                "container's processes together may exceed the cap");
}

static void setup_locked(struct cc_compute_device *d, int ordinal)
{
    d->ordinal = ordinal;
    d->idx = -1;
    uint32_t pct = ordinal < CC_MAX_DEVICES ? cc_cfg.sm_limit[ordinal] : 0;
    char uuid[CC_PORT_UUID_LEN];
    nvmlDevice_t nvml = NULL;
    if (pct == 0 || pct >= 100) {
        __atomic_store_n(&d->state, CC_DEV_UNCAPPED, __ATOMIC_RELEASE);
        return;
    }
    /* A device whose UUID cannot be read has no line in the region (lines
     * are keyed by UUID) and no NVML handle: still capped, by this process
     * alone on its cost model. (It ran uncapped, unsaid: the fault loop,
     * device_info at its first call.) */
    int known = cc_port()->device_info(ordinal, uuid, &nvml) == 0;
    if (!known) {
        cc_warn("compute cap: device %d's UUID cannot be read; this process caps its launches "
                "there on its own (a per-process bucket, no NVML samples)", ordinal);
        nvml = NULL;
        snprintf(uuid, sizeof uuid, "(device %d)", ordinal);
    }
    open_region_locked();
    d->cap_pm = pct * 10;
    uint32_t soft = ordinal < CC_MAX_DEVICES ? cc_cfg.sm_soft_limit[ordinal] : 0;
#ifdef CC_TEST_NO_ELASTIC /* negative control: the soft limit ignored */
    soft = 0;
#endif
    d->soft_pm = soft > pct && soft <= 100 ? soft * 10 : 0;
    d->nominal = (int64_t)(CC_PERIOD_NS * pct / 100);
    d->capacity = d->nominal + d->nominal / 4;
    d->nvml = nvml;
    if (region) {
        d->idx = known ? cc_compute_claim_device(region, uuid, d->nominal, d->cap_pm) : -1;
        if (d->idx >= 0)
            d->line = &region->dev[d->idx];
        else if (known)
            cc_warn("compute region: no line for device %s; per-process bucket", uuid);
        register_proc();
    }
    if (!d->line) {
        d->line = aligned_alloc(64, sizeof *d->line);
        if (!d->line) {
            cc_warn("compute cap: out of memory; device %d runs uncapped", ordinal);
            __atomic_store_n(&d->state, CC_DEV_UNCAPPED, __ATOMIC_RELEASE);
            return;
        }
        memset(d->line, 0, sizeof *d->line);
        d->own_accrued = 0;
        cc_ctrl_state_t st = cc_ctrl_initial(d->cap_pm, d->nominal);
        d->line->tokens = 0; /* as a shared line: compute_region.c, init_line */
        d->line->share = st.share;
        d->line->up_limit_pm = st.up_limit_pm;
        d->line->excl_debounced = st.excl_debounced;
    }
    d->drip.accrued_ns = d->idx >= 0 ? &region->accrued_ns[d->idx] : &d->own_accrued;
    d->drip.share = &d->line->share;
    d->drip.capacity = d->capacity;
    /* An elastic line's share may reach the soft limit's (bucket.c). */
    d->drip.share_ceiling = d->soft_pm ? (int64_t)(CC_PERIOD_NS * d->soft_pm / 1000) * 5 / 4 : 0;
    d->el = d->idx >= 0 ? &region->elastic[d->idx] : &d->own_el;
    /* The limits this process runs with, for cudacap status (display: each
     * process keeps its own from its environment). */
    __atomic_store_n(&d->el->hard_pm, (uint16_t)d->cap_pm, __ATOMIC_RELAXED);
    __atomic_store_n(&d->el->soft_pm, (uint16_t)d->soft_pm, __ATOMIC_RELAXED);
    cdev_order[n_order] = ordinal;
    __atomic_store_n(&n_order, n_order + 1, __ATOMIC_RELEASE);
    if (d->soft_pm)
        cc_info("compute cap on device %d: %u%%, elastic up to %u%% (%s bucket, line %d)", ordinal,
                pct, d->soft_pm / 10, d->idx >= 0 ? "shared" : "per-process", d->idx);
    else
        cc_info("compute cap on device %d: %u%% (%s bucket, line %d)", ordinal, pct,
                d->idx >= 0 ? "shared" : "per-process", d->idx);
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
        if (cc_cfg.sm_limit[i] > 0 && cc_cfg.sm_limit[i] < 100 && cc_port()->device_info(i, uuid, &h) == 0)
            many += only >= 0, only = i;
    }
    if (n == 0 && only >= 0 && !many) return only;
    cc_log_once(CC_LOG_WARN, "compute cap: a launch's device could not be told (the driver did not "
                             "say which context is current) and %d devices are capped here; such "
                             "launches are not charged", n);
    return -1;
}

struct cc_compute_device *cc_compute_dev(int ordinal)
{
    if (ordinal < 0 || ordinal >= CC_MAX_DEVICES) return NULL;
    struct cc_compute_device *d = &cdevs[ordinal];
    if (__builtin_expect(__atomic_load_n(&d->state, __ATOMIC_ACQUIRE) == CC_DEV_UNSET, 0)) {
        pthread_mutex_lock(&setup_mu);
        if (d->state == CC_DEV_UNSET) setup_locked(d, ordinal);
        pthread_mutex_unlock(&setup_mu);
    }
    return d;
}

static void fork_child(void)
{
    /* The mapping is inherited (MAP_SHARED): the child shares the bucket.
     * Its own pid goes into the process table on its next capped launch. */
    registered = 0;
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    setup_mu = fresh;
    __atomic_store_n(&my_slot, -1, __ATOMIC_SEQ_CST);
    for (int i = 0; i < CC_MAX_DEVICES; i++) {
        cdevs[i].last_pub_ns = 0;
        cdevs[i].probe = 0; /* the parent's pending timing is not ours */
    }
}

static void decide_mode(void)
{
    int on = 0;
    for (int i = 0; i < CC_MAX_DEVICES; i++)
        if (cc_cfg.sm_limit[i] > 0 && cc_cfg.sm_limit[i] < 100) on = 1;
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
