/* Controls of src/cap/compute/election.c (src/common/controls.h says how). */
#pragma GCC diagnostic ignored "-Wunused-function" /* the replaced control points */

#ifdef CC_TEST_FIXED_CADENCE /* compute.election.slow.control: staleness fixed at nominal */
#define owner_interval_ns(d) ((void)(d), 0ull)
#endif
#ifdef CC_TEST_STAMP_NOW /* compute.skew.control: every stamp ahead is now, as before 2026-12-03 */
#define cc_stamp_far_ns() 0ull
#endif
#ifdef CC_TEST_NO_CLAMP /* compute.forged.control: stamps from the future believed */
#define cc_stamp_ahead(at, now, slack) 0
#endif
#ifdef CC_TEST_NO_CAS
/* compute.election.election.control: check-then-store, no election; the
 * pause stands for a preemption between check and store. */
#include <unistd.h>

#include "cap/compute/election.h"
static int check_then_store(cc_compute_dev_t *d, uint64_t now)
{
    usleep(200);
    __atomic_store_n(&d->refill_ns, now, __ATOMIC_RELAXED);
    return 1;
}
#define win_refill(d, last, now) ((void)(last), check_then_store(d, now))
#endif

#include "cap/compute/election.c"
