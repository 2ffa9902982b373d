/* Controls of src/cap/compute/cost.c (src/common/controls.h says how). */
#pragma GCC diagnostic ignored "-Wunused-function" /* the replaced control points */

#ifdef CC_TEST_UNTIMED_FREE /* faults.loop.control.event_elapsed: a launch not timed is free, as before */
#define settle_untimed(p, r) ((void)(p), (void)(r))
#endif
#ifdef CC_TEST_GAP_CHARGED /* unit.port.gap_control: the host's gap charged as device time */
#define gap_cut(elapsed, gap) ((void)(gap), (elapsed))
#endif
#ifdef CC_TEST_GAP_TO_RETURN /* compute.cost.preempted.control: the gap to the launch's return, however slow */
#define known_gap(a, l, r) ((void)(l), (int64_t)((r) - (a)))
#endif
#ifdef CC_TEST_NO_RELAXED /* compute.capture.invalidation.control: poll in the thread's own mode */
#define poll_mode(saved) ((void)(saved), 0)
#endif

#include "cap/compute/cost.c"
