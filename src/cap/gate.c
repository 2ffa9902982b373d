/* The launch gate: per-process device state and admission. A launch in a
 * capped process: device lookup, one estimate lookup, one CAS on the shared
 * bucket; a wait only when the bucket is empty. */
#include "cap/gate.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cap/bucket.h"
#include "cap/capture.h"
#include "cap/cfg.h"
#include "cap/compute.h"
#include "cap/compute_region.h"
#include "cudacap/counters.h"
#include "cap/controller.h"
#include "cap/election.h"
#include "cap/port.h"
#include "common/log.h"
#include "common/clock.h"

int cc_compute_mode;
static struct cc_cdev cdevs[CC_MAX_DEVICES];
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
struct cc_cdev *cc_compute_dev_at(int i) { return &cdevs[cdev_order[i]]; }

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

static void setup_locked(struct cc_cdev *d, int ordinal)
{
    d->ordinal = ordinal;
    d->idx = -1;
    uint32_t pct = ordinal < CC_MAX_DEVICES ? cc_cfg.sm_limit[ordinal] : 0;
    char uuid[CC_PORT_UUID_LEN];
    nvmlDevice_t nvml = NULL;
    if (pct == 0 || pct >= 100 || cc_port()->device_info(ordinal, uuid, &nvml) != 0) {
        __atomic_store_n(&d->state, 2, __ATOMIC_RELEASE);
        return;
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
        d->idx = cc_compute_claim_device(region, uuid, d->nominal, d->cap_pm);
        if (d->idx >= 0)
            d->line = &region->dev[d->idx];
        else
            cc_warn("compute region: no line for device %s; per-process bucket", uuid);
        register_proc();
    }
    if (!d->line) {
        d->line = aligned_alloc(64, sizeof *d->line);
        if (!d->line) {
            cc_warn("compute cap: out of memory; device %d runs uncapped", ordinal);
            __atomic_store_n(&d->state, 2, __ATOMIC_RELEASE);
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
    __atomic_store_n(&d->state, 1, __ATOMIC_RELEASE);
}

struct cc_cdev *cc_compute_dev(int ordinal)
{
    if (ordinal < 0 || ordinal >= CC_MAX_DEVICES) return NULL;
    struct cc_cdev *d = &cdevs[ordinal];
    if (__builtin_expect(__atomic_load_n(&d->state, __ATOMIC_ACQUIRE) == 0, 0)) {
        pthread_mutex_lock(&setup_mu);
        if (d->state == 0) setup_locked(d, ordinal);
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
    cc_port()->host_pid_forget();
    for (int i = 0; i < CC_MAX_DEVICES; i++) {
        cdevs[i].last_pub_ns = 0;
        cdevs[i].probe = 0; /* the parent's pending timing is not ours */
    }
    cc_capture_fork_child();
    cc_cost_fork_child();
    cc_watcher_fork_child();
}

static void decide_mode(void)
{
    int on = 0;
    for (int i = 0; i < CC_MAX_DEVICES; i++)
        if (cc_cfg.sm_limit[i] > 0 && cc_cfg.sm_limit[i] < 100) on = 1;
    if (on) cc_port()->fork_child_register(fork_child);
    __atomic_store_n(&cc_compute_mode, on ? 2 : 1, __ATOMIC_RELEASE);
}

/* How long a launch of a never-timed shape waits for the device's pending
 * first timing before it goes ahead charged the fallback. Bounded: a probe
 * queued behind work we cannot see finish (a stream waiting on the host or
 * on another thread's later launch) must never hang a launching thread. */
#define CC_PROBE_WAIT_NS 500000000ull

/* A launch of a shape never timed. The first one in flight on the device is
 * the probe: admitted without a charge and timed (charged when its timing
 * completes). While a probe is pending, a later launch of a never-timed
 * shape waits for it, polling the timings, and then is charged the estimate
 * if its shape is the one just timed, or becomes the next probe. So at most
 * one launch per process and device runs uncharged at any time, whatever the
 * queue depth or the number of new shapes: 50 queued 40 ms kernels of one
 * new shape ran the device at 100 % under a 30 % cap when every launch
 * before the first timing was free (issue 9). Waits sleep 50 us doubling to
 * 1 ms, up to CC_PROBE_WAIT_NS; then the fallback charge. */
static int64_t admit_untimed(struct cc_cdev *d, void *key, uint64_t blocks, int *measure,
                             int **probe)
{
    uint64_t t0 = cc_mono_ns(), nap = 50000;
    for (;;) {
        int zero = 0;
        if (__atomic_compare_exchange_n(&d->probe, &zero, 1, 0, __ATOMIC_ACQUIRE,
                                        __ATOMIC_ACQUIRE)) { /* pairs with the release clear */
            *probe = &d->probe;
            return 0;
        }
        if (cc_mono_ns() - t0 > CC_PROBE_WAIT_NS) {
            *measure = 1;
            return cc_cost_fallback();
        }
        struct timespec ts = {0, (long)nap};
        nanosleep(&ts, NULL);
        if (nap < 1000000) nap *= 2;
        cc_cost_poll(0);
        int64_t est = cc_cost_estimate(key, blocks, measure);
        if (*measure != 2) return est;
    }
}

int cc_gate_begin(struct cc_ticket *t, void *key, uint64_t blocks, CUstream s, int ptsz)
{
    t->d = NULL;
    t->m = NULL;
    if (__builtin_expect(__atomic_load_n(&cc_compute_mode, __ATOMIC_ACQUIRE) == 0, 0)) {
        static pthread_once_t once = PTHREAD_ONCE_INIT;
        pthread_once(&once, decide_mode);
    }
    if (cc_compute_mode != 2) return 0;
    /* Was a direct call: now the port's load and one indirect call. */
    struct cc_cdev *d = cc_compute_dev(cc_port()->device_current());
    if (!d || d->state != 1) return 0;
#ifndef CC_TEST_CHARGE_CAPTURE /* negative control: launches into a capture charged */
    /* Into a capture: nothing runs until the graph is replayed, and the
     * replay is charged (a graph launch, timed like a kernel). One load
     * while no capture exists anywhere in the process. */
    if (__builtin_expect(cc_capture_live(), 0) && cc_capture_stream_busy(s, ptsz)) return 0;
#endif
    if (__builtin_expect(!registered && region != NULL, 0)) {
        pthread_mutex_lock(&setup_mu);
        register_proc();
        pthread_mutex_unlock(&setup_mu);
    }
    cc_watcher_ensure();
    int measure = 0, *probe = NULL;
    int64_t cost = cc_cost_estimate(key, blocks, &measure);
#ifdef CC_TEST_FREE_UNTIMED /* negative control: every launch before a first timing free */
    (void)admit_untimed;
#else
    if (measure == 2) cost = admit_untimed(d, key, blocks, &measure, &probe);
#endif
    uint64_t waited = cc_bucket_take(&d->line->tokens, cost, &d->line->throttled, &d->drip);
    /* Throttled time for the node's exporter (cudacap/counters.h): only a
     * launch that waited pays for the add, and only on a shared line. */
    if (waited && region && d->idx >= 0 && d->idx < (int)CC_COMPUTE_DEVICES && d->line == &region->dev[d->idx])
        __atomic_fetch_add(&cc_compute_counters(region)->throttled_ns[d->idx], waited, __ATOMIC_RELAXED);
    /* The start event after admission: recorded before it, a timing would
     * include our own wait for tokens (every wait, once tokens drip in:
     * 1.5 ms kernels timed at 5-60 ms on the simulator, the share driven to
     * 4x to compensate). */
    if (measure) {
        t->m = cc_cost_begin(s, ptsz, probe);
        if (!t->m) {
            if (probe) __atomic_store_n(probe, 0, __ATOMIC_RELEASE); /* no timing: next probe */
            if (cost == 0) { /* never timed and cannot be: charge the fallback */
                cost = cc_cost_fallback();
                cc_bucket_charge(&d->line->tokens, cost);
            }
        }
    }
    t->d = d;
    t->key = key;
    t->blocks = blocks;
    t->cost = cost;
    t->s = s;
    t->ptsz = ptsz;
    return 1;
}

void cc_gate_end(struct cc_ticket *t, CUresult r)
{
    struct cc_cdev *d = t->d;
    int ok = r == CUDA_SUCCESS;
    if (!ok && t->cost) cc_bucket_add(&d->line->tokens, t->cost, INT64_MAX); /* not run: refund */
    cc_cost_end(t->m, t->s, t->ptsz, t->key, t->blocks, t->cost, d->line, ok);
    cc_cost_poll(2);
}
