/* Controls of src/hook/memory_vmm.c (src/common/controls.h says how). */
#pragma GCC diagnostic ignored "-Wunused-function" /* the replaced control points */

#ifdef CC_TEST_ARRAY_AFTER /* mem.arrays.before.control: created, then checked */
#define array_pre(a, d) ((void)(d), 0)
#endif

#include "hook/memory_vmm.c"
