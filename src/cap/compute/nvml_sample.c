/* The watcher's NVML sampling: the container's utilization and the
 * device's, from the per-process samples or, while the container is alone
 * on the device, from the device-wide value (the cheap path). Split out of
 * watcher.c, which runs the cycle; refill.c runs the controller on what is
 * published here. */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "cap/compute/nvml_sample.h"
#include "cap/compute/nvml_clock.h"
#include "cap/compute/compute.h"
#include "cap/compute/compute_region.h"
#include "cap/compute/election.h"
#include "cap/port.h"
#include "common/clock.h"
#include "common/controls.h"
#include "common/log.h"

#define CC_SAMPLES_MAX 512
static int have_util; /* NVML's per-process utilization is there (port.h, nvml_open) */

void cc_watch_nvml_open(void) { have_util = cc_port()->nvml_open() == 0; }

static uint64_t counts[sizeof(struct cc_watch_counts) / sizeof(uint64_t)];

void cc_watch_count(size_t field) { __atomic_fetch_add(&counts[field / sizeof(uint64_t)], 1, __ATOMIC_RELAXED); }

static void count_set(size_t field, uint64_t v) { __atomic_store_n(&counts[field / sizeof(uint64_t)], v, __ATOMIC_RELAXED); }

void cc_watch_note_cpu(uint64_t ns) { count_set(offsetof(struct cc_watch_counts, cpu_us), ns / 1000); }

void cc_watch_counts(struct cc_watch_counts *out)
{
    uint64_t *o = (uint64_t *)out;
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) o[i] = __atomic_load_n(&counts[i], __ATOMIC_RELAXED);
}

static int member(uint32_t pid)
{
    cc_compute_region_t *r = cc_compute_region();
    return r ? cc_compute_is_member(r, pid) : pid == cc_compute_host_pid();
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
/* The device-wide utilization read in place of the per-process samples:
 * the list names only our processes, and the query is not off. */
static inline int CC_CONTROL_POINT(device_wide)(const struct cc_compute_device *d, int mine)
{
    return mine && !d->devutil_off;
}

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
    if (!device_wide(d, mine)) return 0;
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

/* 1 when the cheap path may serve this cycle. */
static int cheap_ready(const struct cc_compute_device *d, unsigned long long now)
{
    unsigned per = cc_nvml_grid_step_us(&d->nvml_proc);
    return per && (unsigned long long)per * 10 > (CC_PERIOD_NS / 1000) * 13 && d->nvml_proc.last_ts &&
           d->proc_query_us && now >= d->proc_query_us && now - d->proc_query_us < CC_ANCHOR_US;
}

/* 1: published in *user_pm and *sys_pm; 0: this period was read already;
 * -1: the query cannot serve (the per-process one then runs). */
static int sample_device(struct cc_compute_device *d, const struct cc_compute_view *v, unsigned long long now,
                         cc_compute_region_t *reg, const uint32_t *pids, unsigned np, uint32_t *user_pm,
                         uint32_t *sys_pm)
{
    unsigned per = cc_nvml_grid_step_us(&d->nvml_proc);
    unsigned long long anchor = d->nvml_proc.last_ts;
    /* A period's value is read at least CC_DEV_LAG_US after it ends, or
     * the publication lag and 20 ms if that is longer. */
    unsigned long long lag = cc_nvml_lag_us(&d->nvml_proc) + 20000ull;
    if (lag < CC_DEV_LAG_US) lag = CC_DEV_LAG_US;
    if (now < anchor + lag) return 0;
    unsigned long long w = (now - anchor - lag) / per; /* periods ended since the anchor's */
    if (w == 0 || w == d->dev_window) { /* the anchor's period was the per-process query's */
        CC_WATCH_COUNT(cheap_same);
        return 0;
    }
    unsigned pct = 0;
    nvmlReturn_t r = cc_port()->nvml_device_utilization(d->nvml, &pct);
    if (r == NVML_ERROR_FUNCTION_NOT_FOUND || r == NVML_ERROR_NOT_SUPPORTED) {
        d->devutil_off = 1; /* MIG, an old driver: for good */
        return -1;
    }
    if (r != NVML_SUCCESS) return -1;
    __atomic_fetch_add(&v->line->nvml_calls, 1, __ATOMIC_RELAXED);
    CC_WATCH_COUNT(cheap);
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
int cc_watch_sample(struct cc_compute_device *d, const struct cc_compute_view *v, uint32_t *user_pm,
                    uint32_t *sys_pm, int procs)
{
    static nvmlProcessUtilizationSample_t buf[CC_SAMPLES_MAX];
    static uint32_t mine_pid[CC_SAMPLES_MAX]; /* this container's pids and averages */
    static uint16_t mine_pm[CC_SAMPLES_MAX];
    unsigned nmine = 0;
    cc_compute_region_t *reg = procs && v->idx >= 0 ? cc_compute_region() : NULL;
    if (!have_util || !d->nvml) return 0;
    unsigned long long now = cc_real_us();
    unsigned long long poll_gap = d->nvml_poll_us && now > d->nvml_poll_us ? now - d->nvml_poll_us : 0;
    count_set(offsetof(struct cc_watch_counts, period_us), cc_nvml_period_us(&d->nvml_proc));
    count_set(offsetof(struct cc_watch_counts, lag_us), cc_nvml_lag_us(&d->nvml_proc));
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
    if (cc_nvml_not_due(&d->nvml_proc, now, poll_gap)) {
        CC_WATCH_COUNT(not_due);
        return 0;
    }
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
    CC_WATCH_COUNT(polls);
    unsigned n = CC_SAMPLES_MAX;
    nvmlReturn_t r = cc_port()->nvml_process_utilization(d->nvml, buf, &n, d->nvml_seen_us);
    if (r == NVML_ERROR_NOT_FOUND || (r == NVML_SUCCESS && n == 0)) {
        CC_WATCH_COUNT(empty);
        /* No sample since lastSeen. On the simulator that means nothing
         * ran; on a real GPU NVML samples every ~200 ms, so a 100 ms poll
         * often finds none while kernels run, and publishing 0 then halved
         * the measured utilization (the H200: the cap held twice as high).
         * So an empty poll is no data while NVML's next sample is not due
         * (the period learned from the samples' timestamps: the poll
         * interval on the simulator, so both read right), else idle. */
        if (cc_nvml_not_due(&d->nvml_proc, now, poll_gap)) return 0;
        /* Not an anchor: the cheap path's grid comes only from a sample's
         * timestamp (an empty answer after idleness must not let it run on
         * an old one). */
        *user_pm = *sys_pm = 0;
        d->nvml_seen_us = cc_nvml_empty_seen(&d->nvml_proc, d->nvml_seen_us, now);
        if (reg) cc_compute_publish_procs(reg, (unsigned)v->idx, NULL, NULL, 0);
        return 1;
    }
    if (r != NVML_SUCCESS) {
        cc_log_once(CC_LOG_WARN, "nvmlDeviceGetProcessUtilization failed (%d); while it fails, the compute cap "
                                 "runs on its cost model alone", (int)r);
        return 0;
    }
    if (n > CC_SAMPLES_MAX) n = CC_SAMPLES_MAX;
    unsigned long long step = cc_nvml_answer_step(buf, n); /* before the loop below consumes the pids */
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
    cc_nvml_clock_saw(&d->nvml_proc, seen, step, now);
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
