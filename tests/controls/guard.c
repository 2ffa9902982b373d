/* Controls of src/region/guard.c (src/common/controls.h says how). */
#pragma GCC diagnostic ignored "-Wunused-function" /* the replaced control points */

#ifdef CC_TEST_NO_SIGBUS_GUARD /* mem.state.sigbus.control: no fault recognised */
#define guarded_fault(si) 0
#endif

#include "region/guard.c"
