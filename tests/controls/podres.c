/* Controls of src/cli/podres.c (src/common/controls.h says how). */
#pragma GCC diagnostic ignored "-Wunused-function" /* the replaced control points */

#ifdef CLI_TEST_NO_WINDOW_UPDATE /* cli.podres.negative_control: 64 KiB windows, big answers stall */
#define window_updates(b) ((void)(b), (size_t)0)
#endif

#include "cli/podres.c"
