/* The watcher: one thread per process, started on the first capped launch.
 * Every nominal period, for each capped device: claim sampling ownership
 * (soft, non-blocking), sample NVML when owner (or when the owner's sample
 * is stale), publish, then try to win the period's refill (hard, CAS) and run
 * the controller on the published sample. */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cap/compute/bucket.h"
#include "cap/cfg.h"
#include "cap/compute/compute.h"
#include "cap/compute/compute_region.h"
#include "cap/compute/controller.h"
#include "cap/compute/elastic.h"
#include "cap/compute/election.h"
#include "cap/port.h"
#include "common/log.h"
#include "common/clock.h"
#include "common/fork.h"

#define CC_SAMPLES_MAX 512

static int started;
static pthread_mutex_t start_mu = PTHREAD_MUTEX_INITIALIZER;
static cc_slock_t slock = {-1, 0};
static int slock_tried;
static int have_util; /* NVML's per-process utilization is there (port.h, nvml_open) */

static unsigned long long real_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (unsigned long long)ts.tv_sec * 1000000ull + (unsigned long long)ts.tv_nsec / 1000;
}

static int member(uint32_t pid)
{
    cc_compute_region_t *r = cc_compute_region();
    return r ? cc_compute_is_member(r, pid) : pid == cc_compute_host_pid();
}

/* NVML's per-process sampling period as observed (the smallest gap); 0 while
 * unknown (then an empty poll means idle, the simulator's rule). The next
 * sample is due one period after the newest one's timestamp, which is the
 * END of the period it covers; an empty poll before that is no data. (A
 * first version subtracted a margin and so declared samples due before
 * their period had ended: 30 % caps held at up to 40 % on the simulator's
 * periodic-NVML mode.) */
static unsigned nvml_period_us(const struct cc_compute_device *d)
{
    unsigned m = 0;
    for (int i = 0; i < 16; i++)
        if (d->nvml_gap_us[i] && (!m || d->nvml_gap_us[i] < m)) m = d->nvml_gap_us[i];
    return m;
}

/* One NVML call: the per-process samples since the last call, averaged per
 * pid (real NVML may return several samples per process), summed over this
 * container's pids (user) and over everyone (sys). 0 when no sample. With
 * procs (the sampler of a shared line), each container process's average
 * goes into its slot of the process table too (cudacap status). */
static int sample(struct cc_compute_device *d, const struct cc_compute_view *v, uint32_t *user_pm,
                  uint32_t *sys_pm, int procs)
{
    static nvmlProcessUtilizationSample_t buf[CC_SAMPLES_MAX];
    static uint32_t mine_pid[CC_SAMPLES_MAX]; /* this container's pids and averages */
    static uint16_t mine_pm[CC_SAMPLES_MAX];
    unsigned nmine = 0;
    cc_compute_region_t *reg = procs && v->idx >= 0 ? cc_compute_region() : NULL;
    if (!have_util || !d->nvml) return 0;
    unsigned long long now = real_us();
    unsigned long long poll_gap = d->nvml_poll_us && now > d->nvml_poll_us ? now - d->nvml_poll_us : 0;
#ifndef CC_TEST_EMPTY_IS_IDLE
    /* NVML sampling slower than we poll and its next sample not due yet:
     * do not ask (the answer would be empty, and the call costs 2.5 ms of
     * CPU on the H200). At most one poll in a row is skipped: the gap then
     * reads two cycles, and the rule no longer holds. */
    unsigned per = nvml_period_us(d);
    if (per && (unsigned long long)per * 10 > poll_gap * 13 && now < d->nvml_last_ts + per) return 0;
#endif
    d->nvml_poll_us = now;
    if (d->nvml_seen_us == 0) {
        /* The first poll of this watcher: a window before it started would
         * cover time before the container launched anything, and reading 0
         * then while the first launch waits for tokens (throttled) made the
         * controller raise the share at once: a queue at process start got
         * 36 % of the device in its first second under a 30 % cap
         * (compute.deepq). The first sample covers one cycle from now. */
        d->nvml_seen_us = now;
        return 0;
    }
    if (d->nvml_seen_us + 2000000ull < now) d->nvml_seen_us = now - 1000000ull;
    unsigned n = CC_SAMPLES_MAX;
    __atomic_fetch_add(&v->line->nvml_calls, 1, __ATOMIC_RELAXED);
    nvmlReturn_t r = cc_port()->nvml_process_utilization(d->nvml, buf, &n, d->nvml_seen_us);
    if (r == NVML_ERROR_NOT_FOUND || (r == NVML_SUCCESS && n == 0)) {
        /* No sample since lastSeen. On the simulator that means nothing ran;
         * on a real GPU NVML makes per-process samples every 1/6 s or so,
         * so a 100 ms poll often finds none while kernels run. Publishing 0
         * then would halve the measured utilization (seen on the H200: the
         * cap held twice as high). So when NVML samples more slowly than we
         * poll, an empty poll means idle only once NVML's next sample is due
         * (one period after the newest sample's timestamp, the end of the
         * period it covers); before that it is no sample this cycle (the
         * controller keeps its input). The period is learned from the
         * samples' timestamps: about 167 ms on the H200, the poll interval
         * on the simulator (whose samples cover the time since lastSeen),
         * so both read right. */
#ifndef CC_TEST_EMPTY_IS_IDLE /* test-only: the first version's rule (tests/compute.cmake) */
        /* NVML sampling slower than we poll (a real GPU: ~167 ms against
         * 100 ms) and its next sample not due yet: no data. NVML sampling at
         * our own pace (the simulator's samples cover each poll's window):
         * an empty poll is idle. */
        unsigned p = nvml_period_us(d);
        if (p && (unsigned long long)p * 10 > poll_gap * 13 && now < d->nvml_last_ts + p)
            return 0;
#else
        (void)nvml_period_us;
        (void)poll_gap;
#endif
        *user_pm = *sys_pm = 0;
        d->nvml_seen_us = now;
        if (reg) cc_compute_publish_procs(reg, (unsigned)v->idx, NULL, NULL, 0);
        return 1;
    }
    if (r != NVML_SUCCESS) {
        cc_log_once(CC_LOG_WARN, "nvmlDeviceGetProcessUtilization failed (%d); while it fails, the compute cap "
                                 "runs on its cost model alone", (int)r);
        return 0;
    }
    if (n > CC_SAMPLES_MAX) n = CC_SAMPLES_MAX;
    uint32_t user = 0, sys = 0;
    unsigned long long seen = d->nvml_seen_us;
    for (unsigned i = 0; i < n; i++) {
        if (buf[i].timeStamp > seen) seen = buf[i].timeStamp;
        if (buf[i].pid == 0) continue; /* consumed below */
        unsigned pid = buf[i].pid, cnt = 0, sum = 0;
        for (unsigned j = i; j < n; j++)
            if (buf[j].pid == pid) {
                sum += buf[j].smUtil > 100 ? 100 : buf[j].smUtil;
                cnt++;
                if (j != i) buf[j].pid = 0;
            }
        uint32_t avg_pm = cnt ? sum * 10 / cnt : 0;
        sys += avg_pm;
        if (member(pid)) {
            user += avg_pm;
            mine_pid[nmine] = pid;
            mine_pm[nmine++] = (uint16_t)avg_pm;
        }
    }
    if (seen > d->nvml_last_ts) {
        if (d->nvml_last_ts) {
            unsigned long long gap = seen - d->nvml_last_ts;
            d->nvml_gap_us[d->nvml_gap_i++ % 16] = gap > 2000000ull ? 2000000u : (unsigned)gap;
        }
        d->nvml_last_ts = seen;
    }
    d->nvml_seen_us = seen;
    if (reg) cc_compute_publish_procs(reg, (unsigned)v->idx, mine_pid, mine_pm, nmine);
    *user_pm = user > 1000 ? 1000 : user;
    *sys_pm = sys > 1000 ? 1000 : sys;
    return 1;
}

static void refill(struct cc_compute_device *d, const struct cc_compute_view *v, uint64_t now,
                   cc_controller_t kind);

/* The bucket at least one nominal period full (where the controller's idle
 * bypass leaves it, and where accrual takes it) and nobody waiting: the
 * container launched little or nothing since the last sample, so NVML has
 * nothing to tell the controller, and the per-process query costs 2.5 ms of
 * CPU on the H200 (bench/watcher_cost.c: the watcher at 1.5 % of a core,
 * idle or not). The same rule on the owner and on standbys, all reading the
 * shared line: a skipping owner must not look wedged to a standby, which
 * would then sample in its place. */
static int idle(const struct cc_compute_device *d, const struct cc_compute_view *v)
{
#ifdef CC_TEST_SAMPLE_IDLE /* negative control: sample whatever the bucket says */
    (void)d;
    (void)v;
    return 0;
#else
    int64_t t = __atomic_load_n(&v->line->tokens, __ATOMIC_RELAXED);
    /* An elastic line above its hard share must keep watching for others'
     * work, busy or not (its bucket, filled at the soft share, says little);
     * at the hard share it is a hard line (elastic.c drops an idle one there). */
    if (d->soft_pm && __atomic_load_n(&v->line->up_limit_pm, __ATOMIC_RELAXED) > d->cap_pm) return 0;
    return t >= d->nominal && !__atomic_load_n(&v->line->throttled, __ATOMIC_RELAXED);
#endif
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
    uint32_t u, s;
    cc_compute_region_t *reg = cc_compute_region();
    if (owner && reg)
        cc_compute_publish_owner(reg, (unsigned)v->idx, (uint32_t)getpid(), cc_compute_host_pid());
    int quiet = idle(d, v);
    if (quiet) {
        /* cudacap status: this container's processes are not running. */
        if (owner && reg) cc_compute_publish_procs(reg, (unsigned)v->idx, NULL, NULL, 0);
    } else if (owner || nolock) {
        if (sample(d, v, &u, &s, 1)) {
            cc_sample_publish(line, u, s, now, d->last_pub_ns);
            d->last_pub_ns = now;
        }
    } else {
        d->last_pub_ns = 0;
        /* Owner alive but not publishing (wedged, or NVML failing there):
         * sample ourselves; the refill CAS still bounds the supply. */
        if (cc_sample_stale(line, now, CC_PERIOD_NS) && sample(d, v, &u, &s, 0))
            cc_sample_publish(line, u, s, now, 0);
    }
    uint64_t thr = cc_refill_threshold(line, owner || nolock, CC_PERIOD_NS);
    if (cc_refill_try(line, now, thr, NULL)) {
        refill(d, v, now, cc_cfg.controller);
        /* What the bypass does on an idle sample, without the sample: the
         * bucket back to one period, so the first kernels after idleness
         * cannot burst on a bucket that accrual filled to capacity. */
        if (quiet) cc_bucket_trim_to(&line->tokens, d->nominal);
    }
}

/* An elastic line's target for this refill (elastic.h), its state loaded
 * from and stored back to v->el, the borrowed device time counted. Returns
 * the target; *yield: back to the hard share now. */
static uint32_t elastic(struct cc_compute_device *d, const struct cc_compute_view *v,
                        const cc_ctrl_input_t *in, uint64_t at, int *yield)
{
    cc_compute_elastic_t *el = v->el;
    cc_elastic_state_t es = {
        .up_pm = __atomic_load_n(&v->line->up_limit_pm, __ATOMIC_RELAXED),
        .contended = __atomic_load_n(&el->contended, __ATOMIC_RELAXED),
        .calm = __atomic_load_n(&el->calm, __ATOMIC_RELAXED),
        .seen = __atomic_load_n(&el->seen, __ATOMIC_RELAXED),
        .saturated = __atomic_load_n(&el->saturated, __ATOMIC_RELAXED),
        .low = __atomic_load_n(&el->low, __ATOMIC_RELAXED),
    };
    cc_elastic_input_t ei = {.hard_pm = d->cap_pm, .soft_pm = d->soft_pm, .user_pm = in->user_pm,
                             .sys_pm = in->sys_pm, .sample_valid = in->sample_valid,
                             .throttled = in->throttled};
    cc_elastic_output_t eo;
    es = cc_elastic_step(es, &ei, &eo);
    *yield = eo.yield;
    __atomic_store_n(&el->contended, es.contended, __ATOMIC_RELAXED);
    __atomic_store_n(&el->calm, es.calm, __ATOMIC_RELAXED);
    __atomic_store_n(&el->seen, es.seen, __ATOMIC_RELAXED);
    __atomic_store_n(&el->saturated, es.saturated, __ATOMIC_RELAXED);
    __atomic_store_n(&el->low, es.low, __ATOMIC_RELAXED);
    if (in->sample_valid) {
        /* Device time above the hard cap since the last sample counted
         * (saturating: the counter is in a file anyone in the container
         * can write). */
        __atomic_store_n(&el->borrowing, (uint8_t)eo.borrowing, __ATOMIC_RELAXED);
        uint64_t last = __atomic_load_n(&el->counted_ns, __ATOMIC_RELAXED);
        uint32_t u = in->user_pm > 1000 ? 1000 : in->user_pm;
        if (last && at > last && at - last <= 10 * CC_PERIOD_NS && u > d->cap_pm) {
            uint64_t add = (at - last) / 1000 * (u - d->cap_pm);
            uint64_t b = __atomic_load_n(&el->borrowed_ns, __ATOMIC_RELAXED);
            __atomic_store_n(&el->borrowed_ns, b > UINT64_MAX - add ? UINT64_MAX : b + add,
                             __ATOMIC_RELAXED);
        }
        __atomic_store_n(&el->counted_ns, at, __ATOMIC_RELAXED);
    }
    return es.up_pm;
}

/* The nominal supply of a target (permille): the hard nominal scaled. */
static int64_t nominal_of(const struct cc_compute_device *d, uint32_t target_pm)
{
    return d->cap_pm ? (int64_t)((double)d->nominal * target_pm / d->cap_pm) : d->nominal;
}

static void refill(struct cc_compute_device *d, const struct cc_compute_view *v, uint64_t now,
                   cc_controller_t kind)
{
    cc_compute_dev_t *line = v->line;
    cc_refill_begin(line);
    cc_ctrl_state_t st = {
        .share = __atomic_load_n(&line->share, __ATOMIC_RELAXED),
        .up_limit_pm = __atomic_load_n(&line->up_limit_pm, __ATOMIC_RELAXED),
        .md_cooldown = __atomic_load_n(&line->md_cooldown, __ATOMIC_RELAXED),
        .excl_debounced = __atomic_load_n(&line->excl_debounced, __ATOMIC_RELAXED),
        .excl_streak = __atomic_load_n(&line->excl_streak, __ATOMIC_RELAXED),
        .lost_excl_pending = __atomic_load_n(&line->lost_excl_pending, __ATOMIC_RELAXED),
    };
    cc_ctrl_input_t in = {.kind = kind, .cap_pm = d->cap_pm, .nominal = d->nominal};
    uint64_t at;
    int have = cc_sample_read(line, &in.user_pm, &in.sys_pm, &at);
    uint32_t stamp = (uint32_t)(at >> 10);
    /* A sample feeds the controller once: a standby refilling on an old
     * sample must not integrate the same error twice. */
    in.sample_valid = have && !cc_sample_stale(line, now, CC_PERIOD_NS) &&
                      stamp != __atomic_load_n(&line->ctrl_sample, __ATOMIC_RELAXED);
    in.throttled = __atomic_exchange_n(&line->throttled, 0, __ATOMIC_RELAXED) != 0;
    int yield = 0;
    if (d->soft_pm) {
        /* The controller runs against the elastic target, its share moved
         * with it: reset to the hard nominal on a yield (a share wound up
         * against an unreachable soft 100 % must not follow us down), else
         * scaled, keeping the learned ratio to nominal within 0.5..2. */
        uint32_t prev = st.up_limit_pm < d->cap_pm ? d->cap_pm
                        : st.up_limit_pm > d->soft_pm ? d->soft_pm : st.up_limit_pm;
        uint32_t target = elastic(d, v, &in, at, &yield);
        if (yield) {
            /* And the law holds this once: the sample shows the soft share
             * just left, and read against the hard one it cut the share to
             * a third (the borrower at 10 % for a sample). */
            st.share = d->nominal;
            in.sample_valid = 0;
        } else if (target != prev) {
            double r = (double)st.share / (double)nominal_of(d, prev);
            r = r < 0.5 ? 0.5 : r > 2.0 ? 2.0 : r;
            st.share = (int64_t)(r * (double)nominal_of(d, target));
        }
        st.up_limit_pm = target;
        in.cap_pm = target;
        in.nominal = nominal_of(d, target);
    }
    cc_ctrl_output_t out;
    st = cc_ctrl_step(st, &in, &out);
    if (in.sample_valid || yield) __atomic_store_n(&line->ctrl_sample, stamp, __ATOMIC_RELAXED);
    /* What has accrued since the last payment (by us or by waiters), at the
     * share that was in force over it; the new share applies from now on. */
    int64_t old_share = __atomic_load_n(&line->share, __ATOMIC_RELAXED);
    cc_drip_pay(&line->tokens, &v->drip, now, 0, old_share);
    /* A delta, never a store (bucket.h). */
    if (out.bypass) cc_bucket_trim_to(&line->tokens, out.bucket_target);
    /* Yielding: what was paid in at the soft share goes too, down to one
     * hard period. */
    if (yield) cc_bucket_trim_to(&line->tokens, d->nominal);
    __atomic_store_n(&line->share, st.share, __ATOMIC_RELAXED);
    __atomic_store_n(&line->up_limit_pm, st.up_limit_pm, __ATOMIC_RELAXED);
    __atomic_store_n(&line->md_cooldown, st.md_cooldown, __ATOMIC_RELAXED);
    __atomic_store_n(&line->excl_debounced, st.excl_debounced, __ATOMIC_RELAXED);
    __atomic_store_n(&line->excl_streak, st.excl_streak, __ATOMIC_RELAXED);
    __atomic_store_n(&line->lost_excl_pending, st.lost_excl_pending, __ATOMIC_RELAXED);
    cc_refill_done(line);
    cc_debug("refill dev %d: user %u sys %u valid %d thr %d share %lld tokens %lld target %u%s%s",
             d->ordinal, in.user_pm, in.sys_pm, in.sample_valid, in.throttled,
             (long long)st.share, (long long)line->tokens, st.up_limit_pm,
             out.bypass ? " bypass" : "", yield ? " yield" : "");
}

static void *run(void *arg)
{
    (void)arg;
    /* Named, so its CPU time can be read (bench/watcher_cost.c) and it can
     * be told apart in top -H. */
    pthread_setname_np(pthread_self(), "cudacap-watch");
    sigset_t all;
    sigfillset(&all);
    /* Not the synchronous ones: a SIGBUS raised while blocked kills the
     * process outright, and the region guard (region/guard.c) must get the
     * fault of a truncated compute.region read on this thread. */
    sigdelset(&all, SIGBUS);
    sigdelset(&all, SIGSEGV);
    sigdelset(&all, SIGFPE);
    sigdelset(&all, SIGILL);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
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
        for (int i = 0; i < n; i++) cycle(cc_compute_dev_at(i));
        cc_cost_poll(0);
        /* Absolute grid: the cadence does not drift with the work done;
         * if we fell behind, skip ahead rather than burst. */
        next += CC_PERIOD_NS;
        uint64_t now = cc_mono_ns();
        if (next < now) next = now + CC_PERIOD_NS / 10;
        struct timespec ts = {(time_t)(next / 1000000000ull), (long)(next % 1000000000ull)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {}
    }
    return NULL;
}

void cc_watcher_ensure(void)
{
    if (__builtin_expect(__atomic_load_n(&started, __ATOMIC_ACQUIRE), 1)) return;
    pthread_mutex_lock(&start_mu);
    if (!started) {
        if (!slock_tried && cc_compute_region() && cc_cfg.state_dir[0]) {
            slock_tried = 1;
            cc_slock_open(&slock, cc_cfg.state_dir);
        }
        have_util = cc_port()->nvml_open() == 0; /* before the thread: it reads have_util */
        pthread_t th;
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&th, &at, run, NULL) != 0)
            cc_warn("compute cap: cannot start the watcher thread; the bucket refills only "
                    "through other processes of the container");
        pthread_attr_destroy(&at);
        /* Even on failure: retrying on every launch would cost a syscall. */
        __atomic_store_n(&started, 1, __ATOMIC_RELEASE);
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
    __atomic_store_n(&started, 0, __ATOMIC_RELEASE);
}

void cc_watcher_init(void) { cc_fork_child_register(fork_child); }
