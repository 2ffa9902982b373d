/* Controls of src/common/options.c (src/common/controls.h says how). */
#pragma GCC diagnostic ignored "-Wunused-function" /* the replaced control points */

#ifdef CC_TEST_NO_SEED_NAMES /* config.seed.control: the seed's names unread */
#define names_read() 2
#endif

#include "common/options.c"
