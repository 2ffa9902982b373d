/* Controls of src/cli/liveness.c (src/common/controls.h says how). */
#pragma GCC diagnostic ignored "-Wunused-function" /* the replaced control points */

#ifdef CLI_TEST_NO_PROC_SCAN /* cli.prepare.live.negative_control: regions and locks only */
#define scan_proc(f, pids, n, max) ((void)(f), (void)(pids), (void)(max), (n))
#endif
#ifdef CLI_TEST_NO_LIVE_BYTES /* cli.prepare.livebytes.negative_control: no liveness byte probed */
#define probe_live_bytes(dfd, name, f) ((void)(dfd), (void)(name), (void)(f))
#endif

#include "cli/liveness.c"
