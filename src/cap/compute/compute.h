/* The compute cap inside libcudacap.so: per-process device state (set up in
 * compute_setup.c) shared by the launch gate (gate.c), the cost model
 * (cost.c) and the watcher thread (watcher.c). See docs/compute.md. */
#ifndef CC_CAP_COMPUTE_H
#define CC_CAP_COMPUTE_H

#include <cuda.h>
#include <stdint.h>

#include "cap/compute/bucket.h"
#include "cap/compute/gate.h" /* cc_compute_mode */
#include "cap/port.h" /* CC_PORT_UUID_LEN */
#include "cap/compute/sampling_lock.h"
#include "cudacap/abi_compute_region.h"
#include "cudacap/nvml_api.h"

#define CC_UNTIMED_SLOTS 17 /* the probe and 16 more (gate.c) */

enum cc_compute_device_state {
    CC_DEV_UNSET = 0,    /* not set up yet (first use sets it up) */
    CC_DEV_CAPPED = 1,   /* capped: the fields below are valid */
    CC_DEV_UNCAPPED = 2, /* no cap on this device (or no way to cap it) */
};

/* Where a device's bucket lives: the pointers a launch and the watcher
 * follow, gathered so that switching from a private bucket to the shared
 * line (the rejoin, compute_setup.c) is one pointer store. Written before
 * it is published, never after; never freed (a launch thread may still be
 * inside the old one). */
struct cc_compute_view {
    int idx;                  /* line index in the region (lock byte); -1 private */
    cc_compute_dev_t *line;   /* shared line, or a private one */
    cc_drip_t drip;           /* continuous supply: stamp in the region, or own_accrued */
    cc_compute_elastic_t *el; /* the line's elastic state: in the region, or own_el */
};

/* The compute cap's per-process state of one device (compute_setup.c). */
struct cc_compute_device {
    enum cc_compute_device_state state; /* acquire/release */
    /* &own or &shared; release-stored at setup and at the rejoin, read with
     * cc_compute_view (acquire) once per use. */
    struct cc_compute_view *view;
    struct cc_compute_view own, shared;
    uint32_t cap_pm;         /* the hard cap */
    uint32_t soft_pm;        /* the elastic limit (> cap_pm), or 0 (elastic.h) */
    cc_compute_elastic_t own_el;
    cc_compute_pace_t own_pace; /* a per-process bucket's: only this process waits on it */
    int64_t nominal;         /* cap x period: ns of device time per period */
    int64_t capacity;        /* bucket ceiling for refills */
    uint64_t own_accrued;    /* the stamp of a per-process bucket */
    int uuid_known;          /* the record's identity known: the device may have a line in the region */
    nvmlDevice_t nvml;
    int ordinal;
    uint64_t last_pub_ns;    /* this process's last publication while owner */
    unsigned long long nvml_seen_us; /* NVML lastSeenTimeStamp */
    /* NVML's own per-process sampling period, learned from the gaps between
     * the newest sample timestamps of successive polls (min of the last 16;
     * 0 = not known yet); the device-wide value steps on the same grid. */
    struct cc_nvml_clock {
        unsigned long long last_ts;
        unsigned gap_us[16];
        unsigned gap_i;
        /* How long after its timestamp a sample was first seen (poll time
         * minus the newest timestamp; min of the last 8 is NVML's
         * publication lag, nvml_lag_us); lag_i observations so far. */
        unsigned lag_us[8];
        unsigned lag_i;
    } nvml_proc;
    unsigned long long nvml_poll_us; /* when this process last polled NVML */
    int devutil_off; /* the device-wide query failed as unsupported: per-process only */
    /* The cheap path (watcher.c, sample_device): the NVML period whose
     * device-wide value was read last (index on the per-process grid), and
     * when the last per-process query answered (real µs): it re-anchors the
     * grid, and with several processes says how the container's utilization
     * split among them (host pids, permille), published the same way
     * (cudacap status) until the next one. */
    unsigned long long dev_window;
    unsigned long long proc_query_us;
    uint32_t split_pid[16];
    uint16_t split_pm[16];
    unsigned split_n;
    /* Launches of never-timed shapes in flight on this device (their timings
     * pending), admitted without a charge (gate.c): slot 0, the probe,
     * always; the others only while the bucket holds at least half its
     * capacity (the container below its cap). Each 1 while held: set by
     * CAS, cleared (release) when its timing completes. */
    int probe[CC_UNTIMED_SLOTS];
    /* The shape (key, blocks) each held slot's launch has (relaxed; written
     * after the slot is claimed): a launch of a shape already in flight
     * untimed waits for that timing instead of taking another slot. */
    void *probe_key[CC_UNTIMED_SLOTS];
    uint64_t probe_blocks[CC_UNTIMED_SLOTS];
};

/* The device's current view. One acquire load, a plain mov on x86: all a
 * launch pays for the rejoin. Use only what this one load returned. */
static inline const struct cc_compute_view *cc_compute_view(const struct cc_compute_device *d)
{
    /* Acquire: pairs with the release that published the view (its fields
     * written before). */
    return __atomic_load_n(&d->view, __ATOMIC_ACQUIRE);
}

/* Setup (compute_setup.c). */
/* At the first launch (once): decides cc_compute_mode, and with a cap
 * initialises the cap's modules (capture, cost, watcher), each registering
 * its fork-child reset. */
void cc_compute_decide_mode(void);
/* The device state of a CUDA ordinal, set up on first use (cap/device.h's
 * cc_compute_dev: its fast path inline, this its first use). NULL when out
 * of range. */
struct cc_compute_device *cc_compute_dev_setup(int ordinal);

/* The device of a launch whose device the port could not tell: the one
 * capped device of this process, else -1 (said once: such launches pass
 * uncharged). Not on the launch path's fast branch. */
int cc_compute_device_untold(void);
/* Devices set up so far (the watcher walks them). */
int cc_compute_ndev(void);
struct cc_compute_device *cc_compute_dev_at(int i);
/* This pid into the region's process table, when not yet (a fork child's
 * first capped launch). One relaxed load once it is (a stale 0 only takes
 * the slow path, which looks again under the lock). */
extern int cc_compute_registered;
void cc_compute_register_slow(void);
static inline void cc_compute_register_here(void)
{
    if (__builtin_expect(!__atomic_load_n(&cc_compute_registered, __ATOMIC_RELAXED), 0))
        cc_compute_register_slow();
}
/* This process's pid as NVML reports it (hook/hostpid.c); 0 not known yet. */
uint32_t cc_compute_host_pid(void);
/* hostpid.c found it: into this process's slot of the process table. */
void cc_compute_note_host_pid(uint32_t host_pid);
/* The region, or NULL (per-process buckets). Acquire: it may appear later
 * (the rejoin). */
cc_compute_region_t *cc_compute_region(void);
/* A copy of this process's key in the compute region (region/proc_key.h;
 * key 0 and fd -1 while it has none), read atomically, and its key or,
 * without one, its pid (for the owner and pacing stamps). */
struct cc_pkey;
void cc_compute_pkey(struct cc_pkey *k);
uint32_t cc_compute_key(void);
/* The watcher thread, about once a second: when this process is on its own
 * buckets only because compute.region was unusable at start, tries to open
 * it again (never blocking), and once it opens, registers this process and
 * moves each capped device with a known UUID to its shared line. 1 when it
 * joined just now (the watcher then opens the sampling lock), else 0. */
int cc_compute_rejoin(void);

/* Cost model (cost.c). Estimate for a launch of key (a function or a graph
 * exec) with `blocks` blocks; *measure says whether to time this launch. */
enum cc_cost_measure {
    CC_MEASURE_NO = 0,      /* the estimate stands */
    CC_MEASURE_SAMPLE = 1,  /* time this launch: the shape's sample is due */
    CC_MEASURE_UNTIMED = 2, /* never timed: charged 0 now, exactly when its timing completes */
};
int64_t cc_cost_estimate(void *key, uint64_t blocks, int *measure, int below_cap);
/* What a launch that should have been timed but cannot be is charged: the
 * largest estimate known in this process, or 1 ms. */
int64_t cc_cost_fallback(void);
/* Timing a launch: begin records the start event (returns a handle, or
 * NULL when no timing is possible), end records the end event and queues
 * the measurement; the correction is charged to line when it completes,
 * and then *probe (if not NULL) is cleared, as it is when the launch fails. */
void *cc_cost_begin(CUstream s, int ptsz, int *probe);
void cc_cost_end(void *m, CUstream s, int ptsz, void *key, uint64_t blocks, int64_t charged,
                 cc_compute_dev_t *line, int launched);
/* The device time a timed launch is charged, from its events' elapsed
 * time and gap: the host's time from recording the start event to the
 * launch's return when the start event had completed by then (an idle
 * stream), else 0 (cost.c, start_gap). On an idle stream the start event
 * completes when it is recorded and the kernel starts only when it is
 * submitted, so the events measure that gap plus the kernel: an empty
 * kernel launched and synchronised one by one was timed at its launch cost.
 * So the gap comes off, but never more than half of the elapsed time (a
 * kernel hidden inside the gap is charged half of it; what such a tiny
 * kernel's charge gets wrong NVML corrects). An elapsed time under the gap
 * is kept as it is. */
int64_t cc_cost_kernel_ns(int64_t elapsed, int64_t gap);
/* Completes measurements that finished; at most max (0 = all). */
void cc_cost_poll(int max);
/* The cap is on (cc_compute_decide_mode): registers cost.c's fork reset. */
void cc_cost_init(void);
extern int cc_cost_pending; /* queued measurements (a hint, relaxed) */

/* Watcher (watcher.c): started at the first capped launch; one acquire
 * load once it is (pairs with the release that publishes the start). */
extern int cc_watcher_started;
void cc_watcher_start(void);
static inline void cc_watcher_ensure(void)
{
    if (__builtin_expect(!__atomic_load_n(&cc_watcher_started, __ATOMIC_ACQUIRE), 0))
        cc_watcher_start();
}
/* The cap is on (cc_compute_decide_mode): registers watcher.c's fork reset. */
void cc_watcher_init(void);

#endif
