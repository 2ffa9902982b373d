/* A fresh compute region with one claimed line, for the tests that drive
 * the bucket and the refills on a real region (compute.forged,
 * compute.skew): dir emptied and made, the region opened, the line claimed
 * at nominal (ns a period) and cap_pm. Returns the line's index, or -1. */
#ifndef CC_TESTS_COMPUTE_LINE_H
#define CC_TESTS_COMPUTE_LINE_H

#include <stdio.h>
#include <stdlib.h>

#include "cap/compute/compute_region.h"

static inline int mp_fresh_line(const char *dir, const char *uuid, int64_t nominal, uint32_t cap_pm,
                                cc_compute_region_t **r)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", dir, dir);
    if (system(cmd) != 0) return -1;
    struct cc_pkey key;
    *r = cc_compute_region_open(dir, &key);
    return *r ? cc_compute_claim_device(*r, uuid, nominal, cap_pm) : -1;
}

#endif
