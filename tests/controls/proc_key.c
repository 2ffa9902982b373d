/* Controls of src/region/proc_key.c (src/common/controls.h says how). */
#pragma GCC diagnostic ignored "-Wunused-function" /* the replaced control points */

#ifdef CC_TEST_PID_KEY /* mem.pidns: the pid is the only key */
#define probe_keys(k, fd, base, pid) (errno = EAGAIN, -1)
#endif

#include "region/proc_key.c"
