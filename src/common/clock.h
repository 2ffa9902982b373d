/* The one clock of the library and the CLI: CLOCK_MONOTONIC in nanoseconds.
 * Every stamp in a shared region is on it (a refill, a sample, an accrual),
 * so every reader and writer must take it from here. Cost: one vDSO call,
 * about 20 ns, and one load and a branch not taken (the fault injection's
 * clock point, common/fault.h); no syscall. */
#ifndef CC_COMMON_CLOCK_H
#define CC_COMMON_CLOCK_H

#include <stdint.h>
#include <time.h>

/* common/fault.c's, weak: programs that never link it (tests of one piece)
 * read no skew. */
extern uint8_t cc_fault_active __attribute__((weak));
uint64_t cc_fault_clock_slow(uint64_t t) __attribute__((weak));

static inline uint64_t cc_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t t = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    if (__builtin_expect(&cc_fault_active != 0 && __atomic_load_n(&cc_fault_active, __ATOMIC_RELAXED), 0))
        t = cc_fault_clock_slow(t);
    return t;
}

/* The wall clock (CLOCK_REALTIME) in microseconds: the unit and epoch of
 * NVML's sample timestamps (lastSeenTimeStamp), and nothing else; never a
 * stamp in a shared region. */
static inline unsigned long long cc_real_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (unsigned long long)ts.tv_sec * 1000000ull + (unsigned long long)ts.tv_nsec / 1000;
}

#endif
