/* Field checks of region copies (validate.h). The bounds are what the
 * library can write, widened where a clock or a configuration is involved
 * so that no real region is ever called corrupt; random bytes fail them
 * almost surely, and the zero tail catches the rest. */
#include "cli/validate.h"

#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "cudacap/abi_compute_region.h"
#include "cudacap/abi_counters.h"
#include "cudacap/abi_mem_region.h"
#include "cap/compute/elastic.h"
#include "common/clock.h"

#define PID_MAX (1u << 22)            /* the kernel's PID_MAX_LIMIT */
#define BYTES_MAX (1ull << 50)        /* 1 PiB: far above any device (or cap that means one) */
#define TICKS_MAX (1ull << 40)        /* start times: clock ticks since boot (~350 years) */
#define FUTURE_NS (86400ull * 1000000000ull) /* a stamp this far ahead is no clock of ours */

static int zero(const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i]) return 0;
    return 1;
}

/* A UUID field: printable up to a NUL that must come, zeros after it. */
static int uuid_ok(const char *u, size_t n)
{
    size_t i = 0;
    for (; i < n && u[i]; i++)
        if (u[i] < 0x20 || u[i] > 0x7e) return 0;
    return i < n && zero(u + i, n - i);
}

#define BAD(...) return snprintf(buf, len, __VA_ARGS__), buf

const char *snap_check_mem(const void *region, char *buf, size_t len)
{
    const cc_mem_region_t *r = region;
    if (r->slots_hw > CC_MEM_SLOTS) BAD("slots_hw %u is over %u", r->slots_hw, CC_MEM_SLOTS);
    if (r->pad0 || !zero(r->pad1, sizeof r->pad1)) BAD("padding after the generation is not zero");
    for (int d = 0; d < CC_MEM_DEVS; d++) {
        const cc_mem_dev_t *e = &r->dev[d];
        if (!e->key) {
            if (e->limit || !zero(e->uuid, sizeof e->uuid)) BAD("free device entry %d is not empty", d);
            continue;
        }
        if (!(e->key & 1)) BAD("device entry %d: key %#llx is not a key", d, (unsigned long long)e->key);
        if (!uuid_ok(e->uuid, sizeof e->uuid)) BAD("device entry %d: the UUID is not text", d);
        if (e->limit > BYTES_MAX)
            BAD("device entry %d: cap %llu B is over 1 PiB", d, (unsigned long long)e->limit);
    }
    for (uint32_t i = 0; i < CC_MEM_SLOTS; i++) {
        const cc_mem_proc_t *p = &r->proc[i];
        uint32_t pid = p->owner & ~CC_MEM_REAPING;
        /* Slots at or above the high-water mark were never claimed. */
        if (i >= r->slots_hw && (p->owner || p->host_pid || p->start_time))
            BAD("slot %u is above slots_hw %u and in use", i, r->slots_hw);
        if (!p->owner && (p->host_pid || p->start_time)) BAD("free slot %u has a process", i);
        if (p->owner && (pid == 0 || pid > PID_MAX)) BAD("slot %u: owner %u is not a pid", i, p->owner);
        if (p->host_pid > PID_MAX) BAD("slot %u: host pid %u is not a pid", i, p->host_pid);
        if (p->start_time > TICKS_MAX)
            BAD("slot %u: start time %llu is not a time", i, (unsigned long long)p->start_time);
        for (int d = 0; d < CC_MEM_DEVS; d++) {
            uint64_t u = r->used[d][i], o = r->overhead[d][i], h = r->host_used[d][i];
            if ((u || o || h) && !p->owner) BAD("free slot %u holds bytes on device entry %d", i, d);
            if (u > BYTES_MAX || o > BYTES_MAX || h > BYTES_MAX)
                BAD("slot %u: %llu B on device entry %d is over 1 PiB", i,
                    (unsigned long long)(u > o ? (u > h ? u : h) : (o > h ? o : h)), d);
        }
    }
    /* Past the layout: zero, except the exporter's and the configuration's
     * counters (any value). */
    const size_t mc_end = CC_MEM_COUNTERS_OFFSET + sizeof(cc_mem_counters_t);
    const size_t cf_end = CC_CONFIG_COUNTERS_OFFSET + sizeof(cc_config_counters_t);
    if (!zero((const char *)region + sizeof *r, CC_MEM_COUNTERS_OFFSET - sizeof *r) ||
        !zero((const char *)region + mc_end, CC_CONFIG_COUNTERS_OFFSET - mc_end) ||
        !zero((const char *)region + cf_end, CC_MEM_FILE_SIZE - cf_end))
        BAD("bytes past the layout are not zero");
    return NULL;
}

const char *snap_check_compute(const void *region, char *buf, size_t len)
{
    const cc_compute_region_t *r = region;
    uint64_t now = cc_mono_ns();
    if (!zero(r->pad0, sizeof r->pad0)) BAD("padding after the header is not zero");
    for (unsigned i = 0; i < CC_COMPUTE_DEVICES; i++) {
        const cc_compute_dev_t *d = &r->dev[i];
        uint32_t st = r->uuid[i].state;
        if (st > 2) BAD("device line %u: state %u", i, st);
        if (st == 0) {
            /* Never claimed: the build left it zero, and only a claimer
             * writes a line. */
            if (!zero(d, sizeof *d) || !zero(r->uuid[i].uuid, CC_COMPUTE_UUID_LEN) ||
                r->owner[i].pid || r->owner[i].host_pid || r->accrued_ns[i] ||
                !zero(&r->elastic[i], sizeof r->elastic[i]) || !zero(&r->pace[i], sizeof r->pace[i]))
                BAD("free device line %u is not empty", i);
            continue;
        }
        if (st == 1) continue; /* being claimed: anything half written */
        if (!uuid_ok(r->uuid[i].uuid, CC_COMPUTE_UUID_LEN) || !r->uuid[i].uuid[0])
            BAD("device line %u: the UUID is not text", i);
        if (d->up_limit_pm > 1000) BAD("device line %u: cap %u permille", i, d->up_limit_pm);
        if ((d->sample & 0xffff) > 1000 || (d->sample >> 16) > 1000)
            BAD("device line %u: sample %#x is not two permilles", i, d->sample);
        if (d->sample_ns > now + FUTURE_NS) BAD("device line %u: sample stamp in the future", i);
        if (r->owner[i].pid > PID_MAX || r->owner[i].host_pid > PID_MAX)
            BAD("device line %u: owner pid is not a pid", i);
        const cc_compute_elastic_t *e = &r->elastic[i];
        if (e->hard_pm > 1000 || e->soft_pm > 1000)
            BAD("device line %u: limits %u/%u permille", i, e->hard_pm, e->soft_pm);
        /* What src/cap/compute/elastic.c can store: seen is a level, calm and low
         * counters, the rest flags (its bounds, elastic.h). */
        if (e->contended > 1 || e->seen > CC_ELASTIC_SEEN_MAX || e->calm > CC_ELASTIC_ALONE ||
            e->borrowing > 1 || e->saturated > 2 || e->low > CC_ELASTIC_LOW || e->foreign > 1 ||
            e->prov > CC_ELASTIC_PROV || e->restore_pm > 1000 || !zero(e->pad, sizeof e->pad))
            BAD("device line %u: elastic state out of range", i);
        if (e->counted_ns > now + FUTURE_NS) BAD("device line %u: elastic stamp in the future", i);
        const cc_compute_pace_t *pc = &r->pace[i];
        if (pc->pid > PID_MAX || pc->throttle_run > 255 || pc->pad2)
            BAD("device line %u: pacing pid, throttled run or padding", i);
        if (pc->wait_ns > now + FUTURE_NS || pc->multi_ns > now + FUTURE_NS)
            BAD("device line %u: pacing stamp in the future", i);
    }
    for (unsigned k = 0; k < CC_COMPUTE_PROCS; k++) {
        const cc_compute_proc_t *p = &r->proc[k];
        if (p->pid > PID_MAX || p->host_pid > PID_MAX) BAD("process slot %u: pid is not a pid", k);
        for (unsigned i = 0; i < CC_COMPUTE_DEVICES; i++)
            if (p->util_pm[i] > 1000 && p->util_pm[i] != CC_COMPUTE_UTIL_UNKNOWN)
                BAD("process slot %u: utilization %u permille", k, p->util_pm[i]);
    }
    if (!zero((const char *)region + sizeof *r, CC_COMPUTE_COUNTERS_OFFSET - sizeof *r) ||
        !zero((const char *)region + CC_COMPUTE_COUNTERS_OFFSET + sizeof(cc_compute_counters_t),
              CC_COMPUTE_FILE_SIZE - CC_COMPUTE_COUNTERS_OFFSET - sizeof(cc_compute_counters_t)))
        BAD("bytes past the layout are not zero");
    return NULL;
}
