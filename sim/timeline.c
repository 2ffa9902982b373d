/* The device-wide kernel timeline: every launch of every process appends one
 * busy interval after the device's busy_until (time slicing). */
#include "sim_shared.h"

uint64_t sim_timeline_append(uint32_t dev, uint64_t not_before, uint64_t dur_ns)
{
    struct sim_shared *s = sim_shm();
    uint64_t now = sim_now_ns();
    if (!s || dev >= SIM_MAX_DEV)
        return (not_before > now ? not_before : now) + dur_ns;
    sim_lock(s);
    struct sim_dev *d = &s->dev[dev];
    uint64_t start = now;
    if (d->busy_until > start)
        start = d->busy_until;
    if (not_before > start)
        start = not_before;
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
