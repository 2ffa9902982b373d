/* The watcher: one thread per process, started on the first capped launch.
 * Every nominal period, for each capped device: claim sampling ownership
 * (soft, non-blocking), sample NVML when owner (or when the owner's sample
 * is stale: nvml_sample.c), publish, then try to win the period's refill
 * (hard, CAS) and run the controller on the published sample (refill.c).
 * This file holds the thread and the cycle. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cap/cfg.h"
#include "cap/compute/compute.h"
#include "cap/compute/compute_region.h"
#include "cap/compute/election.h"
#include "cap/compute/nvml_sample.h"
#include "cap/compute/refill.h"
#include "cap/live.h"
#include "cap/port.h"
#include "common/controls.h"
#include "common/log.h"
#include "common/clock.h"
#include "common/fork.h"
#include "os/os.h"

int cc_watcher_started; /* compute.h: cc_watcher_ensure */
static pthread_mutex_t start_mu = PTHREAD_MUTEX_INITIALIZER;
static cc_slock_t slock = {-1, 0};
static int slock_tried;


/* The bucket at least one nominal period full (where the controller's idle
 * bypass leaves it, and where accrual takes it) and nobody waiting: the
 * container launched little or nothing since the last sample, so NVML has
 * nothing to tell the controller, and the per-process query costs 2.5 ms of
 * CPU on the H200 (bench/watcher_cost.c: the watcher at 1.5 % of a core,
 * idle or not). The same rule on the owner and on standbys, all reading the
 * shared line: a skipping owner must not look wedged to a standby, which
 * would then sample in its place. */
static int CC_CONTROL_POINT(idle)(const struct cc_compute_device *d, const struct cc_compute_view *v)
{
    int64_t t = __atomic_load_n(&v->line->tokens, __ATOMIC_RELAXED);
    /* An elastic line above its hard share must keep watching for others'
     * work, busy or not (its bucket, filled at the soft share, says little);
     * at the hard share it is a hard line (elastic.c drops an idle one there). */
    if (d->soft_pm && __atomic_load_n(&v->line->up_limit_pm, __ATOMIC_RELAXED) > d->cap_pm) return 0;
    return t >= d->nominal && !__atomic_load_n(&v->line->throttled, __ATOMIC_RELAXED);
}

static void cycle(struct cc_compute_device *d)
{
    /* This thread is the one that switches views (cc_compute_rejoin, between
     * cycles): one load serves the whole cycle. */
    const struct cc_compute_view *v = cc_compute_view(d);
    cc_compute_dev_t *line = v->line;
    uint64_t now = cc_mono_ns();
    int nolock = v->idx < 0 || slock.fd < 0;
    int owner = !nolock && cc_slock_claim(&slock, (unsigned)v->idx);
    CC_WATCH_COUNT(cycles);
    if (owner) CC_WATCH_COUNT(owner);
    uint32_t u, s;
    cc_compute_region_t *reg = cc_compute_region();
    if (owner && reg)
        cc_compute_publish_owner(reg, (unsigned)v->idx, cc_compute_key(), cc_compute_host_pid());
    int quiet = idle(d, v);
    if (quiet) {
        CC_WATCH_COUNT(quiet);
        /* cudacap status: this container's processes are not running. */
        if (owner && reg) cc_compute_publish_procs(reg, (unsigned)v->idx, NULL, NULL, 0);
    } else if (owner || nolock) {
        if (cc_watch_sample(d, v, &u, &s, 1)) {
            cc_sample_publish(line, u, s, now, d->last_pub_ns);
            d->last_pub_ns = now;
        }
    } else {
        d->last_pub_ns = 0;
        /* Owner alive but not publishing (wedged, or NVML failing there):
         * sample ourselves; the refill CAS still bounds the supply. */
        if (cc_sample_stale(line, now, CC_PERIOD_NS) && cc_watch_sample(d, v, &u, &s, 0))
            cc_sample_publish(line, u, s, now, 0);
    }
    uint64_t thr = cc_refill_threshold(line, owner || nolock, CC_PERIOD_NS);
    uint64_t since = 0;
    if (cc_refill_try(line, now, thr, &since)) {
        /* Quiet: the controller's idle bypass without a sample (the bucket
         * back to one period, so the first kernels after idleness cannot
         * burst on a bucket that accrual filled to capacity; the share
         * back toward nominal: controller.c). */
        cc_watch_refill(d, v, now, cc_cfg.controller, quiet, since);
    }
}

static void *run(void *arg)
{
    (void)arg;
    uint64_t next = cc_mono_ns();
    unsigned tries = 0;
    for (;;) {
        int n = cc_compute_ndev();
        /* Host pid still unknown (ambiguous so far): retry, every period for
         * 5 s, then once a second. Until then NVML's samples of this process
         * are not counted for the container. */
        if (n > 0 && !cc_compute_host_pid() && (tries < 50 || tries % 10 == 0))
            cc_port()->host_pid_discover(cc_compute_dev_at(0)->ordinal);
        /* On its own buckets because compute.region was unusable at start:
         * try it again once a second (compute_setup.c, the rejoin), and
         * once joined, sample by the lock like the others. */
        if (tries % 10 == 0 && cc_compute_rejoin() && !slock_tried && cc_cfg.state_dir[0]) {
            slock_tried = 1; /* ours alone once the thread runs (ensure is done) */
            cc_slock_open(&slock, cc_cfg.state_dir);
        }
        tries++;
        /* The limits file (one lstat), and its SM caps applied here, between
         * cycles (compute_live.c). */
        cc_live_poll(0);
        cc_compute_live_apply();
        for (int i = 0; i < n; i++) {
            struct cc_compute_device *d = cc_compute_dev_at(i);
            /* Uncapped since (the limits file): nothing to refill. */
            if (__atomic_load_n(&d->state, __ATOMIC_ACQUIRE) == CC_DEV_CAPPED) cycle(d);
        }
        cc_cost_poll(0);
        /* What this thread costs the host, for the exit report (one
         * syscall a cycle, only when counting). */
        if (cc_cfg.count_calls) cc_watch_note_cpu(cc_os_thread_cpu_ns());
        /* Absolute grid: the cadence does not drift with the work done;
         * if we fell behind, skip ahead rather than burst. */
        next += CC_PERIOD_NS;
        uint64_t now = cc_mono_ns();
        if (next < now) next = now + CC_PERIOD_NS / 10;
        cc_os_sleep_until(next);
    }
    return NULL;
}

void cc_watcher_start(void)
{
    pthread_mutex_lock(&start_mu);
    if (!cc_watcher_started) {
        if (!slock_tried && cc_compute_region() && cc_cfg.state_dir[0]) {
            slock_tried = 1;
            cc_slock_open(&slock, cc_cfg.state_dir);
        }
        cc_watch_nvml_open(); /* before the thread: its samples need it */
        /* Named (bench/watcher_cost.c reads its CPU time); signals blocked
         * but the synchronous ones, so the region guard (region/guard.c)
         * gets the fault of a truncated compute.region read here. */
        if (cc_os_thread(run, NULL, "cudacap-watch") != 0)
            cc_warn("compute cap: cannot start the watcher thread; the bucket refills only "
                    "through waiting launches and other processes of the container");
        /* Even on failure: retrying on every launch would cost a syscall. */
        __atomic_store_n(&cc_watcher_started, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&start_mu);
}

static void fork_child(void)
{
    /* The thread did not survive fork; the lock descriptor did, and must
     * not: it would make the child co-owner of the parent's sampling lock. */
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    start_mu = fresh;
    cc_slock_forget(&slock);
    slock_tried = 0;
    __atomic_store_n(&cc_watcher_started, 0, __ATOMIC_RELEASE);
}

void cc_watcher_init(void) { cc_fork_child_register(fork_child); }

