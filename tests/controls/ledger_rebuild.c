/* Controls of src/cap/mem/ledger_rebuild.c (src/common/controls.h says how). */
#pragma GCC diagnostic ignored "-Wunused-function" /* the replaced control points */

#ifdef CC_ML_TEST_NO_REKEY /* faults.lib.control.rekey: a forged device key splits the container */
#define rekey_locked(r, b, s) __atomic_load_n(&(b)->d, __ATOMIC_RELAXED)
#endif
#ifdef CC_ML_TEST_NO_REPUBLISH /* mem.state.rebuild.control: nobody re-publishes after a rebuild */
#define wait_republished(r, fd) ((void)(r), (void)(fd))
#define republish_locked(full) ((void)(full))
#endif

#include "cap/mem/ledger_rebuild.c"
