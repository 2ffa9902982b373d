/* The state files' specifications, defined once: the library opens them with
 * these and the cudacap command peeks at them with the same, so the two can
 * never disagree on a layout. */
#ifndef CC_REGION_SPECS_H
#define CC_REGION_SPECS_H

#include "region/region.h"

extern const struct cc_region_spec cc_mem_region_spec;     /* memory.region */
extern const struct cc_region_spec cc_compute_region_spec; /* compute.region */

#endif
