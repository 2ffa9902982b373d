/* CC_ML_TEST_TRUST_HW (mem.state.slots.control), for the wrappers of the
 * ledger's files that scan the slots: the scan ends at the high-water mark
 * the file says, as the first version did (a forged one hides slots). */
#include "cap/mem/ledger_internal.h"

static inline uint32_t trusted_hw(const cc_mem_region_t *r)
{
    uint32_t hw = __atomic_load_n(&r->slots_hw, __ATOMIC_SEQ_CST);
    return hw > CC_MEM_SLOTS ? CC_MEM_SLOTS : hw;
}
