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

/* NVML's sampling period as observed on clock c (the smallest gap); 0 while
 * unknown (then an empty poll means idle, the simulator's rule). The next
 * sample is due one period after the newest one's timestamp, which is the
 * END of the period it covers; an empty poll before that is no data. (A
 * first version subtracted a margin and so declared samples due before
 * their period had ended: 30 % caps held at up to 40 % on the simulator's
 * periodic-NVML mode.) */
static unsigned nvml_period_us(const struct cc_nvml_clock *c)
{
    unsigned m = 0;
    for (int i = 0; i < 16; i++)
        if (c->gap_us[i] && (!m || c->gap_us[i] < m)) m = c->gap_us[i];
    return m;
}

/* NVML sampling slower than we poll (a real GPU: ~200 ms against 100 ms)
 * and its next sample on clock c not due yet: asking would find nothing
 * (and the per-process query costs 2.4 ms of CPU on the H200). At most one
 * poll in a row is skipped: the gap then reads two cycles, and the rule no
 * longer holds. */
static int not_due(const struct cc_nvml_clock *c, unsigned long long now, unsigned long long poll_gap)
{
#ifndef CC_TEST_EMPTY_IS_IDLE /* test-only: the first version's rule (tests/compute.cmake) */
    unsigned per = nvml_period_us(c);
    return per && (unsigned long long)per * 10 > poll_gap * 13 && now < c->last_ts + per;
#else
    (void)c, (void)now, (void)poll_gap, (void)nvml_period_us;
    return 0;
#endif
}

static void clock_saw(struct cc_nvml_clock *c, unsigned long long newest)
{
    if (newest <= c->last_ts) return;
    if (c->last_ts) {
        unsigned long long gap = newest - c->last_ts;
        c->gap_us[c->gap_i++ % 16] = gap > 2000000ull ? 2000000u : (unsigned)gap;
    }
    c->last_ts = newest;
}

/* Whether NVML lists only this container's processes on the device (the
 * process list: 6 us on the H200). Then every kernel the device ran is the
 * container's, and the device-wide utilization (16 us) says what the
 * per-process samples (2.4 ms) would: time-based both, on the H200 for
 * one-SM kernels as for full waves (docs/validation.md, the 2026-12-01 watcher run). Failing
 * safe: an unknown host pid of ours, a list NVML cannot give, or an empty
 * one reads "not alone", and a neighbour's context appears in the list when
 * it is created, before its first kernel can run. At worst (a context
 * created between the list and the samples) one sample of someone else's
 * work is counted as ours: the cap then holds lower, never higher. The pids
 * listed go to *pids (at most 16), their count to *np; *foreign: the list
 * names a process not of this container (or one of ours whose host pid is
 * not known yet: the safe side for an elastic line, elastic.h). */
static int alone(const struct cc_compute_device *d, uint32_t *pids, unsigned *np, int *foreign)
{
    uint32_t all[128];
    unsigned n = 128;
    *foreign = 0;
    if (cc_port()->nvml_running_pids(d->ordinal, all, &n) != 0 || n == 0 || n > 128) return 0;
    int mine = 1;
    for (unsigned i = 0; i < n; i++)
        if (!member(all[i])) mine = 0;
    *foreign = !mine;
#ifdef CC_TEST_NO_DEVICE_QUERY /* negative control of compute.watcher.cheap */
    return 0;
#endif
    if (!mine || d->devutil_off) return 0;
    *np = n < 16 ? n : 16;
    for (unsigned i = 0; i < *np; i++) pids[i] = all[i];
    return 1;
}

/* The cheap path: a container alone on the device (alone()) reads NVML's
 * device-wide value (14 us) instead of the per-process samples (2.3 ms).
 * That value has no timestamp; on the H200 it steps once per sampling
 * period, on the grid of the per-process samples' timestamps (200 ms, both).
 * So it is read once per period, on the first cycle at least CC_DEV_LAG_US
 * past the period's end (a 100 ms cycle always lands in [end + 50, end +
 * 150) ms): each read is a new period, never the same one twice (a sample
 * fed twice doubles the controller's gain). The grid comes from a
 * per-process query: the path waits for NVML's period to be known and
 * slower than our poll (a real GPU; the simulator's default mode samples at
 * our pace and keeps the per-process path), and a per-process query runs
 * again every CC_ANCHOR_US to follow the grid's drift and, with several
 * processes, to refresh the split. */
#define CC_DEV_LAG_US 50000ull
#define CC_ANCHOR_US 5000000ull /* 2.3 ms each: 0.05 % of a core */

/* The period as a grid's step: the mean of the learned gaps within 5/4 of
 * the smallest (a longer one spans a skipped sample). The smallest alone is
 * the safe bound for "not due" but runs short of the mean (198.2 against
 * 200.0 ms on the H200): 25 periods on it would drift 45 ms off the grid. */
static unsigned grid_step_us(const struct cc_nvml_clock *c)
{
    unsigned m = nvml_period_us(c), n = 0;
    unsigned long long sum = 0;
    for (int i = 0; m && i < 16; i++)
        if (c->gap_us[i] && c->gap_us[i] * 4ull <= m * 5ull) sum += c->gap_us[i], n++;
    return n ? (unsigned)(sum / n) : 0;
}

/* 1 when the cheap path may serve this cycle. */
static int cheap_ready(const struct cc_compute_device *d, unsigned long long now)
{
    unsigned per = grid_step_us(&d->nvml_proc);
    return per && (unsigned long long)per * 10 > (CC_PERIOD_NS / 1000) * 13 && d->nvml_proc.last_ts &&
           d->proc_query_us && now >= d->proc_query_us && now - d->proc_query_us < CC_ANCHOR_US;
}

/* 1: published in *user_pm and *sys_pm; 0: this period was read already;
 * -1: the query cannot serve (the per-process one then runs). */
static int sample_device(struct cc_compute_device *d, const struct cc_compute_view *v, unsigned long long now,
                         cc_compute_region_t *reg, const uint32_t *pids, unsigned np, uint32_t *user_pm,
                         uint32_t *sys_pm)
{
    unsigned per = grid_step_us(&d->nvml_proc);
    unsigned long long anchor = d->nvml_proc.last_ts;
    if (now < anchor + CC_DEV_LAG_US) return 0;
    unsigned long long w = (now - anchor - CC_DEV_LAG_US) / per; /* periods ended since the anchor's */
    if (w == 0 || w == d->dev_window) return 0; /* the anchor's period was the per-process query's */
    unsigned pct = 0;
    nvmlReturn_t r = cc_port()->nvml_device_utilization(d->nvml, &pct);
    if (r == NVML_ERROR_FUNCTION_NOT_FOUND || r == NVML_ERROR_NOT_SUPPORTED) {
        d->devutil_off = 1; /* MIG, an old driver: for good */
        return -1;
    }
    if (r != NVML_SUCCESS) return -1;
    __atomic_fetch_add(&v->line->nvml_calls, 1, __ATOMIC_RELAXED);
    d->dev_window = w;
    d->nvml_seen_us = anchor + w * per; /* the end of the period read */
    uint32_t pm = (pct > 100 ? 100 : pct) * 10;
    if (reg) {
        /* One process listed: all of it is that one's. Several: split as the
         * last per-process query split it (unknown for one it did not name). */
        uint32_t tot = 0;
        for (unsigned j = 0; j < d->split_n; j++) tot += d->split_pm[j];
        uint16_t u[16];
        for (unsigned i = 0; i < np; i++) {
            u[i] = np == 1 ? (uint16_t)pm : (uint16_t)CC_COMPUTE_UTIL_UNKNOWN;
            for (unsigned j = 0; np > 1 && j < d->split_n; j++)
                if (d->split_pid[j] == pids[i]) u[i] = (uint16_t)(tot ? (uint64_t)pm * d->split_pm[j] / tot : 0);
        }
        cc_compute_publish_procs(reg, (unsigned)v->idx, pids, u, np);
    }
    *user_pm = *sys_pm = pm;
    return 1;
}

/* One NVML poll: the container's utilization (user) and everyone's (sys),
 * permille; 0 when no sample. While the container is alone on the device
 * (alone()), from the device-wide samples; otherwise from the per-process
 * samples since the last call, averaged per pid (real NVML may return
 * several samples per process), summed over this container's pids (user)
 * and over everyone (sys). With procs (the sampler of a shared line), each
 * container process's average goes into its slot of the process table too
 * (cudacap status). */
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
    uint32_t pids[16];
    unsigned np = 0;
    /* The process list (7 us) when the cheap path could serve, and for an
     * elastic line on every poll (a foreign context, for its step). */
    int cheap = d->nvml_seen_us && cheap_ready(d, now), foreign = 0, solo = 0;
    if (cheap || d->soft_pm) solo = alone(d, pids, &np, &foreign);
    if (d->soft_pm && v->el && __atomic_load_n(&v->el->foreign, __ATOMIC_RELAXED) != (uint8_t)foreign)
        __atomic_store_n(&v->el->foreign, (uint8_t)foreign, __ATOMIC_RELAXED);
    if (cheap && solo) {
        int k = sample_device(d, v, now, reg, pids, np, user_pm, sys_pm);
        if (k >= 0) {
            if (k) d->nvml_poll_us = now;
            return k;
        }
    }
    if (not_due(&d->nvml_proc, now, poll_gap)) return 0;
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
    __atomic_fetch_add(&v->line->nvml_calls, 1, __ATOMIC_RELAXED);
    unsigned n = CC_SAMPLES_MAX;
    nvmlReturn_t r = cc_port()->nvml_process_utilization(d->nvml, buf, &n, d->nvml_seen_us);
    if (r == NVML_ERROR_NOT_FOUND || (r == NVML_SUCCESS && n == 0)) {
        /* No sample since lastSeen. On the simulator that means nothing
         * ran; on a real GPU NVML samples every ~200 ms, so a 100 ms poll
         * often finds none while kernels run, and publishing 0 then halved
         * the measured utilization (the H200: the cap held twice as high).
         * So an empty poll is no data while NVML's next sample is not due
         * (the period learned from the samples' timestamps: the poll
         * interval on the simulator, so both read right), else idle. */
        if (not_due(&d->nvml_proc, now, poll_gap)) return 0;
        /* Not an anchor: the cheap path's grid comes only from a sample's
         * timestamp (an empty answer after idleness must not let it run on
         * an old one). */
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
    clock_saw(&d->nvml_proc, seen);
    d->nvml_seen_us = seen;
    d->proc_query_us = now;
    d->dev_window = 0; /* the grid is anchored anew on this sample */
    /* The split the cheap path applies until the next query. */
    d->split_n = nmine < 16 ? nmine : 16;
    for (unsigned j = 0; j < d->split_n; j++) d->split_pid[j] = mine_pid[j], d->split_pm[j] = mine_pm[j];
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
                        const cc_ctrl_input_t *in, uint64_t at, cc_elastic_output_t *eo)
{
    cc_compute_elastic_t *el = v->el;
    cc_elastic_state_t es = {
        .up_pm = __atomic_load_n(&v->line->up_limit_pm, __ATOMIC_RELAXED),
        .contended = __atomic_load_n(&el->contended, __ATOMIC_RELAXED),
        .calm = __atomic_load_n(&el->calm, __ATOMIC_RELAXED),
        .seen = __atomic_load_n(&el->seen, __ATOMIC_RELAXED),
        .saturated = __atomic_load_n(&el->saturated, __ATOMIC_RELAXED),
        .low = __atomic_load_n(&el->low, __ATOMIC_RELAXED),
        .prov = __atomic_load_n(&el->prov, __ATOMIC_RELAXED),
        .restore_pm = __atomic_load_n(&el->restore_pm, __ATOMIC_RELAXED),
    };
    cc_elastic_input_t ei = {.hard_pm = d->cap_pm, .soft_pm = d->soft_pm, .user_pm = in->user_pm,
                             .sys_pm = in->sys_pm, .sample_valid = in->sample_valid,
                             .throttled = in->throttled,
                             .foreign = __atomic_load_n(&el->foreign, __ATOMIC_RELAXED) == 1};
    es = cc_elastic_step(es, &ei, eo);
    __atomic_store_n(&el->contended, es.contended, __ATOMIC_RELAXED);
    __atomic_store_n(&el->calm, es.calm, __ATOMIC_RELAXED);
    __atomic_store_n(&el->seen, es.seen, __ATOMIC_RELAXED);
    __atomic_store_n(&el->saturated, es.saturated, __ATOMIC_RELAXED);
    __atomic_store_n(&el->low, es.low, __ATOMIC_RELAXED);
    __atomic_store_n(&el->prov, es.prov, __ATOMIC_RELAXED);
    __atomic_store_n(&el->restore_pm, es.restore_pm, __ATOMIC_RELAXED);
    if (in->sample_valid) {
        /* Device time above the hard cap since the last sample counted
         * (saturating: the counter is in a file anyone in the container
         * can write). */
        __atomic_store_n(&el->borrowing, (uint8_t)eo->borrowing, __ATOMIC_RELAXED);
        uint64_t last = __atomic_load_n(&el->counted_ns, __ATOMIC_RELAXED);
        if (last && at > last && at - last <= 10 * CC_PERIOD_NS && eo->borrowed_pm) {
            uint64_t add = (at - last) / 1000 * eo->borrowed_pm;
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
    int yield = 0, hold = 0;
    if (d->soft_pm) {
        /* The controller runs against the elastic target, its share moved
         * with it (cc_elastic_share): reset to the hard nominal on a yield
         * (a share wound up against an unreachable soft 100 % must not
         * follow us down; keeping the learned ratio there instead, 1..2,
         * was tried in the 2026-12-02 elastic-yield run: on the H200 the hard 50 neighbour then got
         * 40 % in two bursts of three and the borrower's target never
         * reached its hard share), else scaled keeping the learned ratio. */
        uint32_t prev = st.up_limit_pm < d->cap_pm ? d->cap_pm
                        : st.up_limit_pm > d->soft_pm ? d->soft_pm : st.up_limit_pm;
        cc_elastic_output_t eo;
        uint32_t target = elastic(d, v, &in, at, &eo);
        yield = eo.yield, hold = eo.hold;
        if (hold) in.sample_valid = 0; /* (elastic.h) */
        if (eo.contended) st = cc_ctrl_shared(st);
        /* On a yield the law also holds this once: the sample shows the
         * soft share just left, and read against the hard one it cut the
         * share to a third (the borrower at 10 % for a sample). */
        if (yield) in.sample_valid = 0;
        st.share = cc_elastic_share(st.share, nominal_of(d, prev), nominal_of(d, target), d->nominal, &eo);
        st.up_limit_pm = target;
        in.cap_pm = target;
        in.nominal = nominal_of(d, target);
    }
    cc_ctrl_output_t out;
    st = cc_ctrl_step(st, &in, &out);
    if (in.sample_valid || yield || hold) __atomic_store_n(&line->ctrl_sample, stamp, __ATOMIC_RELAXED);
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
