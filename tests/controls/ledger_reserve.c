/* Controls of src/cap/mem/ledger_reserve.c (src/common/controls.h says how). */
#pragma GCC diagnostic ignored "-Wunused-function" /* the replaced control points */

#ifdef CC_ML_TEST_LOCAL_ONLY /* mem.*.race.negative_control: a per-process cap, not the container-wide one */
#define container_use(l, b, d, mine, own) (own)
#define container_host(l, d, mine, own, over) ((void)(over), (own))
#endif
#ifdef CC_ML_TEST_TRUST_HW /* mem.state.slots.control: slots_hw trusted, counts unowned and unclamped */
#include "trust_hw.h"
#define scan_end(r) trusted_hw(r)
#define slot_use(r, i, d, clampv)                                                                                      \
    ((void)(clampv), sat_add(__atomic_load_n(&(r)->used[d][i], __ATOMIC_SEQ_CST),                                      \
                             __atomic_load_n(&(r)->overhead[d][i], __ATOMIC_SEQ_CST)))
#endif
#ifdef CC_ML_TEST_WRAP_ADD /* mem.state.wrap.control: a shared count's add wraps past 2^64 - 1 */
#define count_add(p, bytes) ((void)__atomic_add_fetch(p, bytes, __ATOMIC_SEQ_CST))
#endif

#include "cap/mem/ledger_reserve.c"
