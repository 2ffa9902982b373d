/* Controls of src/cap/compute/nvml_sample.c (src/common/controls.h says how). */
#pragma GCC diagnostic ignored "-Wunused-function" /* the replaced control points */

#ifdef CC_TEST_NO_DEVICE_QUERY /* compute.watcher.cheap.control: always the per-process samples */
#define device_wide(d, mine) ((void)(d), (void)(mine), 0)
#endif

#include "cap/compute/nvml_sample.c"
