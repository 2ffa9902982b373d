/* Controls of src/hook/deepbind.c (src/common/controls.h says how). */
#pragma GCC diagnostic ignored "-Wunused-function" /* the replaced control points */

#ifdef CC_TEST_DEEPBIND_UNBOUND /* route.deepbind.*.control: nothing bound */
#define bind_opened(s) ((void)0)
#endif

#include "hook/deepbind.c"
