/* Controls of src/cap/mem/ctx_admit.c (src/common/controls.h says how). */
#pragma GCC diagnostic ignored "-Wunused-function" /* the replaced control points */

#ifdef CC_TEST_CTX_CONTROL
#include "ctx_control.h"
#define reserve_ctx(m, o, a) (ctx_control("noadmit") ? 0 : reserve_ctx(m, o, a))
#define learn_ctx(m, ovh) (ctx_control("nolearn") ? (void)0 : learn_ctx(m, ovh))
#endif
#ifdef CC_TEST_CTX_UNCHARGED /* faults.loop.control.nvml_procs: as before, unsaid */
#define charge_unmeasured(a) cc_ml_set_overhead((a)->m->h, (a)->before + cc_cfg.ctx_overhead)
#endif

#include "cap/mem/ctx_admit.c"
