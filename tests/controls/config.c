/* Controls of src/cap/config.c (src/common/controls.h says how). */
#pragma GCC diagnostic ignored "-Wunused-function" /* the replaced control points */

#ifdef CC_TEST_TRUST_BAD_LIMITS /* config.limits.{bad,faults}.control: a bad file ignored (fail open) */
#define refuse_bad_limits(cfg, why) ((void)(why), (cfg)->limits_path[0] = 0)
#endif
#ifdef CC_TEST_ENV_OVER_LIMITS /* config.limits.file.control: the environment wins */
#define take_limits(cfg, get, mem, sm, soft, l)                                                                        \
    ((void)(cfg), (void)(get), (void)(mem), (void)(sm), (void)(soft), (void)(l))
#endif

#include "cap/config.c"
