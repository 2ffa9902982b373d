/* Controls of src/cap/mem/ledger_attach.c (src/common/controls.h says how). */
#pragma GCC diagnostic ignored "-Wunused-function" /* the replaced control points */

#ifdef CC_ML_TEST_NO_REJOIN /* faults.lib.control.rejoin: a process that lost the ledger stays on its own */
#define want_rejoin() ((void)0)
#endif

#include "cap/mem/ledger_attach.c"
