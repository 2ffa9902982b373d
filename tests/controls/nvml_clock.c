/* Controls of src/cap/compute/nvml_clock.c (src/common/controls.h says how). */
#pragma GCC diagnostic ignored "-Wunused-function" /* the replaced control points */

#ifdef CC_TEST_EMPTY_IS_IDLE
/* compute.nvmlperiod.control: the first version's rule, every poll asks and
 * an empty answer is idle up to now (lastSeen to now: without it, since
 * 2026-12-04, samples read late still counted and the control held 37 %,
 * under its bar, in one run of a suite loop) */
#define not_due(c, now, poll_gap) ((void)(c), (void)(now), (void)(poll_gap), 0)
#define empty_seen(c, seen, now) ((void)(c), (void)(seen), (now))
#endif

#ifdef CC_TEST_EMPTY_SEEN_NOW /* compute.deepq.warm.lag300.control: an empty answer moves lastSeen to now */
#define empty_seen(c, seen, now) ((void)(c), (void)(seen), (now))
#endif

#ifdef CC_TEST_NEWEST_GAPS_ONLY /* compute.period.unit.control_newest: only polls' newest timestamps teach the period */
#define in_answer_steps() 0
#endif
#ifdef CC_TEST_ONE_GAP_GRID /* compute.period.unit.control_one: the period trusted on one gap (the grid, not_due) */
#define grid_gaps_needed() 1u
#endif

#include "cap/compute/nvml_clock.c"
