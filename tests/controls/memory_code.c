/* Controls of src/hook/memory_code.c (src/common/controls.h says how). */
#pragma GCC diagnostic ignored "-Wunused-function" /* the replaced control points */

#ifdef CC_TEST_CTX_CONTROL /* mem.ctx.code.control (nocode) */
#include "ctx_control.h"
#define limit_growth(o, limit, value) (ctx_control("nocode") ? 0 : limit_growth(o, limit, value))
#define loaded(r) (ctx_control("nocode") ? (r) : loaded(r))
#endif

#include "hook/memory_code.c"
