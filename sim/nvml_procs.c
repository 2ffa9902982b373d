/* libnvidia-ml.so.1 of the simulator: the processes on a device and their
 * utilization (split from nvml.c: devices, memory, device utilization). */
#include "cudacap/nvml_api.h"
#include "sim_shared.h"
#include "nvml_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* ---- processes ---- */
struct proc_row {
    unsigned pid;
    unsigned long long mem;
};

static unsigned list_procs(int d, struct proc_row *rows)
{
    struct sim_shared *s = sim_shm();
    unsigned n = 0;
    sim_lock(s);
    sim_sweep_locked(s);
    for (int i = 0; i < SIM_MAX_PROC; i++) {
        const struct sim_proc *p = &s->procs[i];
        if (p->in_use && (p->ctx[d] || p->mem[d])) {
            rows[n].pid = p->nvml_pid;
            rows[n].mem = p->mem[d];
            n++;
        }
    }
    sim_unlock(s);
    return n;
}

#define RUNNING_PROCS(NAME, TYPE, FILL)                                              \
    nvmlReturn_t NAME(nvmlDevice_t device, unsigned int *infoCount, TYPE *infos)     \
    {                                                                                \
        CHECK_INIT();                                                                \
        int d = dev_of(device);                                                      \
        if (d < 0 || !infoCount)                                                     \
            return NVML_ERROR_INVALID_ARGUMENT;                                      \
        struct proc_row rows[SIM_MAX_PROC];                                          \
        unsigned n = list_procs(d, rows);                                            \
        if (*infoCount < n) {                                                        \
            *infoCount = n;                                                          \
            return NVML_ERROR_INSUFFICIENT_SIZE;                                     \
        }                                                                            \
        if (n && !infos)                                                             \
            return NVML_ERROR_INVALID_ARGUMENT;                                      \
        for (unsigned i = 0; i < n; i++) {                                           \
            memset(&infos[i], 0, sizeof infos[i]);                                   \
            infos[i].pid = rows[i].pid;                                              \
            infos[i].usedGpuMemory = rows[i].mem;                                    \
            FILL;                                                                    \
        }                                                                            \
        *infoCount = n;                                                              \
        return NVML_SUCCESS;                                                         \
    }

#define MIG_NA infos[i].gpuInstanceId = 0xFFFFFFFFu; infos[i].computeInstanceId = 0xFFFFFFFFu
RUNNING_PROCS(nvmlDeviceGetComputeRunningProcesses_v3, nvmlProcessInfo_t, MIG_NA)
RUNNING_PROCS(nvmlDeviceGetComputeRunningProcesses_v2, nvmlProcessInfo_v2_t, MIG_NA)
RUNNING_PROCS(nvmlDeviceGetComputeRunningProcesses, nvmlProcessInfo_v1_t, (void)0)

/* CUDACAP_SIM_PROC_SAMPLE_MS > 0: NVIDIA's documented behaviour. Time is cut
 * into periods of P µs aligned to the epoch (CLOCK_REALTIME); every completed
 * period ending after lastSeen (and within the utilisation window) gives one
 * sample per pid busy in it: smUtil = busy share of the period, timeStamp =
 * the period's end. So a poll faster than P often finds nothing while
 * kernels run, as on a real GPU. Cost: periods x ring entries scanned. */
#define PERIODIC_MAX 1024
struct period_row {
    uint32_t pid;
    uint64_t busy, ts;
};

/* The H200 with several busy processes: one sample per period, the device's
 * busy share, under one pid: the one running at an instant drawn from the
 * period (deterministic per period, so every caller sees the same sample).
 * Sticky (CUDACAP_SIM_PROC_SAMPLE_ONE=2), the worst case of what the H200
 * showed (one container named 13 samples in a row beside another busy one,
 * docs/validation.md, the 2026-12-02 elastic-yield run): the pid named in a period stays named in
 * the next one while it is busy there; the draw picks only when it is not.
 * Periods are decided oldest first (the last decided one is kept in the
 * device, under the lock); rows [gfirst[g], next group) are period g's,
 * newest first. Compacts row in place; returns the new count. */
static unsigned one_pid_per_period(struct sim_dev *dv, struct period_row *row, unsigned n,
                                   const unsigned *gfirst, const uint64_t *gend, unsigned ng, uint64_t P,
                                   int sticky)
{
    unsigned pick[64];
    for (unsigned g = ng; g-- > 0;) {
        unsigned a = gfirst[g], b = g + 1 < ng ? gfirst[g + 1] : n;
        pick[g] = a;
        if (b <= a)
            continue;
        uint64_t all = 0;
        for (unsigned j = a; j < b; j++) all += row[j].busy;
        unsigned pk = b;
        if (sticky && (dv->one_end == gend[g] || dv->one_end + P == gend[g]))
            for (unsigned j = a; j < b; j++)
                if (row[j].pid == dv->one_pid) pk = j;
        if (pk == b) {
            uint64_t h = gend[g] * 0x9e3779b97f4a7c15ull;
            h ^= h >> 29;
            uint64_t r = all ? (h * 0xbf58476d1ce4e5b9ull >> 11) % all : 0;
            pk = a;
            while (pk + 1 < b && r >= row[pk].busy) r -= row[pk++].busy;
        }
        if (gend[g] > dv->one_end)
            dv->one_end = gend[g], dv->one_pid = row[pk].pid;
        row[pk].busy = all;
        pick[g] = pk;
    }
    unsigned m = 0;
    for (unsigned g = 0; g < ng; g++) {
        unsigned a = gfirst[g], b = g + 1 < ng ? gfirst[g + 1] : n;
        if (b > a)
            row[m++] = row[pick[g]];
    }
    return m;
}

static nvmlReturn_t proc_util_periodic(int d, nvmlProcessUtilizationSample_t *out, unsigned *count,
                                       unsigned long long last_seen, uint64_t P)
{
    uint64_t w_us = sim_config()->util_window_ns / 1000ull;
    uint64_t now_ns, now_us;
    sim_clock_pair(&now_ns, &now_us);
    /* realtime µs -> monotonic ns: mono = real*1000 - off */
    int64_t off = (int64_t)(now_us * 1000ull) - (int64_t)now_ns;
    struct period_row row[PERIODIC_MAX];
    unsigned n = 0;
    struct sim_shared *s = sim_shm();
    sim_lock(s);
    struct sim_dev *dv = &s->dev[d];
    uint64_t cnt = dv->ring_head < SIM_RING ? dv->ring_head : SIM_RING;
    unsigned gfirst[64]; /* each period's first row, newest period first */
    uint64_t gend[64];
    unsigned ng = 0;
    /* newest period first, so a full table keeps the newest samples */
    for (uint64_t end = sim_nvml_newest_end(now_us, P); end > last_seen && end + w_us > now_us && end >= P && ng < 64; end -= P) {
        int64_t a0 = (int64_t)((end - P) * 1000ull) - off, b0 = (int64_t)(end * 1000ull) - off;
        unsigned first = n;
        gfirst[ng] = n, gend[ng++] = end;
        for (uint64_t k = 1; k <= cnt; k++) {
            const struct sim_ival *e = &dv->ring[(dv->ring_head - k) % SIM_RING];
            if ((int64_t)e->end_ns <= a0)
                break;
            int64_t a = (int64_t)e->start_ns > a0 ? (int64_t)e->start_ns : a0;
            int64_t b = (int64_t)e->end_ns < b0 ? (int64_t)e->end_ns : b0;
            if (b <= a)
                continue;
            unsigned j = first;
            while (j < n && row[j].pid != e->nvml_pid)
                j++;
            if (j == n) {
                if (n == PERIODIC_MAX)
                    continue;
                row[n].pid = e->nvml_pid;
                row[n].busy = 0;
                row[n].ts = end;
                n++;
            }
            row[j].busy += (uint64_t)(b - a);
        }
    }
    if (sim_config()->proc_sample_one)
        n = one_pid_per_period(dv, row, n, gfirst, gend, ng, P, sim_config()->proc_sample_one == 2);
    sim_unlock(s);
    if (n == 0)
        return NVML_ERROR_NOT_FOUND;
    if (!out || *count < n) {
        *count = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    uint64_t span = P * 1000ull;
    for (unsigned j = 0; j < n; j++) {
        memset(&out[j], 0, sizeof out[j]);
        out[j].pid = row[j].pid;
        out[j].timeStamp = row[j].ts;
        unsigned u = (unsigned)((row[j].busy * 100 + span / 2) / span);
        out[j].smUtil = u > 100 ? 100 : u;
    }
    *count = n;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device, nvmlProcessUtilizationSample_t *utilization,
                                             unsigned int *processSamplesCount,
                                             unsigned long long lastSeenTimeStamp)
{
    CHECK_INIT();
    int d = dev_of(device);
    if (d < 0 || !processSamplesCount)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (sim_config()->proc_sample_us)
        return proc_util_periodic(d, utilization, processSamplesCount, lastSeenTimeStamp,
                                  sim_config()->proc_sample_us);
    uint64_t w = sim_config()->util_window_ns;
    uint64_t now, now_us;
    sim_clock_pair(&now, &now_us);
    uint64_t from = now > w ? now - w : 0;
    if (lastSeenTimeStamp) {
        if (lastSeenTimeStamp >= now_us)
            return NVML_ERROR_NOT_FOUND;
        uint64_t ago = (now_us - lastSeenTimeStamp) * 1000ull;
        if (ago < now - from)
            from = now - ago;
    }
    struct { uint32_t pid; uint64_t busy; } acc[SIM_MAX_PROC];
    unsigned n = 0;
    struct sim_shared *s = sim_shm();
    sim_lock(s);
    struct sim_dev *dv = &s->dev[d];
    uint64_t cnt = dv->ring_head < SIM_RING ? dv->ring_head : SIM_RING;
    for (uint64_t k = 1; k <= cnt; k++) {
        const struct sim_ival *e = &dv->ring[(dv->ring_head - k) % SIM_RING];
        if (e->end_ns <= from)
            break;
        uint64_t a = e->start_ns > from ? e->start_ns : from, b = e->end_ns < now ? e->end_ns : now;
        if (b <= a)
            continue;
        unsigned j = 0;
        while (j < n && acc[j].pid != e->nvml_pid)
            j++;
        if (j == n) {
            if (n == SIM_MAX_PROC)
                continue;
            acc[n].pid = e->nvml_pid;
            acc[n].busy = 0;
            n++;
        }
        acc[j].busy += b - a;
    }
    sim_unlock(s);
    if (n == 0)
        return NVML_ERROR_NOT_FOUND;
    if (!utilization || *processSamplesCount < n) {
        *processSamplesCount = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    uint64_t span = now - from;
    for (unsigned j = 0; j < n; j++) {
        memset(&utilization[j], 0, sizeof utilization[j]);
        utilization[j].pid = acc[j].pid;
        utilization[j].timeStamp = now_us;
        unsigned u = span ? (unsigned)((acc[j].busy * 100 + span / 2) / span) : 0;
        utilization[j].smUtil = u > 100 ? 100 : u;
    }
    *processSamplesCount = n;
    return NVML_SUCCESS;
}
