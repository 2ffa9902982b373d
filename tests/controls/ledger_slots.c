/* Controls of src/cap/mem/ledger_slots.c (src/common/controls.h says how). */
#pragma GCC diagnostic ignored "-Wunused-function" /* the replaced control points */

#ifdef CC_ML_TEST_NO_SWEEP /* mem.*.kill_storm.negative_control: killed processes' bytes stay */
#define reap_dead(r, i, mine) ((void)(r), (void)(i), (void)(mine), 0)
#endif
#ifdef CC_ML_TEST_TRUST_HW /* mem.state.slots.control: the sweep ends at slots_hw */
#include "trust_hw.h"
#define scan_end(r) trusted_hw(r)
#endif

#include "cap/mem/ledger_slots.c"
