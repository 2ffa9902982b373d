/* The one clock of the library and the CLI: CLOCK_MONOTONIC in nanoseconds.
 * Every stamp in a shared region is on it (a refill, a sample, an accrual),
 * so every reader and writer must take it from here. Cost: one vDSO call,
 * about 20 ns; no syscall. */
#ifndef CC_COMMON_CLOCK_H
#define CC_COMMON_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t cc_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
