/* Elastic (soft) compute limits: the target a container's controller runs
 * against, between its hard cap (guaranteed) and its soft limit, from the
 * one signal a container may see of the others: NVML's samples of the
 * device (docs/compute.md, "Elastic caps"). A pure function, like the
 * controllers: the caller loads the state from the shared line (or a
 * private one) and stores it back.
 *
 * The rule, per valid sample (others = device - container, idle = 1 - device):
 * - alone (no others' work for CC_ELASTIC_ALONE samples): target = soft;
 * - others' work appears (a sample with others after samples without:
 *   their level, an average of about three samples, under 1 %, or
 *   CC_ELASTIC_QUIET samples in a row without them):
 *   target = hard at once (yield: the caller trims the bucket to a hard
 *   period and resets the share);
 * - contended otherwise: the target grows into the device's idle time,
 *   leaving CC_ELASTIC_MARGIN_PM of it, at a rate proportional to the hard
 *   share (so elastic containers split idle time in proportion to their
 *   hard shares); two saturated samples in a row halve what is borrowed;
 * - beside a foreign context (NVML's process list names a process not of
 *   this container) whose work is not seen (others' level under 1 %): the
 *   target at most 1 - CC_ELASTIC_GUARD_PM, reached by the growth above
 *   (not at once: the H200's kernels run up to 1.5x slower at a high duty
 *   cycle than at the hard share, the cost model's timings follow in
 *   0.4 s, and a jump there saturated the device at once), so that the context's work,
 *   when it comes, saturates the device; a saturated sample there is taken
 *   for that work, before NVML names it (the H200 names one process per
 *   sample: 0.06-1.07 s; while others' work is not seen lately, as for an
 *   arrival): a provisional yield to the hard share, judged on
 *   the next CC_ELASTIC_PROV samples: others' work, a saturated device, or
 *   (on the second, which the old target no longer covers) the container
 *   read above its hard share by more than CC_ELASTIC_EXCESS_PM (NVML
 *   counting others' work as ours) confirm it (contended, as for a named
 *   arrival); otherwise it was the container's own lump, and the target
 *   grows back from the hard share (restored at once, the H200's borrower
 *   saturated the device again and yielded every 0.8 s: the 2026-12-02 guard run);
 * - not throttled and under the hard cap for CC_ELASTIC_LOW samples:
 *   nothing borrowed, target = hard (and the watcher then need not sample
 *   an idle container; one sample alone is often a process the machine did
 *   not run for a moment, and dropping then cost it 0.5 s at the hard share).
 * The target never leaves [hard, soft]. */
#ifndef CC_CAP_ELASTIC_H
#define CC_CAP_ELASTIC_H

#include <stdint.h>

typedef struct cc_elastic_state {
    uint32_t up_pm;    /* the target, permille */
    uint8_t contended; /* others' work seen recently */
    uint8_t calm;      /* samples without others since, while contended */
    uint8_t seen;      /* others' work in the recent samples: a level, 4-permille units */
    uint8_t saturated; /* consecutive samples of a saturated device, up to 2 */
    uint8_t low;       /* consecutive samples of demand under the hard share, up to LOW */
    uint8_t prov;      /* a provisional yield: samples left to judge it, up to PROV */
    uint16_t restore_pm; /* the target before it (restored at once only without a foreign context) */
} cc_elastic_state_t;

typedef struct cc_elastic_input {
    uint32_t hard_pm, soft_pm; /* soft_pm > hard_pm: elastic */
    uint32_t user_pm, sys_pm;  /* the sample: the container's, the device's */
    int sample_valid;          /* 0: no fresh sample: hold */
    int throttled;             /* some consumer waited since the last refill */
    int foreign;               /* 1: NVML lists a process of someone else on the device */
} cc_elastic_input_t;

typedef struct cc_elastic_output {
    int yield;     /* back to the hard share now: trim the bucket, reset the share */
    int borrowing; /* the sample: above the hard cap, under a target above it */
    uint32_t borrowed_pm; /* of the device over the sample, above the hard cap: at most the
                           * target then in force (NVML naming one process per sample reads a
                           * container at the hard share as the whole device) */
    int hold;      /* the sample straddles a yield: the controller must not read it */
    int contended; /* others' work named in the sample: the controller at its shared
                    * gain (cc_ctrl_shared) */
} cc_elastic_output_t;

#define CC_ELASTIC_OTHERS_PM 20  /* others using 2 % of the device: their work is there */
#define CC_ELASTIC_GONE_PM 10    /* ... and under 1 %: gone (hysteresis) */
#define CC_ELASTIC_SAT_PM 20     /* the device idle under 2 %: saturated */
#define CC_ELASTIC_MARGIN_PM 50  /* idle time left when borrowing beside others (5 %) */
#define CC_ELASTIC_GAIN 0.5      /* growth per sample: gain x hard x (idle - margin) */
#define CC_ELASTIC_ALONE 30      /* samples without others before the soft limit again */
#define CC_ELASTIC_BORROW_PM 10  /* above the hard cap by 1 %: borrowing (display) */
#define CC_ELASTIC_LOW 10        /* samples of demand under the hard share: not borrowing */
#define CC_ELASTIC_GUARD_PM 150 /* idle time left beside a foreign context whose work is not seen */
#define CC_ELASTIC_QUIET 8        /* samples in a row without others' work: not seen lately */
#define CC_ELASTIC_PROV 2        /* samples that judge a provisional yield */
#define CC_ELASTIC_EXCESS_PM 100 /* read this far above the hard share after a yield: others' work */
#define CC_ELASTIC_SEEN_MAX 250  /* the level of others' work, 4-permille units: 1000 permille */

/* The state a freshly built line starts from: alone, at the soft limit
 * (an elastic container started on an idle device may use it). */
cc_elastic_state_t cc_elastic_initial(uint32_t hard_pm, uint32_t soft_pm);

/* One sample. Pure: no globals, no clock, no I/O. Every field of st is
 * clamped to what this function can return (it comes from a shared file). */
cc_elastic_state_t cc_elastic_step(cc_elastic_state_t st, const cc_elastic_input_t *in,
                                   cc_elastic_output_t *out);

/* The controller's share after a step (pure; the watcher's refill and the
 * unit tests' plants): the hard nominal on a yield; else, when the target
 * moved, scaled to it keeping the learned ratio to nominal within 0.5..2.
 * nominal_prev, nominal_target: the nominal supply of the target before
 * and after the step; hard_nominal: the hard cap's. */
int64_t cc_elastic_share(int64_t share, int64_t nominal_prev, int64_t nominal_target,
                         int64_t hard_nominal, const cc_elastic_output_t *out);

#endif
