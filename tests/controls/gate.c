/* Controls of src/cap/compute/gate.c (src/common/controls.h says how). */
#pragma GCC diagnostic ignored "-Wunused-function" /* the replaced control points */

#ifdef CC_TEST_NO_HEADROOM /* compute.step.shapes.control: every untimed launch waits for the probe */
#define has_headroom(d) ((void)(d), 0)
#endif
#ifdef CC_TEST_BUSY_SLOTS /* compute.deepq.warmnew.control_busy: slots beside the probe on a busy stream */
#define stream_drained(s, ptsz) ((void)(s), (void)(ptsz), 1)
#endif
#ifdef CC_TEST_DUP_SLOTS /* compute.deepq.warmstreams.control_dup: a shape in flight untimed may go again */
#define shape_pending(d, key, blocks) ((void)(d), (void)(key), (void)(blocks), 0)
#endif
#ifdef CC_TEST_CHARGE_CAPTURE /* compute.capture.time.control: launches into a capture charged */
#define into_capture(s, ptsz) ((void)(s), (void)(ptsz), 0)
#endif
#ifdef CC_TEST_FREE_UNTIMED
/* compute.deepq.*.control: every launch before a first timing at the cost
 * estimated for it (`cost`, cc_gate_begin's). */
#define admit_untimed(d, key, blocks, s, ptsz, measure, probe) \
    ((void)(d), (void)(key), (void)(blocks), (void)(s), (void)(ptsz), (void)(probe), cost)
#endif

#include "cap/compute/gate.c"
