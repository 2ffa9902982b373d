/* The compute region: CUDACAP_STATE_DIR/compute.region, shared by every
 * process of a container (docs/compute.md, "Shared state"). ABI between all
 * processes that map it: fixed-width fields, explicit padding, offsets pinned
 * below, accessed only with __atomic_* builtins (no volatile, no _Atomic:
 * a non-lock-free _Atomic would fall back to a per-process lock table).
 *
 * Units: tokens are nanoseconds of device time; stamps are CLOCK_MONOTONIC
 * nanoseconds (one clock for every process of the machine); utilization is
 * in permille. */
#ifndef CUDACAP_COMPUTE_REGION_H
#define CUDACAP_COMPUTE_REGION_H

#include <stddef.h>
#include <stdint.h>

#include "cudacap/abi_region.h"

#define CC_COMPUTE_FILE "compute.region"
#define CC_COMPUTE_MAGIC 0x504d4343u /* "CCMP" */
#define CC_COMPUTE_LAYOUT 6u /* 2: per-process utilization, sampling owner; 3: accrual stamps;
                             * 4: elastic state; 5: pacing state; 6: process keys and
                             * liveness bytes */
#define CC_COMPUTE_FILE_SIZE 65536u /* PERMANENT: never changes across versions */
#define CC_COMPUTE_DEVICES 16u
#define CC_COMPUTE_PROCS 256u
#define CC_COMPUTE_UUID_LEN 44u

/* One device: one cache line. The bucket and the refill stamp are hot; the
 * rest is written once per period by the refill winner only. */
typedef struct cc_compute_dev {
    int64_t tokens;              /* the bucket (ns of device time; negative = debt) */
    uint64_t refill_ns;          /* election stamp: last refill (CAS) */
    int64_t share;               /* controller output: ns added per nominal period */
    uint64_t sample_ns;          /* when the sample was published (release) */
    uint32_t sample_interval_us; /* the publisher's measured cadence (0 = unknown) */
    uint32_t sample;             /* container util permille | device util permille << 16 */
    uint32_t up_limit_pm;        /* the target the controller runs against */
    uint8_t md_cooldown;         /* AIMD: cycles left before the next cut may fire */
    uint8_t excl_debounced;      /* exclusivity FSM: debounced "alone on the device" */
    uint8_t excl_streak;         /* exclusivity FSM: consecutive disagreeing cycles */
    uint8_t lost_excl_pending;   /* exclusivity FSM: one-shot reset after losing it */
    uint32_t throttled;          /* set by any consumer that waited since the last refill */
    uint32_t ctrl_sample;        /* sample stamp (sample_ns >> 10) the controller last used */
    uint32_t refills;            /* refill count; its release store ends a winner's update */
    uint32_t nvml_calls;         /* NVML calls made for this device (observability) */
} cc_compute_dev_t;

_Static_assert(sizeof(cc_compute_dev_t) == 64, "one cache line per device");
_Static_assert(offsetof(cc_compute_dev_t, tokens) == 0, "tokens");
_Static_assert(offsetof(cc_compute_dev_t, refill_ns) == 8, "refill_ns");
_Static_assert(offsetof(cc_compute_dev_t, share) == 16, "share");
_Static_assert(offsetof(cc_compute_dev_t, sample_ns) == 24, "sample_ns");
_Static_assert(offsetof(cc_compute_dev_t, sample_interval_us) == 32, "sample_interval_us");
_Static_assert(offsetof(cc_compute_dev_t, sample) == 36, "sample");
_Static_assert(offsetof(cc_compute_dev_t, up_limit_pm) == 40, "up_limit_pm");
_Static_assert(offsetof(cc_compute_dev_t, md_cooldown) == 44, "md_cooldown");
_Static_assert(offsetof(cc_compute_dev_t, lost_excl_pending) == 47, "lost_excl_pending");
_Static_assert(offsetof(cc_compute_dev_t, throttled) == 48, "throttled");
_Static_assert(offsetof(cc_compute_dev_t, ctrl_sample) == 52, "ctrl_sample");
_Static_assert(offsetof(cc_compute_dev_t, refills) == 56, "refills");
_Static_assert(offsetof(cc_compute_dev_t, nvml_calls) == 60, "nvml_calls");

/* Which device a line belongs to: claimed by UUID (CAS on state 0 -> 1,
 * uuid written, release store of 2). */
typedef struct cc_compute_uuid {
    uint32_t state; /* 0 free, 1 being claimed, 2 ready */
    char uuid[CC_COMPUTE_UUID_LEN];
} cc_compute_uuid_t;
_Static_assert(sizeof(cc_compute_uuid_t) == 48, "uuid slot");

/* Liveness bytes, as in the memory region: every process with a slot in
 * the process table holds an OFD write lock (classic POSIX on old kernels)
 * on the byte at CC_COMPUTE_LIVE_BASE + its process key (abi_region.h,
 * CC_KEY_PIDS) of compute.region while it lives; beyond the end of the
 * file. A slot is free for reuse once its key's byte is not held. */
#define CC_COMPUTE_LIVE_BASE ((uint64_t)CC_COMPUTE_FILE_SIZE)

/* The container's processes, so the sampling owner can join NVML's
 * per-process samples (host pids) to this container. */
#define CC_COMPUTE_UTIL_UNKNOWN 0xffffu
typedef struct cc_compute_proc {
    uint32_t pid;      /* the process's key (its pid, or a probed key when another pid
                        * namespace's process has that pid); 0 = free (CAS-claimed) */
    uint32_t host_pid; /* pid as NVML reports it; 0 = not known yet */
    /* This process's SM utilization (permille) on each device line, as the
     * line's sampling owner last published it; CC_COMPUTE_UTIL_UNKNOWN when
     * not measured (host pid unknown, never sampled). Written only by the
     * current sampler, relaxed: for display. */
    uint16_t util_pm[CC_COMPUTE_DEVICES];
} cc_compute_proc_t;
_Static_assert(sizeof(cc_compute_proc_t) == 40, "proc slot");
_Static_assert(offsetof(cc_compute_proc_t, host_pid) == 4, "proc host_pid");
_Static_assert(offsetof(cc_compute_proc_t, util_pm) == 8, "proc util_pm");

/* Who samples each device line: written by the sampling owner when it
 * publishes (relaxed; display only, trust it only while the lock is held). */
typedef struct cc_compute_owner {
    uint32_t pid;      /* the owner's process key (cc_compute_proc_t.pid); 0 = none yet */
    uint32_t host_pid; /* as NVML reports it; 0 = unknown */
} cc_compute_owner_t;
_Static_assert(sizeof(cc_compute_owner_t) == 8, "owner slot");

/* Elastic (soft) limits, per device line (docs/compute.md, "Elastic caps").
 * The limits as the container's processes were configured (each process
 * writes its own on setup: display only, the caps come from each process's
 * environment), and the elastic state that only the refill winner advances
 * (relaxed: ordered by the refill election like the rest of the controller
 * state). The current target itself is the line's up_limit_pm. */
typedef struct cc_compute_elastic {
    uint16_t hard_pm;     /* the hard cap (the guaranteed share), permille; display */
    uint16_t soft_pm;     /* the soft limit, permille; 0 = not elastic */
    uint8_t contended;    /* others' work seen, and not yet CC_ELASTIC_ALONE samples without */
    uint8_t calm;         /* consecutive samples without others, while contended */
    uint8_t seen;         /* others' work in the recent samples, 4-permille units (elastic.c) */
    uint8_t borrowing;    /* the last sample: the container above its hard cap */
    uint64_t borrowed_ns; /* device time used above the hard cap since the line was built, ns */
    uint64_t counted_ns;  /* stamp of the last sample counted into borrowed_ns */
    uint8_t saturated;    /* consecutive samples of a saturated device (up to 2) */
    uint8_t low;          /* consecutive samples of demand under the hard share (up to 10) */
    uint8_t foreign;      /* the sampler's last process list: 1 = a process not of this container
                           * holds a context on the device (0 also: unknown) */
    uint8_t prov;         /* a provisional yield being judged: samples left (up to 2; elastic.h) */
    uint16_t restore_pm;  /* the target before a provisional yield, permille */
    uint8_t pad[2];
} cc_compute_elastic_t;
_Static_assert(sizeof(cc_compute_elastic_t) == 32, "elastic slot");
_Static_assert(offsetof(cc_compute_elastic_t, soft_pm) == 2, "elastic soft_pm");
_Static_assert(offsetof(cc_compute_elastic_t, contended) == 4, "elastic contended");
_Static_assert(offsetof(cc_compute_elastic_t, borrowing) == 7, "elastic borrowing");
_Static_assert(offsetof(cc_compute_elastic_t, borrowed_ns) == 8, "elastic borrowed_ns");
_Static_assert(offsetof(cc_compute_elastic_t, counted_ns) == 16, "elastic counted_ns");
_Static_assert(offsetof(cc_compute_elastic_t, saturated) == 24, "elastic saturated");
_Static_assert(offsetof(cc_compute_elastic_t, low) == 25, "elastic low");
_Static_assert(offsetof(cc_compute_elastic_t, foreign) == 26, "elastic foreign");
_Static_assert(offsetof(cc_compute_elastic_t, prov) == 27, "elastic prov");
_Static_assert(offsetof(cc_compute_elastic_t, restore_pm) == 28, "elastic restore_pm");

/* Pacing, per device line (src/cap/compute/bucket.c, docs/compute.md "Pacing"):
 * which process waited for tokens last, and when two processes' waits last
 * overlapped. While they overlap (within CC_PACE_WINDOW_NS) the waiters pay
 * tokens in lumps; otherwise each launch is paid exactly what it needs.
 * Written by waiting launches only (relaxed: a hint, never a guard), except
 * throttle_run, the refill winner's. */
typedef struct cc_compute_pace {
    uint32_t pid;      /* the process (its pid here) that waited last; 0 = none */
    uint32_t throttle_run; /* the controller's: refills in a row that found a launch had waited
                            * (the refill winner's, src/cap/compute/refill.c; a zero "pad" before
                            * 2026-12-04, so an older process reads 0 and never writes it) */
    uint64_t wait_ns;  /* when it last waited */
    uint64_t multi_ns; /* the last wait that found another process's wait recent; 0 = never */
    uint64_t pad2;
} cc_compute_pace_t;
_Static_assert(sizeof(cc_compute_pace_t) == 32, "pace slot");
_Static_assert(offsetof(cc_compute_pace_t, throttle_run) == 4, "pace throttle_run");
_Static_assert(offsetof(cc_compute_pace_t, wait_ns) == 8, "pace wait_ns");
_Static_assert(offsetof(cc_compute_pace_t, multi_ns) == 16, "pace multi_ns");

typedef struct cc_compute_region {
    cc_region_hdr_t hdr;
    uint8_t pad0[48];
    cc_compute_dev_t dev[CC_COMPUTE_DEVICES];
    cc_compute_uuid_t uuid[CC_COMPUTE_DEVICES];
    cc_compute_proc_t proc[CC_COMPUTE_PROCS];
    cc_compute_owner_t owner[CC_COMPUTE_DEVICES];
    /* Per device line: the CLOCK_MONOTONIC time up to which the controller's
     * share has been paid into the bucket (0 = not yet). Whoever advances it
     * by CAS pays the interval in: the refill winner once a period, and
     * waiting launches in between (src/cap/compute/bucket.h, cc_drip). Off the
     * bucket's line: only waiters and the refill touch it. */
    uint64_t accrued_ns[CC_COMPUTE_DEVICES];
    cc_compute_elastic_t elastic[CC_COMPUTE_DEVICES];
    cc_compute_pace_t pace[CC_COMPUTE_DEVICES];
} cc_compute_region_t;

_Static_assert(offsetof(cc_compute_region_t, dev) == 64, "devices start on a cache line");
_Static_assert(offsetof(cc_compute_region_t, uuid) == 1088, "uuid table");
_Static_assert(offsetof(cc_compute_region_t, proc) == 1856, "process table");
_Static_assert(offsetof(cc_compute_region_t, owner) == 12096, "owner table");
_Static_assert(offsetof(cc_compute_region_t, accrued_ns) == 12224, "accrual stamps");
_Static_assert(offsetof(cc_compute_region_t, elastic) == 12352, "elastic state");
_Static_assert(offsetof(cc_compute_region_t, pace) == 12864, "pacing state");
_Static_assert(sizeof(cc_compute_region_t) == 13376, "layout size");
_Static_assert(sizeof(cc_compute_region_t) <= CC_COMPUTE_FILE_SIZE, "fits its file");

#endif
