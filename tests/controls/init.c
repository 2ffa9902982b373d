/* Controls of src/hook/init.c (src/common/controls.h says how). */
#pragma GCC diagnostic ignored "-Wunused-function" /* the replaced control points */

#ifdef CC_TEST_NO_INIT_ENV /* config.initenv.control: the init process is not asked */
#define read_init_env() 0
#endif
#ifdef CC_TEST_STRICT_OPEN /* config.strict.control: strict mode runs open */
#define refused() 0
#endif

#include "hook/init.c"
