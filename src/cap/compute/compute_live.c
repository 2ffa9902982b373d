/* SM caps changed while the process runs (cap/live.h): a device's bucket
 * parameters moved to the new cap by the watcher, the one thread that reads
 * cap_pm, soft_pm and nominal (refill.c, nvml_sample.c, watcher.c), between
 * its cycles. Launch threads read only the capacity and the share ceiling
 * (relaxed) and the state (acquire). The share the controller learned moves
 * with the cap at the next refill (refill.c, "the cap moved"). */
#include "cap/cfg.h"
#include "cap/compute/compute.h"
#include "cap/compute/election.h"
#include "cap/device.h"
#include "cap/live.h"
#include "common/assert.h"
#include "common/log.h"

/* A device never capped here (UNCAPPED with no view) becomes UNSET: its
 * next launch sets it up with the new cap (compute_setup.c) and starts the
 * watcher. Any thread; the rest waits for the watcher. */
void cc_compute_caps_changed(int ordinal)
{
    struct cc_devrec *rec = cc_devrec(ordinal);
    if (!rec) return;
    struct cc_compute_device *d = &rec->compute;
    cc_device_lock();
    if (cc_cfg_sm_capped(ordinal) && __atomic_load_n(&d->state, __ATOMIC_RELAXED) == CC_DEV_UNCAPPED &&
        !__atomic_load_n(&d->view, __ATOMIC_RELAXED))
        __atomic_store_n(&d->state, CC_DEV_UNSET, __ATOMIC_RELEASE);
    cc_device_unlock();
}

static void set_view(struct cc_compute_view *v, int64_t capacity, int64_t ceiling, uint32_t hard_pm,
                     uint32_t soft_pm)
{
    if (!v->line) return; /* never filled */
    __atomic_store_n(&v->drip.capacity, capacity, __ATOMIC_RELAXED);
    __atomic_store_n(&v->drip.share_ceiling, ceiling, __ATOMIC_RELAXED);
    if (v->el) { /* display (cudacap status) */
        __atomic_store_n(&v->el->hard_pm, (uint16_t)hard_pm, __ATOMIC_RELAXED);
        __atomic_store_n(&v->el->soft_pm, (uint16_t)soft_pm, __ATOMIC_RELAXED);
    }
}

static void apply_device(struct cc_compute_device *d)
{
    int o = d->ordinal;
    uint32_t pct = cc_cfg_sm_capped(o) ? cc_cfg_sm(o) : 0, soft = cc_cfg_sm_soft(o);
    cc_device_lock();
    if (!__atomic_load_n(&d->view, __ATOMIC_RELAXED)) { /* set up uncapped, never capped: cc_compute_caps_changed's */
        cc_device_unlock();
        return;
    }
    if (!pct) {
        if (__atomic_load_n(&d->state, __ATOMIC_RELAXED) == CC_DEV_CAPPED) cc_info("compute cap on device %d removed", o);
        __atomic_store_n(&d->state, CC_DEV_UNCAPPED, __ATOMIC_RELEASE);
        cc_device_unlock();
        return;
    }
    uint32_t cap_pm = pct * 10, soft_pm = soft > pct && soft <= 100 ? soft * 10 : 0;
    int64_t nominal = (int64_t)(CC_PERIOD_NS * pct / 100);
    int64_t capacity = nominal + nominal / 4;
    int64_t ceiling = soft_pm ? (int64_t)(CC_PERIOD_NS * soft_pm / 1000) * 5 / 4 : 0;
    /* This thread alone reads these three (above). */
    d->cap_pm = cap_pm, d->soft_pm = soft_pm, d->nominal = nominal;
    __atomic_store_n(&d->capacity, capacity, __ATOMIC_RELAXED);
    set_view(&d->own, capacity, ceiling, cap_pm, soft_pm);
    set_view(&d->shared, capacity, ceiling, cap_pm, soft_pm);
    /* Release: the parameters above before a launch sees CAPPED (gate.c). */
    __atomic_store_n(&d->state, CC_DEV_CAPPED, __ATOMIC_RELEASE);
    cc_device_unlock();
    cc_info("compute cap on device %d now %u%%%s", o, pct, soft_pm ? " (elastic)" : "");
}

void cc_compute_live_apply(void)
{
    static uint32_t applied; /* the watcher's alone */
    uint32_t c = cc_live_changes();
    if (c == applied) return;
    applied = c;
    int n = cc_compute_ndev();
    for (int i = 0; i < n; i++) apply_device(cc_compute_dev_at(i));
}
