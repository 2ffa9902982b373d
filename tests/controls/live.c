/* Controls of src/cap/live.c (src/common/controls.h says how). */
#pragma GCC diagnostic ignored "-Wunused-function" /* the replaced control points */

#ifdef CC_TEST_NO_LIVE /* config.live.*.control: the caps read once, at start */
#define live_on() 0
#endif

#include "cap/live.c"
