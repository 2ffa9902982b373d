/* The simulator links the library's OS layer (src/os/os.h) for its /proc
 * reads, but not the library's fault injection: a CUDACAP_TEST_FAULT meant
 * for the library must not fire in the fake driver, nor its calls join the
 * library's census (CUDACAP_TEST_FAULT_COUNT). These two definitions come
 * before the archives on the link line, so common/fault.c is never pulled
 * in: the points of the OS layer stay unarmed here. */
#include "common/fault.h"

uint8_t cc_fault_active; /* 0 for good */

int cc_fault_fire_slow(cc_fault_point_t p)
{
    (void)p;
    return 0;
}
