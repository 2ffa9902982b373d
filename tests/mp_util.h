/* Small helpers shared by the multi-process memory tests. */
#ifndef CC_TEST_MP_UTIL_H
#define CC_TEST_MP_UTIL_H

#include <stdint.h>

#include "../src/common/clock.h" /* the library's clock: the tests compare its stamps */

static inline uint64_t now_ns(void) { return cc_mono_ns(); }

/* xorshift64: reproducible per-child random points for kill storms. */
static inline uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

#endif
