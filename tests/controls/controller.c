/* Controls of src/cap/compute/controller.c (src/common/controls.h says how). */
#pragma GCC diagnostic ignored "-Wunused-function" /* the replaced control points */

#ifdef CC_TEST_FIRST_CONTROLLER
/* compute.controller.noisy.control: the first auto controller, not alone
 * at the start, a symmetric debounce of 10 samples, and AIMD's guarded cut
 * while others share the device (its version, first_auto, below the
 * source: it calls the source's laws; `out` is cc_ctrl_step's). */
#include "cap/compute/controller.h"
static int64_t first_auto(cc_ctrl_state_t *st, const cc_ctrl_input_t *in, cc_ctrl_output_t *out);
#define initially_alone() 0
#define excl_debounce(raw) ((void)(raw), 10u)
#define auto_law(st, in) first_auto(st, in, out)
#endif
#ifdef CC_TEST_STRADDLE_READ /* compute.controller.contended.control: the alone gain until the debounce sees others */
#define not_alone(st) ((void)(st))
#endif
#ifdef CC_TEST_IDLE_FROZEN /* compute.controller.idle.control: the share frozen while idle */
#define idle_share(share, nominal) ((void)(nominal), (share))
#endif

#ifdef CC_TEST_RUN_KEPT /* compute.controller.restart.control: the run of throttled refills kept over a gap */
#define run_after_gap(run, resumed) ((void)(resumed), (run))
#endif

#ifdef CC_TEST_UP_AT_ONCE /* compute.controller.start.control: share raised on the first throttled refill */
#define up_allowed(st, in) ((void)(st), (in)->throttled)
#endif

#include "cap/compute/controller.c"

#ifdef CC_TEST_FIRST_CONTROLLER
static int64_t first_auto(cc_ctrl_state_t *st, const cc_ctrl_input_t *in, cc_ctrl_output_t *out)
{
    if (!st->excl_debounced && in->user_pm > st->up_limit_pm + 50) return aimd_law(st, in, st->up_limit_pm, out);
    if (st->md_cooldown) st->md_cooldown--;
    return delta_law(st->share, in, st->up_limit_pm, 0.3, up_allowed(st, in));
}
#endif
