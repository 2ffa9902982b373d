/* Controls of src/cap/compute/elastic.c (src/common/controls.h says how). */
#pragma GCC diagnostic ignored "-Wunused-function" /* the replaced control points */

#if defined(CC_TEST_NO_YIELD) /* compute.elastic.{newcomer,two,unit}.control: others' work never seen */
#define others_work(sys, user) ((void)(sys), (void)(user), 0u)
#endif
#if defined(CC_TEST_NO_SAT_ARRIVAL) || defined(CC_TEST_NO_YIELD) /* the *.sat_control, guard, bursts.h200:
                                                                   * arrivals only as NVML names them */
#define unseen_arrival(foreign, idle, quiet, borrowing) ((void)(foreign), (void)(idle), (void)(quiet), 0)
#define guard_on(foreign, level) ((void)(foreign), (void)(level), 0)
#endif
#ifdef CC_TEST_GUARD_JUMP
/* compute.elastic.unit.guard_jump_control: the guard at once (`guard`,
 * the ceiling elastic_rule computed). */
#define restored(foreign, hard, restore) ((void)(hard), (foreign) && (restore) > guard ? guard : (restore))
#define guard_by_growth(guarded, up, guard) 0
#endif
#ifdef CC_TEST_STRADDLE_READ /* compute.elastic.unit.straddle_control: the straddling sample read */
#define hold_straddled(out) ((void)(out))
#endif
#ifdef CC_TEST_NO_GROW /* compute.elastic.two.control_grow: beside others, the hard share only */
#define contended_up(up, hard, soft, idle, saturated, guarded, guard)                                                  \
    ((void)(saturated), (void)(guarded), (hard))
#endif
#ifdef CC_TEST_SEED_YIELD
/* compute.elastic.bursts.control: the seed's soft mode. Exclusivity
 * debounced over 10 samples both ways; lost: back to hard (and held there:
 * the seed's steps of a tenth of the hard cap every 30 samples hardly move
 * within a test); regained: the soft limit. */
#include "cap/compute/elastic.h"
static cc_elastic_state_t seed_step(cc_elastic_state_t st, const cc_elastic_input_t *in, uint32_t others,
                                    cc_elastic_output_t *out)
{
    int raw_excl = others < 10;
    if (raw_excl == !st.contended) {
        st.calm = 0;
    } else if (++st.calm >= 10) {
        st.calm = 0;
        st.contended = !raw_excl;
        if (st.contended) out->yield = st.up_pm > in->hard_pm;
    }
    st.up_pm = st.contended ? in->hard_pm : in->soft_pm;
    return st;
}
#define elastic_rule(st, in, out, hard, soft, user, idle, others)                                                     \
    ((void)(hard), (void)(soft), (void)(user), (void)(idle), seed_step(st, in, others, out))
#endif

#include "cap/compute/elastic.c"
