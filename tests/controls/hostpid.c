/* Controls of src/hook/hostpid.c (src/common/controls.h says how). */
#pragma GCC diagnostic ignored "-Wunused-function" /* the replaced control points */

#ifdef CC_TEST_NSPID_ONLY
/* compute.hostpid.join.control: the old compute-side discovery, the first
 * NSpid field whatever the levels (the container pid when the container
 * has its own /proc), and no identity diff. */
#include <unistd.h>

#include "os/os.h"
static uint32_t nspid_only(void)
{
    uint32_t first;
    return cc_os_nspid(&first, 1) >= 1 && first ? first : (uint32_t)getpid();
}
#define discover(ordinal) ((void)(ordinal), nspid_only())
#define diff_wanted() 0
#endif

#include "hook/hostpid.c"
