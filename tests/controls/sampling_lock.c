/* Controls of src/cap/compute/sampling_lock.c (src/common/controls.h says how). */
#pragma GCC diagnostic ignored "-Wunused-function" /* the replaced control points */

#ifdef CC_TEST_NO_FORGET /* compute.election.death.control, compute.lock.fork.control: the child keeps it */
#define close_lock_file(l) ((void)(l))
#endif

#include "cap/compute/sampling_lock.c"
