/* The compute controllers: delta, AIMD and auto, as pure functions. All
 * cross-cycle state is in cc_ctrl_state_t, which the caller loads from the
 * region line (shared bucket) or a private line (per-process bucket) and
 * stores back: where the state lives is a parameter, never a code fork.
 *
 * The controller's output is share: the tokens (ns of device time) added to
 * the bucket per nominal period. nominal = cap x period is what an exact cost
 * model would need; share departs from it only to correct the cost model
 * against NVML's measured utilization. */
#ifndef CC_CAP_CONTROLLER_H
#define CC_CAP_CONTROLLER_H

#include <stdint.h>

#include "cudacap/config.h"

typedef struct cc_ctrl_state {
    int64_t share;
    uint32_t up_limit_pm;
    uint8_t md_cooldown;
    uint8_t excl_debounced;
    uint8_t excl_streak;
    uint8_t lost_excl_pending;
    uint8_t throttle_run; /* refills in a row that found a launch had waited (up to 255) */
} cc_ctrl_state_t;

typedef struct cc_ctrl_input {
    cc_controller_t kind;
    uint32_t cap_pm;   /* the cap, permille */
    uint32_t user_pm;  /* the container's utilization over the last sample */
    uint32_t sys_pm;   /* the device's (all users) */
    int sample_valid;  /* 0: no fresh sample: hold */
    int throttled;     /* some consumer waited since the last refill */
    int64_t nominal;   /* cap x period, ns */
    int quiet;         /* the watcher skipped sampling: nothing launched (watcher.c, idle) */
    int resumed;       /* no refill for CC_CTRL_RESUME_PERIODS or more before this one */
} cc_ctrl_input_t;

typedef struct cc_ctrl_output {
    int bypass;          /* idle: bring the bucket to bucket_target (a delta), no refill */
    int64_t bucket_target;
    int md_fired;        /* AIMD cut this cycle */
    int used_aimd;       /* which law ran (auto routes per cycle) */
} cc_ctrl_output_t;

/* Tuning, named once (docs/compute.md explains each). */
#define CC_CTRL_SHARE_MIN_DIV 16   /* share >= nominal / 16 */
#define CC_CTRL_SHARE_MAX_MUL 8    /* share <= nominal x 8 */
#define CC_CTRL_DEADBAND_PM 5      /* delta: |error| below 0.5 pp: hold */
#define CC_CTRL_AIMD_BAND_PM 20    /* AIMD: +-2 pp around the cap: hold */
#define CC_CTRL_AIMD_COOLDOWN 3    /* AIMD: cycles blocked after a cut */
#define CC_CTRL_SHARED_GAIN 0.03   /* delta's gain while others use the device */
#define CC_CTRL_EXCL_PM 10         /* others use < 1 %: exclusive */
#define CC_CTRL_EXCL_ENTER 30      /* samples without others to count as alone */
#define CC_CTRL_EXCL_LEAVE 2       /* samples with others to count as shared */
#define CC_CTRL_UP_RUN 5           /* throttled refills in a row before share may rise */
#define CC_CTRL_RESUME_PERIODS 3   /* refills missed: nobody watched the line (cc_ctrl_step) */

/* The state a freshly claimed device starts from. */
cc_ctrl_state_t cc_ctrl_initial(uint32_t cap_pm, int64_t nominal);

/* Others' work seen on the device (an elastic line's sample names it:
 * elastic.h): the shared gain from now on. Left to excl_step, "alone"
 * lasted until two samples in a row showed others, and the H200, naming
 * one process per sample, named the borrower alone with the device's whole
 * share between the newcomer's samples: cut at the alone gain (0.3 x 69/30
 * of a nominal a sample), 9.5 % of bare throughput for 0.5 s under a hard
 * 30. Not on a yield itself (a provisional one may be the container's own
 * lump: beside an idle context the H200's borrower then stayed at the
 * shared gain, corrected its share ten times slower, saturated the device
 * and yielded every 0.8-1.6 s, the 2026-12-02 elastic-rule run). */
cc_ctrl_state_t cc_ctrl_shared(cc_ctrl_state_t st);

/* One control cycle. Pure: no globals, no clock, no I/O. */
cc_ctrl_state_t cc_ctrl_step(cc_ctrl_state_t st, const cc_ctrl_input_t *in,
                             cc_ctrl_output_t *out);

#endif
