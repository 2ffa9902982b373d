/* The memory cap's bindings (mem.h): each CUDA ordinal's ledger device and
 * cap, bound on first use, and this process's overhead there (what NVML
 * says the process holds beyond what the wrappers counted: contexts,
 * modules, libraries' own allocations). */
#include "cap/cfg.h"
#include "cap/device.h"
#include "cap/live.h"
#include "cap/mem/bind.h"
#include "cap/mem/mem.h"
#include "cap/memledger.h"
#include "cap/port.h"
#include "common/assert.h"

void cc_mem_bind_fork(struct cc_devrec *r)
{
    /* Bindings stay (same region, same devices); the overhead of the child
     * is measured again on its first use. */
    if (r->mem_state == CC_MEM_BOUND) r->mem_state = CC_MEM_UNMEASURED;
    r->mem_managed = 0; /* the child owns none of the parent's allocations */
}

int cc_mem_measure_overhead(int ordinal, uint64_t *ovh)
{
    if (ordinal < 0 || ordinal >= CC_MAX_DEVICES) return 0;
    const cc_port_t *p = cc_port();
    uint32_t hp = p->host_pid_discover(ordinal); /* 0 while ambiguous */
    uint64_t used;
    if (!hp || !p->nvml_process_memory(ordinal, hp, &used)) return 0;
    struct cc_devrec *r = cc_devrec(ordinal);
    uint64_t own = cc_ml_own(r->mem.h), managed = __atomic_load_n(&r->mem_managed, __ATOMIC_RELAXED);
    own = own > managed ? own - managed : 0; /* not in NVML's figure */
    *ovh = used > own ? used - own : 0;
    return 1;
}

void cc_mem_refresh_overhead(int ordinal)
{
    if (ordinal < 0 || ordinal >= CC_MAX_DEVICES) return;
    int h = cc_devrec(ordinal)->mem.h;
    uint64_t ovh;
    if (cc_mem_measure_overhead(ordinal, &ovh)) {
        cc_ml_set_overhead(h, ovh);
        return;
    }
    /* Not measurable (no NVML, pid unknown, MIG...): the configured estimate,
     * only if nothing was measured before. */
    if (cc_ml_overhead(h) == 0) cc_ml_set_overhead(h, cc_cfg.ctx_overhead);
}

/* The slow path: the first use of o (or of a fork child), the record's
 * lock held. */
static int bind_locked(struct cc_devrec *r, int o, int measure)
{
    cc_assert_held(cc_device_mu());
    int s = r->mem_state;
    if (s == CC_MEM_UNBOUND) {
        uint64_t cap = cc_cfg_mem_cap(o);
        int known = cc_device_identify_locked(r, o);
        if (!known || !cap) {
            s = known ? CC_MEM_UNCAPPED : CC_MEM_UNBOUND; /* no device yet: try again later */
        } else {
            r->mem.cap = cap;
            cc_mem_over_bind(&r->mem, o); /* may lower cap to the card's (a spilling cap) */
            r->mem.h = cc_ml_device(cc_cfg.state_dir, r->uuid, r->mem.cap);
            if (r->mem.h >= 0) cc_ml_set_host_limit(r->mem.h, cc_mem_over(&r->mem));
            /* No ledger at all (said): uncapped rather than a bad handle. */
            s = r->mem.h >= 0 ? CC_MEM_UNMEASURED : CC_MEM_UNCAPPED;
        }
    }
    if (s == CC_MEM_UNMEASURED) { /* first use in this process: charge the context's memory */
        if (measure) cc_mem_refresh_overhead(o);
        s = CC_MEM_BOUND;
    }
    return s;
}

const struct cc_mem_device *cc_mem_bind(int o, int measure)
{
    struct cc_devrec *r = cc_devrec(o);
    if (__builtin_expect(!r, 0)) return NULL;
    /* Acquire: pairs with the release below (r->mem written before). */
    int s = __atomic_load_n(&r->mem_state, __ATOMIC_ACQUIRE);
    if (__builtin_expect(s == CC_MEM_BOUND, 1)) return &r->mem;
    if (s == CC_MEM_UNCAPPED) return NULL;
    cc_device_lock();
    s = bind_locked(r, o, measure);
    __atomic_store_n(&r->mem_state, s, __ATOMIC_RELEASE);
    cc_device_unlock();
    return s == CC_MEM_BOUND ? &r->mem : NULL;
}

/* A new cap and oversubscription from the limits file (cap/live.h). A
 * bound device takes them at once: the next reserve compares against the
 * cap, and a cap lowered below what the container holds refuses until
 * frees bring it under (nothing is taken back); the oversubscription after
 * over.c's checks (cc_mem_over_rebind), with the ledger's host limit that
 * `cudacap status` shows. A device that had no cap and now has one is
 * bound at its next allocation (taking both then): what this process
 * allocated before is not in the ledger, so it is charged there as
 * overhead (NVML's figure for the process minus what the wrappers counted,
 * bind_locked). A removed cap (0) keeps the device bound with no limit,
 * its memory still counted. */
void cc_mem_set_limits(int o, uint64_t cap, uint64_t over)
{
    struct cc_devrec *r = cc_devrec(o);
    if (!r) return;
    cc_device_lock();
    int s = __atomic_load_n(&r->mem_state, __ATOMIC_RELAXED);
    if (s == CC_MEM_BOUND || s == CC_MEM_UNMEASURED) {
        uint64_t c = cap ? cap : UINT64_MAX;
        __atomic_store_n(&r->mem.cap, c, __ATOMIC_RELAXED);
        cc_ml_set_cap(r->mem.h, c);
        cc_ml_set_host_limit(r->mem.h, cc_mem_over_rebind(&r->mem, o, over));
    } else if (s == CC_MEM_UNCAPPED && cap) {
        /* Release: as the bind's own stores (nothing else changed). */
        __atomic_store_n(&r->mem_state, CC_MEM_UNBOUND, __ATOMIC_RELEASE);
    }
    cc_device_unlock();
}

/* The ordinal of an allocation whose device the port could not tell: the
 * one capped device there is, else -1. Without a current context the
 * driver refuses the allocation anyway (and the reserve is given back);
 * with one it could not name (a failed query), charging the only capped
 * device keeps its memory counted rather than passing it uncounted. */
int cc_mem_untold(void)
{
    int only = -1, many = 0;
    for (int o = 0; o < CC_MAX_DEVICES; o++) {
        char uuid[CC_PORT_UUID_LEN];
        nvmlDevice_t nvml;
        if (cc_cfg_mem_cap(o) && cc_port()->device_info(o, uuid, &nvml) == 0)
            many += only >= 0, only = o;
    }
    return many ? -1 : only;
}

int cc_mem_bound_ordinal(int h)
{
    for (int o = 0; o < CC_MAX_DEVICES; o++) {
        const struct cc_devrec *r = cc_devrec(o);
        int s = __atomic_load_n(&r->mem_state, __ATOMIC_ACQUIRE);
        if ((s == CC_MEM_BOUND || s == CC_MEM_UNMEASURED) && r->mem.h == h && cc_mem_dev(o)) return o;
    }
    return -1;
}
