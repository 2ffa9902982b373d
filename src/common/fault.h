/* Fault injection, in the manner of SQLite's test VFS and malloc
 * countdown: a test makes the N-th call of one injection point fail, once or
 * from then on, in any build (the shipped library included), and counts the
 * calls a run makes of every point (the census the fault loop walks,
 * tests/fault_loop.sh).
 *
 * The points are the library's ways out: every entry of the OS layer
 * (src/os/os.h), every entry of the port (src/cap/port.h, wrapped by
 * cap/port_fault.c when armed) and the NVML queries the hook layer makes
 * itself. What a fired point does is the failure its caller would see from
 * the real call (the OS layer: -1 with errno EIO; the port: the entry's
 * documented failure); the clock, which cannot fail, jumps 2 s forward
 * instead (a stalled or resumed process: stamps from others look old, ours
 * look new to them).
 *
 * Armed by the environment, read once at the library's initialisation (the
 * first intercepted call, cc_fault_init):
 *   CUDACAP_TEST_FAULT=POINT:N          the N-th call (1-based) fails
 *   CUDACAP_TEST_FAULT=POINT:N:sticky   the N-th and every later call fail
 *   CUDACAP_TEST_FAULT_COUNT=FILE       at exit, one line per point called:
 *                                       "POINT CALLS" appended to FILE
 * A malformed value is logged (naming it) and ignored.
 *
 * Cost, unarmed (every production run): one relaxed load of a byte and a
 * branch not taken, at each point; no point is on the launch path except
 * the port's device_current, whose wrapper is not installed unarmed. */
#ifndef CC_COMMON_FAULT_H
#define CC_COMMON_FAULT_H

#include <stdint.h>

typedef enum cc_fault_point {
    /* the OS layer (os.h) */
    CC_FP_OPEN,
    CC_FP_FSTAT,
    CC_FP_FTRUNCATE,
    CC_FP_MAP,
    CC_FP_LOCK,
    CC_FP_MKDIR,
    CC_FP_PROC_STAT,
    CC_FP_NSPID,
    CC_FP_ALIVE,
    CC_FP_CLOCK,
    CC_FP_RESERVE,
    CC_FP_THREAD,
    CC_FP_PROC_ENVIRON,
    /* the port (port.h) */
    CC_FP_EVENT_CREATE,
    CC_FP_EVENT_RECORD,
    CC_FP_EVENT_QUERY,
    CC_FP_EVENT_ELAPSED,
    CC_FP_EVENT_DESTROY,
    CC_FP_CTX_CURRENT,
    CC_FP_IS_CAPTURING,
    CC_FP_CAPTURE_MODE,
    CC_FP_NVML_OPEN,
    CC_FP_NVML_UTIL,
    CC_FP_NVML_DEVUTIL,
    CC_FP_DEVICE_CURRENT,
    CC_FP_DEVICE_INFO,
    CC_FP_HOST_PID,
    /* the hook layer's own NVML queries: the process list, a device's handle */
    CC_FP_NVML_PROCS,
    CC_FP_NVML_DEVICE,
    CC_FP_STREAM_QUERY, /* the port's again (appended: the census's order) */
    CC_FP_COUNT
} cc_fault_point_t;

/* 0: unarmed and not counting (until cc_fault_init or cc_fault_configure). */
extern uint8_t cc_fault_active;

int cc_fault_fire_slow(cc_fault_point_t p);

/* 1 when this call of point p must fail. */
static inline int cc_fault(cc_fault_point_t p)
{
    if (__builtin_expect(__atomic_load_n(&cc_fault_active, __ATOMIC_RELAXED) == 0, 1)) return 0;
    return cc_fault_fire_slow(p);
}

/* The point's name as CUDACAP_TEST_FAULT spells it, or NULL. */
const char *cc_fault_name(cc_fault_point_t p);

/* Nanoseconds the clock has jumped in this process (the clock point). */
extern uint64_t cc_fault_clock_skew_ns;

/* The clock point (clock.h): counts the call, returns t plus the skew. */
uint64_t cc_fault_clock_slow(uint64_t t);

/* Reads CUDACAP_TEST_FAULT and CUDACAP_TEST_FAULT_COUNT (the library's
 * initialisation calls it once, before any point can be reached). */
void cc_fault_init(void);

/* Arms spec (NULL: nothing) and the census file (NULL: none), resetting
 * every count: cc_fault_init's work, and the unit tests'. */
void cc_fault_configure(const char *spec, const char *count_file);

#endif
