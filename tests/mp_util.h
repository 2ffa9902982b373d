/* Small helpers shared by the multi-process memory tests. */
#ifndef CC_TEST_MP_UTIL_H
#define CC_TEST_MP_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../src/common/clock.h" /* the library's clock: the tests compare its stamps */
#include "cudacap/abi_mem_region.h"

static inline uint64_t now_ns(void) { return cc_mono_ns(); }

/* xorshift64: reproducible per-child random points for kill storms. */
static inline uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* A fresh test folder base (removed, made again); in dir its subfolder
 * "d", the state folder the test uses, and in path the memory region's
 * file there. 0, or -1. */
static inline int fresh_state_dir(const char *base, char *dir, size_t dn, char *path, size_t pn)
{
    char cmd[2100];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", base, base);
    if (system(cmd) != 0) return -1;
    snprintf(dir, dn, "%s/d", base);
    snprintf(path, pn, "%s/%s", dir, CC_MEM_REGION_FILE);
    return 0;
}

#endif
