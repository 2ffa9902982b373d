/* Controls of src/cap/compute/bucket.c (src/common/controls.h says how). */
#pragma GCC diagnostic ignored "-Wunused-function" /* the replaced control points */

#ifdef CC_TEST_STAMP_NOW /* compute.skew.control: every stamp ahead is now, as before 2026-12-03 */
#define cc_stamp_far_ns() 0ull
#endif
#ifdef CC_TEST_NO_CLAMP /* compute.forged.control: what the line says, believed */
#define share_within(d, s, bottom) ((void)(d), (void)(bottom), (s))
#define bucket_within(b, d) ((void)(b), (void)(d))
#define cc_stamp_ahead(at, now, slack) 0
#endif
#ifdef CC_TEST_LUMP_ALWAYS /* compute.step.{plain,graph}.control: lumps for every waiter */
#define pace_contended(p, pid, now) ((void)(p), (void)(pid), (void)(now), 1)
#endif
#ifdef CC_TEST_NO_PACE_DETECT /* compute.bucket.pace.control: never lumps */
#define pace_contended(p, pid, now) ((void)(p), (void)(pid), (void)(now), 0)
#endif
#ifdef CC_TEST_NO_DRIP /* compute.smooth.control: tokens only at refills */
#define wait_supply(drip) ((void)(drip), (const cc_drip_t *)0)
#endif
#ifdef CC_TEST_NO_GROUP /* compute.step.eager.control: every launch paced alone */
#define in_step(drip, t0) ((void)(drip), (void)(t0), 0)
#endif

#include "cap/compute/bucket.c"
