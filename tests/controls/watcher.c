/* Controls of src/cap/compute/watcher.c (src/common/controls.h says how). */
#pragma GCC diagnostic ignored "-Wunused-function" /* the replaced control points */

#ifdef CC_TEST_SAMPLE_IDLE /* compute.idle.control: sample whatever the bucket says */
#define idle(d, v) ((void)(d), (void)(v), 0)
#endif

#include "cap/compute/watcher.c"
