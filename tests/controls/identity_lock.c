/* Controls of src/hook/identity_lock.c (src/common/controls.h says how). */
#pragma GCC diagnostic ignored "-Wunused-function" /* the replaced control points */

#ifdef CC_TEST_NO_ID_LOCK /* compute.hostpid.join.control_lock: no turns */
#define open_turns(path) -1
#endif

#include "hook/identity_lock.c"
