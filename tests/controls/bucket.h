/* Controls of src/cap/compute/bucket.h (src/common/controls.h says how),
 * for the tests that compile its inline admission into themselves
 * (tests/compute_bucket.c includes this in the place of the header). The
 * versions are declared before the header, so that its own calls (the
 * admission at floor 0) are redirected too, and defined after it. */
#include <sched.h>
#include <stdint.h>

#ifdef CC_TEST_PLAIN_TAKE /* compute.bucket.deductions.control: a load and a store, no CAS */
static inline int plain_take(int64_t *b, int64_t cost, int64_t floor);
#define cc_bucket_take_above(b, cost, floor) plain_take(b, cost, floor)
#endif
#ifdef CC_TEST_BYPASS_STORE /* compute.bucket.bypass.control: the seed's bug, a store */
static inline int64_t store_trim(int64_t *b, int64_t target);
#define cc_bucket_trim_to(b, target) store_trim(b, target)
#endif

#include "cap/compute/bucket.h"

#ifdef CC_TEST_PLAIN_TAKE
static inline int plain_take(int64_t *b, int64_t cost, int64_t floor)
{
    if (cost < 0) cost = 0;
    if (cost > CC_BUCKET_MAX_COST) cost = CC_BUCKET_MAX_COST;
    int64_t cur = __atomic_load_n(b, __ATOMIC_RELAXED);
    if (cur <= floor) return 0;
    /* A preemption between load and store, now and then: without it a
     * loaded machine may never interleave the two (the control passed). */
    static __thread unsigned n_;
    if (++n_ % 256 == 0) sched_yield();
    __atomic_store_n(b, cur - cost, __ATOMIC_RELAXED);
    return 1;
}
#endif
#ifdef CC_TEST_BYPASS_STORE
static inline int64_t store_trim(int64_t *b, int64_t target)
{
    int64_t cur = __atomic_load_n(b, __ATOMIC_RELAXED);
    /* The refill winner preempted between its read and its store (a pause
     * now and then: the consumers' takes in it are what the store erases; a
     * few-ns window alone did not interleave on a loaded machine; every
     * 16th, as a yield on each ran past the test's 60 s under load). */
    static __thread unsigned n_;
    if (++n_ % 16 == 0) sched_yield();
    __atomic_store_n(b, target, __ATOMIC_RELAXED);
    return target - cur;
}
#endif
