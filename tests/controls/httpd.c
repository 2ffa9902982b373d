/* Controls of src/cli/httpd.c (src/common/controls.h says how). */
#pragma GCC diagnostic ignored "-Wunused-function" /* the replaced control points */

#ifdef CLI_TEST_NO_EVICT /* cli.metrics.stall.negative_control: a full table waits for a deadline */
#define may_accept() (nconn < HTTPD_MAX_CONN)
#endif

#include "cli/httpd.c"
