/* Controls of src/cap/compute/compute_setup.c (src/common/controls.h says how). */
#pragma GCC diagnostic ignored "-Wunused-function" /* the replaced control points */

#ifdef CC_TEST_NO_COMPUTE_REJOIN /* compute.rejoin.*.control: the region never retried */
#define want_rejoin() ((void)0)
#endif
#ifdef CC_TEST_NO_BURST /* compute.step.burst.control: CUDACAP_SM_BURST_MS ignored */
#define burst_ns() ((int64_t)0)
#endif
#ifdef CC_TEST_NO_ELASTIC /* compute.elastic.alone.control: the soft limit ignored */
#define soft_limit(ordinal) ((void)(ordinal), 0u)
#endif

#include "cap/compute/compute_setup.c"
