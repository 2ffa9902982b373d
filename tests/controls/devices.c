/* Controls of src/hook/devices.c (src/common/controls.h says how). */
#pragma GCC diagnostic ignored "-Wunused-function" /* the replaced control points */

#ifdef CC_TEST_CURRENT_DEVICE /* route.2dev.kernel.control: the current context's, as before */
#define stream_device(s, ptsz, n) ((void)(s), (void)(ptsz), cc_device_current())
#endif

#include "hook/devices.c"
