/* Oversubscription, the policy (docs/memory.md, "Oversubscription"): what a
 * capped device may allocate beyond its cap, served from host memory by the
 * wrappers (hook/memory_over.c), and the checks that keep it safe: a device
 * without concurrent managed access gets none, a container whose memory
 * limit cannot back it gets none, and an allocation that the node's or the
 * container's free host memory cannot back is refused before the driver
 * would fail or the kernel's OOM killer would act. */
#include "cap/cfg.h"
#include "cap/config_over.h"
#include "cap/mem/mem.h"
#include "cap/memledger.h"
#include "cap/port.h"
#include "common/clock.h"
#include "common/controls.h"
#include "common/log.h"
#include "os/os.h"

#define MiB(x) ((unsigned long long)((x) >> 20))

/* Whether host memory can serve oversubscription on device o at all: the
 * device has concurrent managed access and the container's memory limit is
 * not below it. Each refusal said. */
static int CC_CONTROL_POINT(host_can_back)(int o, uint64_t over, uint64_t cap, int conc)
{
    if (!conc) {
        cc_error("memory oversubscription on device %d refused: the device has no concurrent managed "
                 "access (CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS 0), so host memory cannot serve "
                 "it while kernels run; the device is held to its cap of %llu MiB", o, MiB(cap));
        return 0;
    }
    struct cc_os_hostmem hm;
    cc_os_host_memory(&hm);
    if (hm.cg_limit != UINT64_MAX && over > hm.cg_limit) {
        cc_error("memory oversubscription on device %d refused: %llu MiB asked, but the container's "
                 "memory limit (cgroup %s) is %llu MiB and cannot back it; the device is held to its "
                 "cap of %llu MiB", o, MiB(over), hm.cg_source, MiB(hm.cg_limit), MiB(cap));
        return 0;
    }
    if (hm.avail != UINT64_MAX && over > hm.avail)
        cc_warn("memory oversubscription on device %d: %llu MiB allowed, the node has %llu MiB "
                "available now; allocations beyond what it can back will be refused", o, MiB(over),
                MiB(hm.avail));
    return 1;
}

/* The device's memory and managed access: 0, or -1 said. */
static int device_memory(int o, uint64_t *total, int *conc)
{
    if (cc_port()->device_memory(o, total, conc) == 0) return 0;
    cc_error("memory oversubscription on device %d: the driver cannot tell the device's memory "
             "or managed access; none: the device is held to its cap", o);
    return -1;
}

void cc_mem_over_bind(struct cc_mem_device *m, int o)
{
    uint64_t over = cc_cfg_mem_over(o), total = 0, cap = m->cap;
    int spill = cc_cfg.mem_spill[o], conc = 0;
    __atomic_store_n(&m->over, 0, __ATOMIC_RELAXED);
    if (!over && !spill) return;
    if (device_memory(o, &total, &conc) != 0) return;
    cc_config_over_resolve(&cap, &over, spill, total);
    m->cap = cap; /* a spilling cap larger than the card: the card's (the device lock is held) */
    if (!over || !host_can_back(o, over, cap, conc)) return;
    /* Relaxed, as every store of it: allocating threads read it so. */
    __atomic_store_n(&m->over, over, __ATOMIC_RELAXED);
    cc_info("memory cap on device %d: %llu MiB on the device, up to %llu MiB more in host memory", o,
            MiB(cap), MiB(over));
}

uint64_t cc_mem_over_rebind(struct cc_mem_device *m, int o, uint64_t over)
{
    uint64_t total = 0;
    int conc = 0;
    /* The same checks as at bind (a raise must be backed as a first
     * oversubscription is); a lowered one needs none. */
    if (over > cc_mem_over(m) &&
        (device_memory(o, &total, &conc) != 0 || !host_can_back(o, over, cc_mem_cap(m), conc)))
        over = cc_mem_over(m);
    __atomic_store_n(&m->over, over, __ATOMIC_RELAXED);
    return over;
}

/* Refusals for want of host memory are said at most once a second (a loop
 * retrying at the limit would flood stderr). */
static uint64_t said_ns;

static void say(int o, uint64_t bytes, const char *what, uint64_t room)
{
    uint64_t now = cc_mono_ns(), last = __atomic_load_n(&said_ns, __ATOMIC_RELAXED);
    if (now - last < 1000000000ull || !__atomic_compare_exchange_n(&said_ns, &last, now, 0,
                                                                    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        return;
    cc_warn("memory oversubscription on device %d: refusing %llu MiB: %s has %llu MiB left", o,
            MiB(bytes), what, MiB(room));
}

/* Whether what the node and the container's cgroup have left can back
 * bytes more (said when not). */
static int CC_CONTROL_POINT(host_has_room)(int o, uint64_t bytes)
{
    struct cc_os_hostmem hm;
    cc_os_host_memory(&hm);
    uint64_t cg = hm.cg_limit == UINT64_MAX ? UINT64_MAX
                  : hm.cg_limit > hm.cg_used  ? hm.cg_limit - hm.cg_used
                                              : 0;
    if (bytes <= cg && bytes <= hm.avail) return 1;
    int by_cg = cg < hm.avail;
    char what[64];
    snprintf(what, sizeof what, by_cg ? "the container's memory limit (cgroup %s)" : "the node (MemAvailable)",
             hm.cg_source);
    say(o, bytes, what, by_cg ? cg : hm.avail);
    return 0;
}

int cc_mem_over_admit(const struct cc_mem_device *m, int o, uint64_t bytes)
{
    if (!host_has_room(o, bytes)) {
        cc_ml_count_refusal(m->h);
        return -1;
    }
    if (cc_ml_host_reserve(m->h, bytes, cc_mem_over(m)) == 0) return 0;
    cc_ml_count_refusal(m->h);
    cc_debug("memory cap: refusing %llu bytes of oversubscription on device %d (container uses %llu "
             "of %llu)", (unsigned long long)bytes, o, (unsigned long long)cc_ml_host_used(m->h),
             (unsigned long long)cc_mem_over(m));
    return -1;
}
