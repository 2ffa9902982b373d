#ifndef CC_CAP_REFILL_H
#define CC_CAP_REFILL_H
/* The watcher's refill (refill.c). */
#include <stdint.h>

#include "cap/compute/compute.h"
#include "cap/compute/controller.h"

/* The refill of device d's line, by the period's winner: the controller
 * (kind) on the published sample, an elastic line's target first, the share
 * and the bucket updated. quiet: the watcher skipped sampling (nothing
 * launched), which the controller treats as idle. since: the time since
 * the line's previous refill (cc_refill_try's elapsed). */
void cc_watch_refill(struct cc_compute_device *d, const struct cc_compute_view *v, uint64_t now,
                     cc_controller_t kind, int quiet, uint64_t since);

#endif
