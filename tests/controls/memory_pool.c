/* Controls of src/hook/memory_pool.c (src/common/controls.h says how). */
#pragma GCC diagnostic ignored "-Wunused-function" /* the replaced control points */

#ifdef CC_TEST_CURRENT_DEVICE /* route.2dev.pool.control: as before, created pools only */
#define default_pool_device(pool) -1
#endif

#include "hook/memory_pool.c"
