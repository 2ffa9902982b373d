/* Controls of src/cli/snapshot.c (src/common/controls.h says how). */
#pragma GCC diagnostic ignored "-Wunused-function" /* the replaced control points */

#ifdef CLI_TEST_NO_VALIDATE /* cli.status.corrupt.negative_control: garbage shown as figures */
#define validate(check, r, bad, len) ((void)(check), (void)(r), (void)(bad), (void)(len), (const char *)0)
#endif
#ifdef CLI_TEST_COUNT_DEAD /* cli.status.dead.negative_control: dead slots counted */
#define slot_counted(p) ((void)(p), 1)
#endif

#include "cli/snapshot.c"
