/* The device-wide kernel timeline: every launch of every process appends one
 * busy interval after the device's busy_until (time slicing). */
#include "sim_shared.h"

/* The window over which the device's recent load slows a kernel. */
#define SLOWDOWN_WINDOW_NS 200000000ull

/* CUDACAP_SIM_SLOWDOWN_PCT = P: a kernel starting when the device was busy a
 * fraction b of the last 200 ms runs P x b % longer. The H200 under a power
 * limit: ~1.7 ms bf16 matmuls took ~1.15 ms at a 30 % duty cycle and ~1.7 ms
 * at 87-100 % (docs/validation.md, the 2026-12-02 guard run), so a cost model that timed
 * kernels at a low duty cycle undercharges them at a high one for as long
 * as its window of timings lags (lock held). */
static uint64_t slowed_locked(struct sim_shared *s, uint32_t dev, uint64_t start, uint64_t dur)
{
    uint32_t pct = sim_config()->slowdown_pct;
    if (!pct || start < SLOWDOWN_WINDOW_NS) return dur;
    uint64_t busy = sim_busy_locked(s, dev, start - SLOWDOWN_WINDOW_NS, start, -1);
    if (busy > SLOWDOWN_WINDOW_NS) busy = SLOWDOWN_WINDOW_NS;
    return dur + (uint64_t)((double)dur * pct / 100.0 * (double)busy / (double)SLOWDOWN_WINDOW_NS);
}

uint64_t sim_timeline_append(uint32_t dev, uint64_t not_before, uint64_t dur_ns)
{
    struct sim_shared *s = sim_shm();
    if (!s || dev >= SIM_MAX_DEV) {
        uint64_t now = sim_now_ns();
        return (not_before > now ? not_before : now) + dur_ns;
    }
    sim_lock(s);
    /* The clock is read under the lock: read before it, a launcher
     * preempted between the two appended a kernel that started in the
     * past, in a period NVML had already published (two reads of one
     * stepped value differed, sim_test_nvml_periodic beside two suites).
     * A real kernel never starts before its launch reached the device. */
    uint64_t now = sim_now_ns();
    struct sim_dev *d = &s->dev[dev];
    uint64_t start = now;
    if (d->busy_until > start)
        start = d->busy_until;
    if (not_before > start)
        start = not_before;
    if (dur_ns > 0)
        dur_ns = slowed_locked(s, dev, start, dur_ns);
    uint64_t end = start + dur_ns;
    if (dur_ns > 0) {
        int slot = sim_my_slot_locked(s);
        uint32_t uslot = slot < 0 ? UINT32_MAX : (uint32_t)slot;
        uint32_t pid = slot < 0 ? 0 : s->procs[slot].nvml_pid;
        struct sim_ival *last = d->ring_head ? &d->ring[(d->ring_head - 1) % SIM_RING] : NULL;
        if (last && last->slot == uslot && last->nvml_pid == pid && last->end_ns == start) {
            last->end_ns = end;
        } else {
            struct sim_ival *e = &d->ring[d->ring_head % SIM_RING];
            e->start_ns = start;
            e->end_ns = end;
            e->slot = uslot;
            e->nvml_pid = pid;
            d->ring_head++;
        }
        d->busy_until = end;
    }
    sim_unlock(s);
    return end;
}

/* Busy nanoseconds of the device within [from, to); only_pid >= 0 restricts
 * to intervals of that NVML pid. */
uint64_t sim_busy_locked(struct sim_shared *s, uint32_t dev, uint64_t from, uint64_t to,
                         int64_t only_pid)
{
    struct sim_dev *d = &s->dev[dev];
    uint64_t busy = 0;
    uint64_t n = d->ring_head < SIM_RING ? d->ring_head : SIM_RING;
    for (uint64_t k = 1; k <= n; k++) {
        const struct sim_ival *e = &d->ring[(d->ring_head - k) % SIM_RING];
        if (e->end_ns <= from)
            break;
        if (only_pid >= 0 && (int64_t)e->nvml_pid != only_pid)
            continue;
        uint64_t a = e->start_ns > from ? e->start_ns : from;
        uint64_t b = e->end_ns < to ? e->end_ns : to;
        if (b > a)
            busy += b - a;
    }
    return busy;
}

/* Test hook, exported: busy ns of device dev in [from, to) (CLOCK_MONOTONIC
 * ns), every process's kernels; what NVML's device utilization is made of.
 * Tests on a slowed device (CUDACAP_SIM_SLOWDOWN_PCT) read the device's
 * busy time here: kernels counted at their nominal time undercount it. */
uint64_t cuSimTestBusyNs(uint32_t dev, uint64_t from, uint64_t to)
{
    struct sim_shared *s = sim_shm();
    if (!s || dev >= SIM_MAX_DEV || to <= from)
        return 0;
    sim_lock(s);
    uint64_t busy = sim_busy_locked(s, dev, from, to, -1);
    sim_unlock(s);
    return busy;
}
